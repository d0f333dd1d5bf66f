// Package mcptest is a small MCP server built on the same SDK as jarvis's
// client, so that tests (and people trying the MCP support) have a server
// whose every behaviour is known: plain text, structured output, images and
// other content, error results, a crash in the middle of a call, a call that
// hangs, a whole server that freezes, and tools that appear and disappear at
// run time (tools/list_changed).
//
// NewServer builds the server; the program in ./cmd runs it over stdio or
// streamable HTTP. Tools that act on the whole process (crash, freeze) work
// only when Options.ProcessControl is set, which the program does and a test
// running the server inside its own process must not.
package mcptest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options configure NewServer.
type Options struct {
	// Name is the implementation name the server reports (default "mcptest").
	Name string
	// ProcessControl enables the crash and freeze tools.
	ProcessControl bool
}

// Tool names, in the order the server lists them.
const (
	ToolEcho       = "echo"
	ToolAdd        = "add"
	ToolImage      = "image"
	ToolMixed      = "mixed"
	ToolFail       = "fail"
	ToolReject     = "reject"
	ToolSleep      = "sleep"
	ToolCrash      = "crash"
	ToolFreeze     = "freeze"
	ToolAddTool    = "add_tool"
	ToolRemoveTool = "remove_tool"
)

// CrashStatus is the exit status of the crash tool.
const CrashStatus = 3

// EchoIn are echo's arguments. Text comes before Repeat in the schema, the
// reverse of alphabetical order, so tests see whether order is kept.
type EchoIn struct {
	Text   string `json:"text" jsonschema:"The text to send back"`
	Repeat int    `json:"repeat,omitempty" jsonschema:"How many times to repeat it (default 1)"`
}

// AddIn are add's arguments.
type AddIn struct {
	A float64 `json:"a" jsonschema:"First addend"`
	B float64 `json:"b" jsonschema:"Second addend"`
}

// AddOut is add's structured result.
type AddOut struct {
	Sum float64 `json:"sum"`
}

type failIn struct {
	Message string `json:"message" jsonschema:"The error message to report"`
}

type sleepIn struct {
	Seconds float64 `json:"seconds" jsonschema:"How long to sleep"`
	Steps   int     `json:"steps,omitempty" jsonschema:"Report progress this many times while sleeping"`
}

type addToolIn struct {
	Name        string `json:"name" jsonschema:"Name of the new tool"`
	Description string `json:"description,omitempty" jsonschema:"Its description"`
}

type removeToolIn struct {
	Name string `json:"name" jsonschema:"Name of the tool to remove"`
}

type none struct{}

