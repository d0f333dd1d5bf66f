package openai_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/jarvis-workbench/jarvis/engine"
	ollamatest "github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
	ot "github.com/jarvis-workbench/jarvis/engine/openai/openaitest"
)

func TestListModels(t *testing.T) {
	srv := ot.New(t, ot.LlamaCpp)
	srv.AddModel(ot.ModelSpec{Name: "qwen3-8b-q4_k_m.gguf", Size: 5027783488, Params: 8190735360})
	e := newEngine(t, srv.BaseURL)
	models, err := e.ListModels(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(models) != 1 {
		t.Fatalf("models = %+v", models)
	}
	m := models[0]
	if m.Name != "qwen3-8b-q4_k_m.gguf" || m.SizeBytes != 5027783488 || m.ParameterSize != "8.2B" || m.ModifiedAt.IsZero() {
		t.Errorf("model = %+v", m)
	}

	srv2 := ot.New(t, ot.OpenAI)
	srv2.Model("gpt-a").Model("gpt-b")
	models, err = newEngine(t, srv2.BaseURL).ListModels(context.Background())
	if err != nil || len(models) != 2 || models[0].Name != "gpt-a" || models[1].Name != "gpt-b" {
		t.Errorf("OpenAI's list = %+v, %v", models, err)
	}

	srv2.FailPath("/v1/models", 500)
	_, err = newEngine(t, srv2.BaseURL).ListModels(context.Background())
	var se *engine.ServerError
	if !errors.As(err, &se) || se.Status != 500 {
		t.Errorf("failing list: %v", err)
	}
}

func TestShowContextLengthFromEachServer(t *testing.T) {
	for _, c := range []struct {
		name   string
		flavor ot.Flavor
		spec   ot.ModelSpec
		fail   string // a path that fails, to check the fallback
		// window is what the server runs the model with, max the model's
		// own maximum (0: the server does not say).
		window, max int
		caps        []string
	}{
		// vLLM's entry: max_model_len, the window it serves with.
		{"vLLM", ot.VLLM, ot.ModelSpec{Name: "Qwen/Qwen3-8B", Window: 16384, TrainWindow: 40960}, "", 16384, 0, nil},
		// llama.cpp: the runtime n_ctx from /props, its GGUF's n_ctx_train ...
		{"llama.cpp", ot.LlamaCpp, ot.ModelSpec{Name: "qwen3.gguf", Window: 8192, TrainWindow: 40960}, "", 8192, 40960, nil},
		// ... and no window when /props fails.
		{"llama.cpp without /props", ot.LlamaCpp, ot.ModelSpec{Name: "qwen3.gguf", Window: 8192, TrainWindow: 40960}, "/props", 0, 40960, nil},
		// LM Studio: the loaded model's loaded_context_length and its
		// max_context_length from /api/v0/models, whose type "llm" says
		// the model reads no images; only the maximum for a model it has
		// not loaded.
		{"LM Studio", ot.LMStudio, ot.ModelSpec{Name: "qwen/qwen3-8b", Window: 4096, TrainWindow: 32768, Arch: "qwen3", Quantization: "Q4_K_M"}, "", 4096, 32768, []string{"completion", "tools"}},
		{"LM Studio, not loaded", ot.LMStudio, ot.ModelSpec{Name: "qwen/qwen3-8b", Window: 4096, TrainWindow: 32768, NotLoaded: true}, "", 0, 32768, []string{"completion", "tools"}},
		{"LM Studio, a vision model", ot.LMStudio, ot.ModelSpec{Name: "qwen/qwen2.5-vl-7b", Window: 8192, TrainWindow: 32768, Type: "vlm"}, "", 8192, 32768, []string{"completion", "tools", "vision"}},
		{"LM Studio, an embedding model", ot.LMStudio, ot.ModelSpec{Name: "nomic-embed-text-v1.5", Window: 2048, TrainWindow: 2048, Type: "embeddings"}, "", 2048, 2048, []string{"embedding"}},
		{"LM Studio without /api/v0", ot.LMStudio, ot.ModelSpec{Name: "qwen/qwen3-8b", TrainWindow: 32768}, "/api/v0/models", 0, 0, nil},
		// A hosted API's entry with context_length and supported_parameters
		// (without input modalities it does not say it reads images).
		{"hosted", ot.OpenAI, ot.ModelSpec{Name: "vendor/model", Window: 131072, SupportedParameters: []string{"max_tokens", "reasoning", "temperature"}}, "", 131072, 131072, []string{"completion", "thinking"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := ot.New(t, c.flavor)
			srv.AddModel(c.spec)
			if c.fail != "" {
				srv.FailPath(c.fail, 404)
			}
			e := newEngine(t, srv.BaseURL)
			d, err := e.Show(context.Background(), c.spec.Name)
			if err != nil {
				t.Fatal(err)
			}
			if d.Name != c.spec.Name || d.Window != c.window || d.ContextLength != c.max || !slices.Equal(d.Capabilities, c.caps) {
				t.Errorf("details = %+v, want window %d, maximum %d, caps %v", d, c.window, c.max, c.caps)
			}
			if c.window > 0 && d.WindowFrom == "" {
				t.Errorf("the window does not say where it was read: %+v", d)
			}
			if c.name == "LM Studio" && (d.Family != "qwen3" || d.Quantization != "Q4_K_M") {
				t.Errorf("LM Studio's details = %+v", d)
			}
		})
	}
}

func TestShowFindsAndMissesModels(t *testing.T) {
	// Ollama's /v1 lists "qwen3:latest"; "qwen3" is the same model.
	srv := ollamatest.New(t)
	srv.Model("qwen3:latest", engine.CapCompletion)
	e := newEngine(t, srv.URL+"/v1")
	for _, name := range []string{"qwen3:latest", "qwen3", "QWEN3"} {
		if _, err := e.Show(context.Background(), name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := e.Show(context.Background(), "llama3"); !errors.As(err, new(*engine.ModelNotFoundError)) {
		t.Errorf("unlisted model: %v", err)
	}

	// llama.cpp serves its one model under any name.
	lsrv := ot.New(t, ot.LlamaCpp)
	lsrv.AddModel(ot.ModelSpec{Name: "/models/qwen3.gguf", Window: 4096})
	d, err := newEngine(t, lsrv.BaseURL).Show(context.Background(), "qwen3")
	if err != nil || d.Window != 4096 {
		t.Errorf("llama.cpp under another name: %+v, %v", d, err)
	}
}

func TestShowIsCachedAndFailuresAreNot(t *testing.T) {
	srv := ot.New(t, ot.OpenAI)
	srv.AddModel(ot.ModelSpec{Name: "a", SupportedParameters: []string{"tools"}})
	e := newEngine(t, srv.BaseURL)
	for range 3 {
		caps, err := e.Capabilities(context.Background(), "a")
		if err != nil {
			t.Fatal(err)
		}
		caps[0] = "scribbled" // the cache must not share the caller's slice
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests for one model, want 1", n)
	}
	if _, err := e.Show(context.Background(), "b"); err == nil {
		t.Fatal("b found before it was served")
	}
	srv.Model("b")
	if _, err := e.Show(context.Background(), "b"); err != nil {
		t.Errorf("b after it was added: %v", err)
	}
}

func TestShowWithoutAModelList(t *testing.T) {
	srv := ot.New(t, ot.VLLM)
	srv.FailPath("/v1/models", 404)
	d, err := newEngine(t, srv.BaseURL).Show(context.Background(), "anything")
	if err != nil || d.Capabilities != nil || d.Window != 0 {
		t.Errorf("details = %+v, %v; want nothing claimed", d, err)
	}
}

func TestVersionNamesTheServer(t *testing.T) {
	for _, c := range []struct {
		flavor ot.Flavor
		want   string
	}{
		{ot.LlamaCpp, "llama.cpp b6123-0a1b2c3d"},
		{ot.VLLM, "vLLM 0.10.1"},
		{ot.LMStudio, "LM Studio"},
		{ot.OpenAI, "OpenAI"},
	} {
		srv := ot.New(t, c.flavor)
		srv.Model("m")
		v, err := newEngine(t, srv.BaseURL).Version(context.Background())
		if err != nil || v != c.want {
			t.Errorf("%s: version %q, %v; want %q", c.flavor, v, err, c.want)
		}
	}
	// Ollama's /v1 does not say what it is.
	osrv := ollamatest.New(t)
	osrv.Model("m")
	if v, err := newEngine(t, osrv.URL+"/v1").Version(context.Background()); err != nil || v != "OpenAI-compatible" {
		t.Errorf("Ollama's /v1: version %q, %v", v, err)
	}
	// A server that answers but has no model list at that URL.
	_, err := newEngine(t, osrv.URL+"/api").Version(context.Background())
	var se *engine.ServerError
	if !errors.As(err, &se) || se.Status != 404 || errors.Is(err, engine.ErrUnreachable) {
		t.Errorf("wrong base URL: %v", err)
	}
}
