"""Helpers of the browser tests: where Chromium is, how it is launched, the real ``extender serve`` process,
and reading the page's virtualized table."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[2]
ON_CI = os.environ.get("CI", "").lower() == "true"
# Debian's chromium-headless-shell installs the binary here (/usr/bin/chromium-headless-shell is a script
# that runs it); the full chromium package is the fallback.
CANDIDATES = ("/usr/lib/chromium/chromium-headless-shell", "/usr/bin/chromium-headless-shell",
              "/usr/lib/chromium/chromium", "/usr/bin/chromium")


def chromium_binary() -> Path | None:
    """The Chromium to drive: EXTENDER_CHROMIUM, else Debian's headless shell, else Debian's chromium."""
    named = os.environ.get("EXTENDER_CHROMIUM")
    for candidate in ([named] if named else []) + list(CANDIDATES):
        path = Path(candidate) if os.sep in candidate else Path(shutil.which(candidate) or candidate)
        if path.is_file() and os.access(path, os.X_OK):
            return path
    return None


def launch_args() -> list[str]:
    """Flags that run on a container without a display, a GPU or a network beyond the service.
    (Playwright gives each launch a fresh profile directory of its own.)"""
    # --disable-dev-shm-usage: shared memory in /tmp, not /dev/shm, which containers often make tiny (64 MB
    # in Docker's default), too small for a 5,000-node page's buffers.
    return ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--disable-dev-shm-usage"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Service:
    """``extender serve`` as a user starts it; ``url`` is the page's address as its log prints it."""

    def __init__(self, args: list[str], workdir: Path, *, ready_within: float = 180.0) -> None:
        self.args = args
        self.log_path = workdir / "serve.log"
        self.ready_within = ready_within
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.url = ""
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Service:
        log = self.log_path.open("wb")
        self.proc = subprocess.Popen([sys.executable, "-m", "extender", "serve", "--port", str(self.port), *self.args],
                                     stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
        deadline = time.monotonic() + self.ready_within
        while True:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.__exit__(None, None, None)
                raise RuntimeError(f"extender serve did not become ready:\n{self.log_path.read_text()[-4000:]}")
            try:
                if httpx.get(f"{self.base}/readyz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        for line in self.log_path.read_text().splitlines():
            if line.startswith("{") and json.loads(line).get("msg") == "serving":
                self.url = json.loads(line)["ui"]
        assert self.url, f"the serving log line names no page:\n{self.log_path.read_text()}"
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def get(self, path: str) -> Any:
        resp = httpx.get(f"{self.base}{path}", timeout=120)
        resp.raise_for_status()
        return resp.json()


# Scrolls the table from top to bottom, collecting every row it draws (rows exist only while in view). It ends
# at the bottom, or throws (naming the scroll geometry) when a step no longer moves the table or after
# READ_TABLE_LIMIT_MS. That limit is the page's own clock: a renderer that stops running the page's timers
# never reaches it, so read_table also waits on Playwright's side (its driver's clock) and gives up after
# READ_TABLE_LIMIT_MS plus a margin, saying how far the reader got (Playwright's evaluate has no timeout).
READ_TABLE_LIMIT_MS = 120_000
READ_TABLE_MARGIN_MS = 30_000
READ_TABLE = """async (limitMs) => {
  const body = document.querySelector('.vt-body');
  // Two animation frames after a scroll, the table has drawn the rows in view; a page that gets no frames
  // draws them on its own timer (table.js), so waiting is capped.
  let framesMissed = 0;
  const frame = () => new Promise((r) => {
    let done = false;
    requestAnimationFrame(() => requestAnimationFrame(() => { done = true; r(); }));
    setTimeout(() => { if (!done) { framesMissed += 1; r(); } }, 300);
  });
  // Chromium dispatches the scroll event of a programmatic scroll when it renders the next frame: in a page
  // that gets no frames the table would never hear of the scroll, so the reader announces each one itself
  // (the table draws once per scroll either way).
  const scrollTo = (top) => { body.scrollTop = top; body.dispatchEvent(new Event("scroll")); };
  const rows = {};
  const started = performance.now();
  scrollTo(0);
  for (;;) {
    await frame();
    for (const row of body.querySelectorAll('.vt-row:not([hidden])')) {
      const cells = {};
      for (const cell of row.children) {
        cells[cell.dataset.col] = {text: cell.textContent, code: cell.dataset.code || null, title: cell.title || null};
      }
      rows[row.dataset.row] = {index: Number(row.dataset.index), cells};
    }
    if (body.scrollTop + body.clientHeight >= body.scrollHeight - 1) break;
    const before = body.scrollTop;
    scrollTo(before + Math.max(50, body.clientHeight - 100));
    const where = `scrollTop ${before} -> ${body.scrollTop}, clientHeight ${body.clientHeight}, ` +
      `scrollHeight ${body.scrollHeight}, ${Object.keys(rows).length} rows read`;
    if (body.scrollTop <= before) throw new Error(`the table does not scroll: ${where}`);
    if (performance.now() - started > limitMs) throw new Error(`the table was not read in ${limitMs} ms: ${where}`);
  }
  scrollTo(0);
  await frame();
  if (framesMissed) console.info(`read_table: ${framesMissed} waits for an animation frame ended on the timer`);
  return rows;
}"""


def screenshot(page: Any, path: Path, *, full_page: bool = False) -> None:
    """Save a screenshot as a test artifact. A picture needs a frame from the compositor, which headless
    Chromium sometimes stops producing for a while; the artifact is then a note saying so (a screenshot is a
    record of the test, not one of its checks)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.screenshot(path=str(path), full_page=full_page, timeout=20_000)
    except PlaywrightTimeout as err:
        path.with_suffix(".txt").write_text(f"no screenshot: {err}\n")


class TableStalled(AssertionError):
    """The page stopped running the table reader: no answer within READ_TABLE_LIMIT_MS plus a margin, by
    Playwright's clock."""


# The reader runs as a promise the page keeps (window.__tableRead). Playwright's waitForFunction starts it
# (on the predicate's first call) and waits for it, all under one timeout of Playwright's own: a plain
# evaluate would wait for ever on a page that stopped running.
_READ_WHEN_DONE = """(limitMs) => {
  if (!window.__tableRead) {
    const state = {done: false, rows: null, error: null};
    window.__tableRead = state;
    const reader = READER;
    reader(limitMs).then(
      (rows) => { state.rows = rows; state.done = true; },
      (err) => { state.error = String(err); state.done = true; });
  }
  const state = window.__tableRead;
  if (!state.done) return false;
  delete window.__tableRead;
  return {rows: state.rows, error: state.error};
}""".replace("READER", READ_TABLE)


def read_table(page: Any) -> dict[str, dict[str, Any]]:
    """Every row of the node table, by node: its position in the current order and its cells by column."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    waited_ms = READ_TABLE_LIMIT_MS + READ_TABLE_MARGIN_MS
    try:
        # Polled on a timer (never on animation frames, which headless Chromium sometimes stops producing).
        answer = page.wait_for_function(_READ_WHEN_DONE, arg=READ_TABLE_LIMIT_MS, polling=100, timeout=waited_ms)
    except PlaywrightTimeout as err:
        raise TableStalled(f"the table reader got no answer from the page in {waited_ms // 1000} s ({err})") from err
    state: dict[str, Any] = answer.json_value()
    if state["error"] is not None:
        raise AssertionError(f"the table reader failed: {state['error']}")
    rows: dict[str, dict[str, Any]] = state["rows"]
    return rows


def order(rows: dict[str, dict[str, Any]]) -> list[str]:
    """The nodes in the table's current order."""
    return [name for name, _row in sorted(rows.items(), key=lambda kv: kv[1]["index"])]


def open_pod(page: Any, service: Service, namespace: str, name: str) -> None:
    """Open the page as its log names it, then the pod from the list; wait for its explanation to be drawn."""
    page.goto(service.url)
    page.click(f".pod-link[data-pod='{namespace}/{name}']")
    page.wait_for_selector(f"body[data-ready='{namespace}/{name}']", state="attached")
