"""bench/checkouts.py: a side's worker runs in a fresh interpreter that imports that checkout's ``extender``."""

from __future__ import annotations

from pathlib import Path

from bench.checkouts import run_worker, sides

SCRIPT = '''
from pathlib import Path


def worker(inputs: Path) -> dict[str, str]:
    import extender

    return {"extender": extender.__file__, "inputs": (inputs / "what").read_text()}


if __name__ == "__main__":
    raise SystemExit("a worker is called, not run as a script")
'''


def test_the_worker_imports_the_checkouts_extender_and_reads_its_inputs(tmp_path: Path) -> None:
    tree = tmp_path / "other-checkout"
    (tree / "extender").mkdir(parents=True)
    (tree / "extender" / "__init__.py").write_text("")
    script = tmp_path / "side.py"
    script.write_text(SCRIPT)
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    (inputs / "what").write_text("the inputs")
    figures = run_worker(str(script), tree, inputs, with_bench=False)
    assert figures == {"extender": str(tree / "extender" / "__init__.py"), "inputs": "the inputs"}


def test_this_checkout_comes_first_and_the_other_only_when_given(tmp_path: Path) -> None:
    assert [label for label, _ in sides(None)] == ["this checkout"]
    assert sides(tmp_path)[1] == ("before", tmp_path.resolve())
