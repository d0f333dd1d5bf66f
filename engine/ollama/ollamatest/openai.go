package ollamatest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/ollama/ollama/api"
	oai "github.com/ollama/ollama/openai"
)

// The OpenAI-compatible API a real Ollama serves beside its own:
// /v1/chat/completions, /v1/models and /v1/models/{model}. They are built
// as the real server builds them: Ollama's own translation package
// (github.com/ollama/ollama/openai, the code its middleware runs) turns an
// OpenAI request into the /api/chat request the fake then answers with
// its models, rules and window, and each NDJSON line of the answer into a
// chat.completion.chunk event (a whole chat.completion when not
// streaming). So a client of the OpenAI API meets the same scripted
// conversation, status codes and error bodies an Ollama would give it.

// handleOpenAIChat answers /v1/chat/completions as Ollama's ChatMiddleware
// and ChatHandler do.
func (s *Server) handleOpenAIChat(w http.ResponseWriter, r *http.Request, rec *Request) {
	var req oai.ChatCompletionRequest
	if err := json.Unmarshal(rec.Body, &req); err != nil {
		writeJSON(w, http.StatusBadRequest, oai.NewError(http.StatusBadRequest, err.Error()))
		return
	}
	if len(req.Messages) == 0 {
		writeJSON(w, http.StatusBadRequest, oai.NewError(http.StatusBadRequest, "[] is too short - 'messages'"))
		return
	}
	chat, err := oai.FromChatRequest(req)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, oai.NewError(http.StatusBadRequest, err.Error()))
		return
	}
	body, err := json.Marshal(chat)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, oai.NewError(http.StatusInternalServerError, err.Error()))
		return
	}
	s.record(func() { rec.OpenAIBody, rec.Body = rec.Body, body })
	s.mu.Lock()
	s.completions++
	id := fmt.Sprintf("chatcmpl-%d", s.completions%999)
	s.mu.Unlock()
	cw := &openAIChatWriter{w: w, stream: req.Stream, id: id}
	if req.StreamOptions != nil {
		cw.usage = req.StreamOptions.IncludeUsage
	}
	s.handleChat(cw, r, rec)
	cw.finish()
}

// openAIChatWriter is Ollama's ChatWriter: it receives the /api/chat
// handler's answer and writes it in the OpenAI API's shape.
type openAIChatWriter struct {
	w      http.ResponseWriter
	stream bool
	usage  bool
	id     string

	status       int
	headerSent   bool
	toolCallSent bool
	pending      []byte
}

func (c *openAIChatWriter) Header() http.Header { return c.w.Header() }

// WriteHeader keeps the status for the first write, as gin does: the
// translated answer sets its own content type.
func (c *openAIChatWriter) WriteHeader(code int) {
	if c.status == 0 {
		c.status = code
	}
}

func (c *openAIChatWriter) sendHeader(contentType string) {
	if c.headerSent {
		return
	}
	c.headerSent = true
	if c.status == 0 {
		c.status = http.StatusOK
	}
	c.w.Header().Set("Content-Type", contentType)
	c.w.WriteHeader(c.status)
}

