GO ?= go
SHELL := bash
# Where `make run` starts the development store when MONGODB_URI is not set.
DEVSTORE_ADDR ?= 127.0.0.1:27017

# How long `make fuzz` runs each fuzz target.
FUZZTIME ?= 30s

.PHONY: test unit integration vet bench fuzz run build devstore

# Everything CI runs: vet, unit tests with the race detector (seqd's module and the
# development store's), then the integration suite (which starts its own store).
test: vet unit integration

vet:
	$(GO) vet ./...
	$(GO) vet -tags integration ./integration/...
	cd cmd/devstore && $(GO) vet ./...

unit:
	$(GO) test -race ./...
	cd cmd/devstore && $(GO) test -race ./...

integration:
	$(GO) test -race -tags integration -count=1 -timeout 30m ./integration/...

# The README's figures: builds and starts what it needs (dev store, seqd with and
# without coalescing, a bare Echo server), measures, prints the table to bench.md.
BENCHTIME ?= 5s
bench:
	$(GO) run ./cmd/seqbench -d $(BENCHTIME) -out bench.md

# Each fuzz target for FUZZTIME (make test runs their seed corpora only).
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./objectid/
	$(GO) test -run '^$$' -fuzz '^FuzzValidName$$' -fuzztime $(FUZZTIME) ./counters/
	$(GO) test -run '^$$' -fuzz '^FuzzSetBody$$' -fuzztime $(FUZZTIME) ./httpapi/
	$(GO) test -run '^$$' -fuzz '^FuzzQueryCount$$' -fuzztime $(FUZZTIME) ./httpapi/

build:
	$(GO) build -o bin/seqd ./cmd/seqd

# The development store: FerretDB on SQLite, built from its own module in cmd/devstore.
devstore:
	cd cmd/devstore && $(GO) build -o ../../bin/devstore .

# Serve the API in the foreground. Without MONGODB_URI it starts the development
# store (data under ./data) next to seqd; Ctrl-C stops both.
run: build
	@if [ -n "$$MONGODB_URI" ]; then exec bin/seqd; fi; \
	$(MAKE) --no-print-directory devstore || exit 1; \
	bin/devstore -listen $(DEVSTORE_ADDR) -dir data & ds=$$!; \
	trap 'kill $$ds 2>/dev/null; wait $$ds 2>/dev/null' EXIT; \
	trap 'exit 130' INT TERM; \
	for i in $$(seq 100); do \
		kill -0 $$ds 2>/dev/null || { echo "make run: the development store did not start (is $(DEVSTORE_ADDR) in use? set DEVSTORE_ADDR)" >&2; exit 1; }; \
		(exec 3<>/dev/tcp/$${DEVSTORE_ADDR%:*}/$${DEVSTORE_ADDR##*:}) 2>/dev/null && break; \
		sleep 0.1; \
	done; \
	MONGODB_URI=mongodb://$(DEVSTORE_ADDR)/ bin/seqd
