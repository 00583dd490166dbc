"""The page ships in the wheel: a plain ``pip install`` (and the container image) serves it without the source
tree."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
ASSETS = ROOT / "extender" / "ui" / "assets"


def test_a_built_wheel_holds_every_asset(tmp_path: Path) -> None:
    # Built from a clean copy: setuptools' build/ directory in the work tree could hold stale files.
    source = tmp_path / "source"
    shutil.copytree(ROOT / "extender", source / "extender", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    "--wheel-dir", str(tmp_path), str(source)], check=True, timeout=300, cwd=tmp_path)
    (wheel,) = tmp_path.glob("kube_scheduler_extender-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {f"extender/ui/assets/{f.name}" for f in ASSETS.iterdir() if f.is_file()}
    assert {"extender/ui/assets/index.html", "extender/ui/assets/main.js"} <= expected
    assert expected <= names, sorted(expected - names)
    for name in expected:
        assert zipfile.ZipFile(wheel).read(name) == (ROOT / name).read_bytes(), name
