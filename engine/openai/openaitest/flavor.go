package openaitest

import (
	"cmp"
	"fmt"
	"net/http"
	"strings"
)

// This file holds what differs between the servers the fake plays: error
// bodies, model entries, the reasoning field and the extra endpoints.

// reasoningField is where the flavor streams thinking: llama.cpp, vLLM and
// LM Studio (like DeepSeek) use reasoning_content, hosted APIs such as
// OpenRouter (like Ollama's /v1) reasoning.
func (s *Server) reasoningField() string {
	if s.flavor == OpenAI {
		return "reasoning"
	}
	return "reasoning_content"
}

// errorBody is the flavor's error body for status and message.
func (s *Server) errorBody(status int, msg string) any {
	switch s.flavor {
	case LlamaCpp:
		// format_error_response in llama.cpp's server-common.cpp.
		return map[string]any{"error": map[string]any{"code": status, "message": msg, "type": llamaErrorType(status)}}
	case VLLM:
		return map[string]any{"error": map[string]any{"message": msg, "type": vllmErrorType(status), "param": nil, "code": status}}
	case LMStudio:
		return map[string]any{"error": msg}
	}
	typ := "invalid_request_error"
	if status >= 500 {
		typ = "server_error"
	}
	return map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}}
}

func llamaErrorType(status int) string {
	switch status {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 501:
		return "not_supported_error"
	case 503:
		return "unavailable_error"
	}
	return "server_error"
}

func vllmErrorType(status int) string {
	switch status {
	case 400:
		return "BadRequestError"
	case 404:
		return "NotFoundError"
	case 500:
		return "InternalServerError"
	}
	return strings.ReplaceAll(http.StatusText(status), " ", "")
}

func (s *Server) writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, s.errorBody(status, msg))
}

// refuseKey answers a request without the right bearer key.
func (s *Server) refuseKey(w http.ResponseWriter, auth string) {
	switch s.flavor {
	case LlamaCpp:
		s.writeError(w, http.StatusUnauthorized, "Invalid API Key")
	case VLLM:
		// vLLM's API-key middleware.
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "Unauthorized"})
	default:
		given := strings.TrimSpace(strings.TrimPrefix(auth, "Bearer"))
		if given == "" {
			writeJSON(w, http.StatusUnauthorized, map[string]any{"error": map[string]any{
				"message": "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank username) if you're accessing the API from your browser and are prompted for a username and password. You can obtain an API key from https://platform.openai.com/account/api-keys.",
				"type":    "invalid_request_error", "param": nil, "code": nil}})
			return
		}
		writeJSON(w, http.StatusUnauthorized, map[string]any{"error": map[string]any{
			"message": "Incorrect API key provided: " + maskKey(given) + ". You can find your API key at https://platform.openai.com/account/api-keys.",
			"type":    "invalid_request_error", "param": nil, "code": "invalid_api_key"}})
	}
}

// maskKey shows a key as OpenAI does in its refusal: the first three and
// last four characters.
func maskKey(k string) string {
	if len(k) <= 8 {
		return strings.Repeat("*", len(k))
	}
	return k[:3] + strings.Repeat("*", len(k)-7) + k[len(k)-4:]
}

// refuseModel answers a request for a model the server does not have.
func (s *Server) refuseModel(w http.ResponseWriter, name string) {
	switch s.flavor {
	case VLLM:
		writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]any{
			"message": fmt.Sprintf("The model `%s` does not exist.", name), "type": "NotFoundError", "param": "model", "code": 404}})
	case LMStudio:
		writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]any{
			"message": fmt.Sprintf("Model %q not found. Please specify a valid model.", name), "type": "invalid_request_error", "param": "model", "code": "model_not_found"}})
	default:
		writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]any{
			"message": fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", name), "type": "invalid_request_error", "param": nil, "code": "model_not_found"}})
	}
}

// refuseTools answers tools offered where the server refuses them; false
// when the flavor takes tools for any model.
func (s *Server) refuseTools(w http.ResponseWriter, name string) bool {
	switch s.flavor {
	case LlamaCpp:
		// oaicompat_chat_params_parse without --jinja: a runtime_error,
		// which the server answers as a 500.
		s.writeError(w, http.StatusInternalServerError, "tools param requires --jinja flag")
	case VLLM:
		s.writeError(w, http.StatusBadRequest, `"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set`)
	case OpenAI:
		// OpenRouter, when no provider of the model takes tools.
		writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]any{
			"message": "No endpoints found that support tool use. To learn more about provider routing, visit: https://openrouter.ai/docs/provider-routing", "code": 404}})
	default:
		return false
	}
	return true
}

