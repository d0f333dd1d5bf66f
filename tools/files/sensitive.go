package files

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"github.com/jarvis-workbench/jarvis/tools"
)

// A secretRule marks the files that hold secrets. No tool reads them, not
// with --yes, not inside an allowed directory: a prompt injection in a web
// page, a file or a tool result can make a model ask for any path.
//
// Patterns are matched case-insensitively (macOS and Windows file systems
// ignore case; on the others a refused ~/.SSH costs nothing) against a
// cleaned absolute path, one component against one pattern element with
// path.Match:
//
//	"name"      the file's name, in any directory: ".npmrc", "*.pem"
//	"dir/name"  the path's last components: ".docker/config.json"
//	"dir/"      everything beneath such a directory: ".ssh/"
//	"/abs"      anchored at the root; "/abs/" is everything beneath it
//
// Rules that are not anchored apply in every home directory (/root's, other
// users') and wherever a tool keeps the same file under another root.
type secretRule struct {
	pattern string
	// holds completes "Access denied: PATH ...": what the file is.
	holds string
}

// The reference's wording, kept for the names it refuses.
const sensitiveFile = "is a sensitive file"

// secretRules are the credential stores, histories and keys that are never
// read, most specific first: the first match names the kind.
var secretRules = []secretRule{
	// Containers.
	{".docker/config.json", "holds container registry credentials"},
	{".dockercfg", "holds container registry credentials"},
	{"containers/auth.json", "holds container registry credentials"},
	// Clouds and infrastructure.
	{".aws/", "holds AWS credentials"},
	{".azure/", "holds Azure credentials"},
	{"gcloud/credentials.db", "holds Google Cloud credentials"},
	{"gcloud/access_tokens.db", "holds Google Cloud credentials"},
	{"gcloud/application_default_credentials.json", "holds Google Cloud credentials"},
	{"gcloud/legacy_credentials/", "holds Google Cloud credentials"},
	{".kube/config", "holds Kubernetes cluster credentials"},
	{"kubeconfig", "holds Kubernetes cluster credentials"},
	{".oci/", "holds Oracle Cloud credentials"},
	{".terraform.d/credentials.tfrc.json", "holds Terraform credentials"},
	{".vault-token", "holds a HashiCorp Vault token"},
	// Version control.
	{".git-credentials", "holds Git credentials"},
	{"gh/hosts.yml", "holds GitHub CLI credentials"},
	{".config/hub", "holds GitHub credentials"},
	{"glab-cli/", "holds GitLab CLI credentials"},
	// Package registries.
	{".npmrc", "holds package registry credentials"},
	{".pypirc", "holds package registry credentials"},
	{".yarnrc", "holds package registry credentials"},
	{".yarnrc.yml", "holds package registry credentials"},
	{".gem/credentials", "holds package registry credentials"},
	{".cargo/credentials", "holds package registry credentials"},
	{".cargo/credentials.toml", "holds package registry credentials"},
	{".m2/settings.xml", "holds package registry credentials"},
	{".m2/settings-security.xml", "holds package registry credentials"},
	{".gradle/gradle.properties", "holds package registry credentials"},
	{"nuget/nuget.config", "holds package registry credentials"},
	{".composer/auth.json", "holds package registry credentials"},
	{"composer/auth.json", "holds package registry credentials"},
	// Databases.
	{".my.cnf", "holds database credentials"},
	{".mylogin.cnf", "holds database credentials"},
	{".mongorc.js", "holds database credentials"},
	{".dbshell", "holds a database client's history"},
	{".psql_history", "holds a database client's history"},
	{".mysql_history", "holds a database client's history"},
	{".rediscli_history", "holds a database client's history"},
	{".sqlite_history", "holds a database client's history"},
	// Shell and REPL histories: commands carry passwords and tokens.
	{".bash_history", "holds a command history"},
	{".zsh_history", "holds a command history"},
	{".zhistory", "holds a command history"},
	{".sh_history", "holds a command history"},
	{".histfile", "holds a command history"},
	{"fish_history", "holds a command history"},
	{".python_history", "holds a command history"},
	{".node_repl_history", "holds a command history"},
	{".irb_history", "holds a command history"},
	{".lesshst", "holds a command history"},
	{".viminfo", "holds a command history"},
	// Password stores and keyrings.
	{".password-store/", "is in a password store"},
	{".gnupg/", "holds GnuPG keys"},
	{".local/share/keyrings/", "holds the desktop keyring"},
	{"*.kdbx", "is a KeePass password database"},
	{"*.kdb", "is a KeePass password database"},
	{"*.keychain", "is a keychain"},
	{"*.keychain-db", "is a keychain"},
	{".authinfo", "holds login credentials"},
	{".authinfo.gpg", "holds login credentials"},
	// Model hubs and AI tools: other agents' logins and API keys.
	{"huggingface/token", "holds a Hugging Face token"},
	{"huggingface/stored_tokens", "holds Hugging Face tokens"},
	{".huggingface/token", "holds a Hugging Face token"},
	{".kaggle/kaggle.json", "holds a Kaggle API key"},
	{".modal.toml", "holds a Modal token"},
	{".claude/.credentials.json", "holds another agent's login"},
	{".claude.json", "holds another agent's login"},
	{".codex/auth.json", "holds another agent's login"},
	{".gemini/oauth_creds.json", "holds another agent's login"},
	{".gemini/google_accounts.json", "holds another agent's login"},
	{"github-copilot/hosts.json", "holds GitHub Copilot credentials"},
	{"github-copilot/apps.json", "holds GitHub Copilot credentials"},
	{"opencode/auth.json", "holds another agent's login"},
	{"crush/crush.json", "holds another agent's provider keys"},
	{"goose/secrets.yaml", "holds another agent's provider keys"},
	{".aider.conf.yml", "holds another agent's provider keys"},
	{".continue/config.json", "holds another agent's provider keys"},
	{".continue/config.yaml", "holds another agent's provider keys"},
	{"io.datasette.llm/keys.json", "holds model API keys"},
	// More cloud and service CLIs.
	{"rclone/rclone.conf", "holds rclone remotes' credentials"},
	{".rclone.conf", "holds rclone remotes' credentials"},
	{".s3cfg", "holds S3 credentials"},
	{".boto", "holds cloud storage credentials"},
	{".passwd-s3fs", "holds S3 credentials"},
	{"*.tfstate", "is Terraform state (it holds secrets in clear)"},
	{"*.tfstate.backup", "is Terraform state (it holds secrets in clear)"},
	{"terraform.tfvars", "holds Terraform variables (often secrets)"},
	{"*.auto.tfvars", "holds Terraform variables (often secrets)"},
	{".terraformrc", "holds Terraform credentials"},
	{".pulumi/credentials.json", "holds Pulumi credentials"},
	{"doctl/config.yaml", "holds DigitalOcean credentials"},
	{".fly/config.yml", "holds Fly.io credentials"},
	{"hcloud/cli.toml", "holds Hetzner Cloud credentials"},
	{"netlify/config.json", "holds Netlify credentials"},
	{"com.vercel.cli/auth.json", "holds Vercel credentials"},
	{".wrangler/config/default.toml", "holds Cloudflare credentials"},
	{"stripe/config.toml", "holds Stripe keys"},
	{".databrickscfg", "holds Databricks credentials"},
	{"ngrok/ngrok.yml", "holds an ngrok token"},
	{".ngrok2/ngrok.yml", "holds an ngrok token"},
	{".config/configstore/", "holds CLI tokens (npm-style config stores)"},
	{".config/op/", "holds 1Password CLI sessions"},
	{".op/", "holds 1Password CLI sessions"},
	{"pip/pip.conf", "holds package index credentials"},
	{".pip/pip.conf", "holds package index credentials"},
	{".ivy2/.credentials", "holds package registry credentials"},
	{".sbt/.credentials", "holds package registry credentials"},
	{".bundle/config", "holds package registry credentials"},
	// Encryption keys.
	{"sops/age/keys.txt", "holds age private keys"},
	{"age/keys.txt", "holds age private keys"},
	{"*.agekey", "holds an age private key"},
	// Browsers' login stores.
	{"login data", "holds a browser's saved passwords"},
	{"login data for account", "holds a browser's saved passwords"},
	{"web data", "holds a browser's saved cards and forms"},
	{"network/cookies", "holds a browser's cookies (its logins)"},
	{"default/cookies", "holds a browser's cookies (its logins)"},
	{"profile */cookies", "holds a browser's cookies (its logins)"},
	{"cookies.sqlite", "holds a browser's cookies (its logins)"},
	{"logins.json", "holds a browser's saved passwords"},
	{"logins-backup.json", "holds a browser's saved passwords"},
	{"signons.sqlite", "holds a browser's saved passwords"},
	{"key3.db", "holds a browser's password key"},
	{"key4.db", "holds a browser's password key"},
	// SSH.
	{".ssh/", "holds SSH keys and configuration"},
	{"*.ppk", "is a private key"},
	// The system's secrets.
	{"/etc/shadow", "holds the system's password hashes"},
	{"/etc/shadow-", "holds the system's password hashes"},
	{"/etc/gshadow", "holds the system's password hashes"},
	{"/etc/gshadow-", "holds the system's password hashes"},
	{"/etc/security/opasswd", "holds the system's password hashes"},
	{"/etc/master.passwd", "holds the system's password hashes"},
	{"/etc/sudoers", "holds the sudo rules"},
	{"/etc/sudoers.d/", "holds the sudo rules"},
	{"/etc/ssl/private/", "holds the system's TLS private keys"},
	{"/etc/ssh/ssh_host_*key", "is an SSH host key"},
	{"/proc/*/environ", "holds a process's environment (API keys, tokens)"},
	{"/proc/*/task/*/environ", "holds a process's environment (API keys, tokens)"},
	// The reference's names.
	{".env*", sensitiveFile},
	{"*.env", sensitiveFile},
	{".secret", sensitiveFile},
	{"*.secrets", sensitiveFile},
	{"credentials", sensitiveFile},
	{"credentials.*", sensitiveFile},
	{"*.pem", sensitiveFile},
	{"*.key", sensitiveFile},
	{"*.p12", sensitiveFile},
	{"*.pfx", sensitiveFile},
	{"*.jks", sensitiveFile},
	{"id_rsa", sensitiveFile},
	{"id_ed25519", sensitiveFile},
	{"id_ecdsa", sensitiveFile},
	{"id_dsa", sensitiveFile},
	{".htpasswd", sensitiveFile},
	{".pgpass", sensitiveFile},
	{".netrc", sensitiveFile},
}

