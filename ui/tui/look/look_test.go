package look

import "testing"

// Paging keys move a page or half of one, never nothing, and only they do.
func TestPageStep(t *testing.T) {
	for _, tc := range []struct {
		key        string
		page, want int
		ok         bool
	}{
		{"pgup", 10, -10, true}, {"pgdown", 10, 10, true},
		{"ctrl+u", 10, -5, true}, {"ctrl+d", 10, 5, true},
		{"ctrl+d", 1, 1, true}, {"pgdown", 0, 1, true},
		{"down", 10, 0, false}, {"home", 10, 0, false},
	} {
		if got, ok := PageStep(tc.key, tc.page); got != tc.want || ok != tc.ok {
			t.Errorf("PageStep(%q, %d) = %d, %v; want %d, %v", tc.key, tc.page, got, ok, tc.want, tc.ok)
		}
	}
}
