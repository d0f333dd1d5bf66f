// Command jarvis is a terminal workbench for local models and their tools.
//
// It is the smallest program package sdk makes: a program that registers
// tools of its own before calling sdk.Main is jarvis with those tools.
package main

import "github.com/jarvis-workbench/jarvis/sdk"

func main() { sdk.Main() }
