package code

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// Defaults for Config fields left at zero.
const (
	DefaultPython         = "python3"
	DefaultTimeout        = 30  // seconds of wall-clock time per call
	DefaultCPUSeconds     = 30  // seconds of CPU time per call
	DefaultMemoryMB       = 512 // address space per process
	DefaultMaxProcesses   = 64  // processes and threads
	DefaultMaxFileSizeMB  = 64  // largest file the code may write
	DefaultMaxOutputBytes = 64 << 10
	// DefaultSessionCPUFactor sizes a repl interpreter's CPU budget for its
	// whole life: this many times CPUSeconds.
	DefaultSessionCPUFactor = 10

	DefaultDockerBinary    = "docker"
	DefaultDockerImage     = "python:3.12-slim"
	DefaultDockerMemoryMB  = 512
	DefaultDockerPidsLimit = 64
	DefaultDockerCPUs      = 1.0
	DefaultDockerTimeout   = 60
)

// Config is the [code] section of the config file. Zero fields take the
// defaults above, so an empty section is a working one.
type Config struct {
	// Python is the interpreter: a name looked up on PATH or a path.
	Python string `toml:"python"`
	// Timeout is the wall-clock limit of one call, in seconds. When it
	// passes, every process the call started is killed.
	Timeout float64 `toml:"timeout"`
	// CPUSeconds is the CPU time one process may use in a call.
	CPUSeconds int `toml:"cpu_seconds"`
	// MemoryMB is the address space one process may map (RLIMIT_AS).
	MemoryMB int `toml:"memory_mb"`
	// MaxProcesses caps the processes and threads the code may have at
	// once (a fork bomb stops there).
	MaxProcesses int `toml:"max_processes"`
	// MaxFileSizeMB is the largest file the code may write; it also sizes
	// the private /tmp and /dev/shm.
	MaxFileSizeMB int `toml:"max_file_size_mb"`
	// MaxOutputBytes caps what is kept of stdout and of stderr, each.
	MaxOutputBytes int `toml:"max_output_bytes"`
	// SessionCPUSeconds is the CPU time one repl interpreter may use over
	// its whole life, calls and whatever the code leaves running between
	// them: the hard limit the code cannot raise. When it is used up the
	// interpreter is replaced by a fresh one (and the call says so).
	// Zero means DefaultSessionCPUFactor times CPUSeconds.
	SessionCPUSeconds int `toml:"session_cpu_seconds"`
	// HidePaths are extra files and directories the code must not see,
	// added to DefaultHiddenPaths ("~/" is expanded; a relative path is
	// taken from jarvis's working directory).
	HidePaths []string `toml:"hide_paths"`
	// AllowUnconfined lets code run when the sandbox cannot be set up
	// completely (no user namespaces, a file system that cannot be made
	// read-only, a path that cannot be hidden): with whatever isolation is
	// available, said in every result. By default such code is not run.
	AllowUnconfined bool `toml:"allow_unconfined"`
	// RequireIsolation is the strict mode: besides what is always required
	// (namespaces, a read-only file system, hidden paths, the host's
	// terminals out of reach, no capabilities), every other defence must be
	// in force too (the seccomp filter, a private /proc and /dev, a private
	// keyring, a process limit). It overrides AllowUnconfined.
	RequireIsolation bool `toml:"require_isolation"`
	// Docker configures code_interpreter_docker ([code.docker]).
	Docker DockerConfig `toml:"docker"`
}

// DockerConfig configures code_interpreter_docker.
type DockerConfig struct {
	// Binary is the docker client (a name on PATH or a path); any client
	// that speaks docker's command line (podman's, say) works.
	Binary string `toml:"binary"`
	// Image must contain python3. It is never pulled implicitly.
	Image string `toml:"image"`
	// MemoryMB is the container's memory (swap included).
	MemoryMB int `toml:"memory_mb"`
	// PidsLimit caps the container's processes and threads.
	PidsLimit int `toml:"pids_limit"`
	// CPUs is how many CPUs the container may use.
	CPUs float64 `toml:"cpus"`
	// Timeout is the wall-clock limit of one call, container start
	// included, in seconds.
	Timeout float64 `toml:"timeout"`
}

// Check reports the limits of the [code] section that cannot be meant,
// negative or not a number, each with its key under [code]
// ("docker.cpus"). Zero is not one of them: it keeps the default, as
// withDefaults does, which also replaces the ones reported here, so the
// tools never run with them.
func (c Config) Check(report func(key, problem, fix string)) {
	for _, f := range []struct {
		key   string
		value int
		def   string
	}{
		{"cpu_seconds", c.CPUSeconds, fmt.Sprint(DefaultCPUSeconds)},
		{"memory_mb", c.MemoryMB, fmt.Sprint(DefaultMemoryMB)},
		{"max_processes", c.MaxProcesses, fmt.Sprint(DefaultMaxProcesses)},
		{"max_file_size_mb", c.MaxFileSizeMB, fmt.Sprint(DefaultMaxFileSizeMB)},
		{"max_output_bytes", c.MaxOutputBytes, fmt.Sprint(DefaultMaxOutputBytes)},
		{"session_cpu_seconds", c.SessionCPUSeconds, fmt.Sprintf("%d times cpu_seconds", DefaultSessionCPUFactor)},
		{"docker.memory_mb", c.Docker.MemoryMB, fmt.Sprint(DefaultDockerMemoryMB)},
		{"docker.pids_limit", c.Docker.PidsLimit, fmt.Sprint(DefaultDockerPidsLimit)},
	} {
		if f.value < 0 {
			report(f.key, fmt.Sprintf("must be a positive number, got %d", f.value), "leave it out for the default ("+f.def+")")
		}
	}
	for _, f := range []struct {
		key   string
		value float64
		def   float64
	}{
		{"timeout", c.Timeout, DefaultTimeout},
		{"docker.cpus", c.Docker.CPUs, DefaultDockerCPUs},
		{"docker.timeout", c.Docker.Timeout, DefaultDockerTimeout},
	} {
		if f.value < 0 || math.IsNaN(f.value) || math.IsInf(f.value, 0) {
			report(f.key, fmt.Sprintf("must be a positive number, got %v", f.value), fmt.Sprintf("leave it out for the default (%g)", f.def))
		}
	}
}

