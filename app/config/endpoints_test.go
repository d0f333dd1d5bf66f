package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

const endpointsFile = `model = "lab/qwen3-32b"

[[endpoints]]
name = "lab"
engine = "openai"
host = "http://gpu-box:8000/v1"
api_key = "${LAB_KEY}"
[endpoints.prices."qwen3-32b"]
input = 0.1
output = 0.3

[[endpoints]]
name = "attic"
engine = "ollama"
host = "attic:11434"
`

func TestEndpointsDecodeSplitAndPrice(t *testing.T) {
	clearEnv(t)
	t.Setenv("LAB_KEY", "sk-lab-secret-123")
	c, err := Load(Flags{ConfigPath: writeConfig(t, endpointsFile)})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Endpoints) != 2 || c.Endpoints[0].Line() != 3 || c.Endpoints[1].Line() != 12 {
		t.Fatalf("endpoints: %+v", c.Endpoints)
	}
	for _, tc := range []struct{ ref, ep, model string }{
		{"lab/qwen3-32b", "lab", "qwen3-32b"},
		{"attic/llama3.2:1b", "attic", "llama3.2:1b"},
		{"qwen3:8b", "", "qwen3:8b"},
		{"hf.co/org/model:Q4", "", "hf.co/org/model:Q4"}, // a registry path, not an endpoint
		{"lab/", "", "lab/"},
	} {
		if ep, m := c.SplitModel(tc.ref); ep != tc.ep || m != tc.model {
			t.Errorf("SplitModel(%q) = %q, %q", tc.ref, ep, m)
		}
		if ep, m := c.SplitModel(tc.ref); tc.ep != "" && JoinModel(ep, m) != tc.ref {
			t.Errorf("JoinModel does not give back %q", tc.ref)
		}
	}
	if got := c.PriceAt("lab", "qwen3-32b").Cost(1_000_000, 1_000_000); got != 0.4 {
		t.Fatalf("endpoint price = %v", got)
	}
	if got := c.PriceAt("", "qwen3-32b").Cost(1_000_000, 1_000_000); got != 0 {
		t.Fatalf("the endpoint's price leaked to the default server: %v", got)
	}
	key, err := c.KeyValue(c.Endpoints[0])
	if err != nil || key != "sk-lab-secret-123" {
		t.Fatalf("key = %q, %v", key, err)
	}
}

// The key is never shown: config show (text and JSON), %v of the config
// and of an endpoint, and the error for an unset variable.
func TestKeysAreNeverShown(t *testing.T) {
	clearEnv(t)
	const secret = "sk-lab-secret-123"
	t.Setenv("LAB_KEY", secret)
	t.Setenv("OPENAI_API_KEY", "sk-default-secret-456")
	p := writeConfig(t, "engine = \"openai\"\napi_key = \"sk-literal-secret-789\"\n"+strings.SplitN(endpointsFile, "\n", 2)[1])
	c, err := Load(Flags{ConfigPath: p})
	if err != nil {
		t.Fatal(err)
	}
	if k, _ := c.APIKeyValue(); k != "sk-literal-secret-789" {
		t.Fatalf("api_key = %q", k)
	}
	settings := c.Settings()
	js, _ := json.Marshal(settings)
	all := fmt.Sprintf("%v %+v %#v %s %v", settings, c, c.Endpoints[0], js, c.Endpoints)
	for _, s := range []string{secret, "sk-default-secret-456", "sk-literal-secret-789"} {
		if strings.Contains(all, s) {
			t.Fatalf("a key is shown: %s", all)
		}
	}
	show := map[string]Setting{}
	for _, s := range settings {
		show[s.Key] = s
	}
	if s := show["api_key"]; s.Value != "(set in the file; hidden)" || s.Source != "config "+p+":2" {
		t.Fatalf("api_key setting = %+v", s)
	}
	if s := show["endpoints.lab.api_key"]; s.Value != "from $LAB_KEY (set); hidden" {
		t.Fatalf("endpoint key setting = %+v", s)
	}
	if s := show["engine"]; s.Value != "openai" {
		t.Fatalf("engine setting = %+v", s)
	}

	os.Unsetenv("LAB_KEY")
	_, err = c.KeyValue(c.Endpoints[0])
	var ke *KeyError
	if !errors.As(err, &ke) || ke.Var != "LAB_KEY" || !strings.Contains(err.Error(), p+":8") || !strings.Contains(err.Error(), "LAB_KEY is not set") {
		t.Fatalf("unset variable: %v", err)
	}
	if show := c.Settings(); !strings.Contains(fmt.Sprint(show), "$LAB_KEY (NOT SET)") {
		t.Fatalf("config show does not say the variable is unset: %v", show)
	}

	// Without api_key the default server's key is OPENAI_API_KEY.
	c, _ = Load(Flags{ConfigPath: writeConfig(t, "engine = \"openai\"\n")})
	if k, _ := c.APIKeyValue(); k != "sk-default-secret-456" {
		t.Fatalf("OPENAI_API_KEY not used: %q", k)
	}
	for _, s := range c.Settings() {
		if s.Key == "api_key" && (s.Value != "(set; hidden)" || s.Source != "env OPENAI_API_KEY") {
			t.Fatalf("api_key from the environment: %+v", s)
		}
	}
}

