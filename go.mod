module github.com/jarvis-workbench/jarvis

go 1.26.8

require (
	github.com/Knetic/govaluate v3.0.0+incompatible
	github.com/google/jsonschema-go v0.4.3
	github.com/spf13/cobra v1.10.2
	golang.org/x/term v0.48.0
)

require (
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
	golang.org/x/sys v0.50.0 // indirect
)
