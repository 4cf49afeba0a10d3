GO ?= go
SHELL := bash
# Where `make run` starts the development store when MONGODB_URI is not set, and how
# many seconds it waits for the store to say it listens.
DEVSTORE_ADDR ?= 127.0.0.1:27017
DEVSTORE_WAIT ?= 30
# Where the development store keeps its data.
DEVSTORE_DIR ?= data

# The race detector needs cgo, and cgo a C compiler: without one (go env CGO_ENABLED
# is 0, or CC is not found) the tests run without -race, and say so.
RACE := $(shell [ "$$($(GO) env CGO_ENABLED)" = 1 ] && command -v "$$($(GO) env CC)" >/dev/null && echo -race)
GOTEST = $(if $(RACE),$(GO) test -race,CGO_ENABLED=0 $(GO) test)
NORACE_WARNING = @echo "make: WARNING: no C compiler found, so testing WITHOUT the race detector (install gcc, or set CC, to test with -race)" >&2

# How long `make fuzz` runs each fuzz target.
FUZZTIME ?= 30s

.PHONY: test unit integration robustness robustness-mutants vet bench fuzz run build devstore build-both build-first screenshots

# Everything CI runs: vet, unit tests with the race detector (seqd's module and the
# development store's), then the integration suite (which starts its own store).
test: vet unit integration

vet:
	$(GO) vet ./...
	$(GO) vet -tags integration ./integration/...
	$(GO) vet -tags seqdmutants ./counters/
	cd cmd/devstore && $(GO) vet ./...

# uuidv7's 60-million-id test makes a tenth of its ids under the race detector, where
# each contended atomic add costs about 1.5 µs; the last line runs it whole, without.
unit:
	$(if $(RACE),,$(NORACE_WARNING))
	@[ -n "$$SEQD_CHROMIUM" ] || command -v chromium >/dev/null || command -v chromium-browser >/dev/null || command -v google-chrome >/dev/null || \
		echo "make: no Chromium: TestStatusPageInBrowser (the status page at 1280 x 800 and 390 x 844) will skip; apt-get install chromium, or set SEQD_CHROMIUM" >&2
	$(GOTEST) ./...
	cd cmd/devstore && $(GOTEST) ./...
	$(if $(RACE),$(GO) test -count=1 -run '^TestSixtyMillionFromTwoGoroutines$$' ./uuidv7/)

# The suite itself runs from its directory (go test's local directory mode), so that
# the line saying which backend it chose is printed even when every test passes;
# its helper packages' own tests run after it.
integration:
	$(if $(RACE),,$(NORACE_WARNING))
	@if command -v npm >/dev/null; then npm ci --prefix integration/testdata/node --no-audit --no-fund --silent && \
		npm ci --prefix integration/testdata/tsclient --no-audit --no-fund --silent; \
	else echo "make: no npm: TestUUIDv7NodeDriver and TestTypeScriptClient will skip (the Node driver; a client generated from openapi.json)" >&2; fi
	cd integration && $(GOTEST) -tags integration -count=1 -timeout 30m
	$(GOTEST) -tags integration -count=1 $$($(GO) list -tags integration ./integration/... | grep -v -e '/integration$$' -e '/robustness$$')
	cd integration/robustness && $(GOTEST) -tags integration -count=1 -timeout 15m \
		-run '^(TestRobustness|TestCheckSkipped|TestDroppedWriteReplyRetried)$$' \
		-robustness.runs=2 -robustness.duration=30s -robustness.store=both

# The robustness suite (integration/robustness): RUNS runs of DURATION each, random
# traffic and faults on the store and three seqd, every history checked; seeds from
# the clock, or SEED=… for one run again. STORE is backend (the suite's store: the
# dev store as a one-node replica set), standalone (a dev store with -repl-set '')
# or both (runs take turns). robustness-mutants runs each deliberately broken build
# (-tags seqdmutants) and the mutant dev store until the checks catch them (MUTANTS:
# all, or some of no-lease,no-fence,early-answer,store-rerun-retries).
RUNS ?= 10
DURATION ?= 60s
SEED ?=
STORE ?= backend
MUTANTS ?= all
robustness:
	cd integration/robustness && $(GOTEST) -tags integration -count=1 -timeout 0 -run '^TestRobustness$$' \
		-robustness.runs=$(RUNS) -robustness.duration=$(DURATION) -robustness.store=$(STORE) $(if $(SEED),-robustness.seed=$(SEED))

