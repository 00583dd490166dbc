"""The page's files (HTML, CSS, JavaScript modules), shipped in the package and served from memory.

Nothing is fetched from anywhere else: the Content-Security-Policy lets the page load only its own files
and talk only to this service, run no inline script, and not be framed. Each answer carries an ETag and
``no-cache``, so that a browser revalidates (a 304 when unchanged) and an upgraded service is seen at once.
"""

from __future__ import annotations

import hashlib
import importlib.resources
from collections.abc import Mapping

from fastapi import Request
from fastapi.responses import Response

CONTENT_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
                 ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml", ".png": "image/png"}
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                               "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-cache",
}


class Assets:
    """The files of ``extender/ui/assets``, read once, by name."""

    def __init__(self, package: str = "extender.ui") -> None:
        folder = importlib.resources.files(package).joinpath("assets")
        self.files: dict[str, tuple[bytes, str, str]] = {}
        for entry in folder.iterdir():
            suffix = entry.name[entry.name.rfind("."):]
            if entry.is_file() and suffix in CONTENT_TYPES:
                body = entry.read_bytes()
                etag = '"' + hashlib.sha256(body).hexdigest()[:20] + '"'
                self.files[entry.name] = (body, CONTENT_TYPES[suffix], etag)
        if "index.html" not in self.files:
            raise RuntimeError(f"the web view's assets are missing from {folder} (index.html not found)")

    def answer(self, name: str, request: Request) -> Response:
        """The file (200), 304 when the browser holds this version, 404 for a name there is no file of."""
        found = self.files.get(name)
        if found is None:
            return Response(f"no such file: {name}", status_code=404, media_type="text/plain",
                            headers=SECURITY_HEADERS)
        body, media_type, etag = found
        headers: Mapping[str, str] = {**SECURITY_HEADERS, "ETag": etag}
        if request.headers.get("if-none-match") == etag:
            return Response(status_code=304, headers=headers)
        return Response(body, media_type=media_type, headers=headers)
