"""Start-up failures of ``extender serve`` and bad files given to the CLI: one line on stderr, exit 2, and no
"serving" logged first (the real process)."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_extender(*args: str, cwd: Path = ROOT, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "extender", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=60, input=stdin)


def assert_one_line_exit_2(result: subprocess.CompletedProcess[str], fragment: str) -> None:
    assert result.returncode == 2, (result.returncode, result.stderr[-2000:])
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr[-3000:]
    assert lines[0].startswith("extender: ") and fragment in lines[0], lines[0]
    assert "Traceback" not in result.stderr and '"serving"' not in result.stderr


def self_signed(directory: Path, name: str) -> tuple[Path, Path]:
    """A throw-away certificate and key (openssl or cryptography), for the mismatch case."""
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now)
            .not_valid_after(now + datetime.timedelta(days=1)).sign(key, hashes.SHA256()))
    cert_path, key_path = directory / f"{name}.crt", directory / f"{name}.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


@pytest.fixture
def certs(tmp_path: Path) -> dict[str, Path]:
    pytest.importorskip("cryptography")
    one_cert, one_key = self_signed(tmp_path, "one")
    _, other_key = self_signed(tmp_path, "other")
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n")
    return {"cert": one_cert, "key": one_key, "other_key": other_key, "garbage": garbage}


def test_a_certificate_with_another_key_is_one_line_and_exit_2(certs: dict[str, Path]) -> None:
    result = run_extender("serve", "--port", str(free_port()), "--tls-cert-file", str(certs["cert"]),
                          "--tls-key-file", str(certs["other_key"]))
    assert_one_line_exit_2(result, "not a usable certificate and matching private key")


def test_a_garbage_certificate_is_one_line_and_exit_2(certs: dict[str, Path]) -> None:
    result = run_extender("serve", "--port", str(free_port()), "--tls-cert-file", str(certs["garbage"]),
                          "--tls-key-file", str(certs["key"]))
    assert_one_line_exit_2(result, "tls:")


def test_a_garbage_client_ca_is_one_line_and_exit_2(certs: dict[str, Path]) -> None:
    result = run_extender("serve", "--port", str(free_port()), "--tls-cert-file", str(certs["cert"]),
                          "--tls-key-file", str(certs["key"]), "--client-ca-file", str(certs["garbage"]))
    assert_one_line_exit_2(result, "no usable CA certificate")


def test_a_plugin_whose_constructor_raises_is_one_line_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "broken_plugin.py").write_text(
        "from extender.engine.framework import ScorePlugin\n"
        "from extender.engine.registry import register\n\n\n"
        "@register\n"
        "class BrokenAtStart(ScorePlugin):\n"
        "    name = 'BrokenAtStart'\n\n"
        "    def __init__(self, args=None):\n"
        "        raise RuntimeError('cannot reach the\\nlicence server')\n")
    config = tmp_path / "config.yaml"
    config.write_text("imports: [broken_plugin.py]\nprofiles:\n  - plugins:\n      multiPoint:\n"
                      "        enabled: [{name: BrokenAtStart}]\n")
    result = run_extender("serve", "--port", str(free_port()), "--config", str(config))
    assert_one_line_exit_2(result, "a plugin failed to start: RuntimeError: cannot reach the licence server")


@pytest.mark.parametrize(("raising", "message"), [
    ("raise BaseException('the licence server said no')",
     "a plugin failed to start: BaseException: the licence server said no"),
    ("import sys; sys.exit(0)", "a plugin failed to start: SystemExit: 0"),
    ("raise SystemExit('bye')", "a plugin failed to start: SystemExit: bye"),
])
def test_a_plugin_constructor_that_exits_or_raises_base_exception_is_one_line_and_exit_2(
        tmp_path: Path, raising: str, message: str) -> None:
    """Never a traceback, never a silent exit 0: the start fails as for any other bad plugin."""
    (tmp_path / "exiting_plugin.py").write_text(
        "from extender.engine.framework import ScorePlugin\n"
        "from extender.engine.registry import register\n\n\n"
        "@register\n"
        "class ExitsAtStart(ScorePlugin):\n"
        "    name = 'ExitsAtStart'\n\n"
        "    def __init__(self, args=None):\n"
        f"        {raising}\n")
    config = tmp_path / "config.yaml"
    config.write_text("imports: [exiting_plugin.py]\nprofiles:\n  - plugins:\n      multiPoint:\n"
                      "        enabled: [{name: ExitsAtStart}]\n")
    result = run_extender("serve", "--port", str(free_port()), "--config", str(config))
    assert_one_line_exit_2(result, message)


def test_a_plugin_module_that_exits_on_import_is_one_line_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "exiting_module.py").write_text("import sys\nsys.exit(0)\n")
    config = tmp_path / "config.yaml"
    config.write_text("imports: [exiting_module.py]\n")
    result = run_extender("serve", "--port", str(free_port()), "--config", str(config))
    assert_one_line_exit_2(result, "cannot import plugin module 'exiting_module.py': SystemExit: 0")


def test_an_encrypted_private_key_is_one_line_and_exit_2_without_a_prompt(certs: dict[str, Path],
                                                                         tmp_path: Path) -> None:
    """A pass-phrase protected key: refused at once (OpenSSL would otherwise ask on the terminal)."""
    from cryptography.hazmat.primitives import serialization

    key = serialization.load_pem_private_key(certs["key"].read_bytes(), password=None)
    encrypted = tmp_path / "encrypted.key"
    encrypted.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                            serialization.BestAvailableEncryption(b"secret")))
    result = run_extender("serve", "--port", str(free_port()), "--tls-cert-file", str(certs["cert"]),
                          "--tls-key-file", str(encrypted), stdin="secret\n")
    assert_one_line_exit_2(result, f"tls: {encrypted} is encrypted (protected by a pass phrase)")


def test_a_port_in_use_is_one_line_and_exit_2() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_extender("serve", "--port", str(free_port()), "--health-port", str(port),
                              "--health-host", "127.0.0.1")
    assert_one_line_exit_2(result, "health port: cannot listen on 127.0.0.1")


def test_a_yaml_alias_bomb_is_refused_with_one_line(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.yaml"
    levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for previous, name in zip("abcdefgh", "bcdefghi", strict=True):
        levels.append(f"{name}: &{name} [{', '.join([f'*{previous}'] * 9)}]")
    bomb.write_text("\n".join([*levels, "kind: Pod", "metadata: {name: bomb}"]) + "\n")
    assert bomb.stat().st_size < 2000
    result = run_extender("explain", "--pod", str(bomb))
    assert_one_line_exit_2(result, "YAML aliases expand to more than")
    result = run_extender("serve", "--port", str(free_port()), "--cluster", str(bomb))
    assert_one_line_exit_2(result, "YAML aliases expand to more than")


def test_a_recursive_yaml_alias_is_refused_with_one_line(tmp_path: Path) -> None:
    """``&a [*a]`` expands forever: refused at once, never followed (the reader used to loop, growing memory)."""
    loop = tmp_path / "loop.yaml"
    loop.write_text("kind: Pod\nmetadata: {name: loop}\nspec: &s {containers: [*s]}\n")
    result = run_extender("serve", "--port", str(free_port()), "--cluster", str(loop))
    assert_one_line_exit_2(result, "a YAML alias refers to a node that contains it")


def test_a_body_memory_smaller_than_the_largest_body_is_one_line_and_exit_2() -> None:
    result = run_extender("serve", "--port", str(free_port()), "--max-body-bytes", "1048576",
                          "--max-body-memory", "524288")
    assert_one_line_exit_2(result, "max body memory: 524288 is less than --max-body-bytes (1048576)")
