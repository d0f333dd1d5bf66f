package openai_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/engine"
	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	"github.com/jarvis-workbench/jarvis/engine/openai"
	ot "github.com/jarvis-workbench/jarvis/engine/openai/openaitest"
)

func chatErr(t *testing.T, e *openai.Engine, req engine.ChatRequest) (engine.ChatResponse, error) {
	t.Helper()
	resp, err := e.Chat(context.Background(), req, nil)
	if err == nil {
		t.Fatalf("no error; reply %+v", resp.Message)
	}
	return resp, err
}

func TestUnreachable(t *testing.T) {
	closed := ot.ClosedURL(t)
	e := newEngine(t, closed)
	_, err := chatErr(t, e, engine.ChatRequest{Model: "m", Messages: ask("hi")})
	var ue *engine.UnreachableError
	if !errors.As(err, &ue) || !errors.Is(err, engine.ErrUnreachable) || ue.Host != closed {
		t.Fatalf("err = %v (%T), want *engine.UnreachableError for %s", err, err, closed)
	}
	msg := err.Error()
	if !strings.Contains(msg, "cannot reach the OpenAI-compatible server at "+closed) || !strings.Contains(msg, "llama-server") || strings.Contains(msg, "ollama serve") {
		t.Errorf("message = %q", msg)
	}
	for name, call := range map[string]func() error{
		"Version":    func() error { _, err := e.Version(context.Background()); return err },
		"ListModels": func() error { _, err := e.ListModels(context.Background()); return err },
		"Generate": func() error {
			_, err := e.Generate(context.Background(), engine.GenerateRequest{Model: "m", Prompt: "x"})
			return err
		},
	} {
		if err := call(); !errors.Is(err, engine.ErrUnreachable) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestModelNotFound(t *testing.T) {
	for _, server := range []string{string(ot.VLLM), string(ot.LMStudio), ollamaV1Server, string(ot.OpenAI)} {
		t.Run(server, func(t *testing.T) {
			base, _ := serve(t, server, "served", false)
			e := newEngine(t, base)
			_, err := chatErr(t, e, engine.ChatRequest{Model: "absent", Messages: ask("hi")})
			var nf *engine.ModelNotFoundError
			if !errors.As(err, &nf) || nf.Model != "absent" {
				t.Fatalf("err = %v (%T)", err, err)
			}
			// Nothing to pull on these servers; the front end names the
			// controls that pick another model.
			if msg := nf.Advice(); strings.Contains(msg, "pull") || !strings.Contains(msg, "{{model}}") || strings.Contains(err.Error(), "{{") {
				t.Errorf("message = %q", msg)
			}
			if _, err := e.Capabilities(context.Background(), "absent"); !errors.As(err, &nf) {
				t.Errorf("Capabilities: %v", err)
			}
		})
	}
}

func TestToolsUnsupported(t *testing.T) {
	for _, c := range []struct {
		server string
		fix    string
	}{
		{string(ot.LlamaCpp), "--jinja"},
		{string(ot.VLLM), "--enable-auto-tool-choice"},
		{ollamaV1Server, "tool support"},
		{string(ot.OpenAI), "tool support"}, // OpenRouter's 404
	} {
		t.Run(c.server, func(t *testing.T) {
			base, rules := serve(t, c.server, "plain", true)
			rules.On().Reply(et.Text("ok"))
			e := newEngine(t, base)
			// These servers do not say what a model can do (unknown, so
			// the agent tries tools), but for an Ollama behind /v1, whose
			// native API does.
			var want []string
			if c.server == ollamaV1Server {
				want = []string{engine.CapCompletion}
			}
			if caps, err := e.Capabilities(context.Background(), "plain"); err != nil || !slices.Equal(caps, want) {
				t.Fatalf("before: caps %v, %v", caps, err)
			}
			_, err := chatErr(t, e, engine.ChatRequest{Model: "plain", Messages: ask("hi"), Tools: []engine.ToolDef{{Name: "calculator"}}})
			var tu *engine.ToolsUnsupportedError
			if !errors.As(err, &tu) || tu.Model != "plain" || !strings.Contains(err.Error(), c.fix) || !strings.Contains(tu.Advice(), "{{agent react}}") {
				t.Fatalf("err = %v (%T)", err, err)
			}
			// Remembered: the capabilities no longer claim tools.
			if caps, err := e.Capabilities(context.Background(), "plain"); err != nil || slices.Contains(caps, engine.CapTools) || !slices.Contains(caps, engine.CapCompletion) {
				t.Errorf("after: caps %v, %v", caps, err)
			}
			// The same model without tools still answers.
			if resp, err := e.Chat(context.Background(), engine.ChatRequest{Model: "plain", Messages: ask("hi")}, nil); err != nil || resp.Message.Content != "ok" {
				t.Errorf("without tools: %+v, %v", resp.Message, err)
			}
		})
	}
}

func TestAuthErrors(t *testing.T) {
	const key = "sk-test-0123456789abcdef"
	for _, flavor := range []ot.Flavor{ot.OpenAI, ot.LlamaCpp, ot.VLLM} {
		t.Run(string(flavor), func(t *testing.T) {
			srv := ot.New(t, flavor)
			srv.Model("m")
			srv.RequireKey(key)
			srv.On().Reply(et.Text("ok"))

			_, err := chatErr(t, newEngine(t, srv.BaseURL), engine.ChatRequest{Model: "m", Messages: ask("hi")})
			var ae *openai.AuthError
			if !errors.As(err, &ae) || ae.Status != 401 || ae.KeySent {
				t.Fatalf("no key: err = %v (%T)", err, err)
			}
			if msg := err.Error(); !strings.Contains(msg, "none was sent") || !strings.Contains(msg, "OPENAI_API_KEY") || !strings.Contains(msg, "api_key") {
				t.Errorf("no key: message = %q", msg)
			}
			var se *engine.ServerError
			if !errors.As(err, &se) || se.Status != 401 {
				t.Errorf("not a ServerError underneath: %v", err)
			}

			wrong := "sk-wrong-key-999999999"
			_, err = chatErr(t, newEngine(t, srv.BaseURL, openai.WithAPIKey(wrong)), engine.ChatRequest{Model: "m", Messages: ask("hi")})
			if !errors.As(err, &ae) || !ae.KeySent || !strings.Contains(err.Error(), "refused the API key") {
				t.Fatalf("wrong key: err = %v", err)
			}
			if strings.Contains(err.Error(), wrong) {
				t.Errorf("the key is printed: %q", err)
			}

			good := newEngine(t, srv.BaseURL, openai.WithAPIKey(key))
			if resp, err := good.Chat(context.Background(), engine.ChatRequest{Model: "m", Messages: ask("hi")}, nil); err != nil || resp.Message.Content != "ok" {
				t.Fatalf("right key: %+v, %v", resp.Message, err)
			}
			reqs := srv.Requests()
			if h := reqs[len(reqs)-1].Header.Get("Authorization"); h != "Bearer "+key {
				t.Errorf("Authorization = %q", h)
			}
		})
	}
}

func TestAuthForbiddenAndEchoedKey(t *testing.T) {
	const key = "sk-echo-abcdefghijklmnop"
	srv := ot.New(t, ot.OpenAI)
	srv.Model("m")
	srv.On(et.UserSays("forbidden")).Reply(et.ErrorBody(403, `{"error":{"message":"Project proj_x does not have access to this feature","type":"invalid_request_error","param":null,"code":null}}`))
	srv.On(et.UserSays("echo")).Reply(et.ErrorBody(401, `{"error":{"message":"bad key `+key+`","type":"invalid_request_error"}}`))
	e := newEngine(t, srv.BaseURL, openai.WithAPIKey(key))

	_, err := chatErr(t, e, engine.ChatRequest{Model: "m", Messages: ask("forbidden")})
	var ae *openai.AuthError
	if !errors.As(err, &ae) || ae.Status != 403 || !strings.Contains(err.Error(), "accepted the API key but refused") || !strings.Contains(err.Error(), "does not have access") {
		t.Errorf("403: %v", err)
	}
	_, err = chatErr(t, e, engine.ChatRequest{Model: "m", Messages: ask("echo")})
	if strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "[api key]") {
		t.Errorf("echoed key not hidden: %q", err)
	}
}

func TestRateLimits(t *testing.T) {
	srv := ot.New(t, ot.OpenAI)
	srv.Model("m")
	srv.On(et.UserSays("seconds")).Reply(ot.RateLimited(20 * time.Second))
	srv.On(et.UserSays("millis")).Reply(ot.RateLimited(1500 * time.Millisecond))
	srv.On(et.UserSays("unsaid")).Reply(ot.RateLimited(0))
	srv.On(et.UserSays("quota")).Reply(ot.OutOfQuota())
	e := newEngine(t, srv.BaseURL)
	for _, c := range []struct {
		q     string
		after time.Duration
		says  string
	}{
		{"seconds", 20 * time.Second, "Try again in 20s"},
		{"millis", 1500 * time.Millisecond, "Try again in 1.5s"},
		{"unsaid", 0, "Try again in a little while"},
		{"quota", 0, "Retrying will not help"},
	} {
		_, err := chatErr(t, e, engine.ChatRequest{Model: "m", Messages: ask(c.q)})
		var rl *openai.RateLimitError
		if !errors.As(err, &rl) || rl.RetryAfter != c.after || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: err = %v (%T)", c.q, err, err)
			continue
		}
		if rl.Quota != (c.q == "quota") {
			t.Errorf("%s: quota = %v", c.q, rl.Quota)
		}
		var se *engine.ServerError
		if !errors.As(err, &se) || se.Status != 429 {
			t.Errorf("%s: not a ServerError underneath", c.q)
		}
	}
}

