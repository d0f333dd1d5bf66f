// Package cleanenv builds the environment of the programs jarvis starts
// for a model (command tools, MCP servers, shell commands): the few
// variables a program needs to find itself, its home, its temporary and
// cache directories and the user's locale, and nothing else of jarvis's
// environment. API keys, tokens, SSH_AUTH_SOCK and proxy settings reach a
// program only when the configuration names them (pass_env, an MCP
// server's env): what a model can run must not carry the person's
// secrets along.
package cleanenv

import (
	"os"
	"runtime"
	"slices"
	"strings"
)

// Base names the variables every such program inherits from jarvis.
// Locale variables (LC_*) pass too.
var Base = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "LANGUAGE", "TZ",
	"TMPDIR", "TMP", "TEMP",
	"XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME",
	// Windows: without these many programs cannot start at all.
	"SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "COMSPEC", "PATHEXT", "APPDATA", "LOCALAPPDATA",
	"USERPROFILE", "USERNAME", "HOMEDRIVE", "HOMEPATH", "PROGRAMFILES", "PROGRAMDATA",
	"PROCESSOR_ARCHITECTURE",
}

// Inherited reports whether the variable key passes from jarvis to a
// program by default.
func Inherited(key string) bool {
	if runtime.GOOS == "windows" {
		key = strings.ToUpper(key) // Windows variable names ignore case
	}
	return slices.Contains(Base, key) || strings.HasPrefix(key, "LC_")
}

// Environ is a program's environment: jarvis's values of the Base
// variables and of the names in pass (those jarvis has), sorted as
// os.Environ has them.
func Environ(pass []string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue
		}
		if Inherited(k) || slices.Contains(pass, k) || runtime.GOOS == "windows" && slices.ContainsFunc(pass, func(p string) bool { return strings.EqualFold(p, k) }) {
			env = append(env, kv)
		}
	}
	return env
}

// Set returns env with key set to value (replacing it when present).
func Set(env []string, key, value string) []string {
	env = slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, key+"=") })
	return append(env, key+"="+value)
}
