package bot

import (
	"errors"
	"strings"
	"testing"
)

// A picture that could not be rendered (Chromium killed, restarting) must not leave the thread
// without a way forward: the notice says the drawing is saved and how to get the picture again.
func TestRenderFailureSaysHowToRetry(t *testing.T) {
	h := newHarness(t, Options{}, fakeRenderer{err: errors.New("render: chromium exited during the render")})
	h.say(thread, "draw")
	h.rec.wait(t, 1)
	r := h.rec.last(thread)
	for _, want := range []string{"could not render the picture (render: chromium exited during the render)", "saved", `"export png"`, "again"} {
		if !strings.Contains(r.Text, want) {
			t.Errorf("reply text %q does not say %q", r.Text, want)
		}
	}
	if r.Image != nil || len(r.Files) != 1 {
		t.Errorf("reply has image %v and %d files; want no image and the .excalidraw file", r.Image != nil, len(r.Files))
	}
}
