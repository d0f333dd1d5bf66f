package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/jarvis-workbench/jarvis/app"
	"github.com/jarvis-workbench/jarvis/engine"
)

// lookup finds the server a model reference names ("lab/qwen3-32b", or a
// bare name for the default server) and the model's name there.
func (env *environment) lookup(ref string) (*app.Server, string) {
	return env.w.Lookup(ref)
}

// servers lists the default server, then the endpoints.
func (env *environment) servers() []*app.Server { return append([]*app.Server{env.def}, env.named...) }

// serverErr says what failed on s in the words of its kind of server and
// with the fix for where it is configured: an endpoint that does not
// answer is named, and its fix is to start it on its machine or correct
// its host in the config, not --host (which moves the default server).
func (env *environment) serverErr(s *app.Server, err error) error {
	var down *engine.UnreachableError
	if s == nil || s.Name == "" || !errors.As(err, &down) {
		return err
	}
	named := *down
	named.Fix = capitalize(env.startFix(s))
	return fmt.Errorf("endpoint %s: %w", s.Name, &named)
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
