package files

import (
	"context"
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/store"
	"github.com/jarvis-workbench/jarvis/tools"
)

const (
	registryCreds = "holds package registry credentials"
	dbHistory     = "holds a database client's history"
	history       = "holds a command history"
	containerReg  = "holds container registry credentials"
	gcloudCreds   = "holds Google Cloud credentials"
)

// credentialStores are files that hold secrets, relative to a home
// directory, with what the refusal says they hold.
var credentialStores = []struct{ rel, holds string }{
	{".docker/config.json", containerReg},
	{".config/containers/auth.json", containerReg},
	{".aws/credentials", "holds AWS credentials"},
	{".aws/config", "holds AWS credentials"},
	{".azure/msal_token_cache.json", "holds Azure credentials"},
	{".config/gcloud/credentials.db", gcloudCreds},
	{".config/gcloud/access_tokens.db", gcloudCreds},
	{".config/gcloud/application_default_credentials.json", gcloudCreds},
	{".kube/config", "holds Kubernetes cluster credentials"},
	{".oci/config", "holds Oracle Cloud credentials"},
	{".git-credentials", "holds Git credentials"},
	{".config/gh/hosts.yml", "holds GitHub CLI credentials"},
	{".config/hub", "holds GitHub credentials"},
	{".config/glab-cli/config.yml", "holds GitLab CLI credentials"},
	{".npmrc", registryCreds},
	{".pypirc", registryCreds},
	{".yarnrc.yml", registryCreds},
	{".gem/credentials", registryCreds},
	{".cargo/credentials", registryCreds},
	{".cargo/credentials.toml", registryCreds},
	{".m2/settings.xml", registryCreds},
	{".gradle/gradle.properties", registryCreds},
	{".nuget/NuGet/NuGet.Config", registryCreds},
	{".composer/auth.json", registryCreds},
	{".config/composer/auth.json", registryCreds},
	{".pgpass", sensitiveFile},
	{".my.cnf", "holds database credentials"},
	{".mongorc.js", "holds database credentials"},
	{".dbshell", dbHistory},
	{".psql_history", dbHistory},
	{".mysql_history", dbHistory},
	{".rediscli_history", dbHistory},
	{".sqlite_history", dbHistory},
	{".bash_history", history},
	{".zsh_history", history},
	{".zhistory", history},
	{".local/share/fish/fish_history", history},
	{".python_history", history},
	{".node_repl_history", history},
	{".irb_history", history},
	{".lesshst", history},
	{".viminfo", history},
	{".password-store/mail/work.gpg", "is in a password store"},
	{".gnupg/pubring.kbx", "holds GnuPG keys"},
	{".local/share/keyrings/login.keyring", "holds the desktop keyring"},
	{"Documents/Passwords.kdbx", "is a KeePass password database"},
	{".ssh/id_ed25519", "holds SSH keys and configuration"},
	{".ssh/config", "holds SSH keys and configuration"},
	{".ssh/known_hosts", "holds SSH keys and configuration"},
	{".netrc", sensitiveFile},
	{"project/.env", sensitiveFile},
	{"project/.env.production", sensitiveFile},
	{"project/.envrc", sensitiveFile},
	{"certs/server.pem", sensitiveFile},
	{"certs/server.key", sensitiveFile},
	// Model hubs, other agents, more clouds and CLIs, encryption keys,
	// browsers.
	{".cache/huggingface/token", "holds a Hugging Face token"},
	{".cache/huggingface/stored_tokens", "holds Hugging Face tokens"},
	{".kaggle/kaggle.json", "holds a Kaggle API key"},
	{".claude/.credentials.json", "holds another agent's login"},
	{".codex/auth.json", "holds another agent's login"},
	{".gemini/oauth_creds.json", "holds another agent's login"},
	{".config/github-copilot/hosts.json", "holds GitHub Copilot credentials"},
	{".local/share/opencode/auth.json", "holds another agent's login"},
	{".config/goose/secrets.yaml", "holds another agent's provider keys"},
	{".config/rclone/rclone.conf", "holds rclone remotes' credentials"},
	{".s3cfg", "holds S3 credentials"},
	{".boto", "holds cloud storage credentials"},
	{"infra/terraform.tfstate", "is Terraform state (it holds secrets in clear)"},
	{"infra/terraform.tfstate.backup", "is Terraform state (it holds secrets in clear)"},
	{"infra/prod.auto.tfvars", "holds Terraform variables (often secrets)"},
	{".pulumi/credentials.json", "holds Pulumi credentials"},
	{".config/doctl/config.yaml", "holds DigitalOcean credentials"},
	{".config/op/config", "holds 1Password CLI sessions"},
	{".config/sops/age/keys.txt", "holds age private keys"},
	{".config/google-chrome/Default/Login Data", "holds a browser's saved passwords"},
	{".config/google-chrome/Default/Network/Cookies", "holds a browser's cookies (its logins)"},
	{".config/chromium/Profile 1/Cookies", "holds a browser's cookies (its logins)"},
	{".mozilla/firefox/abc.default/logins.json", "holds a browser's saved passwords"},
	{".mozilla/firefox/abc.default/key4.db", "holds a browser's password key"},
	{".mozilla/firefox/abc.default/cookies.sqlite", "holds a browser's cookies (its logins)"},
}

