# agentready — make targets. `make test` is what CI runs (.ci/run).
GO       ?= go
BIN      := bin
FUZZTIME ?= 2s
FUZZ_JOBS ?= 1

.PHONY: all build wasm worker run demo test check vet unit fuzz fuzz-long bench bench-origin bench-afdocs bench-mcp bench-repo bench-edge bench-stack bench-monitors bench-monitorio bench-deep bench-survey screenshots docs fmt clean image deploy-local test-deploy

ADDR ?= 127.0.0.1:8080
DATA ?= ./data

# The one version of a build (internal/version): /healthz, the MCP server card,
# the scanner's and a survey's User-Agent and `agentready version` say it.
# Without Git (or tags) it is empty, and the binary falls back on Go's build
# information, else "devel".
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null)
LDFLAGS  := -X github.com/agentready/agentready/internal/version.version=$(VERSION)

all: build

build:
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/agentready ./cmd/agentready

# The edge compiled to WebAssembly (GOOS=wasip1 reactor), hosted by wazero in `serve`.
wasm: $(BIN)/edge.wasm
$(BIN)/edge.wasm: $(shell find edge cmd/edgewasm -name '*.go' -o -name '*.css' -o -name '*.js' -o -name '*.html' -o -name '*.md' -o -name '*.txt' -o -name '*.json' -o -name '*.xml' 2>/dev/null) go.mod
	GOOS=wasip1 GOARCH=wasm $(GO) build -buildmode=c-shared -trimpath -ldflags='-s -w' -o $(BIN)/edge.wasm ./cmd/edgewasm

# The edge for Cloudflare Workers (GOOS=js): build/worker, deployed by wrangler.toml
# and run by workerd in the tests. index.mjs (edge/workers) is the entry module; it
# runs one Go instance per isolate with Go's own wasm_exec.js, taken from the toolchain
# that builds app.wasm so that the two always match.
worker: build/worker/app.wasm
build/worker/app.wasm: $(shell find edge cmd/edgeworker -name '*.go' -o -name '*.css' -o -name '*.js' -o -name '*.mjs' -o -name '*.html' -o -name '*.md' -o -name '*.txt' -o -name '*.json' -o -name '*.xml' 2>/dev/null) go.mod
	rm -rf build/worker
	mkdir -p build/worker
	cp "$$($(GO) env GOROOT)/lib/wasm/wasm_exec.js" build/worker/wasm_exec.js
	GOOS=js GOARCH=wasm $(GO) build -trimpath -buildvcs=false -ldflags='-s -w' -o build/worker/app.wasm ./cmd/edgeworker
	cp edge/workers/index.mjs build/worker/index.mjs

# Start the whole service on the embedded default (no Redis, no Chromium needed).
run: build wasm
	$(BIN)/agentready serve --addr $(ADDR) --data $(DATA) --edge-wasm $(BIN)/edge.wasm

# Scan the bundled fixture site that does nearly everything right
# (DEMO_SITE=peer for another one of testdata/sites). The fixture server prints
# its URL once it listens; if it exits first, or has not within DEMO_TIMEOUT
# seconds, the demo stops with a message and the server's log instead of
# waiting forever. The server is stopped however the demo ends.
DEMO_SITE    ?= full
DEMO_TIMEOUT ?= 10
DEMO_SERVER  ?= $(BIN)/fixtureserver -site $(DEMO_SITE)
demo: build
	@test -d testdata/sites/$(DEMO_SITE) || { echo "make demo: there is no fixture site testdata/sites/$(DEMO_SITE); pick one of: $$(ls testdata/sites | tr '\n' ' ')" >&2; exit 2; }
	@$(GO) build -o $(BIN)/fixtureserver ./bench/fixtureserver
	@rm -f $(BIN)/.demo-url; \
	  $(DEMO_SERVER) > $(BIN)/.demo-url 2> $(BIN)/.demo-log & pid=$$!; \
	  trap 'kill $$pid 2>/dev/null' EXIT; \
	  n=0; until [ -s $(BIN)/.demo-url ]; do \
	    if ! kill -0 $$pid 2>/dev/null; then \
	      echo "make demo: the fixture server exited before printing its URL. Its log:" >&2; cat $(BIN)/.demo-log >&2; exit 1; fi; \
	    n=$$((n+1)); if [ $$n -gt $$(($(DEMO_TIMEOUT)*10)) ]; then \
	      echo "make demo: the fixture server did not print its URL within $(DEMO_TIMEOUT) s, so it was stopped. Its log:" >&2; cat $(BIN)/.demo-log >&2; exit 1; fi; \
	    sleep 0.1; done; \
	  $(BIN)/agentready scan $$(cat $(BIN)/.demo-url)

test: vet wasm worker unit fuzz

# The quick tier for the edit-test loop: vet, gofmt and go test -short (no race detector, the
# suites that start Redis clusters, Chromium, workerd, kill -9 processes or real services
# skip under -short). make test is the full tier CI runs.
check: vet
	$(GO) test -short -count=1 ./...

vet:
	$(GO) vet ./...
	@test -z "$$(gofmt -l .)" || (echo "gofmt needed:"; gofmt -l .; exit 1)

