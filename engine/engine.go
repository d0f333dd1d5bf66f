// Package engine defines what jarvis needs from a model server: streaming
// chat with tools and thinking, a one-shot generate for sub-queries, the list
// of models and what each can do. engine/ollama implements it on Ollama's
// official Go client, engine/openai on OpenAI's official Go SDK for servers
// that speak the OpenAI API (llama.cpp, vLLM, LM Studio, hosted APIs);
// agents and the llm tool depend only on this package.
//
// The errors a person meets are typed (ErrUnreachable, ModelNotFoundError,
// ToolsUnsupportedError, ThinkingUnsupportedError, StreamError) so that every
// interface can say what went wrong and how to fix it.
package engine

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/jarvis-workbench/jarvis/events"
)

// DefaultHost is where Ollama listens unless told otherwise.
const DefaultHost = "http://127.0.0.1:11434"

// Roles of chat messages.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one chat message. Tool results are RoleTool messages that carry
// the ToolName and ToolCallID of the call they answer. Images go with user
// messages, to models with the vision capability.
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	Thinking   string     `json:"thinking,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolName   string     `json:"tool_name,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	Images     []Image    `json:"images,omitempty"`
}

// Image is a picture attached to a message: the file's bytes as they were
// read (PNG, JPEG, WebP or GIF), its format as found from the content, and
// its size in pixels (what a model spends on it can depend on the size).
// Name is what the person called it (a file name), for display only.
type Image struct {
	Name     string `json:"name,omitempty"`
	MIMEType string `json:"mime_type"`
	Data     []byte `json:"data"`
	Width    int    `json:"width,omitempty"`
	Height   int    `json:"height,omitempty"`
}

// DataURL is the image as a data: URL, as the OpenAI API takes images.
func (im Image) DataURL() string {
	return "data:" + im.MIMEType + ";base64," + base64.StdEncoding.EncodeToString(im.Data)
}