robustness-mutants:
	cd integration/robustness && $(GOTEST) -tags integration -count=1 -timeout 0 -run '^TestRobustnessMutants$$' \
		-robustness.mutants=$(MUTANTS) -robustness.runs=$(RUNS) -robustness.duration=$(DURATION) $(if $(SEED),-robustness.seed=$(SEED))

# The README's figures: builds and starts what it needs (dev store, seqd with and
# without coalescing, a bare Echo server), measures, prints the table to bench.md.
BENCHTIME ?= 5s
bench:
	$(GO) run ./cmd/seqbench -d $(BENCHTIME) -out bench.md

# The status page in headless Chromium at 1280 x 800 and 390 x 844, checked, and
# screenshots of it (the phone's in dark colours too) written to SCREENSHOTS.
SCREENSHOTS ?= $(DEVSTORE_DIR)/screenshots
screenshots:
	set -o pipefail; SEQD_SCREENSHOTS="$(abspath $(SCREENSHOTS))" $(GO) test -count=1 -v -run '^TestStatusPageInBrowser$$' ./httpapi/ | \
		grep -e 'screenshot of' -e '^\s*--- ' -e 'Chromium' -e 'want' -e FAIL -e '^ok'

# Each fuzz target for FUZZTIME (make test runs their seed corpora only).
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./objectid/
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./uuidv7/
	$(GO) test -run '^$$' -fuzz '^FuzzValidName$$' -fuzztime $(FUZZTIME) ./counters/
	$(GO) test -run '^$$' -fuzz '^FuzzSetBody$$' -fuzztime $(FUZZTIME) ./httpapi/
	$(GO) test -run '^$$' -fuzz '^FuzzQueryCount$$' -fuzztime $(FUZZTIME) ./httpapi/
	$(GO) test -run '^$$' -fuzz '^FuzzHandler$$' -fuzztime $(FUZZTIME) ./httpapi/

build:
	$(GO) build -o bin/seqd ./cmd/seqd

# The development store: FerretDB on SQLite, built from its own module in cmd/devstore.
devstore:
	cd cmd/devstore && $(GO) build -o ../../bin/devstore .

# make run's builds have the compiler collect garbage less often (GOGC=400; unset,
# the compiler starts at a 128 MB heap and then keeps GOGC 100): on two CPUs the
# first build is bound by CPU, and this took 8% off build-first from a fresh clone
# (13% off build-both), for 1.45 GB at most in one process of the build, not 0.65 GB
# (SQLite's compile alone: 1.32 GB, not 0.63 GB).
BUILD_GOGC ?= 400

# seqd and the development store in one go command: run.work puts the two modules in
# one workspace (each package at the version its own go.mod gives it: TestRunWorkspace
# in cmd/devstore), so the packages they share are compiled once, and the store named
# first has its long compile (SQLite translated to Go) start early, beside seqd's.
build-both:
	GOGC=$(BUILD_GOGC) GOWORK="$(CURDIR)/run.work" $(GO) build -o bin/ ./cmd/devstore ./cmd/seqd

# A first build (build-first) fetches the modules, which takes the network and
# little CPU, while it compiles the standard packages the two programs import,
# which need nothing fetched; then build-both finds them compiled. RUN_STD is
# what they import from the standard library, as the packages nothing else in
# it imports (TestRunStdIsWhatTheProgramsImport in cmd/devstore keeps it true),
# but runtime/cgo, which a build without cgo leaves out.
RUN_STD = compress/zlib crypto/pbkdf2 database/sql embed encoding/xml expvar flag go/token hash/fnv \
	html/template io/ioutil log/slog net/http/httputil net/http/pprof os/exec os/signal runtime/debug \
	runtime/metrics time/tzdata
build-first:
	@GOGC=$(BUILD_GOGC) GOWORK=off $(GO) build $(RUN_STD) & std=$$!; \
	GOWORK="$(CURDIR)/run.work" $(GO) list -deps ./cmd/devstore ./cmd/seqd >/dev/null; st=$$?; \
	wait $$std; [ $$st = 0 ] || exit $$st; \
	$(MAKE) --no-print-directory build-both

