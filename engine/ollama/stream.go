package ollama

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"runtime"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/envconfig"
	"github.com/ollama/ollama/version"
)

// The official client's streaming calls read the reply with a scanner
// whose buffer is 8 MB, allocated (and zeroed) for every request and
// filled half way before it starts again from its beginning, and they
// decode every line twice, once as a possible error. Each turn of a chat
// made megabytes of the process's memory resident: over a session of
// 100,000 tokens the workbench's anonymous memory grew by 35 bytes per
// byte of text through the client, 16 to 19 through this reader, all
// else the same, and a
// streamed reply costs a quarter less per chunk (BenchmarkChatFlood:
// 5.9 against 4.5 µs and 30.7 against 18.9 MB a reply;
// BenchmarkSessionMemory in ui/tui). stream reads the same NDJSON with a
// buffer that starts at streamBuffer and grows only for a longer line, up
// to the client's limit, decodes as an error only a line that can be one,
// and reports errors as the client does, but for a body that breaks off
// or a line past the limit: an error, where the client ends as if the
// reply were complete (see streamLost). Requests to ollama.com, or with
// OLLAMA_AUTH set, need the client's signing and go through it.
const (
	streamBuffer    = 64 << 10
	maxStreamBuffer = 8 << 20 // the client's 8 MB, rounded up
)

// stream posts data to path and calls fn with each line of the reply.
func (e *Engine) stream(ctx context.Context, path string, data any, fn func([]byte) error) error {
	body, err := json.Marshal(data)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.base.JoinPath(path).String(), bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/x-ndjson")
	req.Header.Set("User-Agent", fmt.Sprintf("ollama/%s (%s %s) Go/%s", version.Version, runtime.GOARCH, runtime.GOOS, runtime.Version()))
	resp, err := e.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, streamBuffer), maxStreamBuffer)
	for sc.Scan() {
		line := sc.Bytes()
		// Most lines are chunks: only one that can be an error is decoded
		// as one first.
		if resp.StatusCode < http.StatusBadRequest && !bytes.Contains(line, []byte(`"error"`)) {
			if err := fn(line); err != nil {
				return err
			}
			continue
		}
		var er struct {
			Error     string `json:"error,omitempty"`
			SigninURL string `json:"signin_url,omitempty"`
		}
		if err := json.Unmarshal(line, &er); err != nil {
			if resp.StatusCode >= http.StatusBadRequest {
				return api.StatusError{StatusCode: resp.StatusCode, Status: resp.Status, ErrorMessage: string(line)}
			}
			return errors.New(string(line))
		}
		switch {
		case resp.StatusCode == http.StatusUnauthorized:
			return api.AuthorizationError{StatusCode: resp.StatusCode, Status: resp.Status, SigninURL: er.SigninURL}
		case resp.StatusCode >= http.StatusBadRequest:
			return api.StatusError{StatusCode: resp.StatusCode, Status: resp.Status, ErrorMessage: er.Error}
		case er.Error != "":
			return errors.New(er.Error)
		}
		if err := fn(line); err != nil {
			return err
		}
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return fmt.Errorf("the server sent a line of more than %d MB, more than an answer of Ollama's holds; check --host", maxStreamBuffer>>20)
	} else if err != nil {
		return err
	}
	return nil
}

// eachLine decodes every line of a stream as a T for fn.
func eachLine[T any](fn func(T) error) func(line []byte) error {
	return func(line []byte) error {
		var r T
		if err := json.Unmarshal(line, &r); err != nil {
			return err
		}
		return fn(r)
	}
}

// signed reports whether requests need the client's signing.
func signed(base *url.URL) bool { return envconfig.UseAuth() || base.Hostname() == "ollama.com" }

// chat streams /api/chat (see api.Client.Chat).
func (e *Engine) chat(ctx context.Context, req *api.ChatRequest, fn api.ChatResponseFunc) error {
	if signed(e.base) {
		return e.client.Chat(ctx, req, fn)
	}
	return e.stream(ctx, "/api/chat", req, eachLine[api.ChatResponse](fn))
}

// generate streams /api/generate (see api.Client.Generate).
func (e *Engine) generate(ctx context.Context, req *api.GenerateRequest, fn api.GenerateResponseFunc) error {
	if signed(e.base) {
		return e.client.Generate(ctx, req, fn)
	}
	return e.stream(ctx, "/api/generate", req, eachLine[api.GenerateResponse](fn))
}

// pull streams /api/pull (see api.Client.Pull).
func (e *Engine) pull(ctx context.Context, req *api.PullRequest, fn api.PullProgressFunc) error {
	if signed(e.base) {
		return e.client.Pull(ctx, req, fn)
	}
	return e.stream(ctx, "/api/pull", req, eachLine[api.ProgressResponse](fn))
}
