// Command jarvis is a terminal workbench for local models and their tools.
//
// It is the smallest program the SDK makes: a program that registers tools
// of its own (sdk.Register) before calling jarvis.Main is jarvis with those
// tools.
package main

import "github.com/jarvis-workbench/jarvis/sdk/jarvis"

func main() { jarvis.Main() }
