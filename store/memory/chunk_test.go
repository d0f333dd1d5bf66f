package memory

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// sentence returns a sentence of n words, its words tagged with tag so
// tests can tell where a chunk starts and ends.
func sentence(tag string, n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = fmt.Sprintf("%s%d", tag, i)
	}
	return strings.Join(w, " ") + "."
}

func countWords(s string) int { return len(scanWords(s, nil)) }

// checkSpans verifies the span invariants for any text and settings.
func checkSpans(t *testing.T, text string, size, overlap int, spans []span) {
	t.Helper()
	if countWords(text) == 0 {
		if len(spans) != 0 {
			t.Fatalf("%d chunks for a text without words", len(spans))
		}
		return
	}
	if len(spans) == 0 || spans[0].start != 0 || spans[len(spans)-1].end != len(text) {
		t.Fatalf("spans %v do not cover the text (len %d)", spans, len(text))
	}
	for i, sp := range spans {
		if n := countWords(text[sp.start:sp.end]); n == 0 || n > size {
			t.Fatalf("chunk %d has %d words (size %d)", i, n, size)
		}
		if i > 0 {
			prev := spans[i-1]
			if sp.start <= prev.start || sp.start > prev.end {
				t.Fatalf("chunk %d starts at %d, previous spans %d-%d: not tiling", i, sp.start, prev.start, prev.end)
			}
			if shared := countWords(text[sp.start:prev.end]); shared > overlap {
				t.Fatalf("chunks %d and %d share %d words (overlap %d)", i-1, i, shared, overlap)
			}
		}
	}
}

func TestChunkInvariantsOnRandomText(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	pieces := []string{"word", "Word.", "end!", "what?", "\n", "\n\n", "  ", "東京", "。", "x", "(paren.)", "\"quote.\""}
	for iter := 0; iter < 300; iter++ {
		var sb strings.Builder
		for n := rng.Intn(400); n > 0; n-- {
			sb.WriteString(pieces[rng.Intn(len(pieces))])
			if rng.Intn(3) > 0 {
				sb.WriteByte(' ')
			}
		}
		text := sb.String()
		size := 1 + rng.Intn(60)
		overlap := rng.Intn(size)
		checkSpans(t, text, size, overlap, chunkSpans(text, size, overlap))
	}
}

func TestChunkEndsAtParagraph(t *testing.T) {
	text := sentence("a", 40) + "\n\n" + sentence("b", 40) + "\n\n" + sentence("c", 40)
	spans := chunkSpans(text, 100, 0)
	checkSpans(t, text, 100, 0, spans)
	first := strings.TrimSpace(text[spans[0].start:spans[0].end])
	if !strings.HasSuffix(first, "b39.") {
		t.Errorf("first chunk should end with the second paragraph, got ...%q", first[len(first)-20:])
	}
	if len(spans) != 2 {
		t.Errorf("%d chunks, want 2", len(spans))
	}
}

func TestChunkEndsAtSentenceAndOverlapStartsAtOne(t *testing.T) {
	text := sentence("a", 30) + " " + sentence("b", 30) + " " + sentence("c", 30) + " " + sentence("d", 30) + " " + sentence("e", 30)
	spans := chunkSpans(text, 100, 40)
	checkSpans(t, text, 100, 40, spans)
	first := strings.TrimSpace(text[spans[0].start:spans[0].end])
	if !strings.HasSuffix(first, "c29.") {
		t.Errorf("first chunk should end after three sentences, got ...%q", first[len(first)-10:])
	}
	second := text[spans[1].start:spans[1].end]
	if !strings.HasPrefix(second, "c0 ") {
		t.Errorf("second chunk should start at the last sentence of the first (overlap on a sentence boundary), got %q...", second[:10])
	}
}

func TestChunkSplitsALongSentenceByWords(t *testing.T) {
	text := sentence("w", 1000)
	spans := chunkSpans(text, 100, 10)
	checkSpans(t, text, 100, 10, spans)
	for i, sp := range spans[:len(spans)-1] {
		if n := countWords(text[sp.start:sp.end]); n != 100 {
			t.Errorf("chunk %d: %d words, want exactly 100 without a boundary to prefer", i, n)
		}
		if shared := countWords(text[spans[i+1].start:sp.end]); shared != 10 {
			t.Errorf("chunks %d/%d share %d words, want 10", i, i+1, shared)
		}
	}
}

func TestChunkCountsIdeographsAsWords(t *testing.T) {
	text := strings.Repeat(strings.Repeat("語", 19)+"。", 15) // 15 sentences of 20 characters, no spaces
	spans := chunkSpans(text, 50, 0)
	checkSpans(t, text, 50, 0, spans)
	if len(spans) < 6 {
		t.Fatalf("%d chunks for 300 characters at 50 per chunk", len(spans))
	}
	if c := text[spans[0].start:spans[0].end]; !strings.HasSuffix(c, "。") {
		t.Errorf("first chunk should end at a full stop: %q", c)
	}
}

func TestChunkTextWithoutWords(t *testing.T) {
	if spans := chunkSpans(" \n\t ", 10, 2); len(spans) != 0 {
		t.Errorf("spans = %v, want none", spans)
	}
}

func TestCheckChunking(t *testing.T) {
	for _, c := range []struct {
		size, overlap int
		ok            bool
	}{{512, 64, true}, {1, 0, true}, {0, 0, false}, {-5, 0, false}, {10, 10, false}, {10, -1, false}, {MaxChunkSize + 1, 0, false}} {
		if err := CheckChunking(c.size, c.overlap); (err == nil) != c.ok {
			t.Errorf("CheckChunking(%d, %d) = %v", c.size, c.overlap, err)
		}
	}
}
