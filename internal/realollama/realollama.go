//go:build unix

// Package realollama starts a real Ollama server with scripted models for
// jarvis's real-server test tier (make test-real; tests built with the
// "real" tag). No model weights are needed: the scripts of
// ../shared/real-ollama (scripted_gguf.py) write a tiny GGUF that is a
// bigram table, and Modelfiles whose templates end each prompt with the
// token that picks the model's scripted reply, so the server's own
// parsers turn real model output into real tool calls and thinking.
//
// Start skips the test, saying why, when any of it is missing: the ollama
// binary ($JARVIS_OLLAMA, else ollama on PATH), the scripts
// ($JARVIS_REAL_OLLAMA_SCRIPTS, else ../shared/real-ollama beside the
// repository), python3. Nothing here is used by jarvis itself, nor by the
// hermetic tests `make test` runs.
package realollama

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
)

// Server is a real Ollama serving scripted models, stopped when the test
// that started it ends.
type Server struct {
	// URL is the server's base URL, e.g. http://127.0.0.1:40123.
	URL string
	// Dir holds the scripted GGUF, the Modelfiles and models.json.
	Dir string
	// Manifest is what scripted_gguf.py says it wrote.
	Manifest Manifest

	bin  string
	host string // OLLAMA_HOST for the ollama client
	log  string // the file ollama serve writes its log to
}

// Manifest is models.json: the models written, and the exact text of
// every scripted reply by scenario and phase ("call", "answer", "reply",
// "call.thinking", ...).
type Manifest struct {
	ContextLength int                          `json:"context_length"`
	Models        map[string]ManifestModel     `json:"models"`
	Scenarios     map[string]map[string]string `json:"scenarios"`
	Triggers      map[string]string            `json:"triggers"`
}

// ManifestModel is one model of the manifest.
type ManifestModel struct {
	Modelfile string `json:"modelfile"`
	Default   string `json:"default"`
	Think     bool   `json:"think"`
	Parser    string `json:"parser"`
}

// Options says what to serve.
type Options struct {
	// Ctx is the models' own context length (the GGUF's
	// llama.context_length, which caps num_ctx); 4096 when 0.
	Ctx int
	// Spec replaces scripted_gguf.py's default scenarios and models
	// (--spec; see its --print-spec); nil keeps them.
	Spec any
	// Models are the scripted models to create; all when empty.
	Models []string
	// Modelfiles are more models to create, by name: Modelfile text
	// beside the scripted GGUF ("FROM ./scripted.gguf", then TEMPLATE,
	// RENDERER, PARSER lines).
	Modelfiles map[string]string
}

// Binary is the ollama binary the tier runs: $JARVIS_OLLAMA, else ollama
// on PATH.
func Binary() (string, error) {
	if b := os.Getenv("JARVIS_OLLAMA"); b != "" {
		if _, err := os.Stat(b); err != nil {
			return "", fmt.Errorf("JARVIS_OLLAMA is %s: %w", b, err)
		}
		return b, nil
	}
	b, err := exec.LookPath("ollama")
	if err != nil {
		return "", errors.New("no ollama binary: put one on PATH or name it in JARVIS_OLLAMA (../shared/real-ollama/build-ollama.sh builds one)")
	}
	return b, nil
}

// Scripts is the directory with scripted_gguf.py:
// $JARVIS_REAL_OLLAMA_SCRIPTS, else ../shared/real-ollama beside the
// repository.
func Scripts() (string, error) {
	dir := os.Getenv("JARVIS_REAL_OLLAMA_SCRIPTS")
	if dir == "" {
		_, file, _, _ := runtime.Caller(0) // .../internal/realollama/realollama.go
		dir = filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "real-ollama")
	}
	if _, err := os.Stat(filepath.Join(dir, "scripted_gguf.py")); err != nil {
		return "", fmt.Errorf("no scripted models: scripted_gguf.py is not in %s (set JARVIS_REAL_OLLAMA_SCRIPTS to its directory)", dir)
	}
	return filepath.Abs(dir)
}

