GO ?= go

.PHONY: test unit integration bench vet

# Everything CI runs: unit tests with the race detector, then the integration suite.
test: vet unit integration

vet:
	$(GO) vet ./...
	$(GO) vet -tags integration ./integration/...

unit:
	$(GO) test -race ./...

integration:
	$(GO) test -race -tags integration -count=1 -timeout 30m ./integration/...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./objectid/
