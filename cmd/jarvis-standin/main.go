// Command jarvis-standin serves a scripted stand-in for a model server on
// loopback, so jarvis (the workbench, `jarvis ask`, evals) can be tried,
// demonstrated and tested end to end without a model:
//
//	jarvis-standin --script engine/ollama/ollamatest/testdata/demo.json --addr 127.0.0.1:11500
//	jarvis --host http://127.0.0.1:11500 ask --tools calculator "What is 15% of 340?"
//
// `make demo` does both in one go (see the README's quick start).
//
// The script (JSON, see docs/engine.md) says which server it plays: an
// Ollama (package ollamatest: its native API, and its /v1 through
// Ollama's own translation code) unless it names an OpenAI-compatible
// "flavor" (package openaitest: "llama.cpp", "vllm", "lmstudio",
// "openai"). It gives the models, their windows and templates, and the
// replies. The server prints its URL on stdout, logs one line per request
// on stderr (for Ollama with the window the request ran in, its prompt's
// tokens and any silent cut), and stops on Ctrl-C. --context-length sets
// an Ollama's window for requests without num_ctx, as
// OLLAMA_CONTEXT_LENGTH does for a real server.
//
// It is a separate command so that jarvis itself links no stand-in.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
	"github.com/jarvis-workbench/jarvis/engine/openai/openaitest"
)

// Exit codes, as jarvis's: 1 for a failure, 2 for bad use.
const (
	exitFail  = 1
	exitUsage = 2
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// usageError is bad use of the command: exit 2.
type usageError struct{ error }

// run is the command: it serves until ctx ends and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("jarvis-standin", flag.ContinueOnError)
	fs.SetOutput(stderr)
	script := fs.String("script", "", "script file (JSON; see docs/engine.md)")
	addr := fs.String("addr", "127.0.0.1:11434", "address to listen on (port 0 picks a free one)")
	window := fs.Int("context-length", 0, "an Ollama's window for requests without num_ctx, as OLLAMA_CONTEXT_LENGTH (default: the script's, else 4096)")
	quiet := fs.Bool("quiet", false, "do not log requests on stderr")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: jarvis-standin --script FILE [--addr 127.0.0.1:11434] [--context-length N] [--quiet]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return exitUsage
	}
	err := serve(ctx, *script, *addr, *window, *quiet, fs.NArg(), stdout, stderr)
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "jarvis-standin:", err)
	if errors.As(err, new(usageError)) {
		return exitUsage
	}
	return exitFail
}

func serve(ctx context.Context, script, addr string, window int, quiet bool, extra int, stdout, stderr io.Writer) error {
	switch {
	case extra > 0:
		return usageError{errors.New("it takes no arguments besides its flags (see --help)")}
	case script == "":
		return usageError{errors.New("--script FILE is required (engine/ollama/ollamatest/testdata/demo.json is the demo)")}
	case window < 0:
		return usageError{fmt.Errorf("--context-length must be a positive number of tokens, not %d", window)}
	}
	data, err := os.ReadFile(script)
	if err != nil {
		return usageError{fmt.Errorf("read script: %w", err)}
	}
	var top map[string]json.RawMessage
	_ = json.Unmarshal(data, &top) // a broken file gets its error from the parser below
	var url string
	var closeServer func()
	if _, openAI := top["flavor"]; openAI {
		if window > 0 {
			return usageError{errors.New("--context-length is an Ollama's setting; an OpenAI-compatible server's window is its models' \"window\" in the script")}
		}
		sc, err := openaitest.ParseScript(data)
		if err != nil {
			return usageError{fmt.Errorf("script %s: %w", script, err)}
		}
		srv, err := openaitest.Listen(addr, sc.Flavor, sc)
		if err != nil {
			return listenError(err)
		}
		if !quiet {
			srv.LogTo(stderr)
		}
		url, closeServer = srv.URL, srv.Close
	} else {
		sc, err := ollamatest.ParseScript(data)
		if err != nil {
			return usageError{fmt.Errorf("script %s: %w", script, err)}
		}
		srv, err := ollamatest.Listen(addr, sc)
		if err != nil {
			return listenError(err)
		}
		if window > 0 {
			srv.SetDefaultContextLength(window)
		}
		if !quiet {
			srv.LogTo(stderr)
		}
		url, closeServer = srv.URL, srv.Close
	}
	defer closeServer()
	fmt.Fprintln(stdout, url)
	<-ctx.Done()
	return nil
}

func listenError(err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("%w (is a real server running there? choose another address, e.g. --addr 127.0.0.1:0)", err)
	}
	return err
}
