// Package fts5 compares jarvis's memory index with SQLite FTS5 (the
// porter and unicode61 tokenizers, BM25 ranking) on the same texts: the
// time to build the index, the size of the file it leaves, and search
// latency. It is a module of its own so that the SQLite driver it needs
// (mattn/go-sqlite3, cgo, built with the sqlite_fts5 tag) never becomes a
// dependency of jarvis; `make bench` runs it:
//
//	cd bench/fts5 && go test -tags sqlite_fts5 -run '^$' -bench BenchmarkIndex -benchtime 1x .
//	cd bench/fts5 && go test -tags sqlite_fts5 -run '^$' -bench BenchmarkSearch .
//
// The corpora are the Go distribution's own sources: "std" (the standard
// library, about 12,000 chunks of the default size) and "all" (every .go
// file, about 120,000 chunks of 128 words). A third, "1m", repeats "all"
// under distinct paths until it makes about a million chunks; it runs only
// when JARVIS_BENCH_1M=1 is set, since each side takes minutes to build
// it and a few hundred megabytes of disk. BenchmarkSearch reports the time
// its index took to build and the size of its file as well, so that
//
//	cd bench/fts5 && JARVIS_BENCH_1M=1 go test -tags sqlite_fts5 -run '^$' -bench 'BenchmarkSearch/1m' -benchtime 2000x -timeout 60m .
//
// measures everything at a million chunks with one build per side.
package fts5
