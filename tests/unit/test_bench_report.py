"""bench/RESULTS.md is what ``python -m bench.run`` makes of its figures: the committed RESULTS.json renders
again (``--report-only``) into a report with its sections and every target judged, so the figures quoted
in the README can always be regenerated from what is committed."""

from __future__ import annotations

from pathlib import Path

from bench.run import main

ROOT = Path(__file__).resolve().parents[2]


def test_the_committed_figures_render_into_the_report(tmp_path: Path) -> None:
    out = tmp_path / "RESULTS.md"
    assert main(["--report-only", str(ROOT / "bench" / "RESULTS.json"), "--out", str(out)]) == 0
    text = out.read_text()
    for section in ("## 500 nodes", "## 5000 nodes", "## Targets"):
        assert section in text, section
    targets = text.split("## Targets", 1)[1]
    judged = [line for line in targets.splitlines() if line.startswith("| ") and line.rstrip().endswith(
        ("| yes |", "| no |"))]
    assert len(judged) >= 3, targets
