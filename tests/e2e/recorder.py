"""A permissive recording extender: keeps every request kube-scheduler sends.

It answers each verb the way an extender that accepts everything would:
filter passes every node it is given, prioritize scores every node 0, bind
creates the Binding through the apiserver (a callback), preempt accepts every
candidate with its victims. The exact request bytes are kept for the wire
fixtures under tests/fixtures/wire/.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

BindFn = Callable[[str, str, str, str], None]  # namespace, name, uid, node


@dataclass(frozen=True)
class Recorded:
    """One request as received."""

    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        """The body decoded."""
        return json.loads(self.body)


def _node_names(args: dict[str, Any]) -> list[str]:
    if args.get("NodeNames") is not None:
        return list(args["NodeNames"])
    nodes = args.get("Nodes") or {}
    return [n["metadata"]["name"] for n in nodes.get("items") or []]


def permissive_answer(verb: str, args: dict[str, Any], bind: BindFn | None) -> Any:
    """What an extender that accepts everything answers to ``verb``."""
    if verb == "filter":
        return {
            "Nodes": args.get("Nodes") if args.get("NodeNames") is None else None,
            "NodeNames": args.get("NodeNames"),
            "FailedNodes": {},
            "FailedAndUnresolvableNodes": {},
            "Error": "",
        }
    if verb == "prioritize":
        return [{"Host": n, "Score": 0} for n in _node_names(args)]
    if verb == "bind":
        if bind is None:
            return {"Error": "recorder has no apiserver client to bind with"}
        try:
            bind(args["PodNamespace"], args["PodName"], args["PodUID"], args["Node"])
        except Exception as exc:  # answered to kube-scheduler, which logs it
            return {"Error": str(exc)}
        return {"Error": ""}
    if verb == "preempt":
        meta = args.get("NodeNameToMetaVictims")
        if meta is None:
            meta = {
                node: {
                    "Pods": [{"UID": p["metadata"]["uid"]} for p in (v or {}).get("Pods") or []],
                    "NumPDBViolations": (v or {}).get("NumPDBViolations", 0),
                }
                for node, v in (args.get("NodeNameToVictims") or {}).items()
            }
        return {"NodeNameToMetaVictims": meta}
    raise KeyError(verb)


class RecordingExtender:
    """An HTTP server on 127.0.0.1 (own thread) that records and answers permissively."""

    def __init__(self, bind: BindFn | None = None) -> None:
        self.requests: list[Recorded] = []
        self.bind = bind
        self._lock = threading.Lock()
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                rec = Recorded(self.path, {k: v for k, v in self.headers.items()}, body)
                with recorder._lock:
                    recorder.requests.append(rec)
                verb = self.path.rstrip("/").rsplit("/", 1)[-1]
                try:
                    answer = permissive_answer(verb, json.loads(body), recorder.bind)
                    status = 200
                except KeyError:
                    answer, status = {"Error": f"unknown verb {verb}"}, 404
                out = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, name="recording-extender", daemon=True)

    @property
    def url(self) -> str:
        """Base URL, usable as the extender's urlPrefix."""
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self) -> RecordingExtender:
        """Serve in the background."""
        self.thread.start()
        return self

    def stop(self) -> None:
        """Stop serving."""
        self.server.shutdown()
        self.server.server_close()

    def of_verb(self, verb: str) -> list[Recorded]:
        """The requests recorded for one verb, oldest first."""
        with self._lock:
            return [r for r in self.requests if r.path.rstrip("/").endswith("/" + verb)]

    def clear(self) -> None:
        """Forget what was recorded."""
        with self._lock:
            self.requests.clear()