// fakeHome makes a temporary home directory holding every credential
// store, each with a distinct secret, and returns it.
func fakeHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, ".local", "share"))
	t.Setenv("JARVIS_CONFIG", "")
	t.Setenv("JARVIS_DB", "")
	for _, c := range credentialStores {
		write(t, filepath.Join(home, c.rel), "SECRET "+c.rel)
	}
	return home
}

// leaks reports whether a result carries a file's secret.
func leaks(r tools.Result) bool { return strings.Contains(r.Content, "SECRET") }

func TestCredentialStoresAreRefused(t *testing.T) {
	home := fakeHome(t)
	t.Chdir(home) // inside the working directory
	f, err := NewFileReadIn([]string{home})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range credentialStores {
		for _, given := range []string{"~/" + c.rel, filepath.Join(home, c.rel), c.rel} {
			r := read(t, f, tools.Args{"path": given})
			want := "Access denied: " + given + " " + c.holds + "."
			if r.Success || r.Content != want || leaks(r) {
				t.Errorf("%s:\n got %q\nwant %q", given, r.Content, want)
			}
		}
		if need, why := f.ConfirmationFor(tools.Args{"path": "~/" + c.rel}); need {
			t.Errorf("%s: asks (%s) for a file it refuses anyway", c.rel, why)
		}
	}
}

func TestCredentialStoresAreRefusedWithYes(t *testing.T) {
	home := fakeHome(t)
	t.Chdir(t.TempDir()) // the stores are outside the working directory
	tool, _ := NewFileRead(tools.Deps{})
	var asked int
	yes := tools.ConfirmFunc(func(context.Context, tools.ConfirmRequest) (tools.Decision, error) {
		asked++
		return tools.AllowOnce, nil
	})
	e, err := tools.NewExecutor([]tools.Tool{tool}, tools.ExecutorOptions{Confirmer: yes})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range credentialStores {
		p := filepath.Join(home, c.rel)
		r := e.Execute(context.Background(), tools.Call{Name: "file_read", Arguments: argsJSON(t, tools.Args{"path": p})})
		if r.Success || r.Content != "Access denied: "+p+" "+c.holds+"." || leaks(r) {
			t.Errorf("%s with --yes: %q", c.rel, r.Content)
		}
	}
	if asked != 0 {
		t.Errorf("asked %d times for files that are refused anyway", asked)
	}
}

