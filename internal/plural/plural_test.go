package plural

import "testing"

func TestCount(t *testing.T) {
	for _, tc := range []struct {
		n         int
		one, many string
		want      string
	}{
		{1, "arrow", "", "1 arrow"},
		{2, "arrow", "", "2 arrows"},
		{0, "arrow", "", "0 arrows"},
		{1, "box", "boxes", "1 box"},
		{5, "box", "boxes", "5 boxes"},
		{-1, "degree", "", "-1 degree"},
		{11, "tool call", "", "11 tool calls"},
		{21, "element", "", "21 elements"},
		{1, "other element", "other elements", "1 other element"},
	} {
		if got := Count(tc.n, tc.one, tc.many); got != tc.want {
			t.Errorf("Count(%d, %q, %q) = %q, want %q", tc.n, tc.one, tc.many, got, tc.want)
		}
	}
}

func TestWord(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{{1, "change"}, {2, "changes"}, {0, "changes"}} {
		if got := Word(tc.n, "change", ""); got != tc.want {
			t.Errorf("Word(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}
