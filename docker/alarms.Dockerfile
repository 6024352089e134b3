# syntax=docker/dockerfile:1
# The alarm service image (`synoptic alarms run`): the state of every alarm of
# the alarm tree, kept in JetStream (docs/decisions/0030-alarm-service.md).
# Build from the repository root:
#   docker build -f docker/alarms.Dockerfile -t synoptic/alarms .
# Three stages: uv, the Python environment built by uv, and a slim runtime
# holding only the virtual environment and the health probe.

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
    uv sync --frozen --no-dev --no-install-workspace --package synoptic-alarms
COPY schemas/ schemas/
COPY bus/ bus/
COPY importer/ importer/
COPY alarms/ alarms/
RUN --mount=type=cache,target=/root/.cache/uv \
    uv sync --frozen --no-dev --no-editable --package synoptic-alarms

FROM python:3.11.14-slim-bookworm AS runtime
RUN useradd --system --uid 10001 --user-group --no-create-home --home-dir /app synoptic
COPY --from=build /app/.venv /app/.venv
COPY docker/healthcheck.py /app/healthcheck.py
ENV PATH=/app/.venv/bin:$PATH \
    PYTHONUNBUFFERED=1
WORKDIR /app
USER 10001:10001
HEALTHCHECK --interval=10s --timeout=4s --start-period=60s --retries=3 \
    CMD ["python", "/app/healthcheck.py", "alarms"]
CMD ["synoptic", "alarms", "run"]