// compiledRule is a secretRule split into lower-case path elements.
type compiledRule struct {
	anchored, dir bool
	parts         []string
	elems         []element
	holds         string
}

// element matches one path element as path.Match would, with the common
// shapes (a literal, one star) decided without it: the rules run for every
// file of an indexed tree.
type element struct {
	pattern        string
	prefix, suffix string // around the one star
	star, glob     bool   // one star; anything else path.Match must decide
}

func newElement(pattern string) element {
	e := element{pattern: pattern}
	switch {
	case !strings.ContainsAny(pattern, `*?[\`):
	case strings.Count(pattern, "*") == 1 && !strings.ContainsAny(pattern, `?[\`):
		e.star = true
		e.prefix, e.suffix, _ = strings.Cut(pattern, "*")
	default:
		e.glob = true
	}
	return e
}

func (e element) match(s string) bool {
	switch {
	case e.glob:
		ok, _ := path.Match(e.pattern, s)
		return ok
	case e.star:
		return len(s) >= len(e.prefix)+len(e.suffix) && strings.HasPrefix(s, e.prefix) && strings.HasSuffix(s, e.suffix)
	}
	return s == e.pattern
}

// compiledRules are the rules split for matching, built on first use:
// a program that never reads a file pays nothing for them at start.
var compiledRules = sync.OnceValue(func() []compiledRule {
	out := make([]compiledRule, len(secretRules))
	for i, r := range secretRules {
		p := strings.ToLower(r.pattern)
		out[i] = compiledRule{
			anchored: strings.HasPrefix(p, "/"),
			dir:      strings.HasSuffix(p, "/"),
			parts:    strings.Split(strings.Trim(p, "/"), "/"),
			holds:    r.holds,
		}
		for _, part := range out[i].parts {
			out[i].elems = append(out[i].elems, newElement(part))
		}
	}
	return out
})

// ruleIndex narrows the rules worth matching against a path to those that
// can match it, so that checking every file of a large tree stays cheap.
type ruleIndex struct {
	byLast  map[string][]int // file rules, by their literal last element
	byFirst map[string][]int // directory and anchored rules, by their literal first element
	always  []int            // rules with a wildcard where the index would look
}

var rulesIndex = sync.OnceValue(func() ruleIndex {
	ix := ruleIndex{byLast: map[string][]int{}, byFirst: map[string][]int{}}
	for i, r := range compiledRules() {
		key := r.parts[len(r.parts)-1]
		index := ix.byLast
		if r.dir || r.anchored {
			key, index = r.parts[0], ix.byFirst
		}
		if strings.ContainsAny(key, `*?[\`) {
			ix.always = append(ix.always, i)
		} else {
			index[key] = append(index[key], i)
		}
	}
	return ix
})

// first returns the first rule, in table order, that covers comps (-1:
// none).
func (ix ruleIndex) first(comps []string, asDir bool) int {
	best := -1
	try := func(rules []int) {
		for _, i := range rules {
			if (best < 0 || i < best) && compiledRules()[i].matches(comps, asDir) {
				best = i
			}
		}
	}
	try(ix.always)
	if len(comps) > 0 {
		try(ix.byLast[comps[len(comps)-1]])
	}
	for _, c := range comps {
		try(ix.byFirst[c])
	}
	return best
}

// matchAt reports whether the parts match comps from index i.
func (r compiledRule) matchAt(comps []string, i int) bool {
	if i < 0 || i+len(r.parts) > len(comps) {
		return false
	}
	for j, e := range r.elems {
		if !e.match(comps[i+j]) {
			return false
		}
	}
	return true
}

// matches reports whether the rule covers comps, the components of a file
// (asDir false) or of a directory whose every file it would cover (asDir
// true: only directory rules can).
func (r compiledRule) matches(comps []string, asDir bool) bool {
	n := len(r.parts)
	switch {
	case !r.dir && asDir:
		return false
	case r.anchored && !r.dir:
		return len(comps) == n && r.matchAt(comps, 0)
	case r.anchored:
		return (len(comps) > n || asDir && len(comps) == n) && r.matchAt(comps, 0)
	case !r.dir:
		return r.matchAt(comps, len(comps)-n)
	}
	last := len(comps) - n - 1 // a directory rule needs something beneath
	if asDir {
		last++
	}
	for i := 0; i <= last; i++ {
		if r.matchAt(comps, i) {
			return true
		}
	}
	return false
}

// components splits a cleaned absolute path into lower-case elements.
func components(p string) []string {
	p = strings.ToLower(filepath.ToSlash(filepath.Clean(p)))
	p = strings.TrimPrefix(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// Secrets decides which files are never read. Build one with NewSecrets
// for a run of checks: it finds jarvis's own files once.
type Secrets struct {
	// own maps the lower-case absolute paths of jarvis's own files, as
	// configured and after symbolic links, to what each is; ownDirs the
	// directories beside the database (its write journal, recovery and
	// waiting line), each of whose files is refused.
	own     map[string]string
	ownDirs map[string]string
	// ownPaths are the same files and directories as written (the maps'
	// keys are lower case), for comparing a hard link with them.
	ownPaths map[string]string
	// wd is the working directory a relative path is judged in ("": the
	// process's); see Reach.Secrets.
	wd string
}

var (
	ownMu    sync.Mutex
	ownFiles = map[string]string{} // registered with ProtectJarvisFiles
)

const (
	ownConfig   = "is jarvis's configuration (it holds channel tokens)"
	ownDatabase = "is jarvis's database"
	ownJournal  = "is in jarvis's database journal"
)

// dbCompanions are the directories the database keeps beside itself: the
// journal of writes not yet landed, what could not be written, the
// waiting line (see store).
var dbCompanions = []string{".pending", ".recovery", ".waiting"}

// ProtectJarvisFiles adds jarvis's configuration file and database, wherever
// --config or --db put them, to the files no tool reads (the default paths
// and JARVIS_CONFIG and JARVIS_DB are always protected). Either may be "".
func ProtectJarvisFiles(configPath, dbPath string) {
	ownMu.Lock()
	defer ownMu.Unlock()
	if configPath != "" {
		ownFiles[configPath] = ownConfig
	}
	if dbPath != "" {
		ownFiles[dbPath] = ownDatabase
		ownFiles[dbPath+".lock"] = ownDatabase
	}
}

// NewSecrets returns the rules with jarvis's own files as they are now: the
// registered ones, $JARVIS_CONFIG, $JARVIS_DB and the default paths.
func NewSecrets() *Secrets {
	own, ownDirs, ownPaths := map[string]string{}, map[string]string{}, map[string]string{}
	addTo := func(m map[string]string, p, what string) {
		if p == "" {
			return
		}
		abs, err := filepath.Abs(expandHome(p))
		if err != nil {
			return
		}
		m[strings.ToLower(abs)], ownPaths[abs] = what, what
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			m[strings.ToLower(real)], ownPaths[real] = what, what
		}
	}
	add := func(p, what string) {
		addTo(own, p, what)
		if what == ownDatabase && !strings.HasSuffix(p, ".lock") {
			for _, c := range dbCompanions {
				addTo(ownDirs, p+c, ownJournal)
			}
		}
	}
	if dir := xdgDir("XDG_CONFIG_HOME", ".config"); dir != "" {
		add(filepath.Join(dir, "jarvis", "config.toml"), ownConfig)
	}
	add(os.Getenv("JARVIS_CONFIG"), ownConfig)
	// store.DefaultPath's choices; store is not imported for two paths.
	var dbs []string
	if dir := xdgDir("XDG_DATA_HOME", filepath.Join(".local", "share")); dir != "" {
		dbs = append(dbs, filepath.Join(dir, "jarvis", "jarvis.db"))
	}
	if db := os.Getenv("JARVIS_DB"); db != "" {
		dbs = append(dbs, db)
	}
	for _, db := range dbs {
		add(db, ownDatabase)
		add(db+".lock", ownDatabase)
	}
	ownMu.Lock()
	for p, what := range ownFiles {
		add(p, what)
	}
	ownMu.Unlock()
	return &Secrets{own: own, ownDirs: ownDirs, ownPaths: ownPaths}
}

// xdgDir returns $env, else ~/fallback ("" when neither is known).
func xdgDir(env, fallback string) string {
	if dir := os.Getenv(env); dir != "" {
		return dir
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, fallback)
	}
	return ""
}

// File returns why a file must never be read, "" when it may be. Give the
// path as named and as resolved: a match on either refuses it. Relative
// paths are taken from the working directory and ~ is expanded.
func (s *Secrets) File(paths ...string) string { return s.check(paths, false) }

// Dir returns why every file under a directory must never be read (a
// credential directory such as ~/.ssh), "" otherwise.
func (s *Secrets) Dir(paths ...string) string { return s.check(paths, true) }

func (s *Secrets) check(paths []string, asDir bool) string {
	all := make([][]string, 0, len(paths))
	for _, p := range paths {
		if strings.TrimSpace(p) == "" {
			continue
		}
		abs, err := absIn(s.wd, p)
		if err != nil {
			abs = p
		}
		lower := strings.ToLower(abs)
		if what, ok := s.own[lower]; ok && !asDir {
			return what
		}
		for dir, what := range s.ownDirs {
			if Within(dir, lower) {
				return what
			}
		}
		all = append(all, components(abs))
	}
	// The first rule in table order names the kind, whichever name matched
	// it: the most specific.
	best := -1
	for _, comps := range all {
		if i := rulesIndex().first(comps, asDir); i >= 0 && (best < 0 || i < best) {
			best = i
		}
	}
	if best < 0 {
		return ""
	}
	return compiledRules()[best].holds
}

// Refuse is the refusal, for the executor's gate, of acting on p when it is
// a sensitive file: by its name or where it is, by its content (a private
// key or a token at its start), or as a hard link to a sensitive file.
// nil when it is not, or cannot be told yet (it does not exist).
func (s *Secrets) Refuse(p string) *tools.Refusal {
	if why := s.Reason(p); why != "" {
		return &tools.Refusal{Message: Denied(p, why), By: tools.ByProtected, Rule: shown(p) + " " + why}
	}
	return nil
}

// Reason says why p must never be acted on, by the rules Refuse applies
// ("" when it may be).
func (s *Secrets) Reason(p string) string {
	real := Resolve(absOr(s.wd, p))
	if why := s.File(p, real); why != "" {
		return why
	}
	return s.peek(real)
}

// Opened says why a file just read must not be returned ("" when it may):
// its content is a key or a token, or it is a hard link to a sensitive
// file. Tools call it on what they read, since the file may have changed
// since the gate looked.
func (s *Secrets) Opened(info os.FileInfo, data []byte) string {
	if why := SecretContent(data); why != "" {
		return why
	}
	return s.linked(info)
}

// peek reads the start of a regular file to judge its content and its
// links before anyone is asked about it (nothing of it is shown).
func (s *Secrets) peek(real string) string {
	info, err := os.Stat(real)
	if err != nil || !info.Mode().IsRegular() {
		return ""
	}
	if why := s.linked(info); why != "" {
		return why
	}
	head, err := readHead(real, info, contentWindow)
	if err != nil {
		return ""
	}
	return SecretContent(head)
}

// Denied is file_read's refusal of a sensitive file: "Access denied: PATH
// holds container registry credentials."
func Denied(path, why string) string {
	return fmt.Sprintf("Access denied: %s %s.", shown(path), why)
}

// SkipReason is how an indexer lists a sensitive file or directory it
// skipped: "sensitive file (holds container registry credentials)".
func SkipReason(why string, dir bool) string {
	kind := "sensitive file"
	if dir {
		kind = "sensitive directory"
	}
	if why == "" || why == sensitiveFile {
		return kind
	}
	return kind + " (" + why + ")"
}
