// Command mcptest runs the test MCP server of package mcptest, over stdio
// (the default) or streamable HTTP on a loopback address:
//
//	mcptest                        # stdio
//	mcptest -http 127.0.0.1:0      # HTTP; prints the endpoint URL on stdout
//
// A few flags make it misbehave on purpose, for the client's failure tests:
// -exit-at-start exits before answering anything, -kill-at-start has the
// process killed by SIGKILL, -hang reads requests and never answers,
// -stdout prints a line on stdout before serving (as a server that logs to
// the wrong stream does), -spawn-child starts a helper process that would
// outlive a careless client, and -pidfile records the process ids to check
// for orphans.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jarvis-workbench/jarvis/tools/mcp/mcptest"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	fs := flag.NewFlagSet("mcptest", flag.ContinueOnError)
	httpAddr := fs.String("http", "", "serve streamable HTTP on this loopback address (host:port) instead of stdio")
	name := fs.String("name", "mcptest", "implementation name reported to clients")
	pidfile := fs.String("pidfile", "", "write this process's id (and the helper's, with -spawn-child) to this file")
	spawnChild := fs.Bool("spawn-child", false, "start a helper process that sleeps until killed")
	exitAtStart := fs.Int("exit-at-start", 0, "exit at once with this status (non-zero), writing a reason to stderr")
	hang := fs.Bool("hang", false, "read requests but never answer them")
	killAtStart := fs.Bool("kill-at-start", false, "write a reason to stderr, then kill this process with SIGKILL")
	stdoutLine := fs.String("stdout", "", "print this line on stdout before serving (stdio only)")
	idle := fs.Bool("idle", false, "do nothing until killed (the helper of -spawn-child)")
	if err := fs.Parse(args); err != nil {
		return 2
	}

	switch {
	case *idle:
		select {}
	case *exitAtStart != 0:
		fmt.Fprintf(os.Stderr, "mcptest: exiting at start with status %d as asked\n", *exitAtStart)
		return *exitAtStart
	case *killAtStart:
		fmt.Fprintln(os.Stderr, "mcptest: allocating far too much memory")
		if err := mcptest.KillSelf(); err != nil {
			fmt.Fprintf(os.Stderr, "mcptest: %v\n", err)
			return 1
		}
		select {} // the signal is on its way
	}

	pids := []string{fmt.Sprint(os.Getpid())}
	if *spawnChild {
		self, err := os.Executable()
		if err != nil {
			fmt.Fprintf(os.Stderr, "mcptest: cannot find my own executable: %v\n", err)
			return 1
		}
		child := exec.Command(self, "-idle")
		child.Stderr = os.Stderr // a helper that holds the server's stderr open
		if err := child.Start(); err != nil {
			fmt.Fprintf(os.Stderr, "mcptest: cannot start the helper: %v\n", err)
			return 1
		}
		pids = append(pids, fmt.Sprint(child.Process.Pid))
	}
	if *pidfile != "" {
		if err := os.WriteFile(*pidfile, []byte(strings.Join(pids, " ")+"\n"), 0o600); err != nil {
			fmt.Fprintf(os.Stderr, "mcptest: %v\n", err)
			return 1
		}
	}
	if *hang {
		_, _ = io.Copy(io.Discard, os.Stdin)
		select {} // even after stdin closes: only a signal ends a hung server
	}

	if *stdoutLine != "" {
		fmt.Println(*stdoutLine)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv := mcptest.NewServer(mcptest.Options{Name: *name, ProcessControl: true})
	if *httpAddr != "" {
		return serveHTTP(ctx, srv, *httpAddr)
	}
	if err := srv.Run(ctx, &mcp.StdioTransport{}); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(os.Stderr, "mcptest: %v\n", err)
		return 1
	}
	return 0
}

// serveHTTP serves on a loopback address only: this server has tools that
// stop the process and must never be reachable from the network.
func serveHTTP(ctx context.Context, srv *mcp.Server, addr string) int {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "mcptest: -http %q: %v\n", addr, err)
		return 2
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		fmt.Fprintf(os.Stderr, "mcptest: -http %q: only loopback addresses are allowed\n", addr)
		return 2
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "mcptest: %v\n", err)
		return 1
	}
	hs := &http.Server{Handler: mcptest.HTTPHandler(srv)}
	go func() {
		<-ctx.Done()
		_ = hs.Close()
	}()
	fmt.Printf("http://%s/mcp\n", ln.Addr())
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(os.Stderr, "mcptest: %v\n", err)
		return 1
	}
	return 0
}
