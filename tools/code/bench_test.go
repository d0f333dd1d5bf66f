//go:build unix

package code

import (
	"context"
	"testing"

	"github.com/jarvis-workbench/jarvis/tools"
)

// One code_interpreter call end to end: start a confined interpreter, run
// a line, collect the output, kill, clean up.
func BenchmarkInterpreterCall(b *testing.B) {
	needPython(b)
	it := NewInterpreter(testConfig())
	args := tools.Args{"code": "print(6 * 7)"}
	for b.Loop() {
		if r := it.Execute(context.Background(), args); !r.Success {
			b.Fatal(r.Content)
		}
	}
}

// One call to a warm repl: the round trip through the driver's pipes.
func BenchmarkREPLCall(b *testing.B) {
	needPython(b)
	r := NewREPL(testConfig())
	defer r.Close()
	args := tools.Args{"code": "x = 6 * 7\nx"}
	if res := r.Execute(context.Background(), args); !res.Success {
		b.Fatal(res.Content)
	}
	for b.Loop() {
		if res := r.Execute(context.Background(), args); !res.Success {
			b.Fatal(res.Content)
		}
	}
}

// Capturing a flood of output costs memory of the cap only.
func BenchmarkCapBufferWrite(b *testing.B) {
	buf := newCapBuffer(DefaultMaxOutputBytes)
	line := []byte("a line of output that a loop prints many times\n")
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		_, _ = buf.Write(line)
	}
}
