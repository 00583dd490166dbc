"""The Dockerfile, linted and run without a container engine (none runs on this machine).

The lint parses the Dockerfile: two stages on a pinned python:3.11-slim base, the venv built in the first and
copied into the second, a numeric non-root USER before the ENTRYPOINT, a HEALTHCHECK in Python on /healthz,
EXPOSE 8888, no ADD, and a .dockerignore that lets in exactly what is copied.

The run does what the image does: a venv in a temporary directory, filled from the files the builder stage
COPYs (``pip install .``), the demo cluster copied where the Dockerfile puts it, then the ENTRYPOINT started
with the final stage's ENV, HOME and cwd in a read-only directory (bind-mounted read-only, with the venv, when
the kernel lets us make a mount namespace), /healthz, /readyz and the HEALTHCHECK command checked, SIGTERM
answered with a clean shutdown, and nothing written in the venv, HOME or cwd.
"""

from __future__ import annotations

import fnmatch
import json
import shlex
import shutil
import signal
import site
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from controlplane import free_port
from ops_support import Service

REPO = Path(__file__).resolve().parents[2]
DOCKERFILE = REPO / "Dockerfile"
DOCKERIGNORE = REPO / ".dockerignore"
VENV = "/opt/venv"


@dataclass
class Instruction:
    """One Dockerfile instruction: keyword, its flags (``--from=builder``) and the rest of the line."""

    keyword: str
    flags: dict[str, str]
    args: str

    def exec_form(self) -> list[str] | None:
        """The JSON array of an exec-form instruction, else None."""
        text = self.args.strip()
        if text.startswith("["):
            value = json.loads(text)
            assert isinstance(value, list) and all(isinstance(v, str) for v in value), text
            return value
        return None


@dataclass
class Stage:
    """A FROM and what follows it."""

    base: str
    name: str | None
    instructions: list[Instruction] = field(default_factory=list)

    def all(self, keyword: str) -> list[Instruction]:
        """The stage's instructions of one keyword, in order."""
        return [i for i in self.instructions if i.keyword == keyword]


def parse_dockerfile(text: str) -> list[Stage]:
    """Stages of a Dockerfile (comments and parser directives dropped, continuation lines joined)."""
    logical: list[str] = []
    current = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not current and (not line or line.startswith("#")):
            continue
        if current and line.startswith("#"):
            continue  # a comment inside a continued instruction
        if line.endswith("\\"):
            current += line[:-1] + " "
            continue
        logical.append(current + line)
        current = ""
    assert not current, "Dockerfile ends inside a continued line"
    stages: list[Stage] = []
    for line in logical:
        keyword, _, rest = line.partition(" ")
        keyword = keyword.upper()
        flags: dict[str, str] = {}
        rest = rest.strip()
        while rest.startswith("--"):
            flag, _, rest = rest.partition(" ")
            key, _, value = flag[2:].partition("=")
            flags[key] = value
            rest = rest.strip()
        if keyword == "FROM":
            words = rest.split()
            name = words[2] if len(words) == 3 and words[1].upper() == "AS" else None
            stages.append(Stage(words[0], name))
        else:
            assert stages, f"{keyword} before any FROM"
            if keyword == "HEALTHCHECK":  # HEALTHCHECK [--options] CMD ...: its flags come before CMD
                assert rest.upper().startswith("CMD "), rest
            stages[-1].instructions.append(Instruction(keyword, flags, rest))
    return stages


def env_of(stage: Stage, base: dict[str, str]) -> dict[str, str]:
    """The stage's ENV applied over ``base`` (key=value pairs, $VAR expanded from what is set so far)."""
    env = dict(base)
    for ins in stage.all("ENV"):
        for pair in shlex.split(ins.args):
            key, _, value = pair.partition("=")
            env[key] = _expand(value, env)
    return env


def _expand(value: str, env: dict[str, str]) -> str:
    """``$VAR`` and ``${VAR}`` replaced from ``env`` (longest names first)."""
    for key in sorted(env, key=len, reverse=True):
        value = value.replace(f"${{{key}}}", env[key]).replace(f"${key}", env[key])
    return value


