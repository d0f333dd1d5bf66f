package memory

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// TestPrunedSearchIsExact: the windowed, pruned search ranks as scoring
// every chunk does, computed here from the texts alone, for queries of
// common and rare words, with forgotten texts still in the segments.
func TestPrunedSearchIsExact(t *testing.T) {
	s, _ := openTest(t, Options{ChunkSize: 16, ChunkOverlap: 0})
	c := newCorpus(11, 2000, true)
	texts := map[string]string{}
	var ins []Input
	for i := range 4*scoreWindow + 100 { // several score windows
		ins = append(ins, Input{Content: c.text(12), Source: fmt.Sprint("d", i)})
	}
	for i := 0; i < len(ins); i += 2000 {
		if _, err := s.AddBatch(ctx, ins[i:min(i+2000, len(ins))]); err != nil {
			t.Fatal(err)
		}
	}
	var forget []string
	for i := 0; i < len(ins); i += 7 {
		forget = append(forget, ins[i].Source)
	}
	if _, err := s.DeleteSources(ctx, forget); err != nil { // dead postings
		t.Fatal(err)
	}
	docs, err := s.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	bySource := map[string]string{}
	for _, in := range ins {
		bySource[in.Source] = in.Content
	}
	for _, d := range docs {
		texts[d.Source] = bySource[d.Source]
	}
	b := newBrute(s, texts)
	for qi := range 200 {
		words := make([]string, 1+qi%4)
		for i := range words {
			words[i] = c.word()
		}
		q := strings.Join(words, " ")
		for _, k := range []int{5, 50} {
			got := mustSearch(t, s, q, k)
			want := b.search(q, k)
			if len(got) != len(want) {
				t.Fatalf("%q top %d: %d hits, want %d", q, k, len(got), len(want))
			}
			for i := range got {
				if math.Abs(got[i].Lexical-want[i].score) > 1e-5 {
					t.Fatalf("%q top %d hit %d: %s %.6f, want %s %.6f", q, k, i, got[i].Source, got[i].Lexical, want[i].source, want[i].score)
				}
				// Chunks of equal scores may come in either order.
				if got[i].Source != want[i].source && (i == 0 || math.Abs(want[i-1].score-want[i].score) > 1e-5) && (i+1 == len(want) || math.Abs(want[i+1].score-want[i].score) > 1e-5) {
					t.Fatalf("%q top %d hit %d: %s, want %s (%.6f)", q, k, i, got[i].Source, want[i].source, want[i].score)
				}
			}
		}
	}
}

type scored struct {
	source string
	order  int // the text's number: ties go to the older chunk
	score  float64
}

// brute scores every text (one chunk each) by the definition.
type brute struct {
	an    *analyzer
	docs  []bruteDoc
	avgdl float64
}

type bruteDoc struct {
	source string
	order  int
	tf     map[string]uint32
	dl     int
}

// newBrute takes texts named "d<number>", stored in the order of their
// numbers.
func newBrute(s *Store, texts map[string]string) *brute {
	b := &brute{an: s.an}
	total := 0
	for src, text := range texts {
		d := bruteDoc{source: src}
		fmt.Sscanf(src, "d%d", &d.order)
		d.tf, d.dl = s.an.frequencies(text)
		total += d.dl
		b.docs = append(b.docs, d)
	}
	b.avgdl = float64(total) / float64(len(b.docs))
	return b
}

// search returns the k best texts for q, on the 0..1 scale of
// scoreScale.
func (b *brute) search(q string, k int) []scored {
	qt := b.an.query(q)
	n := float64(len(b.docs))
	scale := 0.0
	var out []scored
	weights := map[string]float64{}
	for _, t := range qt.terms {
		df := 0
		for _, d := range b.docs {
			if d.tf[t.text] > 0 {
				df++
			}
		}
		if df == 0 {
			continue
		}
		idf := math.Log(1 + (n-float64(df)+0.5)/(float64(df)+0.5))
		scale += scoreScale(idf, t.weight, n, t.stop)
		weights[t.text] = t.weight * idf * (bm25K1 + 1)
	}
	for _, d := range b.docs {
		score, found := 0.0, 0
		for term, w := range weights {
			if f := float64(d.tf[term]); f > 0 {
				found++
				score += w * f / (f + bm25K1*(1-bm25B+bm25B*float64(d.dl)/b.avgdl))
			}
		}
		if found > 0 && (!qt.stopOnly || found == len(qt.terms)) {
			out = append(out, scored{d.source, d.order, clamp01(score / scale)})
		}
	}
	slices.SortFunc(out, func(a, b scored) int {
		if a.score != b.score {
			if a.score > b.score {
				return -1
			}
			return 1
		}
		return a.order - b.order
	})
	return out[:min(k, len(out))]
}
