package clip

import "testing"

func TestRunes(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"", 5, ""},
		{"short", 5, "short"},
		{"longer", 5, "long…"},
		{"äöüßé", 3, "äö…"}, // runes, not bytes
		{"abc", 1, "…"},
		{"abc", 0, ""},
		{"abc", -1, ""},
	} {
		if got := Runes(tc.s, tc.n); got != tc.want {
			t.Errorf("Runes(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}
