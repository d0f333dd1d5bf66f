package ollamatest

import (
	"cmp"
	"fmt"
	"net/http"
	"strings"

	"github.com/ollama/ollama/api"

	"github.com/jarvis-workbench/jarvis/engine/enginetest"
)

// Request is one request the server received, as recorded for assertions.
// The decoded body is in the field for its endpoint (nil when the body did
// not decode). Treat it as read-only.
type Request struct {
	Seq    int // 1-based order of arrival
	Method string
	Path   string
	Header http.Header
	// Body is the body the handler read. A /v1 request's is the /api
	// request Ollama's translation made of it (so Chat is filled as for
	// /api/chat); OpenAIBody is then the body as the client sent it.
	Body       []byte
	OpenAIBody []byte

	Chat     *api.ChatRequest
	Generate *api.GenerateRequest
	Show     *api.ShowRequest
	Embed    *api.EmbedRequest
	Pull     *api.PullRequest

	// Status is the HTTP status the server answered with.
	Status int
	// Reply names the scripted reply that answered ("rule 2 (user says
	// ...)" or "default"); empty when none did.
	Reply string

	// What a chat or generate request asked of the window, as sent:
	// options.num_ctx and num_predict (0 when unset), truncate and shift
	// (nil when unset: the server's default, true), _debug_render_only
	// and keep_alive.
	NumCtx     int
	NumPredict int
	Truncate   *bool
	Shift      *bool
	RenderOnly bool
	KeepAlive  *api.Duration

	// What the server did with it. Window is the context length the
	// model ran with; Load says whether this request loaded or reloaded
	// it. Prompt is the rendered prompt the model read, PromptTokens its
	// tokens (prompt_eval_count), FullPromptTokens those of the whole
	// conversation before any cut. CutMessages and CutTokens are the
	// silent cut: messages dropped from the front and, when the last one
	// alone did not fit, tokens dropped after that. CachedTokens were
	// reused from the previous request's evaluation.
	Window           int
	Load             LoadKind
	Prompt           string
	PromptTokens     int
	FullPromptTokens int
	CutMessages      int
	CutTokens        int
	CachedTokens     int
	// How the reply ended: the tokens generated (eval_count), the
	// done_reason of the final chunk ("" when none was sent), and
	// whether generation stopped because the window was full.
	EvalTokens int
	DoneReason string
	WindowFull bool
	// Shifted is set when the reply went past the window and the server
	// shifted the context to go on: the model no longer saw the start of
	// what it was sent, and nothing told the client.
	Shifted bool
	// Unloaded is set on a request that asked to unload the model.
	Unloaded bool

	// PullCancelled is set when the client went away mid-pull.
	PullCancelled bool
}

// windowSummary is what the log says about the window rules.
func (r *Request) windowSummary() string {
	var b strings.Builder
	if r.Load != "" {
		fmt.Fprintf(&b, " %s", r.Load)
	}
	if r.Unloaded {
		b.WriteString(" unload")
	}
	if r.Window > 0 {
		fmt.Fprintf(&b, " num_ctx=%d", r.Window)
	}
	if r.Prompt != "" {
		fmt.Fprintf(&b, " prompt=%d", r.PromptTokens)
	}
	switch {
	case r.CutMessages > 0 && r.CutTokens > 0:
		fmt.Fprintf(&b, " SILENT CUT (%d messages, then %d tokens, of %d)", r.CutMessages, r.CutTokens, r.FullPromptTokens)
	case r.CutMessages > 0:
		fmt.Fprintf(&b, " SILENT CUT (%d messages of %d tokens)", r.CutMessages, r.FullPromptTokens)
	case r.CutTokens > 0:
		fmt.Fprintf(&b, " SILENT CUT (%d tokens of %d)", r.CutTokens, r.FullPromptTokens)
	}
	if r.RenderOnly {
		b.WriteString(" render-only")
	}
	if r.WindowFull {
		b.WriteString(" window full")
	}
	if r.Shifted {
		b.WriteString(" SILENT SHIFT")
	}
	if r.PullCancelled {
		b.WriteString(" pull cancelled")
	}
	return b.String()
}

// SilentCut reports whether the server cut this request's conversation to
// fit the window without saying so.
func (r *Request) SilentCut() bool { return r.CutMessages > 0 || r.CutTokens > 0 }

// Messages returns the conversation: the chat messages, or for
// /api/generate the system prompt and the prompt as messages.
func (r *Request) Messages() []api.Message {
	switch {
	case r.Chat != nil:
		return r.Chat.Messages
	case r.Generate != nil:
		var msgs []api.Message
		if r.Generate.System != "" {
			msgs = append(msgs, api.Message{Role: "system", Content: r.Generate.System})
		}
		return append(msgs, api.Message{Role: "user", Content: r.Generate.Prompt})
	}
	return nil
}

// call is the request as the scenario reads it.
func (r *Request) call() *enginetest.Call {
	c := &enginetest.Call{Seq: r.Seq, Path: r.Path, Model: r.model(), Request: r}
	want := normalizeName(c.Model)
	c.SameModel = func(name string) bool { return normalizeName(name) == want }
	switch {
	case r.Chat != nil:
		c.Stream = r.Chat.Stream == nil || *r.Chat.Stream
		for _, t := range r.Chat.Tools {
			c.Tools = append(c.Tools, t.Function.Name)
		}
	case r.Generate != nil:
		c.Stream = r.Generate.Stream == nil || *r.Generate.Stream
	}
	for _, m := range r.Messages() {
		msg := enginetest.Message{Role: m.Role, Content: m.Content, Thinking: m.Thinking, ToolName: m.ToolName, ToolCallID: m.ToolCallID}
		for _, tc := range m.ToolCalls {
			args, _ := tc.Function.Arguments.MarshalJSON()
			msg.ToolCalls = append(msg.ToolCalls, enginetest.MessageCall{ID: tc.ID, Name: tc.Function.Name, Arguments: string(args)})
		}
		c.Messages = append(c.Messages, msg)
	}
	return c
}

func (r *Request) model() string {
	switch {
	case r.Chat != nil:
		return r.Chat.Model
	case r.Generate != nil:
		return r.Generate.Model
	case r.Pull != nil:
		//lint:ignore SA1019 older clients still send "name"
		return cmp.Or(r.Pull.Model, r.Pull.Name)
	}
	return ""
}
