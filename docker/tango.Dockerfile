# syntax=docker/dockerfile:1
# Tango images: the Tango adapter (target `adapter`) and the simulated Tango
# device server (target `sim`). Build from the repository root:
#   docker build -f docker/tango.Dockerfile --target adapter -t synoptic/adapter-tango .
# Only the `[tango]` extra is installed (pytango bundles cppTango, omniORB, ZeroMQ).

FROM ghcr.io/astral-sh/uv:0.13.9 AS uv

FROM python:3.11.14-slim-bookworm AS build
COPY --from=uv /uv /usr/local/bin/uv
ENV UV_COMPILE_BYTECODE=1 \
    UV_LINK_MODE=copy \
    UV_PYTHON_DOWNLOADS=never \
    UV_PROJECT_ENVIRONMENT=/app/.venv
WORKDIR /src
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
    uv sync --frozen --no-dev --no-install-workspace --package synoptic-adapters --extra tango
COPY schemas/ schemas/
COPY bus/ bus/
COPY importer/ importer/
COPY adapters/ adapters/
RUN --mount=type=cache,target=/root/.cache/uv \
    uv sync --frozen --no-dev --no-editable --package synoptic-adapters --extra tango

FROM python:3.11.14-slim-bookworm AS runtime
RUN useradd --system --uid 10001 --user-group --no-create-home --home-dir /app synoptic
COPY --from=build /app/.venv /app/.venv
COPY docker/healthcheck.py /app/healthcheck.py
ENV PATH=/app/.venv/bin:$PATH \
    PYTHONUNBUFFERED=1
WORKDIR /app
USER 10001:10001

FROM runtime AS sim
# Database-less device server: clients use tango://HOST:10000/dom/fam/mem#dbase=no.
EXPOSE 10000/tcp
CMD ["synoptic", "sim", "tango", "--host", "0.0.0.0", "--port", "10000"]

FROM runtime AS adapter
HEALTHCHECK --interval=5s --timeout=4s --start-period=10s --retries=3 \
    CMD ["python", "/app/healthcheck.py", "heartbeat"]
CMD ["synoptic", "adapter", "tango", "--config", "/etc/synoptic/tango.yaml"]
