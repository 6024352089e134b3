# syntax=docker/dockerfile:1
# The gateway image: FastAPI WebSocket gateway serving the built UI and the
# screens. Build from the repository root:
#   docker build -f docker/gateway.Dockerfile -t synoptic/gateway .
# Three stages: the UI built by Node, the Python environment built by uv, and a
# slim runtime holding only the virtual environment, ui/dist and screens/.

FROM ghcr.io/astral-sh/uv:0.13.9 AS uv

FROM node:20.20.2-bookworm-slim AS ui
WORKDIR /src/ui
COPY ui/package.json ui/package-lock.json ./
RUN --mount=type=cache,target=/root/.npm npm ci --no-audit --no-fund
# The UI may import generated types and schemas from ../schemas.
COPY schemas/ /src/schemas/
COPY ui/ ./
RUN npx vite build

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
    uv sync --frozen --no-dev --no-install-workspace --package synoptic-gateway
COPY schemas/ schemas/
COPY bus/ bus/
COPY importer/ importer/
COPY gateway/ gateway/
RUN --mount=type=cache,target=/root/.cache/uv \
    uv sync --frozen --no-dev --no-editable --package synoptic-gateway

FROM python:3.11.14-slim-bookworm AS runtime
RUN useradd --system --uid 10001 --user-group --no-create-home --home-dir /app synoptic
COPY --from=build /app/.venv /app/.venv
COPY --from=ui /src/ui/dist /app/ui/dist
COPY screens/ /app/screens/
COPY docker/healthcheck.py /app/healthcheck.py
ENV PATH=/app/.venv/bin:$PATH \
    PYTHONUNBUFFERED=1
WORKDIR /app
USER 10001:10001
EXPOSE 8000/tcp
HEALTHCHECK --interval=5s --timeout=4s --start-period=10s --retries=3 \
    CMD ["python", "/app/healthcheck.py", "http", "http://127.0.0.1:8000/readyz"]
CMD ["synoptic", "gateway", "--host", "0.0.0.0", "--port", "8000", "--screens", "/app/screens", "--ui", "/app/ui/dist"]