// ToolCall is a call the model asked for. Arguments is the JSON object text,
// keys in the order the model wrote them.
type ToolCall struct {
	ID        string `json:"id"`
	Index     int    `json:"index"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ToolDef is a tool as offered to the model.
type ToolDef struct {
	Name        string
	Description string
	Parameters  *jsonschema.Schema
}

// Options are the generation options jarvis exposes. Zero values mean "the
// server's default" and are not sent.
type Options struct {
	NumCtx      int      `toml:"num_ctx" json:"num_ctx,omitempty"`
	NumPredict  int      `toml:"num_predict" json:"num_predict,omitempty"`
	Temperature *float64 `toml:"temperature" json:"temperature,omitempty"`
	Seed        *int     `toml:"seed" json:"seed,omitempty"`
	// KeepAlive is how long the server keeps the model loaded; 0 = default.
	KeepAlive time.Duration `toml:"-" json:"keep_alive,omitempty"`
	// Think asks a thinking model to think ("" = server default; "true",
	// "false", or a level "low" | "medium" | "high").
	Think string `toml:"think" json:"think,omitempty"`
}

// ChatRequest is one streamed chat turn.
type ChatRequest struct {
	Model    string
	Messages []Message
	Tools    []ToolDef
	Options  Options
}

// Chunk is one streamed piece of a reply. Content and Thinking are deltas;
// ToolCalls arrive whole.
type Chunk struct {
	Content   string
	Thinking  string
	ToolCalls []ToolCall
}

// ChatResponse is a finished reply: the whole assistant message and what it
// cost.
type ChatResponse struct {
	Model      string
	Message    Message
	DoneReason string
	Usage      events.Usage
}

// GenerateRequest is a one-shot completion (the llm tool's sub-query).
type GenerateRequest struct {
	Model   string
	Prompt  string
	System  string
	Options Options
}

// GenerateResponse is the answer to a GenerateRequest.
type GenerateResponse struct {
	Model   string
	Content string
	Usage   events.Usage
}

// ModelInfo describes one model the server has.
type ModelInfo struct {
	Name          string    `json:"name"`
	SizeBytes     int64     `json:"size_bytes"`
	ModifiedAt    time.Time `json:"modified_at"`
	Family        string    `json:"family,omitempty"`
	ParameterSize string    `json:"parameter_size,omitempty"`
	Quantization  string    `json:"quantization,omitempty"`
	// Capabilities is filled by Capabilities, not by ListModels.
	Capabilities []string `json:"capabilities,omitempty"`
}

// Capability names reported by the server.
const (
	CapCompletion = "completion"
	CapTools      = "tools"
	CapThinking   = "thinking"
	CapVision     = "vision"
	CapEmbedding  = "embedding"
)

// ModelDetails is what the server says about one model.
type ModelDetails struct {
	Name         string   `json:"name"`
	Capabilities []string `json:"capabilities"`
	// ContextLength is the model's own maximum window in tokens (Ollama:
	// model_info's "<arch>.context_length"); 0 when the server does not say.
	ContextLength int `json:"context_length,omitempty"`
	// Window is the window a server that fixes it at load time runs the
	// model with (llama.cpp's n_ctx, vLLM's max_model_len, LM Studio's
	// loaded context), and WindowFrom where the engine read it; 0 when
	// the server does not say, or takes the window with each request
	// (Ollama's native API).
	Window        int    `json:"window,omitempty"`
	WindowFrom    string `json:"window_from,omitempty"`
	Family        string `json:"family,omitempty"`
	ParameterSize string `json:"parameter_size,omitempty"`
	Quantization  string `json:"quantization,omitempty"`
	// Template is the chat template the server renders prompts with, when
	// it shows it; Parameters are the model's default options, one
	// "name value" per line.
	Template   string `json:"template,omitempty"`
	Parameters string `json:"parameters,omitempty"`
}

// LoadedModel is a model the server holds in memory now.
type LoadedModel struct {
	Name      string `json:"name"`
	SizeBytes int64  `json:"size_bytes"`
	VRAMBytes int64  `json:"vram_bytes"`
	// ContextLength is the window the model was loaded with: the one in
	// force for requests that do not change num_ctx.
	ContextLength int       `json:"context_length,omitempty"`
	ExpiresAt     time.Time `json:"expires_at,omitzero"`
}

// PullProgress is one step of a model download.
type PullProgress struct {
	Status    string `json:"status"`
	Digest    string `json:"digest,omitempty"`
	Total     int64  `json:"total,omitempty"`
	Completed int64  `json:"completed,omitempty"`
}

// The optional abilities of an engine, found with a type assertion: not
// every server can show a model's details, list what it has loaded, render
// a prompt without answering it, download or unload models. A method may
// also return ErrUnsupported when the server turns out not to have it.
type (
	// Describer reads a model's details.
	Describer interface {
		Show(ctx context.Context, model string) (ModelDetails, error)
	}
	// LoadLister lists the models the server holds in memory.
	LoadLister interface {
		Loaded(ctx context.Context) ([]LoadedModel, error)
	}
	// Renderer returns the prompt exactly as the server would render req
	// for the model (template, system prompt, tools), without a reply.
	Renderer interface {
		RenderPrompt(ctx context.Context, req ChatRequest) (string, error)
	}
	// Puller downloads a model, reporting progress as it goes.
	Puller interface {
		Pull(ctx context.Context, model string, progress func(PullProgress)) error
	}
	// Unloader frees the memory a loaded model holds.
	Unloader interface {
		Unload(ctx context.Context, model string) error
	}
)

// ThinkAdjuster is implemented by engines whose server takes the think
// option in only some forms for some models (Ollama takes a level, low,
// medium or high, only from models with levels, such as gpt-oss, and
// refuses it from the others). ThinkFor returns what the engine sends
// for model in place of think, and, when that differs from think, a
// sentence saying so for the person; the engine's Chat and Generate send
// the same.
type ThinkAdjuster interface {
	ThinkFor(ctx context.Context, model, think string) (sent, note string)
}

// WindowAdvisor is implemented by engines whose server fixes a model's
// context window when it loads the model, as every OpenAI-compatible
// server does (llama-server -c, vllm serve --max-model-len, LM Studio's
// load settings). A request cannot change that window, so a num_ctx the
// person sets (/ctx, --num-ctx, num_ctx) only tells jarvis what it is.
// WindowAdvice says how to get a larger window, as a clause that can
// follow "or" in a sentence ("restart the server with ..."). Engines
// without it (Ollama) take the window with each request.
type WindowAdvisor interface {
	WindowAdvice() string
}

// WindowAdvice returns eng's advice for a larger window, and whether its
// server fixes the window at load time (see WindowAdvisor).
func WindowAdvice(eng InferenceEngine) (string, bool) {
	if a, ok := eng.(WindowAdvisor); ok {
		if advice := a.WindowAdvice(); advice != "" {
			return advice, true
		}
	}
	return "", false
}

// SameModel reports whether two model names mean the same model, as
// servers read them: case and surrounding space do not count, and a name
// without a tag is its ":latest" ("qwen3" is "qwen3:latest").
func SameModel(a, b string) bool {
	norm := func(s string) string {
		s = strings.ToLower(strings.TrimSpace(s))
		if !strings.Contains(s[strings.LastIndex(s, "/")+1:], ":") {
			s += ":latest"
		}
		return s
	}
	return norm(a) == norm(b)
}

// ErrUnsupported means the server cannot do what was asked (an optional
// ability it lacks).
var ErrUnsupported = errors.New("not supported by this server")

// InferenceEngine is a model server.
type InferenceEngine interface {
	// Chat streams one reply. onChunk is called on the caller's goroutine
	// for every delta, in order; the returned response holds the whole
	// message. On error the response still holds what was received.
	Chat(ctx context.Context, req ChatRequest, onChunk func(Chunk)) (ChatResponse, error)
	// Generate answers one prompt without streaming.
	Generate(ctx context.Context, req GenerateRequest) (GenerateResponse, error)
	// ListModels lists the models the server has.
	ListModels(ctx context.Context) ([]ModelInfo, error)
	// Capabilities returns what a model can do (completion, tools, thinking...).
	Capabilities(ctx context.Context, model string) ([]string, error)
	// Version returns the server's version (a cheap reachability check).
	Version(ctx context.Context) (string, error)
	// Host is the server's base URL, for messages.
	Host() string
}

// Embedder is implemented by engines that can embed text (memory's optional
// semantic ranking).
type Embedder interface {
	Embed(ctx context.Context, model string, inputs []string) ([][]float32, error)
}

// ErrUnreachable means nothing answered at the host.
var ErrUnreachable = errors.New("model server not reachable")

// UnreachableError wraps ErrUnreachable with the host and the fix.
type UnreachableError struct {
	Host string
	Err  error
	// Server names the kind of server in the message ("Ollama" when
	// empty) and Fix says how to start it or point jarvis elsewhere
	// (Ollama's advice when empty), so each engine can speak of its own.
	Server string
	Fix    string
}

func (e *UnreachableError) Error() string { return Say(e.Advice(), Plain) }

// Advice is the message with its controls as placeholders (see Say).
func (e *UnreachableError) Advice() string {
	server, fix := e.Server, e.Fix
	if server == "" {
		server = "Ollama"
	}
	if fix == "" {
		fix = "Start it with 'ollama serve' (or open the Ollama app), or point jarvis elsewhere with {{host}} or OLLAMA_HOST"
	}
	return fmt.Sprintf("cannot reach %s at %s (%v). %s", server, e.Host, e.Err, fix)
}

// Unwrap lets errors.Is(err, ErrUnreachable) work.
func (e *UnreachableError) Unwrap() []error { return []error{ErrUnreachable, e.Err} }

// ModelNotFoundError means the server does not have the model.
type ModelNotFoundError struct {
	Model string
	// Fix says how to get the model or pick another; empty means Ollama's
	// advice (ollama pull).
	Fix string
}

func (e *ModelNotFoundError) Error() string { return Say(e.Advice(), Plain) }

// Advice is the message with its controls as placeholders (see Say).
func (e *ModelNotFoundError) Advice() string {
	fix := e.Fix
	if fix == "" {
		fix = fmt.Sprintf("Download it ({{pull %s}}), or pick another with {{model}} (see {{models}})", e.Model)
	}
	return fmt.Sprintf("model %q is not available on the server. %s", e.Model, fix)
}

// ToolsUnsupportedError means the model cannot do native tool calls.
type ToolsUnsupportedError struct {
	Model string
	// Fix says what would let tools through, when the server rather than
	// the model refuses them (a server flag); empty means the advice for
	// a model without tool support.
	Fix string
}

func (e *ToolsUnsupportedError) Error() string { return Say(e.Advice(), Plain) }

// Advice is the message with its controls as placeholders (see Say).
func (e *ToolsUnsupportedError) Advice() string {
	fix := e.Fix
	if fix == "" {
		fix = "Use a model with tool support (for example qwen3 or llama3.1), or {{agent react}}, which works with any model"
	}
	return fmt.Sprintf("model %q does not support tools. %s", e.Model, fix)
}

// ThinkingUnsupportedError means think was requested from a model without it.
type ThinkingUnsupportedError struct{ Model string }

func (e *ThinkingUnsupportedError) Error() string { return Say(e.Advice(), Plain) }

// Advice is the message with its controls as placeholders (see Say).
func (e *ThinkingUnsupportedError) Advice() string {
	return fmt.Sprintf("model %q does not support thinking. Turn thinking off ({{think}}) or use a thinking model", e.Model)
}

// VisionUnsupportedError means images were about to be sent to a model
// that cannot read them. Nothing was sent.
type VisionUnsupportedError struct {
	Model string
	// Capable lists the server's models that can read images; empty when
	// none can (or the server could not list them).
	Capable []string
	// Fix replaces the advice given when no model can (Ollama's: pull one).
	Fix string
}

func (e *VisionUnsupportedError) Error() string { return Say(e.Advice(), Plain) }

// Advice is the message with its controls as placeholders (see Say).
func (e *VisionUnsupportedError) Advice() string {
	msg := fmt.Sprintf("model %q cannot read images (the server does not list the vision capability for it), so nothing was sent. ", e.Model)
	if len(e.Capable) > 0 {
		return msg + "Models on this server that can: " + strings.Join(e.Capable, ", ") + ". Pick one of them with {{model}}, or leave the images out"
	}
	fix := e.Fix
	if fix == "" {
		fix = "Download a model that can, for example gemma3 or qwen2.5vl ({{pull gemma3}}), or leave the images out"
	}
	return msg + "None of the server's models can. " + fix
}

// NotAChatModelError means a chat was about to go to a model the server
// lists as an embedding model: it cannot answer, so nothing was sent.
type NotAChatModelError struct{ Model string }

func (e *NotAChatModelError) Error() string { return Say(e.Advice(), Plain) }

// Advice is the message with its controls as placeholders (see Say).
func (e *NotAChatModelError) Advice() string {
	return fmt.Sprintf("model %q is an embedding model: it turns text into vectors and cannot chat, so nothing was sent. Pick a chat model with {{model}}; {{models}} says what each model can do", e.Model)
}

// EmbeddingOnly reports whether caps are those of a model that embeds and
// cannot chat.
func EmbeddingOnly(caps []string) bool {
	return slices.Contains(caps, CapEmbedding) && !slices.Contains(caps, CapCompletion)
}

// StreamError means the connection was lost mid-reply; what arrived before
// is kept in the ChatResponse returned with it.
type StreamError struct {
	Received int // bytes of content received before the loss
	Err      error
}

func (e *StreamError) Error() string {
	return fmt.Sprintf("the connection to the model server was lost mid-reply after %d characters (%v); the partial reply is kept", e.Received, e.Err)
}

func (e *StreamError) Unwrap() error { return e.Err }

// ContextOverflowError means a request did not fit the model's context
// window: the server refused it rather than cutting it, or jarvis did not
// send it. Window and PromptTokens are filled in by whoever knows them
// (the engine rarely does; the agent's budget does); 0 means unknown.
type ContextOverflowError struct {
	Model         string
	Window        int
	PromptTokens  int
	ServerMessage string
	// What names what is too big ("your message", "the conversation");
	// "" means the request.
	What string
	// Fix says how to make room, as a sentence; empty means raising the
	// window, which works where the request sets it (Ollama). Servers
	// that fix the window when they load the model need another remedy.
	Fix string
	// Detail, when set, is the whole account of the sizes, written by
	// whoever counted the request part by part (the agent's budget: the
	// system prompt, the tools, the history, the images, the reply's
	// room); it replaces the sentence made of Window and PromptTokens.
	Detail string
}

func (e *ContextOverflowError) Error() string { return Say(e.Advice(), Plain) }

// Advice is the message with its controls as placeholders (see Say).
func (e *ContextOverflowError) Advice() string {
	what, fix := e.What, e.Fix
	if what == "" {
		what = "the request"
	}
	if fix == "" {
		fix = "Raise the window ({{window}}) or shorten the message"
	}
	switch {
	case e.Detail != "":
		return e.Detail + " " + fix
	case e.Window > 0 && e.PromptTokens > 0:
		return fmt.Sprintf("%s is about %s tokens; %s runs with a %s-token window. %s", what, GroupDigits(e.PromptTokens), e.Model, GroupDigits(e.Window), fix)
	case e.Window > 0:
		return fmt.Sprintf("%s does not fit %s's %s-token window. %s", what, e.Model, GroupDigits(e.Window), fix)
	}
	msg := fmt.Sprintf("%s does not fit %s's context window", what, e.Model)
	if e.ServerMessage != "" {
		msg += " (the server said: " + e.ServerMessage + ")"
	}
	return msg + ". " + fix
}

// GroupDigits writes n with thousands separators (3,100), as the sizes in
// messages are read by people.
func GroupDigits(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + GroupDigits(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// ServerError is any other error the server answered with. Status is 0 when
// the error arrived inside a reply that had already started streaming.
type ServerError struct {
	Status  int
	Message string
}

func (e *ServerError) Error() string {
	if e.Status == 0 {
		return "model server error: " + e.Message
	}
	return fmt.Sprintf("model server error (HTTP %d): %s", e.Status, e.Message)
}
