package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/jarvis-workbench/jarvis/engine"
)

// The window a conversation runs with, and where it comes from. Every
// setting the person makes (the config's num_ctx, --num-ctx, /ctx, a
// session's saved window) is capped at what the model can take: the
// window a server that fixes it runs the model with, else the model's
// own maximum. Counting with a larger window would send requests the
// server cuts or refuses, and a note saying "now 100,000" would not be
// true.

// DefaultWindow is the window used when neither the person nor the
// server says otherwise (and the most a model is given unasked: a larger
// window costs memory the machine may not have).
const DefaultWindow = 4096

// Window is the context window a conversation runs with.
type Window struct {
	Tokens int `json:"tokens"`
	// Source says how it was chosen, in words.
	Source string `json:"source"`
	// ModelMax is the model's own maximum (0 unknown): the largest
	// window a setting can give it.
	ModelMax int `json:"model_max,omitempty"`
	// Asked is the window the person set when it was above what the
	// model can take (Tokens is then the cap); 0 otherwise.
	Asked int `json:"asked,omitempty"`
	// Unknown is set when neither the person nor the server said the
	// window: Tokens is jarvis's assumption, which the person should
	// confirm.
	Unknown bool `json:"unknown,omitempty"`
	// Fixed is set when the server fixed the window when it loaded the
	// model (every OpenAI-compatible server): a request cannot change it.
	Fixed bool `json:"fixed,omitempty"`
}

// CanGrow reports whether a setting can give the model a larger window:
// the server takes the window with each request, and the model allows
// more than the window in force (or does not say how much it allows).
func (w Window) CanGrow() bool {
	return !w.Fixed && (w.ModelMax == 0 || w.Tokens < w.ModelMax)
}

// Allows reports whether the model can take an n-token window, as far as
// the server says.
func (w Window) Allows(n int) bool { return w.ModelMax == 0 || n <= w.ModelMax }

// SetNumCtx sets the window the person asked for (0: the server's again,
// or the default). It reports whether the window changes: the server
// then reloads the model with it, which takes a moment, and the person
// should be told. The window actually in force (capped at the model's
// maximum) is what Window returns next.
func (v *ModelView) SetNumCtx(n int, source string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	changed := v.window.Tokens != 0 && n != 0 && n != v.window.Tokens
	v.opts.NumCtx, v.opts.NumCtxSource = n, source
	v.window, v.provisional = Window{}, false
	delete(v.said, capNoticeKey)
	return changed
}