// withDefaults returns c with every zero or invalid field replaced by its
// default.
func (c Config) withDefaults() Config {
	if strings.TrimSpace(c.Python) == "" {
		c.Python = DefaultPython
	}
	c.Timeout = positive(c.Timeout, DefaultTimeout)
	if c.CPUSeconds <= 0 {
		c.CPUSeconds = DefaultCPUSeconds
	}
	if c.MemoryMB <= 0 {
		c.MemoryMB = DefaultMemoryMB
	}
	if c.MaxProcesses <= 0 {
		c.MaxProcesses = DefaultMaxProcesses
	}
	if c.MaxFileSizeMB <= 0 {
		c.MaxFileSizeMB = DefaultMaxFileSizeMB
	}
	if c.MaxOutputBytes <= 0 {
		c.MaxOutputBytes = DefaultMaxOutputBytes
	}
	if c.SessionCPUSeconds <= 0 {
		c.SessionCPUSeconds = DefaultSessionCPUFactor * c.CPUSeconds
	}
	c.SessionCPUSeconds = max(c.SessionCPUSeconds, c.CPUSeconds)
	d := &c.Docker
	if strings.TrimSpace(d.Binary) == "" {
		d.Binary = DefaultDockerBinary
	}
	if strings.TrimSpace(d.Image) == "" {
		d.Image = DefaultDockerImage
	}
	if d.MemoryMB <= 0 {
		d.MemoryMB = DefaultDockerMemoryMB
	}
	if d.PidsLimit <= 0 {
		d.PidsLimit = DefaultDockerPidsLimit
	}
	d.CPUs = positive(d.CPUs, DefaultDockerCPUs)
	d.Timeout = positive(d.Timeout, DefaultDockerTimeout)
	return c
}

func positive(v, def float64) float64 {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return def
	}
	return v
}

// limitsMeta is the limits as a result's metadata reports them.
func (c Config) limitsMeta() map[string]any {
	return map[string]any{
		"timeout_seconds":  c.Timeout,
		"cpu_seconds":      c.CPUSeconds,
		"memory_mb":        c.MemoryMB,
		"max_processes":    c.MaxProcesses,
		"max_file_size_mb": c.MaxFileSizeMB,
		"max_output_bytes": c.MaxOutputBytes,
	}
}

// DefaultHiddenPaths are what the sandbox covers when it has a mount
// namespace: credentials, the sockets of agents and daemons that act for
// the user (ssh-agent, D-Bus, Docker, X11 and Wayland live under /run, /tmp
// or $XDG_RUNTIME_DIR), and jarvis's own configuration and history. /tmp
// and /dev/shm are not listed: they are replaced by private, empty ones.
func DefaultHiddenPaths() []string {
	home, _ := os.UserHomeDir()
	var out []string
	add := func(p string) {
		if p != "" {
			out = append(out, p)
		}
	}
	add("/run")
	add("/var/run")
	add(os.Getenv("XDG_RUNTIME_DIR"))
	if sock := os.Getenv("SSH_AUTH_SOCK"); sock != "" {
		add(sock)
	}
	if home != "" {
		for _, rel := range []string{
			".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".kube", ".docker",
			".netrc", ".git-credentials", ".pgpass", ".password-store", ".local/share/keyrings",
			".config/gh", ".npmrc", ".pypirc", ".cargo/credentials.toml",
		} {
			add(filepath.Join(home, rel))
		}
	}
	cfg := os.Getenv("XDG_CONFIG_HOME")
	if cfg == "" && home != "" {
		cfg = filepath.Join(home, ".config")
	}
	data := os.Getenv("XDG_DATA_HOME")
	if data == "" && home != "" {
		data = filepath.Join(home, ".local", "share")
	}
	if cfg != "" {
		add(filepath.Join(cfg, "jarvis"))
	}
	if data != "" {
		add(filepath.Join(data, "jarvis"))
	}
	if db := os.Getenv("JARVIS_DB"); db != "" {
		add(db)
	}
	return out
}

// hiddenPaths is DefaultHiddenPaths plus the configured ones, absolute. A
// relative entry is taken from jarvis's working directory: dropping it
// would leave the file visible, which is the one outcome that is wrong.
func (c Config) hiddenPaths() []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range append(DefaultHiddenPaths(), c.HidePaths...) {
		p = expandHome(strings.TrimSpace(p))
		if p == "" {
			continue
		}
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		} else if !filepath.IsAbs(p) {
			continue
		}
		p = filepath.Clean(p)
		if !seen[p] && p != "/" {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

func expandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, p[1:])
		}
	}
	return p
}