// NewServer returns the test server with all its tools.
func NewServer(opts Options) *mcp.Server {
	if opts.Name == "" {
		opts.Name = "mcptest"
	}
	s := mcp.NewServer(&mcp.Implementation{Name: opts.Name, Version: "1.0.0"}, nil)

	mcp.AddTool(s, &mcp.Tool{Name: ToolEcho, Description: "Send the text back, optionally repeated."},
		func(_ context.Context, _ *mcp.CallToolRequest, in EchoIn) (*mcp.CallToolResult, any, error) {
			n := max(in.Repeat, 1)
			return text(strings.TrimSuffix(strings.Repeat(in.Text+" ", n), " ")), nil, nil
		})

	mcp.AddTool(s, &mcp.Tool{Name: ToolAdd, Description: "Add two numbers and return the sum as structured output."},
		func(_ context.Context, _ *mcp.CallToolRequest, in AddIn) (*mcp.CallToolResult, AddOut, error) {
			return nil, AddOut{Sum: in.A + in.B}, nil
		})

	mcp.AddTool(s, &mcp.Tool{Name: ToolImage, Description: "Return a small PNG image with a caption."},
		func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "A 16x16 test pattern."},
				&mcp.ImageContent{MIMEType: "image/png", Data: TestPNG()},
			}}, nil, nil
		})

	mcp.AddTool(s, &mcp.Tool{Name: ToolMixed, Description: "Return audio, an embedded text resource and a resource link."},
		func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.AudioContent{MIMEType: "audio/wav", Data: make([]byte, 3*1024)},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///notes.txt", MIMEType: "text/plain", Text: "remember the milk"}},
				&mcp.ResourceLink{URI: "https://example.com/report.pdf", Name: "report", MIMEType: "application/pdf"},
			}}, nil, nil
		})

	mcp.AddTool(s, &mcp.Tool{Name: ToolFail, Description: "Report the message as a tool error."},
		func(_ context.Context, _ *mcp.CallToolRequest, in failIn) (*mcp.CallToolResult, any, error) {
			return nil, nil, errors.New(in.Message)
		})

	// reject answers with a JSON-RPC error instead of a result, as servers do
	// for calls they cannot accept at all.
	s.AddTool(&mcp.Tool{Name: ToolReject, Description: "Refuse the call with a protocol-level error.",
		InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "this call is not accepted"}
		})

	mcp.AddTool(s, &mcp.Tool{Name: ToolSleep, Description: "Wait for the given number of seconds, then answer."},
		func(ctx context.Context, req *mcp.CallToolRequest, in sleepIn) (*mcp.CallToolResult, any, error) {
			if token := req.Params.GetProgressToken(); token != nil {
				for i := 1; i <= in.Steps; i++ {
					if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
						ProgressToken: token, Progress: float64(i), Total: float64(in.Steps), Message: fmt.Sprintf("step %d\x1b[31m done", i),
					}); err != nil {
						return nil, nil, err
					}
				}
			}
			t := time.NewTimer(time.Duration(in.Seconds * float64(time.Second)))
			defer t.Stop()
			select {
			case <-t.C:
				return text(fmt.Sprintf("slept %gs", in.Seconds)), nil, nil
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
		})

	mcp.AddTool(s, &mcp.Tool{Name: ToolCrash, Description: "Exit the server process in the middle of the call."},
		func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
			if !opts.ProcessControl {
				return nil, nil, errors.New("crash works only when the server runs as its own process")
			}
			fmt.Fprintln(os.Stderr, "mcptest: crashing on request")
			os.Exit(CrashStatus)
			return nil, nil, nil
		})

	mcp.AddTool(s, &mcp.Tool{Name: ToolFreeze, Description: "Stop the whole server process (SIGSTOP): nothing answers any more."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
			if !opts.ProcessControl {
				return nil, nil, errors.New("freeze works only when the server runs as its own process")
			}
			if err := freeze(); err != nil {
				return nil, nil, err
			}
			// The stop reaches the process's other threads a moment after
			// kill returns; never answer, even if one of them runs on.
			<-ctx.Done()
			return nil, nil, ctx.Err()
		})

	mcp.AddTool(s, &mcp.Tool{Name: ToolAddTool, Description: "Add a tool that answers with its own name (the tool list changes)."},
		func(_ context.Context, _ *mcp.CallToolRequest, in addToolIn) (*mcp.CallToolResult, any, error) {
			if in.Name == "" {
				return nil, nil, errors.New("name is required")
			}
			desc := in.Description
			if desc == "" {
				desc = "A tool added at run time."
			}
			name := in.Name
			mcp.AddTool(s, &mcp.Tool{Name: name, Description: desc},
				func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
					return text(name + " called"), nil, nil
				})
			return text("added " + name), nil, nil
		})

	mcp.AddTool(s, &mcp.Tool{Name: ToolRemoveTool, Description: "Remove a tool (the tool list changes)."},
		func(_ context.Context, _ *mcp.CallToolRequest, in removeToolIn) (*mcp.CallToolResult, any, error) {
			s.RemoveTools(in.Name)
			return text("removed " + in.Name), nil, nil
		})
	return s
}

// HTTPHandler serves srv over streamable HTTP.
func HTTPHandler(srv *mcp.Server) http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// TestPNG returns the image the image tool sends: a 16x16 checkerboard.
func TestPNG() []byte {
	img := image.NewGray(image.Rect(0, 0, 16, 16))
	for y := range 16 {
		for x := range 16 {
			if (x/4+y/4)%2 == 0 {
				img.SetGray(x, y, color.Gray{Y: 255})
			}
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil // cannot happen: the image is in memory and valid
	}
	return buf.Bytes()
}

// KillSelf ends the calling process with SIGKILL (where there are
// signals), for tests of a server killed from outside.
func KillSelf() error { return killSelf() }