// refuseLength answers a request that does not fit the model's window;
// false when it fits.
func (s *Server) refuseLength(w http.ResponseWriter, m ModelSpec, prompt, maxTokens int) bool {
	win := m.Window
	switch s.flavor {
	case LlamaCpp:
		if prompt < win {
			return false
		}
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{
			"code":            400,
			"message":         fmt.Sprintf("request (%d tokens) exceeds the available context size (%d tokens), try increasing it", prompt, win),
			"type":            "exceed_context_size_error",
			"n_prompt_tokens": prompt, "n_ctx": win}})
	case VLLM:
		switch {
		case maxTokens > 0 && prompt+maxTokens > win:
			s.writeError(w, http.StatusBadRequest, fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.", win, prompt+maxTokens, prompt, maxTokens))
		case prompt >= win:
			s.writeError(w, http.StatusBadRequest, fmt.Sprintf("This model's maximum context length is %d tokens. However, your request has %d input tokens. Please reduce the length of the input messages.", win, prompt))
		default:
			return false
		}
	case LMStudio:
		if prompt < win {
			return false
		}
		s.writeError(w, http.StatusBadRequest, fmt.Sprintf("Trying to keep the first %d tokens when context the overflows. However, the model is loaded with context length of only %d tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input", prompt, win))
	case OpenAI:
		if prompt <= win {
			return false
		}
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{
			"message": fmt.Sprintf("This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.", win, prompt),
			"type":    "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}})
	default:
		return false
	}
	return true
}

// notFound answers a path the flavor does not serve, in its way.
func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	switch s.flavor {
	case LlamaCpp:
		s.writeError(w, http.StatusNotFound, "File Not Found")
	case VLLM:
		writeJSON(w, http.StatusNotFound, map[string]string{"detail": "Not Found"})
	case LMStudio:
		// LM Studio logs "Unexpected endpoint or method" and answers 200.
		writeJSON(w, http.StatusOK, map[string]string{"error": fmt.Sprintf("Unexpected endpoint or method. (%s %s)", r.Method, r.URL.Path)})
	default:
		s.writeError(w, http.StatusNotFound, fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path))
	}
}

// handleModels answers /v1/models with the flavor's entries.
func (s *Server) handleModels(w http.ResponseWriter) {
	models := s.modelList()
	created := s.started.Unix()
	data := make([]map[string]any, len(models))
	for i, m := range models {
		entry := map[string]any{"id": m.Name, "object": "model", "created": created}
		switch s.flavor {
		case LlamaCpp:
			entry["owned_by"] = "llamacpp"
			entry["meta"] = map[string]any{"vocab_type": 2, "n_vocab": 151936, "n_ctx_train": m.TrainWindow,
				"n_embd": 4096, "n_params": m.Params, "size": m.Size}
		case VLLM:
			entry["owned_by"] = "vllm"
			entry["root"], entry["parent"] = m.Name, nil
			entry["max_model_len"] = m.Window
			entry["permission"] = []map[string]any{{"id": "modelperm-0a1b2c3d", "object": "model_permission", "created": created,
				"allow_create_engine": false, "allow_sampling": true, "allow_logprobs": true, "allow_search_indices": false,
				"allow_view": true, "allow_fine_tuning": false, "organization": "*", "group": nil, "is_blocking": false}}
		case LMStudio:
			delete(entry, "created")
			entry["owned_by"] = "organization_owner"
		default:
			if len(m.SupportedParameters) > 0 {
				// A hosted API's entry (OpenRouter's shape).
				entry = map[string]any{"id": m.Name, "name": m.Name, "created": created,
					"context_length": m.Window, "supported_parameters": m.SupportedParameters}
			} else {
				entry["owned_by"] = "openai"
			}
		}
		data[i] = entry
	}
	resp := map[string]any{"object": "list", "data": data}
	if s.flavor == LlamaCpp {
		// llama.cpp also lists its model in Ollama's shape.
		legacy := make([]map[string]any, len(models))
		for i, m := range models {
			legacy[i] = map[string]any{"name": m.Name, "model": m.Name, "type": "model", "capabilities": []string{"completion"}}
		}
		resp["models"] = legacy
	}
	writeJSON(w, http.StatusOK, resp)
}

// handleProps answers llama.cpp's /props: the window the server runs with
// and its build.
func (s *Server) handleProps(w http.ResponseWriter) {
	models := s.modelList()
	win, path := 4096, ""
	if len(models) > 0 {
		win, path = models[0].Window, "/models/"+models[0].Name
	}
	s.mu.Lock()
	build := s.build
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{
		"default_generation_settings": map[string]any{"n_ctx": win, "params": map[string]any{"n_predict": -1, "temperature": 0.8}},
		"total_slots":                 1,
		"model_path":                  path,
		"build_info":                  build,
	})
}

// handleLMStudioModels answers LM Studio's own /api/v0/models, where the
// windows are: the one a loaded model runs with (loaded_context_length,
// absent when it is not loaded) and the model's maximum.
func (s *Server) handleLMStudioModels(w http.ResponseWriter) {
	models := s.modelList()
	data := make([]map[string]any, len(models))
	for i, m := range models {
		entry := map[string]any{"id": m.Name, "object": "model", "type": cmp.Or(m.Type, "llm"), "publisher": "lmstudio-community",
			"arch": m.Arch, "compatibility_type": "gguf", "quantization": m.Quantization, "state": "loaded",
			"max_context_length": m.TrainWindow, "loaded_context_length": m.Window}
		if m.NotLoaded {
			entry["state"] = "not-loaded"
			delete(entry, "loaded_context_length")
		}
		data[i] = entry
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
}