@pytest.fixture(scope="module")
def stages() -> list[Stage]:
    """The parsed Dockerfile."""
    return parse_dockerfile(DOCKERFILE.read_text())


# --------------------------------------------------------------------------- lint


def test_multi_stage_on_a_pinned_slim_base(stages: list[Stage]) -> None:
    """A builder stage and a runtime stage, both on python:3.11-slim with an explicit, non-latest tag."""
    assert len(stages) >= 2
    assert stages[0].name == "builder"
    for stage in stages:
        image, _, tag = stage.base.partition(":")
        assert image == "python" and tag.startswith("3.11-slim"), stage.base
        assert "latest" not in tag
    assert stages[-1].base == stages[0].base, "runtime and builder must share the base (the venv's python)"
    copies = stages[-1].all("COPY")
    assert any(c.flags.get("from") == "builder" and c.args.split() == [VENV, VENV] for c in copies)
    assert not any(s.all("ADD") for s in stages), "use COPY: ADD fetches URLs and unpacks archives"
    for stage in stages:
        for run in stage.all("RUN"):
            assert "curl " not in run.args and "wget " not in run.args, run.args


def test_runtime_is_non_root_with_healthcheck_and_entrypoint(stages: list[Stage]) -> None:
    """USER 65532 before the ENTRYPOINT, a Python HEALTHCHECK on /healthz, port 8888, the serve command."""
    final = stages[-1]
    keywords = [i.keyword for i in final.instructions]
    users = final.all("USER")
    assert users, "no USER: the image would run as root"
    uid = users[-1].args.split(":")[0]
    assert uid.isdigit() and int(uid) != 0, users[-1].args
    group = users[-1].args.partition(":")[2]
    assert not group or (group.isdigit() and int(group) != 0)
    assert keywords.index("USER") < keywords.index("ENTRYPOINT")
    (health,) = final.all("HEALTHCHECK")
    command = json.loads(health.args[len("CMD"):].strip())
    assert command[0] == "python" and "/healthz" in " ".join(command), command
    assert final.all("EXPOSE")[0].args.split() == ["8888"]
    assert final.all("ENTRYPOINT")[0].exec_form() == ["extender", "serve", "--host", "0.0.0.0"]
    env = env_of(final, {"PATH": "/usr/local/bin:/usr/bin:/bin"})
    assert env["PATH"].split(":")[0] == f"{VENV}/bin"
    assert env["HOME"] == "/tmp" and env.get("PYTHONDONTWRITEBYTECODE") == "1"


def _ignored(path: str, patterns: list[str]) -> bool:
    """Docker's .dockerignore rule: the last pattern matching the path or one of its parent directories wins,
    and a '!' pattern lets it back in. (``**/`` matches any number of directories, none included.)"""
    parts = path.split("/")
    candidates = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    ignored = False
    for pattern in patterns:
        negate = pattern.startswith("!")
        pat = pattern.removeprefix("!").rstrip("/")
        alternatives = {pat, pat.replace("**/", "")}
        if any(fnmatch.fnmatchcase(c, a) for c in candidates for a in alternatives):
            ignored = not negate
    return ignored


def test_dockerignore_lets_in_what_is_copied_and_nothing_else(stages: list[Stage]) -> None:
    """Every COPY source is in the context; tests, git data and caches are not."""
    patterns = [p.strip() for p in DOCKERIGNORE.read_text().splitlines() if p.strip() and not p.startswith("#")]
    sources = [src for s in stages for c in s.all("COPY") if "from" not in c.flags for src in c.args.split()[:-1]]
    assert sources
    for src in sources:
        assert (REPO / src).exists(), src
        root = REPO / src
        files = [root] if root.is_file() else [
            p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
        for f in files:
            assert not _ignored(f.relative_to(REPO).as_posix(), patterns), f"{f} is copied but ignored"
    for unwanted in ("tests/e2e/controlplane.py", ".git/HEAD", "extender/__pycache__/cli.cpython-311.pyc",
                     "examples/requests/filter.json", "Dockerfile"):
        assert _ignored(unwanted, patterns), f"{unwanted} would be sent to the daemon"


# --------------------------------------------------------------------------- run what the image runs


def _mount_namespace_works() -> bool:
    """True when ``unshare --mount`` can make read-only bind mounts here."""
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                            "mount --bind /tmp /tmp && mount -o remount,bind,ro /tmp"],
                           capture_output=True, check=False)
    return probe.returncode == 0


