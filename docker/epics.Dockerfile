# syntax=docker/dockerfile:1
# EPICS images: the Channel Access adapter (target `adapter`), the simulated
# soft IOC (target `sim`), the PV Access adapter (target `adapter-pva`) and the
# simulated PV Access server (target `sim-pva`). Build from the repository root:
#   docker build -f docker/epics.Dockerfile --target adapter -t synoptic/adapter-epics .
# Only the `[epics]` and `[pva]` extras are installed (aioca, epicscorelibs, p4p and the
# areaDetector codec wheels lz4, blosc, simplejpeg):
# no pytango, no web stack.

FROM ghcr.io/astral-sh/uv:0.13.9 AS uv

FROM python:3.11.14-slim-bookworm AS build
COPY --from=uv /uv /usr/local/bin/uv
ENV UV_COMPILE_BYTECODE=1 \
    UV_LINK_MODE=copy \
    UV_PYTHON_DOWNLOADS=never \
    UV_PROJECT_ENVIRONMENT=/app/.venv
WORKDIR /src
# Dependencies first (cached until uv.lock or a pyproject.toml changes) ...
COPY uv.lock pyproject.toml ./
COPY schemas/pyproject.toml schemas/
COPY bus/pyproject.toml bus/
COPY importer/pyproject.toml importer/
COPY adapters/pyproject.toml adapters/
COPY gateway/pyproject.toml gateway/
COPY identity/pyproject.toml identity/
COPY alarms/pyproject.toml alarms/
COPY benchmarks/pyproject.toml benchmarks/
RUN --mount=type=cache,target=/root/.cache/uv \
    uv sync --frozen --no-dev --no-install-workspace --package synoptic-adapters --extra epics --extra pva
# ... then our code, installed as wheels (not editable) so /src can be left behind.
COPY schemas/ schemas/
COPY bus/ bus/
COPY importer/ importer/
COPY adapters/ adapters/
RUN --mount=type=cache,target=/root/.cache/uv \
    uv sync --frozen --no-dev --no-editable --package synoptic-adapters --extra epics --extra pva

FROM python:3.11.14-slim-bookworm AS runtime
RUN useradd --system --uid 10001 --user-group --no-create-home --home-dir /app synoptic
COPY --from=build /app/.venv /app/.venv
COPY docker/healthcheck.py /app/healthcheck.py
ENV PATH=/app/.venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    EPICS_CA_AUTO_ADDR_LIST=NO \
    EPICS_CA_MAX_ARRAY_BYTES=10000000
WORKDIR /app
USER 10001:10001

FROM runtime AS sim
EXPOSE 5064/tcp 5064/udp
HEALTHCHECK --interval=5s --timeout=4s --start-period=10s --retries=3 \
    CMD ["python", "/app/healthcheck.py", "ca", "DEMO:CNT:00000"]
CMD ["synoptic", "sim", "ioc", "--prefix", "DEMO:", "--port", "5064"]

FROM runtime AS adapter
HEALTHCHECK --interval=5s --timeout=4s --start-period=10s --retries=3 \
    CMD ["python", "/app/healthcheck.py", "heartbeat"]
CMD ["synoptic", "adapter", "epics", "--config", "/etc/synoptic/epics.yaml"]

FROM runtime AS sim-pva
EXPOSE 5075/tcp 5076/udp
HEALTHCHECK --interval=5s --timeout=4s --start-period=10s --retries=3 \
    CMD ["python", "/app/healthcheck.py", "pva", "DEMO:CNT:00000"]
CMD ["synoptic", "sim", "pva", "--prefix", "DEMO:", "--port", "5075"]

FROM runtime AS adapter-pva
HEALTHCHECK --interval=5s --timeout=4s --start-period=10s --retries=3 \
    CMD ["python", "/app/healthcheck.py", "heartbeat"]
CMD ["synoptic", "adapter", "pva", "--config", "/etc/synoptic/pva.yaml"]
