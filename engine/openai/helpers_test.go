package openai_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/engine"
	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	ollamatest "github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
	ot "github.com/jarvis-workbench/jarvis/engine/openai/openaitest"
)

// rawPost sends body to url with a plain HTTP client and returns the
// answer's bytes: what the fake really put on the wire.
func rawPost(t *testing.T, url string, body []byte) []byte {
	t.Helper()
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// argumentIndexes lists, in stream order, the index of every tool-call
// delta that carries a piece of arguments.
func argumentIndexes(t *testing.T, stream []byte) []int {
	t.Helper()
	var out []int
	sc := bufio.NewScanner(bytes.NewReader(stream))
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var c struct {
			Choices []struct {
				Delta struct {
					ToolCalls []struct {
						Index    int `json:"index"`
						Function struct {
							Arguments string `json:"arguments"`
						} `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("event %q: %v", data, err)
		}
		for _, ch := range c.Choices {
			for _, tc := range ch.Delta.ToolCalls {
				if tc.Function.Arguments != "" {
					out = append(out, tc.Index)
				}
			}
		}
	}
	return out
}

// ollamaV1Server names Ollama's own /v1 among the servers a test runs
// on: the Ollama stand-in, answering through Ollama's translation code.
const ollamaV1Server = "ollama"

// serve starts the server a test names (an openaitest flavor, or
// ollamaV1Server) with one model, which with noTools is one the server
// refuses tools for. It returns the API's base URL and the server's rules.
func serve(t *testing.T, server, model string, noTools bool) (string, *et.Scenario) {
	t.Helper()
	if server == ollamaV1Server {
		srv := ollamatest.New(t)
		caps := []string{engine.CapCompletion, engine.CapTools}
		if noTools {
			caps = caps[:1]
		}
		srv.Model(model, caps...)
		return srv.URL + "/v1", &srv.Scenario
	}
	srv := ot.New(t, ot.Flavor(server))
	srv.AddModel(ot.ModelSpec{Name: model, NoTools: noTools})
	return srv.BaseURL, &srv.Scenario
}