def _tree(*roots: Path) -> dict[str, tuple[int, int]]:
    """Every path under ``roots`` with its size and mtime, to see what a run wrote."""
    out: dict[str, tuple[int, int]] = {}
    for root in roots:
        for p in [root, *root.rglob("*")]:
            st = p.lstat()
            out[str(p)] = (st.st_size, st.st_mtime_ns)
    return out


@dataclass
class Image:
    """The image's filesystem as far as the test needs it: the venv and the copied files, mapped into tmp."""

    root: Path
    venv: Path
    src: Path

    def map(self, path: str, workdir: str) -> Path:
        """A path inside the image, as a path under the test's directory."""
        full = path if path.startswith("/") else f"{workdir.rstrip('/')}/{path}"
        if full == VENV or full.startswith(VENV + "/"):
            return self.venv / full[len(VENV):].lstrip("/")
        if full == "/src" or full.startswith("/src/"):
            return self.src / full[len("/src"):].lstrip("/")
        return self.root / full.lstrip("/")


def _copy(src: Path, dest: Path, into_dir: bool) -> None:
    if src.is_dir():
        shutil.copytree(src, dest, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    else:
        target = dest / src.name if into_dir else dest
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target)


def _see_our_packages(venv: Path) -> None:
    """Let the image's venv import this interpreter's dependencies (FastAPI, uvicorn...), offline.

    ``--system-site-packages`` gives the *base* interpreter's packages: when this test runs from a venv (as
    a newcomer does), the dependencies live in that venv instead, so its site-packages are added after the
    image venv's own (a ``.pth`` file); the image's ``extender`` still comes first.
    """
    if sys.prefix == sys.base_prefix:
        return
    ours = [p for p in site.getsitepackages() if Path(p).is_dir()]
    target = venv / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    (target / "_test_dependencies.pth").write_text("".join(f"{p}\n" for p in ours))


def build_image(stages: list[Stage], where: Path) -> Image:
    """Play the builder stage and the final stage's local COPYs into ``where``."""
    image = Image(where / "rootfs", where / "venv", where / "src")
    for stage in (stages[0], stages[-1]):
        workdir = "/"
        for ins in stage.instructions:
            if ins.keyword == "WORKDIR":
                workdir = ins.args.strip()
            elif ins.keyword == "COPY" and "from" not in ins.flags:
                *sources, dest = ins.args.split()
                for src in sources:
                    _copy(REPO / src, image.map(dest, workdir), dest.endswith("/"))
            elif ins.keyword == "RUN" and stage is stages[0]:
                if f"python -m venv {VENV}" in ins.args:
                    # Deps come from this interpreter's site-packages: the build stays offline and quick.
                    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip",
                                    str(image.venv)], check=True)
                    _see_our_packages(image.venv)
                if f"{VENV}/bin/pip install ." in ins.args:
                    subprocess.run([sys.executable, "-m", "pip", "--python", str(image.venv / "bin" / "python"),
                                    "install", "--quiet", "--no-deps", "--disable-pip-version-check",
                                    str(image.map(".", workdir))], check=True, capture_output=True)
                if "compileall" in ins.args:
                    subprocess.run([str(image.venv / "bin" / "python"), "-m", "compileall", "-q",
                                    str(image.venv / "lib")], check=True)
    return image


