"""The Helm chart rendered as the plain manifests under k8s/, so that the two cannot drift apart.

``k8s/`` is generated from ``charts/scheduler-extender``: each layout's ``ci/<layout>-values.yaml`` is rendered
with ``helm template`` (release and namespace as below), Helm's own bookkeeping is dropped (the
``helm.sh/chart``, ``app.kubernetes.io/managed-by`` and ``app.kubernetes.io/version`` labels, the
``checksum/config`` pod annotation), and each object goes to a file named after its kind. The kustomizations
and the standalone Namespace are written by hand (a chart leaves namespaces to ``--create-namespace``).

    scripts/render-k8s           rewrite k8s/ from the chart (needs tests/ops/build-tools for helm)

``tests/ops/test_ops_chart.py`` renders the same way and requires k8s/ to hold exactly these objects.
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
CHART = REPO / "charts" / "scheduler-extender"
K8S = REPO / "k8s"
BUILD_TOOLS = REPO / "tests" / "ops" / "build-tools"

HELM_LABELS = ("helm.sh/chart", "app.kubernetes.io/managed-by", "app.kubernetes.io/version")
HELM_ANNOTATIONS = ("checksum/config",)
# Lines of helm's output that are Helm's bookkeeping, not the object.
_DROP = re.compile(r"^\s*(# Source: .*|(" + "|".join(re.escape(k) for k in HELM_LABELS + HELM_ANNOTATIONS) + r"): .*)$")

FILE_OF_KIND = {
    "ServiceAccount": "serviceaccount.yaml",
    "ClusterRole": "rbac.yaml",
    "ClusterRoleBinding": "rbac.yaml",
    "Role": "rbac.yaml",
    "RoleBinding": "rbac.yaml",
    "ConfigMap": "configmap.yaml",
    "Deployment": "deployment.yaml",
    "Service": "service.yaml",
    "PodDisruptionBudget": "pdb.yaml",
    "NetworkPolicy": "networkpolicy.yaml",
}


@dataclass(frozen=True)
class Layout:
    """One folder of k8s/ and the chart rendering it comes from."""

    folder: str
    release: str
    namespace: str
    values: tuple[str, ...]  # values files under the chart
    sets: tuple[str, ...] = ()  # --set arguments
    minus: str | None = None  # a folder whose objects this one only adds to (an overlay)


LAYOUTS = (
    Layout("sidecar", "extender-scheduler", "kube-system", ("ci/sidecar-values.yaml",)),
    Layout("standalone", "scheduler-extender", "scheduler-extender", ("ci/standalone-values.yaml",)),
    Layout("standalone-bind", "scheduler-extender", "scheduler-extender", ("ci/standalone-values.yaml",),
           ("bind=true",), minus="standalone"),
)
HAND_WRITTEN = {"kustomization.yaml", "namespace.yaml"}


def helm_binary() -> Path:
    """helm from tests/ops/build-tools (built from the Go module proxy on first use)."""
    out = subprocess.run([str(BUILD_TOOLS)], capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL)
    if out.returncode != 0:
        raise RuntimeError(f"tests/ops/build-tools failed (exit {out.returncode}):\n{out.stderr[-3000:]}")
    return Path(out.stdout.strip().splitlines()[-1]) / "helm"


def template(helm: Path, release: str, namespace: str, values: tuple[str, ...] = (), sets: tuple[str, ...] = (),
             extra: tuple[str, ...] = ()) -> str:
    """``helm template`` of the chart; raises with helm's message when it refuses the values."""
    argv = [str(helm), "template", release, str(CHART), "--namespace", namespace, *extra]
    for v in values:
        argv += ["-f", str(CHART / v) if not Path(v).is_absolute() else v]
    for s in sets:
        argv += ["--set", s]
    out = subprocess.run(argv, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise ChartRefused(out.stderr.strip())
    return out.stdout


class ChartRefused(RuntimeError):
    """helm template failed (a ``fail`` or ``required`` in the chart, or a schema error)."""


def documents(text: str) -> list[str]:
    """The rendered YAML documents as text, Helm's bookkeeping lines removed, empty ones dropped."""
    docs = []
    for chunk in re.split(r"^---\s*$", text, flags=re.MULTILINE):
        lines = [line for line in chunk.splitlines() if not _DROP.match(line)]
        body = "\n".join(lines).strip("\n")
        if yaml.safe_load(body):
            docs.append(body + "\n")
    return docs


def key(obj: dict[str, Any]) -> tuple[str, str, str]:
    """(kind, namespace, name): what identifies an object."""
    return obj["kind"], obj["metadata"].get("namespace", ""), obj["metadata"]["name"]


def render_layout(helm: Path, layout: Layout) -> dict[str, list[str]]:
    """File name -> the documents k8s/<folder>/ holds for this layout (hand-written files excluded)."""
    docs = documents(template(helm, layout.release, layout.namespace, layout.values, layout.sets))
    if layout.minus is not None:
        base = next(entry for entry in LAYOUTS if entry.folder == layout.minus)
        known = {key(yaml.safe_load(d)) for d in
                 documents(template(helm, base.release, base.namespace, base.values, base.sets))}
        docs = [d for d in docs if key(yaml.safe_load(d)) not in known]
    files: dict[str, list[str]] = {}
    for doc in docs:
        obj = yaml.safe_load(doc)
        name = "binder.yaml" if layout.minus else FILE_OF_KIND[obj["kind"]]
        files.setdefault(name, []).append(doc)
    return files


HEADER = "# Generated from charts/scheduler-extender by scripts/render-k8s ({values}): edit the chart, then rerun.\n"


def write(helm: Path) -> None:
    """Rewrite the generated files of k8s/."""
    for layout in LAYOUTS:
        folder = K8S / layout.folder
        folder.mkdir(parents=True, exist_ok=True)
        for stale in folder.glob("*.yaml"):
            if stale.name not in HAND_WRITTEN:
                stale.unlink()
        settings = ", ".join([*layout.values, *(f"--set {s}" for s in layout.sets)])
        for name, docs in render_layout(helm, layout).items():
            (folder / name).write_text(HEADER.format(values=settings) + "---\n".join(docs))


if __name__ == "__main__":
    write(helm_binary())
    print(f"rewrote {', '.join(str(K8S / layout.folder) for layout in LAYOUTS)}", file=sys.stderr)
