"""The progress bar: drawn on a terminal only, never with --quiet, and its total grows with the searches."""

from __future__ import annotations

import io

from extender.plan.progress import ProgressBar


def test_the_bar_draws_and_ends_its_line() -> None:
    out = io.StringIO()
    bar = ProgressBar(4, enabled=True, stream=out)
    bar(4)
    bar(2)  # a search round beyond the first estimate: the total grows
    bar.close()
    assert "4/4 simulations" in out.getvalue() and "6/6 simulations" in out.getvalue()
    assert out.getvalue().endswith("\n")


def test_no_bar_when_disabled() -> None:
    out = io.StringIO()
    bar = ProgressBar(3, enabled=False, stream=out)
    bar(3)
    bar.close()
    assert out.getvalue() == ""
    assert not ProgressBar.for_terminal(3, quiet=True).enabled
