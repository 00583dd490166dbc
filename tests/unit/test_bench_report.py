"""bench/RESULTS.md is what ``python -m bench.run`` makes of its figures: the committed RESULTS.json renders
again (``--report-only``) into a report with its sections and every target judged, so the figures quoted
in the README can always be regenerated from what is committed."""

from __future__ import annotations

import json
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


def _report_with(tmp_path: Path, **figures: float) -> str:
    """The report of the committed figures with the 500-node throughput run's given figures set."""
    results = json.loads((ROOT / "bench" / "RESULTS.json").read_text())
    runs = results["throughput"] if isinstance(results["throughput"], list) else [results["throughput"]]
    next(tp for tp in runs if int(tp["nodes"]) == 500).update(figures)
    source = tmp_path / "RESULTS.json"
    source.write_text(json.dumps(results))
    out = tmp_path / "RESULTS.md"
    assert main(["--report-only", str(source), "--out", str(out)]) == 0
    return out.read_text()


NULL_EXTENDER = {"null_pods_per_s": 200.0, "null_min": 190.0, "null_max": 210.0, "null_ratio_median": 0.5,
                 "null_ratio_min": 0.45, "null_ratio_max": 0.55}


def test_the_do_nothing_extender_is_reported_as_the_throughput_ceiling(tmp_path: Path) -> None:
    text = _report_with(tmp_path, **NULL_EXTENDER, ratio_median=0.25)
    assert "| with an extender that does nothing (Go, tests/k8s/go/cmd/nullextender) | 200.0 | 190.0–210.0 |" in text
    assert "reached 50% (45–55%) of alone" in text and "Ours reached 50% of that ceiling." in text
    assert "| 25% (an extender doing nothing: 50%) | no |" in text


def test_the_hollow_service_is_reported_as_the_ceiling_of_any_engine(tmp_path: Path) -> None:
    text = _report_with(tmp_path, **NULL_EXTENDER, hollow_pods_per_s=150.0, hollow_min=140.0, hollow_max=160.0,
                        hollow_ratio_median=0.375, hollow_cpu_ms_per_pod=2.5)
    assert "| ours with the engine hollowed out (--throughput-hollow, bench/hollow.py) | 150.0 | 140.0–160.0 |" in text
    assert "reached 38% of alone, 75% of the do-nothing extender" in text
    assert "The hollow service used 2.50 ms of CPU per pod" in text


def test_the_python_floor_is_reported_beside_the_do_nothing_extender(tmp_path: Path) -> None:
    text = _report_with(tmp_path, **NULL_EXTENDER, floor_pods_per_s=210.0, floor_min=200.0, floor_max=220.0,
                        floor_ratio_median=0.525, floor_cpu_ms_per_pod=0.7)
    assert ("| the least a Python extender with a watch does (--throughput-floor, bench/floor_extender.py) | 210.0 | "
            "200.0–220.0 |") in text
    assert ("The Python floor (bench/floor_extender.py) reached 52% of alone, 105% of the do-nothing extender, and "
            "used 0.70 ms of CPU per pod") in text
