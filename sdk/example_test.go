package sdk_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	"github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
	"github.com/jarvis-workbench/jarvis/sdk"
	"github.com/jarvis-workbench/jarvis/tools"
)

// MyTool is the tool spec's custom tool: it processes its input.
type MyTool struct{}

// Spec says what the model is told about the tool.
func (MyTool) Spec() tools.Spec {
	return tools.Spec{
		Name:        "my_tool",
		Description: "A custom tool that does something useful.",
		Parameters:  tools.Params(tools.StringParam("input", "The input to process.", true)),
		Category:    "custom",
	}
}

// Execute runs one call.
func (MyTool) Execute(_ context.Context, args tools.Args) tools.Result {
	return tools.OK("Processed: " + args.String("input"))
}

// Registering in init is the spec's @ToolRegistry.register("my_tool"): the
// tool exists before anything is built.
func init() {
	if err := sdk.Register("my_tool", func(tools.Deps) (tools.Tool, error) { return MyTool{}, nil }); err != nil {
		log.Fatal(err)
	}
}

// Asking with a registered tool: the spec's
//
//	result = Jarvis().ask_full("Process this data", agent="orchestrator", tools=["my_tool"])
//
// here against a fake Ollama whose model calls my_tool.
func Example() {
	srv, err := ollamatest.Listen("127.0.0.1:0", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	srv.Model("qwen3", "completion", "tools")
	srv.On(et.UserSays("Process this data")).Reply(et.ToolCall("my_tool", `{"input": "this data"}`))
	srv.On(et.ToolResult("my_tool")).Reply(et.Text("Done: the data is processed."))

	// An empty config file and a scratch database keep the example to
	// itself; a program would leave both out and use the person's.
	dir, err := os.MkdirTemp("", "jarvis-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	configPath := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(configPath, nil, 0o600); err != nil {
		log.Fatal(err)
	}

	ctx := context.Background()
	j, err := sdk.New(ctx, sdk.Options{
		Engine: "ollama", Host: srv.URL, Model: "qwen3",
		ConfigPath: configPath, DBPath: filepath.Join(dir, "jarvis.db"),
	})
	if err != nil {
		log.Fatal(err)
	}
	defer j.Close()

	result, err := j.Ask(ctx, "Process this data", sdk.AskOptions{Agent: "orchestrator", Tools: []string{"my_tool"}})
	if err != nil {
		log.Fatal(err)
	}
	for _, tr := range result.ToolResults {
		fmt.Printf("%s: %s (success=%v)\n", tr.ToolName, tr.Content, tr.Success)
	}
	fmt.Println(result.Content)
	// Output:
	// my_tool: Processed: this data (success=true)
	// Done: the data is processed.
}
