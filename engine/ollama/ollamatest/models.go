package ollamatest

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/model/parsers"
	"github.com/ollama/ollama/types/model"
)

// ModelSpec describes a model the server has. In a script file the keys
// are the JSON names below.
type ModelSpec struct {
	// Name as pulled, e.g. "qwen3:8b"; ":latest" is implied without a tag.
	Name string `json:"name"`
	// Capabilities as /api/show reports them: completion, tools,
	// thinking, vision, embedding, insert. Empty means completion only.
	Capabilities  []string `json:"capabilities,omitempty"`
	Size          int64    `json:"size,omitempty"`
	Family        string   `json:"family,omitempty"`
	ParameterSize string   `json:"parameter_size,omitempty"`
	Quantization  string   `json:"quantization,omitempty"`
	// ContextLength is the model's own maximum window
	// (model_info["<family>.context_length"]); 32768 when unset. The
	// window a request runs with is num_ctx (or the server's default),
	// never more than this.
	ContextLength   int       `json:"context_length,omitempty"`
	EmbeddingLength int       `json:"embedding_length,omitempty"`
	ModifiedAt      time.Time `json:"modified_at,omitzero"`
	// Template renders a request into the prompt the model reads, with
	// Ollama's template package, as a Modelfile's TEMPLATE does:
	// TemplateJSON (the default), TemplateNames, the name of a template
	// Ollama ships ("command-r", "llama3-instruct", ...; see
	// ShippedTemplate), or Go template source in Ollama's dialect (see
	// Render).
	Template string `json:"template,omitempty"`
	// Renderer, as a Modelfile's RENDERER, makes the prompt with one of
	// Ollama's built-in renderers instead ("qwen3-coder",
	// "qwen3-vl-instruct", "olmo3", "lfm2", ...).
	Renderer string `json:"renderer,omitempty"`
	// Parser, as a Modelfile's PARSER, is the built-in parser ("qwen3",
	// "qwen3-thinking", "qwen3-coder", ...) that turns the model's raw
	// text (enginetest.Raw) into thinking and tool calls; without one,
	// the thinking tags and the tool-call tag come from the template, as
	// in the real server.
	Parser string `json:"parser,omitempty"`
	// Parameters are the model's own default options, as a Modelfile's
	// PARAMETER lines set them; /api/show lists them, and num_ctx and
	// num_predict here apply to requests that do not set their own.
	// Unset: {"temperature": 0.7}.
	Parameters map[string]any `json:"parameters,omitempty"`
	// NoRender makes the server ignore _debug_render_only for this model
	// and answer normally, as a server without the feature does.
	NoRender bool `json:"no_render,omitempty"`
	// DropOnShift makes a reply that fills the window of a request that
	// lets the server shift it (shift unset) stop mid-stream, with no
	// final chunk, as the small model of the project's notes did; a real
	// server otherwise shifts the context and goes on.
	DropOnShift bool `json:"drop_on_shift,omitempty"`
	// LoadTime is how long loading (or reloading) takes; 1ms when unset.
	// In a script: "load_time": "250ms".
	LoadTime time.Duration `json:"-"`
	// PromptRate is how many prompt tokens a second the model evaluates
	// when they are not in its cache; 4,000,000 when unset (a 2,048-token
	// prompt costs half a millisecond).
	PromptRate float64 `json:"prompt_rate,omitempty"`

	tmpl *chatTemplate
}

// Model adds (or replaces) a model with the given capabilities
// ("completion", "tools", "thinking", ...; none means completion only).
func (s *Server) Model(name string, caps ...string) *Server {
	return s.AddModel(ModelSpec{Name: name, Capabilities: caps})
}