def test_the_image_command_runs_from_a_venv_read_only(stages: list[Stage], tmp_path: Path) -> None:
    """The ENTRYPOINT serves the demo cluster from the venv, with HOME and cwd read-only, and writes nothing."""
    image = build_image(stages, tmp_path)
    installed = subprocess.run([str(image.venv / "bin" / "python"), "-c", "import extender; print(extender.__file__)"],
                               capture_output=True, text=True, check=True, cwd=tmp_path).stdout.strip()
    assert installed.startswith(str(image.venv)), f"extender imported from {installed}, not from the venv"
    # The demo cluster ships as package data: a plain install finds it, nothing else is copied.
    assert (image.venv / "lib" / "python3.11" / "site-packages" / "extender" / "data" / "demo-cluster.yaml").is_file()
    assert (image.root / "etc" / "extender" / "extender.yaml").is_file()

    readonly = tmp_path / "readonly-home"
    readonly.mkdir()
    writable_tmp = tmp_path / "tmp"
    writable_tmp.mkdir()
    final = stages[-1]
    env = env_of(final, {"PATH": "/usr/local/bin:/usr/bin:/bin"})
    env = {k: str(image.map(v, "/")) if v.startswith(VENV) else v for k, v in env.items()}
    env["PATH"] = env["PATH"].replace(VENV, str(image.venv))
    env.update(HOME=str(readonly), TMPDIR=str(writable_tmp))
    port = free_port()
    env["EXTENDER_PORT"] = str(port)

    entrypoint = final.all("ENTRYPOINT")[0].exec_form()
    assert entrypoint is not None
    program = shutil.which(entrypoint[0], path=env["PATH"])
    assert program is not None and program.startswith(str(image.venv)), program
    # Loopback only here: the pod's args would be appended the same way (a later --host wins).
    argv = [program, *entrypoint[1:], "--host", "127.0.0.1"]
    sandboxed = _mount_namespace_works()
    if sandboxed:
        remount = " && ".join(f'mount --bind "${i}" "${i}" && mount -o remount,bind,ro "${i}"' for i in (1, 2, 3))
        argv = ["unshare", "--mount", "--propagation", "private", "sh", "-c", remount + ' && shift 3 && exec "$@"',
                "sh", str(image.venv), str(readonly), str(image.root), *argv]

    before = _tree(image.venv, readonly, image.root)
    svc = Service(tmp_path, cluster=None, port=port, env=env, cwd=readonly, command=argv)
    svc.start(timeout=30)
    try:
        with svc.client() as client:
            assert client.get("/healthz").text == "ok"
            ready = client.get("/readyz").json()
            assert ready["ready"] is True and ready["cache"]["nodes"] == 33, ready  # the demo cluster
            body = (REPO / "examples" / "requests" / "filter.json").read_bytes()
            answer = client.post("/filter", content=body, headers={"content-type": "application/json"})
            assert answer.status_code == 200 and answer.json()["Error"] == ""
        health = json.loads(final.all("HEALTHCHECK")[0].args[len("CMD"):].strip())
        health[0] = shutil.which(health[0], path=env["PATH"]) or health[0]
        assert health[0].startswith(str(image.venv))
        assert subprocess.run(health, env=env, cwd=readonly, capture_output=True, timeout=10).returncode == 0
    finally:
        assert svc.process is not None
        svc.process.stop(timeout=15)
    # uvicorn finishes its shutdown, then re-raises SIGTERM so that the exit status says why it ended.
    assert svc.process.popen.returncode in (0, -signal.SIGTERM), svc.process.tail(20)
    assert "Application shutdown complete" in svc.process.tail(20), "SIGTERM did not end it cleanly"
    failed = subprocess.run(health, env=env, cwd=readonly, capture_output=True, timeout=10)
    assert failed.returncode != 0, "HEALTHCHECK passes with nothing listening"
    after = _tree(image.venv, readonly, image.root)
    assert after == before, f"written outside /tmp: {sorted(set(after.items()) ^ set(before.items()))[:10]}"
