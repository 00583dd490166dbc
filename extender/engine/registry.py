"""The plugin registry: plugin classes by name, built-in and user-supplied.

A user plugin is an ordinary class deriving from FilterPlugin and/or ScorePlugin, decorated with
:func:`register` in a module that the configuration's ``imports`` list names; no package edit needed.
"""

from __future__ import annotations

import importlib
from typing import TypeVar

from extender.engine.framework import Plugin

_registry: dict[str, type[Plugin]] = {}

P = TypeVar("P", bound=type[Plugin])


class RegistryError(ValueError):
    """An unknown plugin name, a name registered twice, or a plugin module that fails to import."""


def register(cls: P) -> P:
    """Class decorator: make a plugin available by its ``name``."""
    name = cls.name
    if not name:
        raise RegistryError(f"{cls.__qualname__} has no name")
    existing = _registry.get(name)
    if existing is not None and existing is not cls:
        raise RegistryError(f"plugin name {name!r} is already registered by {existing.__module__}")
    _registry[name] = cls
    return cls


def lookup(name: str) -> type[Plugin]:
    """The plugin class registered under a name."""
    _load_builtins()
    try:
        return _registry[name]
    except KeyError:
        known = ", ".join(sorted(_registry))
        raise RegistryError(f"unknown plugin {name!r}; known plugins: {known}") from None


def registered() -> dict[str, type[Plugin]]:
    """Every registered plugin by name."""
    _load_builtins()
    return dict(_registry)


def import_plugin_module(module: str) -> None:
    """Import a module of user plugins (it registers them on import)."""
    try:
        importlib.import_module(module)
    except Exception as err:  # any import-time failure is a configuration error
        raise RegistryError(f"cannot import plugin module {module!r}: {err}") from err


def _load_builtins() -> None:
    import extender.engine.plugins  # noqa: F401  (registers the in-tree plugins)
