package cli

import (
	"github.com/jarvis-workbench/jarvis/app"
)

// lookup finds the server a model reference names ("lab/qwen3-32b", or a
// bare name for the default server) and the model's name there.
func (env *environment) lookup(ref string) (*app.Server, string) {
	return env.w.Lookup(ref)
}

// servers lists the default server, then the endpoints.
func (env *environment) servers() []*app.Server { return append([]*app.Server{env.def}, env.named...) }
