# jarvis build, test and benchmark entry points. Everything here needs only Go:
# tools such as staticcheck are installed through the Go toolchain into ./bin.

GO            ?= go
BIN           := bin
JARVIS        := $(BIN)/jarvis
STANDIN       := $(BIN)/jarvis-standin
STATICCHECK   := $(BIN)/staticcheck
STATICCHECK_VERSION := v0.8.2
VERSION       ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS       := -s -w -X github.com/jarvis-workbench/jarvis/ui/cli.Version=$(VERSION)
BENCHTIME     ?= 1s
RUN_ARGS      ?=
# The stand-in's script: the Ollama demo, or another (an OpenAI-compatible
# one: engine/openai/openaitest/testdata/llama-server.json, with
# RUN_ARGS='--engine openai').
SCRIPT        ?= engine/ollama/ollamatest/testdata/demo.json
STANDIN_ADDR  ?= 127.0.0.1:11500

.PHONY: all build run demo standin test test-real vet lint race bench fuzz fmt clean

all: build

# A static binary (no cgo): it starts without the dynamic loader, about
# 1 ms of every command, and runs on any Linux whatever its C library.
# jarvis needs no C: Go resolves users and host names itself.
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(JARVIS) .

# Opens jarvis. Pass arguments with RUN_ARGS, e.g. make run RUN_ARGS='tools list'.
run: build
	./$(JARVIS) $(RUN_ARGS)

$(STANDIN): FORCE
	$(GO) build -o $(STANDIN) ./cmd/jarvis-standin

# Tries jarvis without a model: the scripted stand-in in the background on
# a free port, jarvis pointed at it, the stand-in stopped when jarvis ends.
demo: build $(STANDIN)
	@url=$(BIN)/.standin-url; rm -f $$url; \
	./$(STANDIN) --script '$(SCRIPT)' --addr 127.0.0.1:0 --quiet >$$url & pid=$$!; \
	trap 'kill $$pid 2>/dev/null; rm -f '$$url EXIT INT TERM; \
	for i in $$(seq 100); do [ -s $$url ] && break; kill -0 $$pid 2>/dev/null || exit 1; sleep 0.05; done; \
	./$(JARVIS) --host "$$(cat $$url)" $(RUN_ARGS)

# Serves the stand-in alone, logging every request (SCRIPT, STANDIN_ADDR).
standin: $(STANDIN)
	./$(STANDIN) --script '$(SCRIPT)' --addr $(STANDIN_ADDR)

.PHONY: FORCE
FORCE:

# The one test command: formatting, vet, staticcheck, and the race-enabled tests.
test: fmt-check vet lint race

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

# The real-server tier: end-to-end tests (built with the real tag, named
# TestReal...) against a real Ollama, $$JARVIS_OLLAMA or ollama on PATH,
# serving the scripted models of ../shared/real-ollama
# ($$JARVIS_REAL_OLLAMA_SCRIPTS). Not part of make test: CI stays
# hermetic. UPDATE=1 records what the real server says in
# engine/ollama/ollamatest/testdata/real, which make test holds the
# stand-in to.
REAL_PKGS   := ./engine/ollama/... ./engine/openai/... ./ui/cli ./ui/tui
REAL_SCRIPTS = $(or $(JARVIS_REAL_OLLAMA_SCRIPTS),../shared/real-ollama)
test-real: $(STATICCHECK)
	@bin="$${JARVIS_OLLAMA:-$$(command -v ollama)}"; \
	if [ -z "$$bin" ] || [ ! -x "$$bin" ]; then \
		echo "test-real: SKIPPED: no ollama binary on PATH or in JARVIS_OLLAMA (../shared/real-ollama/build-ollama.sh builds one)"; exit 0; fi; \
	if [ ! -f "$(REAL_SCRIPTS)/scripted_gguf.py" ]; then \
		echo "test-real: SKIPPED: no scripted models: $(REAL_SCRIPTS)/scripted_gguf.py is missing (set JARVIS_REAL_OLLAMA_SCRIPTS)"; exit 0; fi; \
	if ! command -v python3 >/dev/null; then echo "test-real: SKIPPED: no python3 for scripted_gguf.py"; exit 0; fi; \
	echo "test-real: $$bin (ollama $$("$$bin" --version 2>&1 | sed -n 's/.*version is //p')), scripted models from $(REAL_SCRIPTS)"; \
	$(GO) vet -tags real $(REAL_PKGS) ./internal/... && $(STATICCHECK) -tags real $(REAL_PKGS) ./internal/... && \
	JARVIS_OLLAMA="$$bin" JARVIS_REAL_OLLAMA_SCRIPTS="$(abspath $(REAL_SCRIPTS))" JARVIS_REAL_UPDATE="$(UPDATE)" \
		$(GO) test -tags real -count=1 -run '^TestReal' -v $(REAL_PKGS)

# Vet for every system jarvis ships on: the Linux-only parts (the code
# sandbox, resource limits) must say what they cannot do elsewhere, and
# still build.
vet:
	$(GO) vet ./...
	GOOS=darwin $(GO) vet ./...
	GOOS=windows $(GO) vet ./...

$(STATICCHECK):
	GOBIN=$(abspath $(BIN)) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

lint: $(STATICCHECK)
	$(STATICCHECK) ./...

# third_party/chroma is a module of its own (see third_party/README.md):
# its tests hold the patch jarvis carries.
race:
	$(GO) test -race -count=1 ./...
	cd third_party/chroma && $(GO) test -race -count=1 ./...

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