func TestContextOverflow(t *testing.T) {
	long := strings.Repeat("word ", 400) // 2,000 characters: about 504 tokens with the markers
	for _, c := range []struct {
		flavor         ot.Flavor
		maxTokens      int
		window, prompt int
	}{
		{ot.LlamaCpp, 0, 300, 504},
		{ot.VLLM, 0, 300, 504},
		{ot.VLLM, 100, 300, 504}, // "(504 in the messages, 100 in the completion)"
		{ot.OpenAI, 0, 300, 504},
		{ot.LMStudio, 0, 300, 504},
	} {
		t.Run(string(c.flavor), func(t *testing.T) {
			srv := ot.New(t, c.flavor)
			srv.AddModel(ot.ModelSpec{Name: "small", Window: 300})
			srv.On().Reply(et.Text("ok"))
			e := newEngine(t, srv.BaseURL)
			_, err := chatErr(t, e, engine.ChatRequest{Model: "small", Messages: ask(long), Options: engine.Options{NumPredict: c.maxTokens}})
			var co *engine.ContextOverflowError
			if !errors.As(err, &co) {
				t.Fatalf("err = %v (%T)", err, err)
			}
			if co.Model != "small" || co.Window != c.window || co.PromptTokens != c.prompt || co.ServerMessage == "" {
				t.Errorf("overflow = %+v", co)
			}
			if msg := err.Error(); !strings.Contains(msg, "llama-server -c") || strings.Contains(msg, "--num-ctx") {
				t.Errorf("message = %q", msg)
			}
		})
	}
}

