package tools

import (
	"strings"
	"testing"
)

func TestCheckName(t *testing.T) {
	for name, ok := range map[string]bool{
		"lookup":                      true,
		"a":                           true,
		"get-weather_v2":              true,
		"a" + strings.Repeat("b", 63): true,
		"a" + strings.Repeat("b", 64): false, // 65 characters
		"":                            false,
		"2fast":                       false,
		"_private":                    false,
		"two words":                   false,
		"fs__read":                    false,
		"ünïcode":                     false,
		"semi;colon":                  false,
	} {
		if err := CheckName(name); (err == nil) != ok {
			t.Errorf("CheckName(%q) = %v, want ok %v", name, err, ok)
		}
	}
}
