package tools_test

import (
	"encoding/json"
	"testing"

	"github.com/jarvis-workbench/jarvis/tools"
)

func specTool(s tools.Spec) tools.Tool { return &fakeTool{spec: s} }

func TestBuildToolDescriptionsFormat(t *testing.T) {
	calc := specTool(tools.Spec{
		Name: "calculator", Description: "Evaluate a mathematical expression safely.", Category: "math",
		Parameters: tools.Params(tools.StringParam("expression", "Math expression to evaluate", true)),
	})
	web := specTool(tools.Spec{
		Name: "web", Description: "Search.", Category: "search", CostEstimate: 0.0012, LatencyEstimate: 1.5,
		Parameters: tools.Params(
			tools.StringParam("query", "Search query", true),
			tools.IntegerParam("top_k", "", false),
			tools.Param{Name: "raw"}, // no schema: type any
		),
	})
	bare := specTool(tools.Spec{Name: "bare", Description: "No params."})
	method := tools.StringParam("method", "HTTP method", true)
	method.Schema.Enum = []any{"GET", "POST"}
	level := tools.IntegerParam("level", "", false)
	level.Schema.Enum = []any{1, 2, 3}
	http := specTool(tools.Spec{Name: "http", Description: "Fetch.", Parameters: tools.Params(method, level)})

	cases := []struct {
		name           string
		list           []tools.Tool
		category, cost bool
		want           string
	}{
		{"empty", nil, true, false, "No tools available."},
		{"defaults", []tools.Tool{calc, bare}, true, false,
			"### calculator\nEvaluate a mathematical expression safely.\nCategory: math\nParameters:\n  - expression (string, required): Math expression to evaluate\n\n### bare\nNo params."},
		{"no category", []tools.Tool{calc}, false, false,
			"### calculator\nEvaluate a mathematical expression safely.\nParameters:\n  - expression (string, required): Math expression to evaluate"},
		{"cost lines, order kept, any type, no description", []tools.Tool{web}, true, true,
			"### web\nSearch.\nCategory: search\nCost estimate: $0.0012\nLatency estimate: 1.5s\nParameters:\n  - query (string, required): Search query\n  - top_k (integer)\n  - raw (any)"},
		// A react model reads only this text: the allowed values are in it.
		{"allowed values", []tools.Tool{http}, true, false,
			"### http\nFetch.\nParameters:\n  - method (string, required): HTTP method (one of: GET, POST)\n  - level (integer): one of: 1, 2, 3"},
		{"zero cost lines are left out", []tools.Tool{calc}, true, true,
			"### calculator\nEvaluate a mathematical expression safely.\nCategory: math\nParameters:\n  - expression (string, required): Math expression to evaluate"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := tools.BuildToolDescriptions(c.list, c.category, c.cost); got != c.want {
				t.Fatalf("got:\n%s\nwant:\n%s", got, c.want)
			}
		})
	}
}

func TestSchemaFromJSONKeepsPropertyOrder(t *testing.T) {
	s, err := tools.SchemaFromJSON([]byte(`{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"number","description":"first?"},"mid":{}},"required":["alpha"]}`))
	if err != nil {
		t.Fatal(err)
	}
	got := tools.BuildToolDescriptions([]tools.Tool{specTool(tools.Spec{Name: "o", Description: "d", Parameters: s})}, true, false)
	want := "### o\nd\nParameters:\n  - zeta (string)\n  - alpha (number, required): first?\n  - mid (any)"
	if got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
	b, _ := json.Marshal(tools.ToOpenAI(tools.Spec{Name: "o", Parameters: s}))
	wantJSON := `{"type":"function","function":{"name":"o","description":"","parameters":{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"number","description":"first?"},"mid":true},"required":["alpha"]}}}`
	if string(b) != wantJSON {
		t.Fatalf("openai JSON:\n%s\nwant\n%s", b, wantJSON)
	}
}

func TestOpenAIFormatOfParameterlessTool(t *testing.T) {
	b, err := json.Marshal(tools.ToOpenAI(tools.Spec{Name: "now", Description: "Time."}))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"function","function":{"name":"now","description":"Time.","parameters":{"type":"object","properties":{}}}}`
	if string(b) != want {
		t.Fatalf("got %s", b)
	}
}
