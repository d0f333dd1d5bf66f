# jarvis build, test and benchmark entry points. Everything here needs only Go:
# tools such as staticcheck are installed through the Go toolchain into ./bin.

GO            ?= go
BIN           := bin
JARVIS        := $(BIN)/jarvis
STATICCHECK   := $(BIN)/staticcheck
STATICCHECK_VERSION := v0.8.2
VERSION       ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS       := -s -w -X github.com/jarvis-workbench/jarvis/ui/cli.Version=$(VERSION)
BENCHTIME     ?= 1s
RUN_ARGS      ?=

.PHONY: all build run test vet lint race bench fuzz fmt clean

all: build

build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(JARVIS) .

# Opens jarvis. Pass arguments with RUN_ARGS, e.g. make run RUN_ARGS='tools list'.
run: build
	./$(JARVIS) $(RUN_ARGS)

# The one test command: formatting, vet, staticcheck, and the race-enabled tests.
test: fmt-check vet lint race

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

$(STATICCHECK):
	GOBIN=$(abspath $(BIN)) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

lint: $(STATICCHECK)
	$(STATICCHECK) ./...

race:
	$(GO) test -race -count=1 ./...

# bench/fts5 is a module of its own (its SQLite driver is no dependency of
# jarvis): the memory index side by side with SQLite FTS5. It needs cgo.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) ./...
	cd bench/fts5 && $(GO) test -tags sqlite_fts5 -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) .

# Short fuzzing pass over the calculator (FUZZTIME=5m for a longer one).
FUZZTIME ?= 30s
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzCalculator -fuzztime $(FUZZTIME) ./tools/compute

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf $(BIN)
