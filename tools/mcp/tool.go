package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jarvis-workbench/jarvis/tools"
)

// Category is the category of every MCP tool.
const Category = "mcp"

// Metadata keys of MCP tool specs and results.
const (
	MetaServer            = "server"
	MetaOriginalName      = "original_name"
	MetaAttachments       = "attachments"
	MetaStructuredContent = "structured_content"
)

// remoteTool is one tool of one server. It is immutable: a new listing that
// changes the tool makes a new remoteTool, so a spec cached by an executor
// always matches the object it came from.
type remoteTool struct {
	srv      *server
	original string
	spec     tools.Spec
}

func (t *remoteTool) Spec() tools.Spec { return t.spec }

// Execute calls the tool on the server's current session. A failure's
// text is scrubbed of the server's credentials: it may quote a transport
// error, and the model reads it. A tool's own output is left as it is.
func (t *remoteTool) Execute(ctx context.Context, args tools.Args) tools.Result {
	r := t.execute(ctx, args)
	if !r.Success {
		r.Content = t.srv.secrets.scrub(r.Content)
	}
	return r.WithMeta(MetaServer, t.srv.cfg.Name).WithMeta(MetaOriginalName, t.original)
}

func (t *remoteTool) execute(ctx context.Context, args tools.Args) tools.Result {
	s := t.srv
	c, unavailable := s.connFor(t.original)
	if c == nil {
		return tools.Fail("%s", unavailable)
	}
	if args == nil {
		args = tools.Args{}
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(c.ctx, cancel)()
	params := &sdk.CallToolParams{Name: t.original, Arguments: map[string]any(args)}
	// A server that reports progress says so as the call runs: the
	// front ends show it under the call, as they show a command's output.
	token, stop := s.progress.track(func(line string) { tools.Output(ctx, line) })
	defer stop()
	params.SetProgressToken(token)
	res, err := c.sess.CallTool(cctx, params)
	if err == nil {
		return convertResult(t.original, res)
	}
	switch {
	case ctx.Err() != nil:
		// The executor replaces this with its timeout or cancellation
		// message; what matters here is whether the server still answers.
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			s.checkHealth(c)
		}
		return tools.Fail("MCP tool '%s' on server '%s' did not finish: %v", t.original, s.cfg.Name, ctx.Err())
	case s.closing():
		return tools.Fail("MCP server '%s' was stopped while '%s' was running: jarvis is shutting down", s.cfg.Name, t.original)
	case c.ctx.Err() != nil:
		// The supervisor closed the connection under the call.
		return tools.Fail("MCP server '%s' failed while '%s' was running: %s; it is being restarted", s.cfg.Name, t.original, c.reason())
	}
	var wire *jsonrpc.Error
	if errors.As(err, &wire) && wire.Code != codeRejected {
		// The server is fine; it refused this call (unknown tool, bad
		// arguments, an internal error it reported as such).
		return tools.Fail("MCP server '%s' returned an error for '%s': %s", s.cfg.Name, t.original, wireReason(wire))
	}
	reason := s.connectionLost(c, err)
	return tools.Fail("MCP server '%s' failed while '%s' was running: %s; it is being restarted", s.cfg.Name, t.original, reason)
}

// codeRejected is the code the SDK gives a request that never reached the
// server (the HTTP request failed): a transport failure, not an answer.
const codeRejected = -32005

// describeErr shortens an SDK error to its cause where one is known: an
// HTTP failure is reported as the operation, the host and why it failed.
// The URL itself is left out: its query or user info may hold a token.
func describeErr(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		host := "the server"
		if u, perr := url.Parse(ue.URL); perr == nil && u.Host != "" {
			host = u.Host
		}
		return fmt.Sprintf("%s %s: %v", ue.Op, host, ue.Err)
	}
	return err.Error()
}

// Attachment is a non-text part of a tool result (an image, audio, a
// resource), kept whole in the result's metadata under "attachments" while
// the content says what it was.
type Attachment struct {
	Type     string `json:"type"` // image, audio, resource, resource_link
	MIMEType string `json:"mime_type,omitempty"`
	URI      string `json:"uri,omitempty"`
	Name     string `json:"name,omitempty"`
	Size     int    `json:"size_bytes,omitempty"`
	// Data holds the bytes of images, audio and binary resources.
	Data []byte `json:"data,omitempty"`
	// Text holds the text of a text resource.
	Text string `json:"text,omitempty"`
}