// Write takes what the handler writes: an error body, NDJSON lines, or
// a whole JSON answer.
func (c *openAIChatWriter) Write(p []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	if c.status != http.StatusOK {
		return len(p), c.writeError(p)
	}
	c.pending = append(c.pending, p...)
	for {
		i := bytes.IndexByte(c.pending, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := c.pending[:i]
		c.pending = c.pending[i+1:]
		if len(bytes.TrimSpace(line)) > 0 {
			if err := c.writeResponse(line); err != nil {
				return len(p), err
			}
		}
	}
}

// Flush passes the handler's flushes through, so events arrive as the
// model writes them.
func (c *openAIChatWriter) Flush() {
	if c.headerSent {
		_ = http.NewResponseController(c.w).Flush()
	}
}

// Unwrap lets the handler hijack the connection (Disconnect).
func (c *openAIChatWriter) Unwrap() http.ResponseWriter { return c.w }

// finish writes an answer the handler left without a line end (a reply
// that is not streamed, an error body).
func (c *openAIChatWriter) finish() {
	if len(bytes.TrimSpace(c.pending)) > 0 {
		_ = c.writeResponse(c.pending)
	}
	c.pending = nil
}

// writeError is BaseWriter.writeError: the handler's {"error": ...} as
// OpenAI's error object, with the handler's status. A body that is not
// Ollama's error JSON is dropped, as the real middleware drops it.
func (c *openAIChatWriter) writeError(p []byte) error {
	var serr api.StatusError
	if err := json.Unmarshal(p, &serr); err != nil {
		c.sendHeader("application/json")
		return err
	}
	c.sendHeader("application/json")
	return json.NewEncoder(c.w).Encode(oai.NewError(http.StatusInternalServerError, serr.Error()))
}

// writeResponse is ChatWriter.writeResponse: one /api/chat answer line as
// an event (with the usage event and [DONE] after the last), or the whole
// answer as a chat.completion.
func (c *openAIChatWriter) writeResponse(line []byte) error {
	var resp api.ChatResponse
	if err := json.Unmarshal(line, &resp); err != nil {
		return err
	}
	if !c.stream {
		c.sendHeader("application/json")
		return json.NewEncoder(c.w).Encode(oai.ToChatCompletion(c.id, resp))
	}
	chunk := oai.ToChunk(c.id, resp, c.toolCallSent)
	if !c.toolCallSent && len(chunk.Choices) > 0 && len(chunk.Choices[0].Delta.ToolCalls) > 0 {
		c.toolCallSent = true
	}
	c.sendHeader("text/event-stream")
	if err := c.event(chunk); err != nil {
		return err
	}
	if !resp.Done {
		return nil
	}
	if c.usage {
		u := oai.ToUsage(resp)
		chunk.Usage = &u
		chunk.Choices = []oai.ChunkChoice{}
		if err := c.event(chunk); err != nil {
			return err
		}
	}
	_, err := c.w.Write([]byte("data: [DONE]\n\n"))
	return err
}

func (c *openAIChatWriter) event(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(c.w, "data: %s\n\n", b)
	return err
}

// handleOpenAIModels answers /v1/models as Ollama's ListMiddleware does:
// the /api/tags list in the OpenAI API's shape.
func (s *Server) handleOpenAIModels(w http.ResponseWriter) {
	tags := httptest.NewRecorder()
	s.handleTags(tags)
	var list api.ListResponse
	if err := json.Unmarshal(tags.Body.Bytes(), &list); err != nil {
		writeJSON(w, http.StatusInternalServerError, oai.NewError(http.StatusInternalServerError, err.Error()))
		return
	}
	writeJSON(w, http.StatusOK, oai.ToListCompletion(list))
}

// handleOpenAIModel answers /v1/models/{model} as Ollama's
// RetrieveMiddleware does: /api/show's answer as one model entry, or its
// error as OpenAI's error object.
func (s *Server) handleOpenAIModel(w http.ResponseWriter, rec *Request) {
	name := strings.TrimPrefix(rec.Path, "/v1/models/")
	//lint:ignore SA1019 the real middleware sends "name", as here
	body, _ := json.Marshal(api.ShowRequest{Name: name})
	shown := httptest.NewRecorder()
	s.record(func() { rec.OpenAIBody, rec.Body = rec.Body, body })
	s.handleShow(shown, rec)
	if shown.Code != http.StatusOK {
		var serr api.StatusError
		_ = json.Unmarshal(shown.Body.Bytes(), &serr)
		writeJSON(w, shown.Code, oai.NewError(http.StatusInternalServerError, serr.Error()))
		return
	}
	var resp api.ShowResponse
	if err := json.Unmarshal(shown.Body.Bytes(), &resp); err != nil {
		writeJSON(w, http.StatusInternalServerError, oai.NewError(http.StatusInternalServerError, err.Error()))
		return
	}
	writeJSON(w, http.StatusOK, oai.ToModel(resp, name))
}
