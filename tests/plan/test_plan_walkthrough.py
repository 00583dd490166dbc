"""The README's plan walkthrough, run exactly as written: its table is the one the README shows."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from plan_helpers import ROOT

COMMAND = "extender plan examples/plan/plan.yaml --report plan-report"


def test_the_readme_walkthrough_gives_the_table_it_shows(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text()
    assert f"pip install -e . && {COMMAND}\n" in readme
    args = COMMAND.split()[1:]
    args[args.index("plan-report")] = str(tmp_path / "plan-report")
    done = subprocess.run([sys.executable, "-m", "extender", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=900)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.rstrip("\n").split("\n")
    assert " simulations on process " in lines[-1] and lines[-1].endswith("of CPU)")  # the timing line varies
    shown = "\n".join(lines[:-1]).rstrip("\n") + "\n```"
    assert shown in readme, done.stdout
    report = tmp_path / "plan-report"
    assert {p.name for p in report.iterdir()} == {"plan.json", "report.html", "placed-vs-nodes.png",
                                                 "utilization.png", "pending-reasons.png"}
    assert (ROOT / "docs" / "plan" / "placed-vs-nodes.png").read_bytes().startswith(b"\x89PNG")
