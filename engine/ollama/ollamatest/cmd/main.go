// Command cmd runs the fake Ollama server on its own, so jarvis (the TUI,
// `jarvis ask`) can be demonstrated and tested end to end without a model:
//
//	go run ./engine/ollama/ollamatest/cmd --script engine/ollama/ollamatest/testdata/demo.json
//	OLLAMA_HOST=http://127.0.0.1:11434 jarvis ask --tools calculator "What is 15% of 340?"
//
// It prints the server's URL on stdout and one line per request on stderr
// (with the window the request ran in and any silent cut), and stops on
// Ctrl-C. --context-length sets the window for requests without num_ctx,
// as OLLAMA_CONTEXT_LENGTH does for a real server.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
)

func main() {
	script := flag.String("script", "", "script file (JSON; see package ollamatest, LoadScript)")
	addr := flag.String("addr", "127.0.0.1:11434", "address to listen on (port 0 picks a free one)")
	quiet := flag.Bool("quiet", false, "do not log requests to stderr")
	window := flag.Int("context-length", 0, "window for requests without num_ctx (default: the script's, else 4096)")
	flag.Parse()
	if *script == "" || flag.NArg() > 0 || *window < 0 {
		fmt.Fprintln(os.Stderr, "usage: cmd --script FILE [--addr 127.0.0.1:11434] [--context-length N] [--quiet]")
		os.Exit(2)
	}
	if err := run(*script, *addr, *window, *quiet); err != nil {
		fmt.Fprintln(os.Stderr, "fake-ollama:", err)
		os.Exit(1)
	}
}

func run(path, addr string, window int, quiet bool) error {
	sc, err := ollamatest.LoadScript(path)
	if err != nil {
		return err
	}
	srv, err := ollamatest.Listen(addr, sc)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("%w\n(is a real Ollama running there? choose another address with --addr 127.0.0.1:0)", err)
		}
		return err
	}
	defer srv.Close()
	if window > 0 {
		srv.SetDefaultContextLength(window)
	}
	if !quiet {
		srv.LogTo(os.Stderr)
	}
	fmt.Println(srv.URL)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	return nil
}