# Serve the API in the foreground. Without MONGODB_URI it builds seqd and the
# development store (build-first the first time, then build-both), starts the
# store (data under DEVSTORE_DIR), waits for its
# "listening on ADDR" line, then starts seqd; Ctrl-C stops both, in order: Ctrl-C
# signals the terminal's process group, which the store is not in (setsid) and the
# copy of its output ignores, so seqd stops first and gives back its cached blocks
# to the store, then the EXIT trap stops the store, waits for it and says so.
# seqd writes its process id to SEQD_PID_FILE (DEVSTORE_DIR/seqd.pid unless set),
# for kill -HUP "$(cat data/seqd.pid)".
run:
	@export SEQD_PID_FILE="$${SEQD_PID_FILE:-$(DEVSTORE_DIR)/seqd.pid}"; \
	mkdir -p "$$(dirname "$$SEQD_PID_FILE")" || exit 1; \
	if [ -n "$$MONGODB_URI" ]; then \
		$(MAKE) --no-print-directory build || exit 1; \
		against="the server in MONGODB_URI"; $(run_banner); \
		exec bin/seqd; \
	fi; \
	if [ -x bin/devstore ] && [ -x bin/seqd ]; then $(MAKE) --no-print-directory build-both || exit 1; \
	else echo "make run: building seqd and the development store — first time only, about a minute"; \
		$(MAKE) --no-print-directory build-first || exit 1; fi; \
	exec 3< <(exec $$(command -v setsid) bin/devstore -listen $(DEVSTORE_ADDR) -dir $(DEVSTORE_DIR) -repl-set rs0); ds=$$!; \
	ready=; timedout=; \
	trap 'kill $$ds 2>/dev/null; wait $$ds 2>/dev/null; st=$$?; \
		[ -z "$$ready" ] || if [ $$st = 0 ]; then echo "make run: the development store stopped; its data stays in $(DEVSTORE_DIR)"; \
		else echo "make run: the development store stopped with status $$st; its data is in $(DEVSTORE_DIR)"; fi' EXIT; \
	trap 'exit 130' INT TERM; \
	while :; do \
		IFS= read -r -t $(DEVSTORE_WAIT) line <&3 || { [ $$? -gt 128 ] && timedout=1; break; }; \
		echo "$$line"; \
		case "$$line" in "listening on "*) ready=1; break;; esac; \
	done; \
	if [ -z "$$ready" ]; then \
		if [ -n "$$timedout" ]; then \
			echo "make run: the development store did not say it listens on $(DEVSTORE_ADDR) within $(DEVSTORE_WAIT) s" >&2; \
		else \
			wait $$ds; echo "make run: the development store exited (status $$?) before listening on $(DEVSTORE_ADDR); if that address is in use, choose another: DEVSTORE_ADDR=127.0.0.1:27018 make run" >&2; \
		fi; \
		exit 1; \
	fi; \
	cat <&3 & exec 3<&-; \
	against="the development store at $(DEVSTORE_ADDR) (data in ./$(DEVSTORE_DIR))"; $(run_banner); \
	MONGODB_URI="mongodb://$(DEVSTORE_ADDR)/?replicaSet=rs0" bin/seqd

# What `make run` says before seqd starts: where it serves, against what, and whether
# tokens are on (never the tokens themselves). The shell variable against names the store.
run_banner = printf 'make run: seqd serves http://%s against %s\nmake run: client tokens %s; admin token %s\n' \
	"$${SEQD_ADDR:-127.0.0.1:8080}" "$$against" \
	"$$( [ -n "$$SEQD_TOKENS$$SEQD_TOKENS_FILE" ] && echo "on: /oid and /seq need one" || echo "off: anyone who reaches the address may call /oid and /seq" )" \
	"$$( [ -n "$$SEQD_ADMIN_TOKEN$$SEQD_ADMIN_TOKEN_FILE" ] && echo "on: PUT /seq/{name} needs it" || echo "off: PUT /seq/{name} answers 403 (start with SEQD_ADMIN_TOKEN=… make run)" )"; \
	case "$$against" in "the development store"*) echo "make run: the development store has no authentication: any local process can read and change it, so it listens on loopback only ($(DEVSTORE_ADDR)), its data yours only (0700)";; esac
