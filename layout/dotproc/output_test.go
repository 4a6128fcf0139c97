package dotproc

import (
	"errors"
	"testing"
)

// TestCheckOutput: a corrupted module can answer with NUL bytes or nothing and no error; only
// json is dot's answer.
func TestCheckOutput(t *testing.T) {
	for _, tc := range []struct {
		name   string
		out    []byte
		broken bool
	}{
		{"json", []byte(`{"name": "G", "objects": []}`), false},
		{"nothing", nil, true},
		{"NUL bytes", []byte{0, 0, 0, 0}, true},
		{"cut short", []byte(`{"name": "G", "obj`), true},
	} {
		err := checkOutput(tc.out)
		if got := errors.Is(err, ErrBroken); got != tc.broken {
			t.Errorf("%s: broken %v (%v), want %v", tc.name, got, err, tc.broken)
		}
	}
}