// AddModel adds (or replaces) a model described in full. It panics when
// the spec's Template does not parse, like regexp.MustCompile: a broken
// test setup fails where it is written.
func (s *Server) AddModel(m ModelSpec) *Server {
	m, err := completeSpec(m, s.started)
	if err != nil {
		panic("ollamatest: model " + m.Name + ": " + err.Error())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.putModelLocked(&m)
	return s
}

func (s *Server) putModelLocked(m *ModelSpec) {
	for i, old := range s.models {
		if old.Name == m.Name {
			s.models[i] = m
			return
		}
	}
	s.models = append(s.models, m)
}

// completeSpec fills a spec's defaults and parses its template.
func completeSpec(m ModelSpec, modified time.Time) (ModelSpec, error) {
	m.Name = normalizeName(m.Name)
	if len(m.Capabilities) == 0 {
		m.Capabilities = []string{"completion"}
	}
	m.Capabilities = slices.Clone(m.Capabilities)
	if m.Family == "" {
		m.Family = baseName(m.Name)
	}
	if m.ContextLength <= 0 {
		m.ContextLength = 32768
	}
	if m.EmbeddingLength == 0 {
		m.EmbeddingLength = 64
	}
	if m.ModifiedAt.IsZero() {
		m.ModifiedAt = modified
	}
	if m.Parameters == nil {
		m.Parameters = map[string]any{"temperature": 0.7}
	} else {
		m.Parameters = maps.Clone(m.Parameters)
	}
	if m.LoadTime <= 0 {
		m.LoadTime = time.Millisecond
	}
	if m.PromptRate <= 0 {
		m.PromptRate = 4e6
	}
	if m.Parser != "" && parsers.ParserForName(m.Parser) == nil {
		return m, fmt.Errorf("parser %q is not one Ollama has built in (qwen3, qwen3-thinking, qwen3-coder, qwen3-vl-instruct, qwen3-vl-thinking, qwen3.5, cogito, deepseek3, olmo3, olmo3-think, lfm2, lfm2-thinking, glm-4.7, ministral, functiongemma, nemotron-3-nano, harmony, passthrough)", m.Parser)
	}
	t, err := parseTemplate(m.Template, m.Renderer)
	if err != nil {
		return m, err
	}
	m.tmpl = t
	return m, nil
}

// SetRenderSupport turns the server's _debug_render_only on (the default)
// or off: off, the field is ignored and requests are answered normally, as
// by a server without the feature. ModelSpec.NoRender turns it off for
// one model.
func (s *Server) SetRenderSupport(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noRender = !on
}

// lookup finds a registered model by any spelling of its name.
func (s *Server) lookup(name string) (ModelSpec, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lookupLocked(name)
}

func (s *Server) lookupLocked(name string) (ModelSpec, bool) {
	n := normalizeName(name)
	for _, m := range s.models {
		if m.Name == n {
			return *m, true
		}
	}
	return ModelSpec{}, false
}

func (s *Server) handleTags(w http.ResponseWriter) {
	s.mu.Lock()
	models := make([]api.ListModelResponse, 0, len(s.models))
	for _, m := range s.models {
		models = append(models, api.ListModelResponse{
			Name:       m.Name,
			Model:      m.Name,
			ModifiedAt: m.ModifiedAt,
			Size:       m.Size,
			Digest:     digest(m.Name),
			Details:    details(m),
		})
	}
	s.mu.Unlock()
	// Like Ollama: most recently modified first.
	slices.SortStableFunc(models, func(a, b api.ListModelResponse) int {
		return cmp.Compare(b.ModifiedAt.Unix(), a.ModifiedAt.Unix())
	})
	writeJSON(w, http.StatusOK, api.ListResponse{Models: models})
}

func (s *Server) handleShow(w http.ResponseWriter, rec *Request) {
	var req api.ShowRequest
	if err := decode(rec.Body, &req); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	s.record(func() { rec.Show = &req })
	//lint:ignore SA1019 older clients still send "name", and the real server accepts it
	name := cmp.Or(req.Model, req.Name)
	if name == "" {
		writeError(w, http.StatusBadRequest, "model is required")
		return
	}
	m, ok := s.lookup(name)
	if !ok {
		writeError(w, http.StatusNotFound, fmt.Sprintf("model '%s' not found", name))
		return
	}
	caps := make([]model.Capability, len(m.Capabilities))
	for i, c := range m.Capabilities {
		caps[i] = model.Capability(c)
	}
	// The Modelfile names the renderer and parser as Ollama's does; the
	// response's own renderer and parser fields stay empty, as there.
	modelfile := "# Modelfile generated by \"ollama show\"\nFROM " + fullName(m.Name) + "\n"
	if m.Renderer != "" {
		modelfile += "RENDERER " + m.Renderer + "\n"
	}
	if m.Parser != "" {
		modelfile += "PARSER " + m.Parser + "\n"
	}
	resp := api.ShowResponse{
		Modelfile:  modelfile,
		Parameters: parameterLines(m.Parameters),
		Template:   m.tmpl.source,
		Details:    details(&m),
		ModelInfo: map[string]any{
			"general.architecture":         m.Family,
			"general.parameter_count":      parameterCount(m.ParameterSize),
			m.Family + ".context_length":   m.ContextLength,
			m.Family + ".embedding_length": m.EmbeddingLength,
		},
		Tensors:      []api.Tensor{{Name: "token_embd.weight", Type: cmp.Or(m.Quantization, "Q4_K"), Shape: []uint64{uint64(m.EmbeddingLength), 151936}}},
		Capabilities: caps,
		ModifiedAt:   m.ModifiedAt,
	}
	writeJSON(w, http.StatusOK, resp)
}

func (s *Server) handleEmbed(w http.ResponseWriter, rec *Request) {
	var req api.EmbedRequest
	if err := decode(rec.Body, &req); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	s.record(func() { rec.Embed = &req })
	var inputs []string
	switch in := req.Input.(type) {
	case string:
		if in != "" {
			inputs = []string{in}
		}
	case []any:
		for _, v := range in {
			str, ok := v.(string)
			if !ok {
				writeError(w, http.StatusBadRequest, "invalid input type")
				return
			}
			inputs = append(inputs, str)
		}
	case nil:
	default:
		writeError(w, http.StatusBadRequest, "invalid input type")
		return
	}
	m, ok := s.lookup(req.Model)
	if !ok {
		writeError(w, http.StatusNotFound, fmt.Sprintf("model '%s' not found", req.Model))
		return
	}
	start := time.Now()
	opts, err := s.parseRunOptions(m, req.Options)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	// Embedding runs on a loaded model like anything else.
	lm, kind := s.acquire(m, opts, req.KeepAlive, rec.Seq)
	defer s.release(lm, rec.Seq, "")
	if kind != "" {
		time.Sleep(m.LoadTime)
	}
	loaded := time.Since(start)
	vecs := make([][]float32, len(inputs))
	tokens := 0
	for i, in := range inputs {
		vecs[i] = Embedding(in, m.EmbeddingLength)
		tokens += CountTokens(in)
	}
	s.record(func() { rec.Load, rec.Window = kind, lm.window })
	writeJSON(w, http.StatusOK, api.EmbedResponse{
		Model:           req.Model,
		Embeddings:      vecs,
		TotalDuration:   max(time.Since(start), time.Microsecond),
		LoadDuration:    max(loaded, time.Microsecond),
		PromptEvalCount: tokens,
	})
}

// normalizeName lower-cases a model name and gives it its implicit tag.
func normalizeName(name string) string {
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "" {
		return ""
	}
	if !strings.Contains(name[strings.LastIndex(name, "/")+1:], ":") {
		name += ":latest"
	}
	return name
}

// fullName is the name as the server spells it in capability errors.
func fullName(name string) string {
	switch strings.Count(name, "/") {
	case 0:
		return "registry.ollama.ai/library/" + name
	case 1:
		return "registry.ollama.ai/" + name
	}
	return name
}

// baseName is the model part of a name: "library/qwen3:8b" -> "qwen3".
func baseName(name string) string {
	name = name[strings.LastIndex(name, "/")+1:]
	if i := strings.Index(name, ":"); i >= 0 {
		name = name[:i]
	}
	return name
}

// digest is a stable stand-in for the manifest digest /api/tags reports.
func digest(name string) string {
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:])
}