func TestContextOverflowWordings(t *testing.T) {
	// Bodies seen from servers the fake does not play in these words.
	for _, c := range []struct {
		body           string
		window, prompt int
	}{
		{`{"error":{"message":"'max_tokens' or 'max_completion_tokens' is too large: 8000. This model's maximum context length is 4096 tokens and your request has 2778 input tokens (8000 > 4096 - 2778). None","type":"BadRequestError","param":null,"code":400}}`, 4096, 0},
		{`{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 4200 tokens (3000 in the messages, 1200 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}`, 4096, 3000},
		{`{"error":{"code":400,"message":"the request exceeds the available context size, try increasing the context size or enable context shift","type":"invalid_request_error"}}`, 0, 0},
		{`{"error":{"code":400,"message":"input (5000 tokens) is larger than the max context size (4096 tokens). skipping","type":"invalid_request_error"}}`, 4096, 5000},
	} {
		srv := ot.New(t, ot.OpenAI)
		srv.Model("m")
		srv.On().Reply(et.ErrorBody(400, c.body))
		_, err := chatErr(t, newEngine(t, srv.BaseURL), engine.ChatRequest{Model: "m", Messages: ask("x")})
		var co *engine.ContextOverflowError
		if !errors.As(err, &co) || co.Window != c.window || co.PromptTokens != c.prompt {
			t.Errorf("%s:\n err = %v (%+v)", c.body, err, co)
		}
	}
}

func TestServerErrors(t *testing.T) {
	srv := ot.New(t, ot.LlamaCpp)
	srv.On(et.UserSays("boom")).Reply(et.Error(500, "failed to decode the batch"))
	srv.On(et.UserSays("proxy")).Reply(et.ErrorBody(502, "<html><body>Bad \x1b[31mGateway</body></html>"))
	srv.On(et.UserSays("late")).Reply(et.Text("half an"), et.Error(500, "slot crashed"))
	srv.On(et.UserSays("old vllm")).Reply(et.Text("so"), et.ErrorBody(0, `{"object":"error","message":"engine dead","type":"InternalServerError","param":null,"code":500}`))
	e := newEngine(t, srv.BaseURL)

	_, err := chatErr(t, e, engine.ChatRequest{Model: "m", Messages: ask("boom")})
	var se *engine.ServerError
	if !errors.As(err, &se) || se.Status != 500 || se.Message != "failed to decode the batch" {
		t.Errorf("500: err = %v (%T)", err, err)
	}
	_, err = chatErr(t, e, engine.ChatRequest{Model: "m", Messages: ask("proxy")})
	if !errors.As(err, &se) || se.Status != 502 || se.Message != "<html><body>Bad [31mGateway</body></html>" {
		t.Errorf("502: err = %v (%T), message %q", err, err, se.Message)
	}
	resp, err := chatErr(t, e, engine.ChatRequest{Model: "m", Messages: ask("late")})
	if !errors.As(err, &se) || se.Status != 0 || se.Message != "slot crashed" || resp.Message.Content != "half an" {
		t.Errorf("in the stream: err = %v (%T), content %q", err, err, resp.Message.Content)
	}
	resp, err = chatErr(t, e, engine.ChatRequest{Model: "m", Messages: ask("old vllm")})
	if !errors.As(err, &se) || se.Status != 0 || se.Message != "engine dead" || resp.Message.Content != "so" {
		t.Errorf("vLLM's older error event: err = %v (%T), content %q", err, err, resp.Message.Content)
	}
}

func TestAnswerThatIsNotAnEventStream(t *testing.T) {
	srv := ot.New(t, ot.LMStudio) // answers unknown paths with a 200
	srv.Model("m")
	e := newEngine(t, srv.URL+"/wrong")
	_, err := chatErr(t, e, engine.ChatRequest{Model: "m", Messages: ask("hi")})
	if !strings.Contains(err.Error(), "instead of an event stream") || !strings.Contains(err.Error(), "base URL") {
		t.Errorf("err = %v", err)
	}
}
