package sessions

import (
	"fmt"
	"strings"

	"github.com/asdine/storm/v3"
	"github.com/asdine/storm/v3/index"
)

// Found is a session a search matched, with where it matched.
type Found struct {
	Session Session `json:"session"`
	Hits    []Hit   `json:"hits"`
}

// Hit is one place a search matched: the title (Seq 0, Role "title") or a
// message, and the line of it that holds the first word it matched.
type Hit struct {
	Seq  int    `json:"seq,omitempty"`
	Role string `json:"role"`
	Line string `json:"line"`
}

// maxHitLine bounds the line a hit quotes, in characters.
const maxHitLine = 200

// Search finds the sessions that hold every word of query, case aside,
// in their title or their messages (the person's, the model's answers,
// the tools' results, on every branch), the most recently active first,
// at most limit of them (all when limit <= 0). Each comes with the title
// and messages that hold any of the words.
func (s *Store) Search(query string, limit int) ([]Found, error) {
	words := strings.Fields(strings.ToLower(query))
	if len(words) == 0 {
		return nil, fmt.Errorf("nothing to search for: give a word or two")
	}
	var out []Found
	err := s.view(func(n storm.Node) error {
		var rows []sessionRow
		if err := n.AllByIndex("Recent", &rows, []func(*index.Options){storm.Reverse()}...); err != nil && !notFound(err) {
			return err
		}
		for _, row := range rows {
			f := Found{Session: row.Session}
			seen := map[string]bool{}
			look := func(seq int, role, text string) {
				if line, ok := hitLine(text, words, seen); ok {
					f.Hits = append(f.Hits, Hit{Seq: seq, Role: role, Line: line})
				}
			}
			look(0, "title", row.Title)
			if row.Messages > 0 {
				var msgs []messageRow
				if err := messages(n, row.ID).All(&msgs); err != nil && !notFound(err) {
					return fmt.Errorf("cannot read the messages of session %s: %w", row.ID, err)
				}
				for _, m := range msgs {
					if m.Role != RoleNotice && m.Role != RoleError && m.Role != RoleSummary {
						look(m.Seq, m.Role, m.Content)
					}
				}
			}
			if len(seen) == len(words) {
				out = append(out, f)
				if limit > 0 && len(out) == limit {
					return nil
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cannot search the sessions: %w", err)
	}
	return out, nil
}

// hitLine reports whether text holds any of words, noting those it holds
// in seen, and quotes the line that holds the first of them.
func hitLine(text string, words []string, seen map[string]bool) (string, bool) {
	lower := strings.ToLower(text)
	first := ""
	for _, w := range words {
		if strings.Contains(lower, w) {
			seen[w] = true
			if first == "" {
				first = w
			}
		}
	}
	if first == "" {
		return "", false
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(strings.ToLower(line), first) {
			line = strings.TrimSpace(line)
			if r := []rune(line); len(r) > maxHitLine {
				line = string(r[:maxHitLine-1]) + "…"
			}
			return line, true
		}
	}
	return "", true
}
