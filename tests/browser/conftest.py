"""Fixtures for the browser tests: Debian's headless Chromium driven by Playwright, and the real
``extender serve`` process.

Chromium comes from Debian's ``chromium-headless-shell`` package (scripts/test installs it when missing,
as root); Playwright's own browser download is never used. Without the browser (or Playwright) the tests
skip, and with CI=true they fail, as the Go-based tests do. EXTENDER_CHROMIUM names another binary.

Screenshots go to ``$EXTENDER_BROWSER_ARTIFACTS`` (``build/browser-artifacts`` is git-ignored), else to a
directory under pytest's temporary path; its location is printed in the session's summary.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from browser_support import ON_CI, Service, chromium_binary, launch_args

_artifacts_key = pytest.StashKey[Path]()


# Each browser test, its fixtures included (a 5,000-node service starting, Chromium launching), ends within
# this: a page or a browser that stops answering fails its test with every thread's stack (pytest-timeout)
# instead of holding the whole run.
BROWSER_TEST_TIMEOUT_S = 300


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).resolve().parent
    for item in items:
        if here in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.timeout(BROWSER_TEST_TIMEOUT_S))


def unavailable(reason: str) -> None:
    """Skip, or fail under CI=true, where the browser tests must run."""
    if ON_CI:
        pytest.fail(f"browser tests cannot run on CI: {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def artifacts(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Path:
    """Where screenshots are saved."""
    fixed = os.environ.get("EXTENDER_BROWSER_ARTIFACTS")
    path = Path(fixed) if fixed else tmp_path_factory.mktemp("browser-artifacts")
    path.mkdir(parents=True, exist_ok=True)
    request.config.stash[_artifacts_key] = path
    return path


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """Say where the screenshots are."""
    path = config.stash.get(_artifacts_key, None)
    if path is not None:
        terminalreporter.write_line(f"browser test screenshots: {path}")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """A headless Chromium per test module (each test gets a fresh context: its own profile and storage).

    Module scope, not session: Playwright's sync API keeps its asyncio loop marked as running in the main
    thread while it is started, so every later test that calls ``asyncio.run`` would fail if it outlived
    the browser tests."""
    binary = chromium_binary()
    if binary is None:
        unavailable("no Chromium: run scripts/test as root (it installs Debian's chromium-headless-shell), or "
                    "apt-get install chromium-headless-shell, or set EXTENDER_CHROMIUM")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as err:
        unavailable(f"playwright is not installed ({err}): pip install --require-hashes -r requirements/test.txt")
    with sync_playwright() as driver:
        chromium = driver.chromium.launch(executable_path=str(binary), args=launch_args(), headless=True)
        try:
            yield chromium
        finally:
            chromium.close()


class PageProblems:
    """Console errors and warnings, and uncaught exceptions, of a page."""

    def __init__(self, page: Any) -> None:
        self.messages: list[str] = []
        self.expected: list[str] = []
        page.on("console", lambda m: self.messages.append(f"console {m.type}: {m.text}")
                if m.type in ("error", "warning") else None)
        page.on("pageerror", lambda e: self.messages.append(f"uncaught: {e}"))
        page.on("requestfailed", lambda r: self.messages.append(f"request failed: {r.url} {r.failure}"))

    def expect(self, text: str) -> None:
        """A message the test provokes on purpose (Chromium logs every 4xx answer as a console error)."""
        self.expected.append(text)

    def unexpected(self) -> list[str]:
        """The messages no test asked for."""
        return [m for m in self.messages if not any(e in m for e in self.expected)]


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A page in a fresh browser context; the test fails if the page logged an error or a warning."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    tab = context.new_page()
    tab.set_default_timeout(60_000)
    problems = PageProblems(tab)
    tab.problems = problems
    try:
        yield tab
    finally:
        context.close()
    assert not problems.unexpected(), problems.messages


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """``extender serve`` on the demo cluster (the README's first command), with Karmada member clusters."""
    root = Path(__file__).resolve().parents[2]
    with Service(["--member-clusters", str(root / "config" / "multicluster" / "clusters.yaml")],
                 tmp_path_factory.mktemp("serve")) as service:
        yield service
