// Package fts5 compares jarvis's memory index with SQLite FTS5 (the
// porter and unicode61 tokenizers, BM25 ranking) on the same texts: the
// time to build the index, the size of the file it leaves, and search
// latency. It is a module of its own so that the SQLite driver it needs
// (mattn/go-sqlite3, cgo, built with the sqlite_fts5 tag) never becomes a
// dependency of jarvis; `make bench` runs it.
package fts5