// Start writes the scripted models, starts `ollama serve` on a free
// loopback port with its own model store, creates the models and returns
// once they are served. It skips t when the binary, the scripts or
// python3 are missing.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		t.Skip("real-server tier skipped: " + err.Error())
	}
	scripts, err := Scripts()
	if err != nil {
		t.Skip("real-server tier skipped: " + err.Error())
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("real-server tier skipped: no python3 for scripted_gguf.py")
	}
	dir := t.TempDir()
	ctx := opts.Ctx
	if ctx <= 0 {
		ctx = 4096
	}
	args := []string{filepath.Join(scripts, "scripted_gguf.py"), "--out", dir, "--ctx", fmt.Sprint(ctx)}
	if opts.Spec != nil {
		spec, err := json.Marshal(opts.Spec)
		if err != nil {
			t.Fatalf("realollama: spec: %v", err)
		}
		path := filepath.Join(dir, "spec.json")
		if err := os.WriteFile(path, spec, 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--spec", path)
	}
	if out, err := exec.Command("python3", args...).CombinedOutput(); err != nil {
		t.Fatalf("realollama: scripted_gguf.py: %v\n%s", err, out)
	}
	s := &Server{Dir: dir, bin: bin, log: filepath.Join(dir, "serve.log")}
	manifest, err := os.ReadFile(filepath.Join(dir, "models.json"))
	if err == nil {
		err = json.Unmarshal(manifest, &s.Manifest)
	}
	if err != nil {
		t.Fatalf("realollama: models.json: %v", err)
	}

	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	s.host = fmt.Sprintf("127.0.0.1:%d", port)
	s.URL = "http://" + s.host
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(os.Environ(), "OLLAMA_HOST="+s.host, "OLLAMA_MODELS="+filepath.Join(dir, "models"), "HOME="+dir)
	logFile, err := os.Create(s.log)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close() // the process has its own descriptor
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Its own process group: the runners it starts go with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("realollama: %s serve: %v", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		stop(cmd.Process.Pid, exited)
		if t.Failed() {
			all := "(not kept)"
			if f, err := os.CreateTemp("", "ollama-serve-*.log"); err == nil {
				_, _ = f.WriteString(s.Log())
				_ = f.Close()
				all = f.Name()
			}
			lines := strings.Split(strings.TrimSpace(s.Log()), "\n")
			t.Logf("the end of ollama serve's log (all of it in %s):\n%s", all, strings.Join(lines[max(len(lines)-30, 0):], "\n"))
		}
	})
	if err := s.waitUp(exited, 20*time.Second); err != nil {
		t.Fatalf("realollama: %v\n%s", err, s.Log())
	}

	models := opts.Models
	if len(models) == 0 {
		for name := range s.Manifest.Models {
			models = append(models, name)
		}
	}
	for _, name := range models {
		m, ok := s.Manifest.Models[name]
		if !ok {
			t.Fatalf("realollama: scripted_gguf.py wrote no model %q", name)
		}
		s.create(t, name, m.Modelfile)
	}
	for name, text := range opts.Modelfiles {
		s.Create(t, name, text)
	}
	return s
}

// Create makes one more model from Modelfile text beside the scripted
// GGUF ("FROM ./scripted.gguf", ...).
func (s *Server) Create(t testing.TB, name, modelfile string) {
	t.Helper()
	path := filepath.Join(s.Dir, "Modelfile."+name)
	if err := os.WriteFile(path, []byte(modelfile), 0o644); err != nil {
		t.Fatal(err)
	}
	s.create(t, name, path)
}

func (s *Server) create(t testing.TB, name, modelfile string) {
	t.Helper()
	cmd := exec.Command(s.bin, "create", name, "-f", modelfile)
	cmd.Dir = s.Dir
	cmd.Env = append(os.Environ(), "OLLAMA_HOST="+s.host, "HOME="+s.Dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("realollama: ollama create %s: %v\n%s", name, err, out)
	}
}

// Modelfile is the text of a scripted model's Modelfile, for a stand-in
// that plays the same model (its TEMPLATE and PARSER).
func (s *Server) Modelfile(t testing.TB, model string) string {
	t.Helper()
	m, ok := s.Manifest.Models[model]
	if !ok {
		t.Fatalf("realollama: no scripted model %q", model)
	}
	b, err := os.ReadFile(m.Modelfile)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Template is the TEMPLATE of a scripted model's Modelfile.
func (s *Server) Template(t testing.TB, model string) string {
	t.Helper()
	text := s.Modelfile(t, model)
	_, rest, ok := strings.Cut(text, `TEMPLATE """`)
	tmpl, _, ok2 := strings.Cut(rest, `"""`)
	if !ok || !ok2 {
		t.Fatalf("realollama: the Modelfile of %s has no TEMPLATE", model)
	}
	return tmpl
}

// Log is what `ollama serve` has written so far.
func (s *Server) Log() string {
	b, _ := os.ReadFile(s.log)
	return string(b)
}

func (s *Server) waitUp(exited chan error, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			exited <- err // for the cleanup
			return fmt.Errorf("ollama serve exited: %v", err)
		default:
		}
		if resp, err := http.Get(s.URL + "/api/version"); err == nil {
			resp.Body.Close()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("ollama serve did not answer at %s within %s", s.URL, timeout)
}

// stop ends the server and the runners it started, its process group:
// politely, then for good.
func stop(pid int, exited chan error) {
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		<-exited
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL) // a runner that outlived it
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// StandIn is the Ollama stand-in serving a scripted model as this server
// has it: its template, the GGUF's family (llama) and window, and caps
// (the capabilities the real server reports), for tests that ask both
// the same. Its replies are the test's to script.
func (s *Server) StandIn(t testing.TB, model string, caps ...string) *ollamatest.Server {
	t.Helper()
	stand := ollamatest.New(t)
	stand.AddModel(ollamatest.ModelSpec{Name: model, Family: "llama", Capabilities: caps,
		ContextLength: s.Manifest.ContextLength, Template: s.Template(t, model)})
	return stand
}
