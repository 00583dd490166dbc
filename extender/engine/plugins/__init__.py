"""The in-tree plugins, one module each. Every module in this package is imported here, and each
registers its plugin classes by name with ``@register``; adding a plugin is adding a module."""

import importlib
import pkgutil

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")
