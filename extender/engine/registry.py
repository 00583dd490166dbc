"""The plugin registry: plugin classes by name, built-in and user-supplied.

A user plugin is an ordinary class deriving from FilterPlugin and/or ScorePlugin, decorated with
:func:`register` in a module that the configuration's ``imports`` list names; no package edit needed.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from extender.engine.framework import Plugin

if TYPE_CHECKING:
    from extender.kube.release import Release

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


def lookup(name: str, release: Release | None = None) -> type[Plugin]:
    """The plugin class registered under a name (for a release: only plugins that exist in it, as upstream's
    in-tree registry of that release holds them)."""
    _load_builtins()
    cls = _registry.get(name)
    if cls is None or (release is not None and not _exists_in(cls, release)):
        known = ", ".join(sorted(registered(release)))
        where = f" in kube-scheduler {release.tag}" if release is not None else ""
        raise RegistryError(f"unknown plugin {name!r}{where}; known plugins: {known}")
    return cls


def registered(release: Release | None = None) -> dict[str, type[Plugin]]:
    """Every registered plugin by name (for a release: those that exist in it)."""
    _load_builtins()
    return {name: cls for name, cls in _registry.items() if release is None or _exists_in(cls, release)}


def _exists_in(cls: type[Plugin], release: Release) -> bool:
    return release.minor >= cls.introduced


def import_plugin_module(module: str, base: Path | None = None) -> None:
    """Import a module of user plugins (it registers them on import).

    ``module`` is a dotted module name on the Python path, or a path to a ``.py`` file (relative to
    ``base``, the configuration file's folder), so that a plugin needs no package of its own.
    """
    try:
        if module.endswith(".py") or "/" in module:
            path = Path(module) if Path(module).is_absolute() else (base or Path.cwd()) / module
            spec = importlib.util.spec_from_file_location(f"extender_user_plugins.{path.stem}", path)
            if spec is None or spec.loader is None:
                raise RegistryError(f"cannot load plugin file {path}")
            loaded = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = loaded
            spec.loader.exec_module(loaded)
        else:
            importlib.import_module(module)
    except (RegistryError, KeyboardInterrupt):
        raise
    except BaseException as err:  # any import-time failure (sys.exit included) is a configuration error
        raise RegistryError(f"cannot import plugin module {module!r}: {type(err).__name__}: "
                            f"{' '.join(str(err).split()) or '(no message)'}") from err


def _load_builtins() -> None:
    import extender.engine.plugins  # noqa: F401  (registers the in-tree plugins)
