# syntax=docker/dockerfile:1
# The kube-scheduler extender: a slim, non-root image that is happy on a read-only root filesystem.
#
#   docker build -t scheduler-extender:0.1.0 .
#   docker run --rm -p 8888:8888 scheduler-extender:0.1.0                 # the bundled demo cluster
#   docker run --rm scheduler-extender:0.1.0 --in-cluster                 # (in a pod) watch the cluster
#
# Arguments after the image name are appended to `extender serve --host 0.0.0.0` (a later --host wins).
# The only writable place it needs is /tmp (HOME points there); mount an emptyDir on /tmp in Kubernetes.
# Pin the base by digest in your registry mirror for bit-for-bit rebuilds (python:3.11-slim-bookworm@sha256:...).

# ---------------------------------------------------------------- builder: the package and its deps in a venv
FROM python:3.11-slim-bookworm AS builder

ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1

RUN python -m venv /opt/venv

WORKDIR /src
# The dependencies from the lock first (exact versions, every file's hash checked; `scripts/lock` writes it):
# a layer that only changes with the lock. It includes the build backend for the next step.
COPY requirements/runtime.txt ./requirements/
RUN /opt/venv/bin/pip install --require-hashes -r requirements/runtime.txt
# Then the project itself, built by the locked setuptools (no isolated build fetching another one); the build
# backend leaves the venv afterwards.
COPY pyproject.toml README.md ./
COPY extender/ ./extender/
RUN /opt/venv/bin/pip install . --no-deps --no-build-isolation \
 && /opt/venv/bin/pip uninstall --yes --quiet setuptools wheel \
 && /opt/venv/bin/python -m compileall -q /opt/venv/lib/python3.11/site-packages

# ---------------------------------------------------------------- runtime: the venv on the same base, no build tools
FROM python:3.11-slim-bookworm

LABEL org.opencontainers.image.title="kube-scheduler-extender" \
      org.opencontainers.image.description="kube-scheduler extender (filter, prioritize, bind, preempt) with the in-tree plugins of v1.36.3" \
      org.opencontainers.image.licenses="Apache-2.0"

ENV PATH=/opt/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    HOME=/tmp \
    TMPDIR=/tmp

COPY --from=builder /opt/venv /opt/venv
# The example configuration (profiles), for `--config /etc/extender/extender.yaml`.
COPY config/extender.yaml /etc/extender/extender.yaml

# distroless "nonroot": no passwd entry needed, never root.
USER 65532:65532
WORKDIR /tmp

EXPOSE 8888

# Plain-HTTP liveness on the health port (EXTENDER_HEALTH_PORT) when one is set, else on the serving port
# (EXTENDER_PORT, default 8888). Kubernetes ignores HEALTHCHECK and uses the Deployment's probes.
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request as r; e = os.environ.get; r.urlopen('http://127.0.0.1:' + (e('EXTENDER_HEALTH_PORT') or e('EXTENDER_PORT') or '8888') + '/healthz', timeout=2)"]

ENTRYPOINT ["extender", "serve", "--host", "0.0.0.0"]
