// Command initprobe is the smallest program that uses package sdk: the
// benchmark of what importing sdk costs at start runs it with
// GODEBUG=inittrace=1.
package main

import (
	"fmt"

	"github.com/jarvis-workbench/jarvis/sdk"
)

func main() { fmt.Println(sdk.Options{}.Model) }