# go test -json through internal/tools/testsummary: package lines, failed tests in
# full, then "N passed, N failed, N skipped" alone on a line and every skip
# with its reason. Exits non-zero when a test or a build failed.
# Packages run one at a time (-p 1): several start their own servers, origin
# processes and Chromium, and two such packages at once on a 2-core machine
# starve each other past the deadlines their tests poll with (the monitor
# kill tests' runs fell behind their cadence).
unit:
	$(GO) run ./internal/tools/testsummary -go $(GO) -race -count=1 -p 1 ./...

# Each fuzz target briefly (FUZZTIME=2s), found in the test files (internal/tools/fuzzall:
# every func FuzzX(f *testing.F), none to register); `make fuzz-long` runs them for a minute
# each. FUZZ_JOBS targets run at once (1 on a 2-core machine: each already runs two workers).
fuzz:
	$(GO) run ./internal/tools/fuzzall -go $(GO) -fuzztime $(FUZZTIME) -jobs $(FUZZ_JOBS)

fuzz-long:
	$(MAKE) fuzz FUZZTIME=60s

bench:
	$(GO) run ./bench/scanbench

# AFDocs (the Agent-Friendly Documentation Spec's checker, npm, pinned in
# bench/afdocs/package-lock.json) beside agentready on the read-suite fixture
# sites (docs/benchmarks.md); e.g. make bench-afdocs AFDOCS_FLAGS='-runs 3 -sites full,docsdrip'
bench-afdocs:
	npm ci --prefix bench/afdocs --no-audit --no-fund --ignore-scripts
	$(GO) run ./bench/afdocs $(AFDOCS_FLAGS)

bench-origin:
	$(GO) run ./bench/originbench

bench-mcp:
	$(GO) run ./bench/mcpbench

bench-edge: wasm
	$(GO) run ./bench/edgebench

# The whole service as `make run` assembles it, under a load generator in another process.
bench-stack: wasm
	$(GO) run ./bench/stackbench

# the paid deep scan beside the free scan on the fixture sites, 100 ms per response (issue 13)
bench-deep:
	$(GO) run ./bench/deepbench

# 10,000 monitors due at once on one origin, an interactive client beside them (issues 12, 21);
# flags pass through, e.g. make bench-monitors MONITORBENCH_FLAGS='-workers 16 -redis redis://127.0.0.1:6379/0'
# (a Redis Cluster: -redis redis://127.0.0.1:17001,127.0.0.1:17002,127.0.0.1:17003, see .ci/redis-cluster.sh).
bench-monitors:
	$(GO) run ./bench/monitorbench $(MONITORBENCH_FLAGS)

# 100 monitors every 2 s on a real `agentready serve` with the embedded store: KB written to
# disk per run (/proc/PID/io write_bytes), failing over 64 (issue 21's steady workload);
# flags pass through, e.g. make bench-monitorio MONITORIO_FLAGS='-warmup 10000 -runs 1000 -timeout 8m'
bench-monitorio:
	$(GO) run ./bench/monitorio $(MONITORIO_FLAGS)

# `agentready survey` over a synthetic web of 10,000 sites on loopback (issue 23): sites/s,
# peak RSS at 1,000 and 10,000 sites, the report against the known counts, kill -9 and
# resume, 4 shards merged; flags pass through, e.g. SURVEYBENCH_FLAGS='-sites 2000'.
bench-survey:
	$(GO) run ./bench/surveybench $(SURVEYBENCH_FLAGS)

bench-repo:
	$(GO) run ./bench/repobench -files 10000
	$(GO) run ./bench/repobench -files 40000

# Screenshots for the README (docs/screenshots/README.md lists them): the homepage and a report
# with a history, in real Chromium against the real stack and a fixture site, at desktop
# (1280x800) and phone (360x800) sizes, light and dark. The fixture's address and the scan
# times are written as fixed text, so the PNGs change only when the page does.
screenshots:
	$(GO) test ./internal/stack -run TestScanPageScreenshots -count=1 -screenshots

docs:
	$(GO) test ./engine/checks -run TestDocsAreGenerated -update
	$(GO) test ./origin/mcpserver -run TestExportedDefinitionsAreCurrent -update
	$(GO) test ./cmd/agentready -run 'TestREADMEExamples|TestExitCodesInDocs' -update
	$(GO) test ./internal/stack -run TestEdgeCatalogIsCurrent -update

# Deployment (deploy/, docs/deploy.md). `make image` builds the container image
# (IMAGE=, BASE_IMAGE=, GO_IMAGE= override; without them no image registry is
# needed: the base comes from debootstrap, Go from this machine). `make
# deploy-local` starts deploy/compose.yaml (Redis, two origins, the edge) and
# prints its URL. `make test-deploy` installs docker and starts dockerd when
# missing, builds the images and runs the deployment test.
IMAGE ?= agentready:latest
image:
	IMAGE=$(IMAGE) VERSION=$(VERSION) sh deploy/image.sh agentready

deploy-local:
	IMAGE=$(IMAGE) VERSION=$(VERSION) sh deploy/up.sh

test-deploy:
	IMAGE=$(IMAGE) VERSION=$(VERSION) sh deploy/test-deploy.sh

fmt:
	gofmt -w .

clean:
	rm -rf $(BIN)
