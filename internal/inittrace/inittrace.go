// Package inittrace tells tests what each package of their test binary
// does at init, from GODEBUG=inittrace. Every jarvis command pays the init
// of every package the binary links before main runs, so the tests that
// keep start-up work out of init read it here.
package inittrace

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"sync"
)

// Package is one package's line of the trace.
type Package struct {
	Bytes, Allocs int
}

// Packages returns the packages of the running test binary that have
// init work, by import path, running the binary again (with no test) to
// read its trace. A package without an entry does nothing at init.
var Packages = sync.OnceValues(func() (map[string]Package, error) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, err
	}
	pkgs := map[string]Package{}
	for _, m := range regexp.MustCompile(`(?m)^init (\S+) @\S+ ms, \S+ ms clock, (\d+) bytes, (\d+) allocs`).FindAllSubmatch(out, -1) {
		b, _ := strconv.Atoi(string(m[2]))
		a, _ := strconv.Atoi(string(m[3]))
		pkgs[string(m[1])] = Package{Bytes: b, Allocs: a}
	}
	return pkgs, nil
})
