package scene

import (
	"slices"
	"testing"
)

func TestKeyBetween(t *testing.T) {
	// Expected values are worked out by hand from the fractional-indexing algorithm that Excalidraw
	// uses (base-62 digits); most of them are also rows of that package's own test table.
	tests := []struct{ a, b, want string }{
		{"", "", "a0"},
		{"", "a0", "Zz"},
		{"", "Zz", "Zy"},
		{"a0", "", "a1"},
		{"a1", "", "a2"},
		{"a0", "a1", "a0V"},
		{"a1", "a2", "a1V"},
		{"a0V", "a1", "a0l"},
		{"Zz", "a0", "ZzV"},
		{"Zz", "a1", "a0"},
		{"", "Y00", "Xzzz"},
		{"bzz", "", "c000"},
		{"a0", "a0V", "a0G"},
		{"a0", "a0G", "a08"},
		{"b125", "b129", "b127"},
		{"a0", "a1V", "a1"},
		{"Zz", "a01", "a0"},
		{"", "a0V", "a0"},
		{"", "b999", "b99"},
		{"aZ", "", "aa"},
		{"az", "", "b00"},
		{"a9", "", "aA"},
		{"", "A00000000000000000000000000V", "A00000000000000000000000000G"},
		{"zzzzzzzzzzzzzzzzzzzzzzzzzzy", "", "zzzzzzzzzzzzzzzzzzzzzzzzzzz"},
		{"zzzzzzzzzzzzzzzzzzzzzzzzzzz", "", "zzzzzzzzzzzzzzzzzzzzzzzzzzzV"},
	}
	for _, tt := range tests {
		got, err := keyBetween(tt.a, tt.b)
		if err != nil {
			t.Errorf("keyBetween(%q, %q): %v", tt.a, tt.b, err)
			continue
		}
		if got != tt.want {
			t.Errorf("keyBetween(%q, %q) = %q, want %q", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestKeyBetweenErrors(t *testing.T) {
	tests := []struct{ a, b string }{
		{"a0", "a0"},                        // not increasing
		{"a1", "a0"},                        // reversed
		{"a00", ""},                         // trailing zero
		{"a0", "a10"},                       // a10: integer part a1, fraction "0"
		{"", "A00000000000000000000000000"}, // the smallest key is reserved
		{"a", ""},                           // shorter than its integer part
		{"a#", ""},                          // not base 62
		{"0a", ""},                          // bad head
	}
	for _, tt := range tests {
		if got, err := keyBetween(tt.a, tt.b); err == nil {
			t.Errorf("keyBetween(%q, %q) = %q, want an error", tt.a, tt.b, got)
		}
	}
}

func TestKeysBetween(t *testing.T) {
	tests := []struct {
		a, b string
		n    int
		want []string
	}{
		{"", "", 5, []string{"a0", "a1", "a2", "a3", "a4"}},
		{"a4", "", 3, []string{"a5", "a6", "a7"}},
		{"", "a0", 3, []string{"Zx", "Zy", "Zz"}},
		{"a0", "a2", 3, []string{"a0V", "a1", "a1V"}},
	}
	for _, tt := range tests {
		got, err := keysBetween(tt.a, tt.b, tt.n)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("keysBetween(%q, %q, %d) = %v, %v; want %v", tt.a, tt.b, tt.n, got, err, tt.want)
		}
	}
	// Many keys stay valid and strictly increasing.
	keys, err := keysBetween("a0", "a1", 1000)
	if err != nil {
		t.Fatal(err)
	}
	assertIncreasing(t, append(append([]string{"a0"}, keys...), "a1"))
}

func assertIncreasing(t *testing.T, keys []string) {
	t.Helper()
	for i, k := range keys {
		if err := validateKey(k); err != nil {
			t.Fatalf("key %d: %v", i, err)
		}
		if i > 0 && keys[i-1] >= k {
			t.Fatalf("keys[%d]=%q not above keys[%d]=%q", i, k, i-1, keys[i-1])
		}
	}
}

func TestSyncIndices(t *testing.T) {
	tests := []struct {
		name    string
		in      []string
		want    []string
		changed []int
	}{
		{"valid", []string{"a0", "a1", "a2"}, []string{"a0", "a1", "a2"}, nil},
		{"all missing", []string{"", "", ""}, []string{"a0", "a1", "a2"}, []int{0, 1, 2}},
		{"a10 is invalid", []string{"a0", "a10", "a2"}, []string{"a0", "a1", "a2"}, []int{1}},
		{"duplicate", []string{"a0", "a1", "a1", "a2"}, []string{"a0", "a1", "a1V", "a2"}, []int{2}},
		{"one out of order", []string{"a0", "a5", "a2", "a3"}, []string{"a0", "a1", "a2", "a3"}, []int{1}},
		{"trailing missing", []string{"a0", "a1", ""}, []string{"a0", "a1", "a2"}, []int{2}},
		{"leading missing", []string{"", "a1"}, []string{"a0", "a1"}, []int{0}},
		{"garbage", []string{"x", "#", "a0"}, []string{"Zy", "Zz", "a0"}, []int{0, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			idx := slices.Clone(tt.in)
			changed := syncIndices(idx)
			if !slices.Equal(idx, tt.want) {
				t.Errorf("got %v, want %v", idx, tt.want)
			}
			if !slices.Equal(changed, tt.changed) {
				t.Errorf("changed %v, want %v", changed, tt.changed)
			}
			assertIncreasing(t, idx)
		})
	}
}

func FuzzSyncIndices(f *testing.F) {
	f.Add("a0,a1,a2")
	f.Add("a0,a10,,b00,Zz")
	f.Fuzz(func(t *testing.T, s string) {
		idx := splitComma(s)
		syncIndices(idx)
		assertIncreasing(t, idx)
	})
}

func splitComma(s string) []string {
	var out []string
	cur := ""
	for i := 0; i < len(s); i++ {
		if s[i] == ',' {
			out = append(out, cur)
			cur = ""
			continue
		}
		cur += s[i : i+1]
	}
	return append(out, cur)
}