// parameterCount reads a size like "8.2B" or "600M" (0 when unset).
func parameterCount(size string) int64 {
	size = strings.TrimSpace(strings.ToUpper(size))
	mult := 1.0
	switch {
	case strings.HasSuffix(size, "B"):
		mult, size = 1e9, strings.TrimSuffix(size, "B")
	case strings.HasSuffix(size, "M"):
		mult, size = 1e6, strings.TrimSuffix(size, "M")
	}
	f, err := strconv.ParseFloat(size, 64)
	if err != nil {
		return 0
	}
	return int64(f * mult)
}

// parameterLines lists parameters as /api/show does: one "name value" line
// each (a list gives one line per value), names padded to 30 columns,
// values in Go syntax. Sorted, where the real server follows map order.
func parameterLines(params map[string]any) string {
	var lines []string
	for _, k := range slices.Sorted(maps.Keys(params)) {
		if list, ok := params[k].([]any); ok {
			for _, v := range list {
				lines = append(lines, fmt.Sprintf("%-*s %#v", 30, k, v))
			}
			continue
		}
		lines = append(lines, fmt.Sprintf("%-*s %#v", 30, k, params[k]))
	}
	return strings.Join(lines, "\n")
}

func details(m *ModelSpec) api.ModelDetails {
	return api.ModelDetails{
		Format:            "gguf",
		Family:            m.Family,
		Families:          []string{m.Family},
		ParameterSize:     m.ParameterSize,
		QuantizationLevel: m.Quantization,
	}
}

// Embedding is the stand-in's deterministic embedding of text: a unit
// vector of dims hashed word counts, so texts sharing words are close in
// cosine similarity and identical texts embed identically. Tests can
// compute the vector the server will return.
func Embedding(text string, dims int) []float32 {
	if dims <= 0 {
		dims = 64
	}
	v := make([]float64, dims)
	for _, word := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		h := fnv.New64a()
		_, _ = h.Write([]byte(word))
		sum := h.Sum64()
		sign := 1.0
		if sum>>63 == 1 {
			sign = -1
		}
		v[sum%uint64(dims)] += sign
	}
	norm := 0.0
	for _, x := range v {
		norm += x * x
	}
	out := make([]float32, dims)
	if norm == 0 {
		out[0] = 1
		return out
	}
	norm = math.Sqrt(norm)
	for i, x := range v {
		out[i] = float32(x / norm)
	}
	return out
}