func TestBadEndpointsNameFileAndLine(t *testing.T) {
	clearEnv(t)
	cases := []struct {
		body string
		want []string
	}{
		{"[[endpoints]]\nengine = \"openai\"\nhost = \"h:1/v1\"\n", []string{":1", "needs a name"}},
		{"[[endpoints]]\nname = \"a/b\"\nengine = \"openai\"\nhost = \"h\"\n", []string{":2", "no '/'"}},
		{"[[endpoints]]\nname = \"lab\"\nengine = \"vllm\"\nhost = \"h\"\n", []string{":3", `unknown engine "vllm"`, `"endpoints[0].engine"`}},
		{"[[endpoints]]\nname = \"lab\"\nhost = \"h\"\n", []string{":1", "engine = \"ollama\" or \"openai\""}},
		{"[[endpoints]]\nname = \"lab\"\nengine = \"openai\"\n", []string{":1", "needs a host"}},
		{"[[endpoints]]\nname = \"lab\"\nengine = \"openai\"\nhost = \"ftp://h\"\n", []string{":4", "scheme must be http or https"}},
		{"[[endpoints]]\nname = \"lab\"\nengine = \"ollama\"\nhost = \"h\"\napi_key = \"k\"\n", []string{":5", "Ollama takes no API key"}},
		{"[[endpoints]]\nname = \"lab\"\nengine = \"ollama\"\nhost = \"h\"\n\n[[endpoints]]\nname = \"lab\"\nengine = \"ollama\"\nhost = \"g\"\n", []string{":7", "already used by the endpoint at line 1"}},
		{"[[endpoints]]\nname = \"lab\"\nengine = \"ollama\"\nhost = \"h\"\nkey = \"x\"\n", []string{":5", "unknown setting"}},
		{"engine = \"llamacpp\"\n", []string{":1", `unknown engine "llamacpp"`}},
	}
	for _, c := range cases {
		p := writeConfig(t, c.body)
		_, err := Load(Flags{ConfigPath: p})
		if err == nil {
			t.Errorf("%q: no error", c.body)
			continue
		}
		if !strings.Contains(err.Error(), p) {
			t.Errorf("%q: error %q does not name the file", c.body, err)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q: error %q lacks %q", c.body, err, w)
			}
		}
	}
}

func TestEngineFlagEnvAndDefaultHosts(t *testing.T) {
	clearEnv(t)
	t.Setenv("OLLAMA_HOST", "ollama-box:11434")
	c, err := Load(Flags{ConfigPath: writeConfig(t, "")})
	if err != nil || c.EngineName() != "ollama" || c.Host != "ollama-box:11434" {
		t.Fatalf("ollama: %v %q %q", err, c.EngineName(), c.Host)
	}
	// OLLAMA_HOST is Ollama's: it names no OpenAI-compatible server.
	c, _ = Load(Flags{ConfigPath: writeConfig(t, ""), Engine: "openai"})
	if c.EngineName() != "openai" || c.Host != "" || c.HostOrDefault() != "http://127.0.0.1:8080/v1" || c.Source("engine") != "flag --engine" {
		t.Fatalf("openai: %q host %q (%s) from %s", c.EngineName(), c.Host, c.HostOrDefault(), c.Source("engine"))
	}
	t.Setenv(EnvEngine, "OpenAI")
	c, _ = Load(Flags{ConfigPath: writeConfig(t, "engine = \"ollama\"\n")})
	if c.EngineName() != "openai" || c.Source("engine") != "env "+EnvEngine {
		t.Fatalf("env engine: %q from %s", c.EngineName(), c.Source("engine"))
	}
	if _, err := Load(Flags{ConfigPath: writeConfig(t, ""), Engine: "tgi"}); err == nil || !strings.Contains(err.Error(), "flag --engine") {
		t.Fatalf("bad flag: %v", err)
	}
}