// convertResult turns an MCP result into a jarvis result: text parts become
// the content, other parts are described in it and kept as attachments,
// structured content becomes the content (as JSON) only when there is no
// other and is kept in the metadata, and IsError makes a failed result.
func convertResult(tool string, res *sdk.CallToolResult) tools.Result {
	var parts []string
	var attachments []Attachment
	hasText := false
	for _, c := range res.Content {
		text, att := describeContent(c)
		if text != "" {
			parts = append(parts, text)
		}
		if att != nil {
			attachments = append(attachments, *att)
		}
		if tc, ok := c.(*sdk.TextContent); ok && strings.TrimSpace(tc.Text) != "" {
			hasText = true
		}
	}
	if res.StructuredContent != nil && !hasText {
		// Servers repeat structured output as text (the spec asks them
		// to), in the words they chose for a reader: the model gets that
		// text, and the JSON only when the server sent no text.
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	content := strings.Join(parts, "\n")
	var r tools.Result
	switch {
	case res.IsError && content == "":
		r = tools.Fail("MCP tool '%s' reported an error without a message.", tool)
	case res.IsError:
		r = tools.Fail("%s", content)
	case content == "":
		r = tools.OK("(the tool returned no content)")
	default:
		r = tools.OK(content)
	}
	if len(attachments) > 0 {
		r = r.WithMeta(MetaAttachments, attachments)
	}
	if res.StructuredContent != nil {
		r = r.WithMeta(MetaStructuredContent, res.StructuredContent)
	}
	return r
}

// describeContent returns the text a model reads for one content part and,
// for parts that are not plain text, the attachment that keeps it.
func describeContent(c sdk.Content) (string, *Attachment) {
	switch v := c.(type) {
	case *sdk.TextContent:
		return v.Text, nil
	case *sdk.ImageContent:
		return fmt.Sprintf("[image: %s, %s]", orUnknown(v.MIMEType), byteSize(len(v.Data))),
			&Attachment{Type: "image", MIMEType: v.MIMEType, Size: len(v.Data), Data: v.Data}
	case *sdk.AudioContent:
		return fmt.Sprintf("[audio: %s, %s]", orUnknown(v.MIMEType), byteSize(len(v.Data))),
			&Attachment{Type: "audio", MIMEType: v.MIMEType, Size: len(v.Data), Data: v.Data}
	case *sdk.ResourceLink:
		desc := fmt.Sprintf("[resource link: %s", v.URI)
		if v.Name != "" && v.Name != v.URI {
			desc += " (" + v.Name + ")"
		}
		if v.MIMEType != "" {
			desc += ", " + v.MIMEType
		}
		desc += "]"
		if v.Description != "" {
			desc += " " + v.Description
		}
		return desc, &Attachment{Type: "resource_link", URI: v.URI, Name: v.Name, MIMEType: v.MIMEType}
	case *sdk.EmbeddedResource:
		res := v.Resource
		if res == nil {
			return "[resource: empty]", nil
		}
		att := &Attachment{Type: "resource", URI: res.URI, MIMEType: res.MIMEType, Text: res.Text, Data: res.Blob}
		if res.Blob != nil {
			att.Size = len(res.Blob)
			return fmt.Sprintf("[resource: %s, %s, %s]", res.URI, orUnknown(res.MIMEType), byteSize(len(res.Blob))), att
		}
		att.Size = len(res.Text)
		head := "[resource: " + res.URI
		if res.MIMEType != "" {
			head += ", " + res.MIMEType
		}
		return head + "]\n" + res.Text, att
	case nil:
		return "", nil
	}
	return fmt.Sprintf("[%T content]", c), nil
}

func orUnknown(mime string) string {
	if mime == "" {
		return "unknown type"
	}
	return mime
}

// byteSize formats a size the way people read it: 512 B, 12 KB, 1.5 MB.
func byteSize(n int) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.0f KB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/(1024*1024))
}