func TestSensitiveTargetOfALinkIsRefused(t *testing.T) {
	home := fakeHome(t)
	work := t.TempDir()
	t.Chdir(work)
	if err := os.Symlink(filepath.Join(home, ".docker", "config.json"), filepath.Join(work, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(home, ".ssh"), filepath.Join(work, "keys")); err != nil {
		t.Fatal(err)
	}
	f, _ := NewFileReadIn(nil)
	if r := read(t, f, tools.Args{"path": "notes.txt"}); r.Content != "Access denied: notes.txt "+containerReg+"." || leaks(r) {
		t.Errorf("link to a credential file: %q", r.Content)
	}
	if r := read(t, f, tools.Args{"path": "keys/id_ed25519"}); r.Content != "Access denied: keys/id_ed25519 holds SSH keys and configuration." {
		t.Errorf("through a linked directory: %q", r.Content)
	}
}

func TestSensitiveRulesMatchSystemFilesAndOtherHomes(t *testing.T) {
	secrets := NewSecrets()
	for p, holds := range map[string]string{
		"/etc/shadow":                         "holds the system's password hashes",
		"/etc/gshadow":                        "holds the system's password hashes",
		"/etc/shadow-":                        "holds the system's password hashes",
		"/etc/sudoers":                        "holds the sudo rules",
		"/etc/sudoers.d/90-cloud-init":        "holds the sudo rules",
		"/etc/ssl/private/snakeoil.key":       "holds the system's TLS private keys",
		"/etc/ssh/ssh_host_ed25519_key":       "is an SSH host key",
		"/proc/self/environ":                  "holds a process's environment (API keys, tokens)",
		"/proc/1/task/1/environ":              "holds a process's environment (API keys, tokens)",
		"/root/.bash_history":                 history,
		"/root/.ssh/authorized_keys":          "holds SSH keys and configuration",
		"/root/.docker/config.json":           containerReg,
		"/home/other/.kube/config":            "holds Kubernetes cluster credentials",
		"/home/u/.DOCKER/Config.JSON":         containerReg, // case-insensitive file systems
		"/run/user/1000/containers/auth.json": containerReg,
		"/ETC/SHADOW":                         "holds the system's password hashes",
	} {
		if got := secrets.File(p); got != holds {
			t.Errorf("%s: %q, want %q", p, got, holds)
		}
	}
	for _, p := range []string{"/etc/passwd", "/etc/hosts", "/etc/shadowsocks.json", "/etcetera/shadow", "/srv/etc/shadow",
		"/home/u/.bashrc", "/home/u/project/config.json", "/home/u/project/settings.xml", "/home/u/hosts.yml",
		"/home/u/.config/gh/config.yml", "/home/u/docs/history.md", "/home/u/credential-rotation.md", "/home/u/.ssh.md",
		"/etc/ssh/ssh_host_ed25519_key.pub", "/proc/self/status"} {
		if why := secrets.File(p); why != "" {
			t.Errorf("%s should be readable, refused as %q", p, why)
		}
	}
	for p, sensitive := range map[string]bool{
		"/home/u/.ssh": true, "/home/u/.gnupg": true, "/etc/ssl/private": true, "/etc/sudoers.d": true,
		"/home/u/.local/share/keyrings": true, "/home/u": false, "/etc": false, "/etc/ssl": false, "/home/u/.local/share": false,
	} {
		if got := secrets.Dir(p) != ""; got != sensitive {
			t.Errorf("Dir(%s) = %v, want %v", p, got, sensitive)
		}
	}
}

func TestSystemSecretsAreRefusedEvenWhereReadable(t *testing.T) {
	if _, err := os.Lstat("/etc/shadow"); err != nil {
		t.Skip("no /etc/shadow here")
	}
	f, _ := NewFileReadIn([]string{"/etc"})
	r := f.Execute(context.Background(), tools.Args{"path": "/etc/shadow"})
	if r.Success || r.Content != "Access denied: /etc/shadow holds the system's password hashes." {
		t.Fatalf("got %q", r.Content)
	}
}

func TestJarvisOwnFilesAreRefused(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "cfg"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, "data"))
	t.Setenv("JARVIS_CONFIG", filepath.Join(home, "env.toml"))
	t.Setenv("JARVIS_DB", filepath.Join(home, "env.db"))
	t.Cleanup(func() {
		ownMu.Lock()
		ownFiles = map[string]string{}
		ownMu.Unlock()
	})
	ProtectJarvisFiles(filepath.Join(home, "flag.toml"), filepath.Join(home, "flag.db"))

	config := "is jarvis's configuration (it holds channel tokens)"
	db := "is jarvis's database"
	journal := "is in jarvis's database journal"
	want := map[string]string{
		"cfg/jarvis/config.toml": config, "env.toml": config, "flag.toml": config,
		"data/jarvis/jarvis.db": db, "data/jarvis/jarvis.db.lock": db,
		"env.db": db, "env.db.lock": db, "flag.db": db, "flag.db.lock": db,
		"data/jarvis/jarvis.db.pending/0001.json": journal, "flag.db.recovery/write-1.json": journal,
		"env.db.waiting/0002-42": journal,
	}
	for rel := range want {
		write(t, filepath.Join(home, rel), "[channels.team]\nSECRET token = \"xoxb-1\"")
	}
	if err := os.Symlink(filepath.Join(home, "flag.toml"), filepath.Join(home, "innocent.txt")); err != nil {
		t.Fatal(err)
	}
	want["innocent.txt"] = config
	t.Chdir(home)
	f, _ := NewFileReadIn(nil)
	for rel, holds := range want {
		r := read(t, f, tools.Args{"path": rel})
		if r.Success || r.Content != "Access denied: "+rel+" "+holds+"." || leaks(r) {
			t.Errorf("%s: %q", rel, r.Content)
		}
	}

	// The default database path is the store's own.
	t.Setenv("JARVIS_DB", "")
	if why := NewSecrets().File(store.DefaultPath()); why != db {
		t.Errorf("store.DefaultPath() %s: %q", store.DefaultPath(), why)
	}
}

func TestSecretRulePatternsAreValid(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range secretRules {
		if seen[strings.ToLower(r.pattern)] {
			t.Errorf("pattern %q is listed twice", r.pattern)
		}
		seen[strings.ToLower(r.pattern)] = true
		if r.holds == "" {
			t.Errorf("pattern %q says nothing of what it holds", r.pattern)
		}
		for _, part := range strings.Split(strings.Trim(r.pattern, "/"), "/") {
			if _, err := path.Match(part, ""); err != nil || part == "" {
				t.Errorf("pattern %q: element %q is not a valid pattern", r.pattern, part)
			}
		}
	}
}

func argsJSON(t *testing.T, a tools.Args) string {
	t.Helper()
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestElementMatchAgreesWithPathMatch(t *testing.T) {
	names := []string{"", "x", ".env", ".env.local", "prod.env", "id_rsa", "server.key", "ssh_host_rsa_key", "ssh_host_rsa_key.pub",
		"credentials", "credentials.json", "a.kdbx", "environ", "1234", "config.json", ".envrc", "key", "ssh_host_key"}
	for _, r := range compiledRules() {
		for _, e := range r.elems {
			for _, n := range names {
				want, _ := path.Match(e.pattern, n)
				if e.match(n) != want {
					t.Errorf("element %q on %q: %v, path.Match says %v", e.pattern, n, !want, want)
				}
			}
		}
	}
}
