package tui

import "github.com/jarvis-workbench/jarvis/ui/tui/look"

// explain is err's message with its advice in the workbench's words.
func explain(err error) string { return look.Explain(err) }

// say renders advice in the workbench's words.
func say(s string) string { return look.Say(s) }

// groupInt writes n with its thousands grouped.
func groupInt(n int) string { return look.GroupInt(n) }
