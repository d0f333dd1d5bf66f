package sdk_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	"github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/sdk"
	"github.com/jarvis-workbench/jarvis/tools"
)

// A command tool from the config ([[commands]]) asks for confirmation by
// default: here a Confirm callback approves it, and OnEvent follows the
// call as the workbench would.
func ExampleJarvis_Ask() {
	srv, err := ollamatest.Listen("127.0.0.1:0", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	srv.Model("qwen3", "completion", "tools")
	srv.On(et.UserSays("Shout")).Reply(et.ToolCall("shout", `{"text": "hello; rm -rf ~"}`))
	srv.On(et.ToolResultContains("shout", "HELLO")).Reply(et.Text("It shouts back."))

	dir, err := os.MkdirTemp("", "jarvis-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	configPath := filepath.Join(dir, "config.toml")
	config := `
[[commands]]
name = "shout"
description = "Turns text to capitals."
argv = ["tr", "a-z", "A-Z"]
stdin = "{text}"
[commands.parameters.text]
description = "The text to shout"
required = true
`
	if err := os.WriteFile(configPath, []byte(config), 0o600); err != nil {
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

	result, err := j.Ask(ctx, "Shout hello", sdk.AskOptions{
		Tools: []string{"shout"},
		Confirm: func(_ context.Context, req tools.ConfirmRequest) (tools.Decision, error) {
			fmt.Printf("approve %s(%q)? yes\n", req.Spec.Name, req.Arguments.String("text"))
			return tools.AllowOnce, nil
		},
		OnEvent: func(e events.Event) {
			if e.Type == events.ToolCallEnd {
				fmt.Printf("%s ended: %s\n", e.Tool.Tool, e.Tool.Status)
			}
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(result.ToolResults[0].Content)
	fmt.Println(result.Content)
	// Output:
	// approve shout("hello; rm -rf ~")? yes
	// shout ended: ok
	// HELLO; RM -RF ~
	// It shouts back.
}