// Window returns the window in force, finding it on first use.
func (v *ModelView) Window(ctx context.Context) (Window, error) {
	v.mu.Lock()
	w, model, opts := v.window, v.model, v.opts
	provisional := v.provisional
	imposed := make(map[int]bool, len(v.imposed))
	for n := range v.imposed {
		imposed[n] = true
	}
	v.mu.Unlock()
	if w.Tokens > 0 && !provisional {
		return w, nil
	}
	w, checked, err := resolveWindow(ctx, v.eng, model, opts, imposed)
	if err != nil {
		if provisional && w.Tokens == 0 {
			return v.window, nil // still unreachable: the last choice stands
		}
		return Window{}, err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.model == model && (v.window.Tokens == 0 || v.provisional) {
		v.window, v.provisional = w, !checked
		if opts.NumCtx > 0 && !w.Fixed {
			// Sent as num_ctx from now on: the server loads the model
			// with it, and it is not the server's own choice.
			v.imposed[w.Tokens] = true
		}
	}
	return v.window, nil
}

// resolveWindow finds the window: the person's (capped), else the one
// the server runs or loaded the model with, else min(the model's
// maximum, DefaultWindow). checked is false when the server could not
// be asked about the model, so the cap could not be applied.
func resolveWindow(ctx context.Context, eng engine.InferenceEngine, model string, opts ViewOptions, imposed map[int]bool) (w Window, checked bool, err error) {
	var details engine.ModelDetails
	checked = true
	if d, ok := eng.(engine.Describer); ok {
		got, err := d.Show(ctx, model)
		switch {
		case err == nil:
			details = got
		case errors.Is(err, engine.ErrUnreachable), ctx.Err() != nil:
			if opts.NumCtx == 0 {
				return Window{}, false, err
			}
			checked = false
		}
	}
	_, fixedServer := engine.WindowAdvice(eng)
	max := details.ContextLength
	base := Window{ModelMax: max, Fixed: fixedServer}
	limit, limitIs := max, "the model's maximum"
	if details.Window > 0 {
		limit, limitIs = details.Window, "the window the server runs the model with"
	}
	if opts.NumCtx > 0 {
		src := opts.NumCtxSource
		if src == "" {
			src = "set in the configuration (num_ctx)"
		}
		w := base
		w.Tokens, w.Source = opts.NumCtx, src
		if limit > 0 && opts.NumCtx > limit {
			w.Tokens, w.Asked = limit, opts.NumCtx
			w.Source = fmt.Sprintf("%s as %s tokens, capped at %s", src, engine.GroupDigits(opts.NumCtx), limitIs)
		}
		return w, checked, nil
	}
	if details.Window > 0 {
		w := base
		w.Tokens, w.Source = details.Window, "the window the server runs the model with"
		if details.WindowFrom != "" {
			w.Source += " (" + details.WindowFrom + ")"
		}
		return w, true, nil
	}
	if l, ok := eng.(engine.LoadLister); ok && !fixedServer {
		loaded, err := l.Loaded(ctx)
		if errors.Is(err, engine.ErrUnreachable) {
			return Window{}, false, err
		}
		for _, m := range loaded {
			if m.ContextLength > 0 && engine.SameModel(m.Name, model) && !imposed[m.ContextLength] {
				w := base
				w.Tokens, w.Source = m.ContextLength, "the window the server loaded the model with"
				return w, true, nil
			}
		}
	}
	w = base
	switch {
	case fixedServer:
		// The server runs the model with a window it does not say: jarvis
		// counts with a guess and says so, since a wrong one is cut.
		w.Tokens, w.Unknown = DefaultWindow, true
		if max > 0 && max < DefaultWindow {
			w.Tokens = max
		}
		w.Source = fmt.Sprintf("unknown: the server does not say its window, so jarvis assumes %s tokens; tell it the real one ({{window}})", engine.GroupDigits(w.Tokens))
	case max > 0 && max < DefaultWindow:
		w.Tokens, w.Source = max, "the model's own maximum"
	case max > 0:
		w.Tokens = DefaultWindow
		w.Source = fmt.Sprintf("jarvis's default: the model allows %s tokens, raise it ({{window}})", engine.GroupDigits(max))
	default:
		w.Tokens = DefaultWindow
		w.Source = fmt.Sprintf("jarvis's default (%s tokens)", engine.GroupDigits(DefaultWindow))
	}
	return w, true, nil
}

// capNoticeKey marks the capped window's notice as given (see CapNotice).
const capNoticeKey = "window capped"

// CapNotice returns, once per setting, the sentence that says a window
// the person set was above what the model can take; "" when it was not
// (or it was said already). Every interface shows it where the person
// looks: a note in the workbench, stderr for ask.
func (v *ModelView) CapNotice(w Window) string {
	if w.Asked == 0 || !v.once(capNoticeKey) {
		return ""
	}
	what := "the model's maximum"
	if w.Fixed {
		what = "the window the server runs the model with"
	}
	v.mu.Lock()
	model, src := v.model, v.opts.NumCtxSource
	v.mu.Unlock()
	if src == "" {
		src = "num_ctx in the configuration"
	}
	return fmt.Sprintf("The window you set (%s tokens, %s) is above %s: %s takes at most %s tokens, so that is the window jarvis uses.",
		engine.GroupDigits(w.Asked), src, what, model, engine.GroupDigits(w.Tokens))
}

// once reports whether key is said for the first time in this view.
func (v *ModelView) once(key string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.said[key] {
		return false
	}
	v.said[key] = true
	return true
}

// Current returns the window in force without looking for it: false when
// it was not found yet (or the setting changed since).
func (v *ModelView) Current() (Window, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.window, v.window.Tokens > 0
}

// ServerWindow adopts the window a server turned out to run the model
// with, found from its refusal (or its cut) of a request jarvis counted
// for a larger one: counting with the larger would send more requests it
// refuses or cuts. It reports whether the window changed.
func (v *ModelView) ServerWindow(n int) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	if n <= 0 || v.window.Tokens == 0 || n >= v.window.Tokens {
		return false
	}
	was := v.window
	v.window = Window{Tokens: n, ModelMax: was.ModelMax, Fixed: was.Fixed,
		Source: fmt.Sprintf("the window the server holds the model to, found when it refused a request counted for %s tokens (%s)", engine.GroupDigits(was.Tokens), was.Source)}
	v.provisional = false
	return true
}
