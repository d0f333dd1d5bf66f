package files

import (
	"bytes"
	"os"

	"github.com/jarvis-workbench/jarvis/internal/lazyregexp"
)

// A secret is refused by what it is, not only by where it lies: a private
// key copied to notes.txt, a token saved as ./hf, an identity file under a
// name no rule knows. What counts is the start of the file (after blank
// and comment lines): a key block or a token there is the file's point.
// A document that quotes a key header further down is not refused.

// contentWindow is how much of a file's start is looked at.
const contentWindow = 4096

// keyHeaders begin the blocks of private keys.
var keyHeaders = []struct {
	prefix, holds string
}{
	{"-----BEGIN OPENSSH PRIVATE KEY-----", "holds a private key"},
	{"-----BEGIN PGP PRIVATE KEY BLOCK-----", "holds a PGP private key"},
	{"PuTTY-User-Key-File-", "holds a private key"},
	{"AGE-SECRET-KEY-1", "holds an age private key"},
}

// pemPrivate is a PEM block of any private key ("-----BEGIN RSA PRIVATE
// KEY-----", "-----BEGIN ENCRYPTED PRIVATE KEY-----", ...).
var pemPrivate = lazyregexp.New(`^-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----`)

// tokenPattern is a token of a known kind at the start of a line: the
// prefixes services give their API tokens. It is compiled at its first
// use, not when jarvis starts: every command would pay a millisecond for
// it, and most never read a file.
var tokenPattern = lazyregexp.New(`^(?:` +
	`hf_[A-Za-z0-9]{30,}` + // Hugging Face
	`|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,}` + // GitHub
	`|glpat-[A-Za-z0-9_-]{20,}` + // GitLab
	`|xox[abposr]-[A-Za-z0-9-]{10,}` + // Slack
	`|sk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}` + // OpenAI, Anthropic
	`|AKIA[0-9A-Z]{16}` + // AWS access key
	`|AIza[0-9A-Za-z_-]{35}` + // Google API key
	`|ya29\.[0-9A-Za-z_-]{20,}` + // Google OAuth
	`|npm_[A-Za-z0-9]{36}` + // npm
	`|pypi-[A-Za-z0-9_-]{50,}` + // PyPI
	`|dop_v1_[a-f0-9]{64}` + // DigitalOcean
	`|SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}` + // SendGrid
	`|r8_[A-Za-z0-9]{30,}` + // Replicate
	`)`)

// SecretContent says what a file is when its start (after blank lines and
// comment lines) is a private key block or an API token; "" otherwise.
func SecretContent(data []byte) string {
	if len(data) > contentWindow {
		data = data[:contentWindow]
	}
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		line = bytes.TrimSpace(bytes.TrimPrefix(line, []byte("\xef\xbb\xbf")))
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		for _, k := range keyHeaders {
			if bytes.HasPrefix(line, []byte(k.prefix)) {
				return k.holds
			}
		}
		if pemPrivate().Match(line) {
			return "holds a private key"
		}
		if tokenPattern().Match(line) {
			return "holds an API token"
		}
		return "" // the first line of content is something else
	}
	return ""
}

// readHead reads at most n bytes of real (checked as a regular file
// described by info), the way ReadRegular opens files: never blocking on a
// FIFO swapped in, never following a link.
func readHead(real string, info os.FileInfo, n int) ([]byte, error) {
	f, err := openChecked(real, info)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, n)
	m, err := f.Read(buf)
	if m == 0 && err != nil {
		return nil, err
	}
	return buf[:m], nil
}
