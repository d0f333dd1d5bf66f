package command

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/tools"
)

// The test binary doubles as the programs the commands run: started with
// helperArg as its first argument, it does what the second says instead of
// running the tests, so every test knows exactly what the program
// received.
const helperArg = "jarvis-command-helper"

func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == helperArg {
		os.Exit(helper(os.Args[2], os.Args[3:]))
	}
	// A race-enabled helper would wait a second on exit for reports.
	os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	os.Exit(m.Run())
}

func helper(mode string, args []string) int {
	switch mode {
	case "argv": // the arguments, as JSON
		b, _ := json.Marshal(args)
		os.Stdout.Write(b)
	case "stdin": // stdin, back
		io.Copy(os.Stdout, os.Stdin)
	case "touch": // create args[0], then print the rest
		os.WriteFile(args[0], nil, 0o600)
		fmt.Print(strings.Join(args[1:], " "))
	case "fail": // args[0] on stdout, args[1] on stderr, exit args[2]
		fmt.Print(args[0])
		fmt.Fprint(os.Stderr, args[1])
		n, _ := strconv.Atoi(args[2])
		return n
	case "flood": // args[0] bytes of 'x'
		n, _ := strconv.Atoi(args[0])
		os.Stdout.Write([]byte(strings.Repeat("x", n)))
	case "spawn": // a grandchild that sleeps, its pid in args[0]; then sleep or exit (args[1])
		child := exec.Command(os.Args[0], helperArg, "sleep")
		child.Stdout = os.Stdout // holds the pipe, as a careless daemon would
		if err := child.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		os.WriteFile(args[0], []byte(strconv.Itoa(child.Process.Pid)), 0o600)
		if args[1] == "exit" {
			fmt.Print("started")
			return 0
		}
		time.Sleep(time.Hour)
	case "sleep":
		time.Sleep(time.Hour)
	case "spin": // burn CPU until killed
		for x := 0; ; x++ {
			_ = x * x
		}
	case "write": // write args[1] MiB to args[0], report the error
		f, err := os.Create(args[0])
		if err != nil {
			fmt.Print(err)
			return 1
		}
		n, _ := strconv.Atoi(args[1])
		_, err = f.Write(make([]byte, n<<20))
		f.Close()
		fmt.Print(err)
	case "pwd":
		wd, _ := os.Getwd()
		fmt.Print(wd)
	case "env": // the environment, one variable a line
		fmt.Print(strings.Join(os.Environ(), "\n"))
	default:
		fmt.Fprintln(os.Stderr, "unknown helper mode", mode)
		return 2
	}
	return 0
}

// self is the test binary, as a command's program.
func self(t testing.TB) string {
	t.Helper()
	p, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// helperSpec is an entry that runs the helper in mode with argv after it.
func helperSpec(t testing.TB, mode string, argv ...string) Spec {
	return Spec{
		Name: "probe", Description: "A test command.",
		Argv:       append([]string{self(t), helperArg, mode}, argv...),
		Parameters: map[string]Param{},
	}
}

func mustCompile(t testing.TB, s Spec) *Command {
	t.Helper()
	c, err := Compile(s)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return c
}

// call runs the command's tool directly (no executor).
func call(t testing.TB, c *Command, args tools.Args) tools.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return New(c).Execute(ctx, args)
}

func str(desc string, required bool) Param {
	return Param{Type: "string", Description: desc, Required: required}
}
