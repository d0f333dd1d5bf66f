// Package mcp makes the tools of external Model Context Protocol servers
// jarvis tools: described to the model, run through tools.Executor with its
// confirmation, timeout and events, exactly like the built-in ones.
//
// A Manager owns the configured servers ([[mcp.servers]] in the config file).
// Start returns at once; every server is started (stdio) or connected
// (streamable HTTP) on its own goroutine, so a slow or broken server never
// delays jarvis or the other servers. Each tool a server lists becomes a
// tools.Tool named SERVER__TOOL (see ToolName), category "mcp", with the
// server's timeout and, unless the server is trusted, RequiresConfirmation.
//
// Failure semantics, which the rest of jarvis relies on:
//
//   - A server that cannot start, exits, stops answering, or drops its
//     connection is marked failed with the reason and restarted with
//     exponential back-off (with jitter, capped). Its tools stay listed so
//     that a run that already uses them keeps its tool set; while the server
//     is down a call fails at once with "MCP server 'x' is unavailable:
//     <reason>; it is being restarted".
//   - A call in flight when its server dies fails cleanly; a call that hangs
//     ends when the executor's timeout cancels its context, after which the
//     server is pinged and restarted if it no longer answers.
//   - A stdio server runs in its own process group; Close (and any restart)
//     stops the whole group, so no server or helper process outlives jarvis.
//   - Every reason (a status, a notice, a failed call) says what happened
//     and what to do in jarvis's words, not the SDK's, and ends with the
//     original error as "(detail: ...)": output on stdout that is not MCP,
//     how the process exited (status, signal, last stderr lines), an HTTP
//     answer that is not MCP, a handshake that ran out of its start
//     timeout (see reasons.go).
//
// Change notification: Subscribe returns a channel that receives a (coalesced)
// signal whenever a server's status or tool list changes, including after a
// server's tools/list_changed notification has been followed by a fresh
// listing. Readers then call Tools or Status for the new state; Register keeps
// a tools.Registry in step by itself.
package mcp
