package memory

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kljensen/snowball/english"

	"github.com/jarvis-workbench/jarvis/store"
)

// corpus generates English-like text: words drawn from a Zipf distribution
// (s = 1.07) over a fixed vocabulary, so that term frequencies look like a
// real corpus, in sentences of 8 to 20 words. With stopWords, the commonest
// ranks are the English stop words, as in English text, where they make up
// about 40% of the words; the rest of the vocabulary is pronounceable
// made-up words.
type corpus struct {
	rng   *rand.Rand
	zipf  *rand.Zipf
	vocab []string
}

// englishStopWords are the Snowball list's stop words, the commonest first
// (roughly).
var englishStopWords = strings.Fields(`the of and to a in is it you that he was for on are with as i his they
	be at this have from or had by but not what all were we when your can which their there
	do if will up other about out many then them these so some her would him into has more two
	time no way could my than been who its now did down only over any after our she such me
	through same most very should those each few both off once again under further here why how
	where while own just because against between until during before above below being having
	doing does am an yourself yourselves themselves himself herself itself myself ourselves ours
	hers theirs yours whom too nor don s t`)

func newCorpus(seed int64, vocabSize int, stopWords bool) *corpus {
	rng := rand.New(rand.NewSource(seed))
	onsets := []string{"b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "br", "cr", "st", "tr", "pl", "gr", "sh", "th", "ch"}
	vowels := []string{"a", "e", "i", "o", "u", "ai", "ea", "ou", "io"}
	codas := []string{"", "n", "r", "s", "t", "l", "m", "nd", "st", "ck", "ng"}
	seen := map[string]bool{}
	vocab := make([]string, 0, vocabSize)
	if stopWords {
		for _, w := range englishStopWords {
			seen[w] = true
			vocab = append(vocab, w)
		}
	}
	for len(vocab) < vocabSize {
		var sb strings.Builder
		for range 1 + rng.Intn(3) {
			sb.WriteString(onsets[rng.Intn(len(onsets))])
			sb.WriteString(vowels[rng.Intn(len(vowels))])
			sb.WriteString(codas[rng.Intn(len(codas))])
		}
		w := sb.String()
		if !seen[w] && !english.IsStopWord(w) {
			seen[w] = true
			vocab = append(vocab, w)
		}
	}
	return &corpus{rng: rng, zipf: rand.NewZipf(rng, 1.07, 2, uint64(vocabSize-1)), vocab: vocab}
}

func (c *corpus) word() string { return c.vocab[c.zipf.Uint64()] }

// text returns about n words in sentences.
func (c *corpus) text(n int) string {
	var sb strings.Builder
	for i := 0; i < n; {
		k := min(8+c.rng.Intn(13), n-i)
		for j := range k {
			w := c.word()
			if j == 0 {
				w = strings.ToUpper(w[:1]) + w[1:]
			}
			sb.WriteString(w)
			if j < k-1 {
				sb.WriteByte(' ')
			}
		}
		sb.WriteString(". ")
		i += k
	}
	return sb.String()
}

func openBench(b *testing.B) *Store {
	db, err := store.Open(filepath.Join(b.TempDir(), "bench.db"), "bench")
	if err != nil {
		b.Fatal(err)
	}
	if err := db.KeepOpen(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	s, err := New(db, Options{})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// benchChunks is the corpus size of the search benchmarks.
var benchChunks = 100_000

// benchCorpus is a search benchmark's memory, built once per test binary
// run: the testing package calls a benchmark function several times.
type benchCorpus struct {
	once sync.Once
	s    *Store
	c    *corpus
	err  error
}

var englishCorpus, stressCorpus benchCorpus

func (bc *benchCorpus) build(b *testing.B, stopWords bool) (*Store, *corpus) {
	bc.once.Do(func() { bc.s, bc.c, bc.err = buildCorpus(stopWords) })
	if bc.err != nil {
		b.Fatal(bc.err)
	}
	return bc.s, bc.c
}

func buildCorpus(stopWords bool) (*Store, *corpus, error) {
	dir, err := os.MkdirTemp("", "jarvis-memory-bench-")
	if err != nil {
		return nil, nil, err
	}
	cleanups = append(cleanups, func() { os.RemoveAll(dir) })
	db, err := store.Open(filepath.Join(dir, "bench.db"), "bench")
	if err != nil {
		return nil, nil, err
	}
	cleanups = append(cleanups, func() { db.Close() })
	if err := db.KeepOpen(); err != nil {
		return nil, nil, err
	}
	s, err := New(db, Options{})
	if err != nil {
		return nil, nil, err
	}
	const words, batch = 80, 2000
	c := newCorpus(1, 30_000, stopWords)
	var elapsed time.Duration
	total := 0
	for i := 0; i < benchChunks; i += batch {
		ins := make([]Input, min(batch, benchChunks-i))
		for j := range ins {
			ins[j] = Input{Content: c.text(words), Source: fmt.Sprintf("doc-%d", i+j)}
			total += len(ins[j].Content)
		}
		start := time.Now()
		if _, err := s.AddBatch(context.Background(), ins); err != nil {
			return nil, nil, err
		}
		elapsed += time.Since(start)
	}
	fmt.Fprintf(os.Stderr, "search corpus: %d chunks of %d words (%.1f MB) indexed in %s (%.1f MB/s)\n",
		benchChunks, words, float64(total)/1e6, elapsed.Round(time.Millisecond), float64(total)/1e6/elapsed.Seconds())
	return s, c, nil
}

// BenchmarkSearch measures memory search over 100,000 chunks of about 80
// words of English-like text (one chunk per document), with queries of 1
// to 4 words drawn from the corpus's own word distribution (stop words
// included, as people type them), and reports latency percentiles.
func BenchmarkSearch(b *testing.B) {
	s, c := englishCorpus.build(b, true)
	benchQueries(b, s, c)
}

// BenchmarkSearchStress is BenchmarkSearch on a corpus without stop words:
// its commonest words, which the queries draw often, are in nearly every
// chunk, so many queries score 100,000 postings or more.
func BenchmarkSearchStress(b *testing.B) {
	s, c := stressCorpus.build(b, false)
	benchQueries(b, s, c)
}

func benchQueries(b *testing.B, s *Store, c *corpus) {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(7))
	c = &corpus{rng: rng, zipf: rand.NewZipf(rng, 1.07, 2, uint64(len(c.vocab)-1)), vocab: c.vocab}
	queries := make([]string, 0, 1000)
	for len(queries) < cap(queries) {
		q := make([]string, 1+c.rng.Intn(4))
		for j := range q {
			q[j] = c.word()
		}
		if len(s.an.query(strings.Join(q, " ")).terms) > 0 { // not only stop words
			queries = append(queries, strings.Join(q, " "))
		}
	}
	for _, q := range queries[:50] { // warm the page cache and the norms
		if _, err := s.Search(ctx, q, 5); err != nil {
			b.Fatal(err)
		}
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q := queries[i%len(queries)]
		t0 := time.Now()
		r, err := s.Search(ctx, q, 5)
		lat = append(lat, time.Since(t0))
		if err != nil || len(r.Hits) == 0 {
			b.Fatalf("search %q: %v, %d hits", q, err, len(r.Hits))
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
	b.ReportMetric(ms(lat[len(lat)*95/100]), "p95-ms")
	b.ReportMetric(ms(lat[len(lat)*99/100]), "p99-ms")
}

// BenchmarkIndex measures indexing throughput (MB/s of text) for
// documents of about 600 words (two chunks each) stored 200 per
// transaction, as `jarvis memory index` does with a tree of files.
func BenchmarkIndex(b *testing.B) {
	const docs, words, batch = 2000, 600, 200
	c := newCorpus(2, 30_000, true)
	texts := make([]string, docs)
	total := 0
	for i := range texts {
		texts[i] = c.text(words)
		total += len(texts[i])
	}
	b.SetBytes(int64(total))
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		s := openBench(b)
		b.StartTimer()
		for j := 0; j < docs; j += batch {
			ins := make([]Input, batch)
			for k := range ins {
				ins[k] = Input{Content: texts[j+k], Source: fmt.Sprintf("file-%d", j+k), Replace: true}
			}
			if _, err := s.AddBatch(ctx, ins); err != nil {
				b.Fatal(err)
			}
		}
	}
}
