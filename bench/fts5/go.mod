module github.com/jarvis-workbench/jarvis/bench/fts5

go 1.26.8

require (
	github.com/jarvis-workbench/jarvis v0.0.0
	github.com/mattn/go-sqlite3 v1.14.53
)

require (
	github.com/asdine/storm/v3 v3.2.1 // indirect
	github.com/kljensen/snowball v0.10.0 // indirect
	go.etcd.io/bbolt v1.4.3 // indirect
	golang.org/x/sys v0.50.0 // indirect
	golang.org/x/text v0.44.0 // indirect
)

replace github.com/jarvis-workbench/jarvis => ../..
