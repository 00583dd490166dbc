"""The web view at ``/ui/``: why a pod is Pending, from the engine's own explain and simulate.

A consumer of the engine beside ``extender.api``: the page (framework-free HTML, CSS and JavaScript modules in
``assets/``, shipped in the package) calls ``GET /explain/...`` and the small read-only JSON API of
:mod:`extender.ui.routes`; what-ifs run on copies of the snapshot (:mod:`extender.ui.whatif`).
"""

from extender.ui.routes import build_ui_router

__all__ = ["build_ui_router"]
