package bot

import (
	"testing"

	"github.com/excalibot/excalibot/store"
)

// TestStoredSceneUnreadable: a stored scene that does not decode is a sentence for the user that
// says how to go on, not a crash; a thread without a scene yet is a new drawing.
func TestStoredSceneUnreadable(t *testing.T) {
	_, err := storedScene(&store.Thread{Scene: []byte("{broken")})
	if got, _ := Failure("reading the stored diagram", err); got != "The stored diagram could not be read; say reset to start over." {
		t.Errorf("says %q (err %v), want advice to reset", got, err)
	}
	if sc, err := storedScene(&store.Thread{}); sc != nil || err != nil {
		t.Errorf("no scene yet: %v, %v; want nil, nil", sc, err)
	}
}

func TestProgressLine(t *testing.T) {
	for _, c := range []struct {
		p    Progress
		want string
	}{
		{Progress{Step: 1}, "drawing…"},
		{Progress{Step: 2, Shapes: 1}, "drawing 1 box…"},
		{Progress{Step: 3, Shapes: 4, Arrows: 1}, "drawing 4 boxes and 1 arrow…"},
		{Progress{Step: 5, Arrows: 2}, "drawing 2 arrows…"},
	} {
		if got := progressLine(c.p); got != c.want {
			t.Errorf("progressLine(%+v) = %q, want %q", c.p, got, c.want)
		}
	}
}
