package memory

import "strings"

// Excerpt returns up to n lines of text (a hit's content) that hold a term
// of query as the search reads both (case, punctuation and word endings
// aside: "running" finds "runs"), in order, blank lines skipped: what a
// preview shows of a hit, rather than its chunk's first words. When no
// line holds one (a hit found by its meaning alone), it returns the first
// lines that are not blank.
func Excerpt(query, text string, n int) []string {
	if n <= 0 {
		return nil
	}
	a := newAnalyzer()
	want := map[string]bool{}
	for _, t := range a.query(query).terms {
		want[t.text] = true
	}
	var matched, first []string
	for _, line := range strings.Split(text, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		if len(first) < n {
			first = append(first, line)
		}
		hit := false
		a.each(line, func(term string, _ int) { hit = hit || want[term] })
		if hit {
			matched = append(matched, line)
			if len(matched) == n {
				break
			}
		}
	}
	if len(matched) == 0 {
		return first
	}
	return matched
}
