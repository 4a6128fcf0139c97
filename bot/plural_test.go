package bot

import (
	"strings"
	"testing"
)

// TestRepliesCountInWords: a count in a reply takes the noun's form for it, one or many.
func TestRepliesCountInWords(t *testing.T) {
	two, err := testScene(t, box("a", 0, "AB")).Encode()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		opt  Options
		want string
	}{
		{"one element allowed", Options{MaxElements: 1, MaxTextLength: 10}, "the diagram has 2 elements; I work on diagrams of up to 1 element."},
		{"one character allowed", Options{MaxElements: 10, MaxTextLength: 1}, "is 2 characters long; I take texts of up to 1 character."},
	}
	for _, tt := range tests {
		err := (&Bot{opt: tt.opt.withDefaults()}).checkImport("two.excalidraw", two)
		if got, _ := Failure("importing", err); !strings.Contains(got, tt.want) {
			t.Errorf("%s: checkImport says %q, want %q in it", tt.name, got, tt.want)
		}
	}

	h := newHarness(t, Options{MaxMessageLength: 1}, nil)
	if r := h.command(t, thread, "go"); !strings.Contains(r.Text, "That message is 2 characters long; I take at most 1 character.") {
		t.Errorf("long message reply = %q", r.Text)
	}
}
