package bot

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
)

// A picture that could not be rendered (Chromium killed, restarting) must not leave the thread
// without a way forward: the notice says the drawing is saved and how to get the picture again.
// The renderer's own words are for the log.
func TestRenderFailureSaysHowToRetry(t *testing.T) {
	h := newHarness(t, Options{}, fakeRenderer{err: errors.New("render: chromium exited during the render")})
	var logs strings.Builder
	h.bot.log = slog.New(slog.NewTextHandler(&logs, nil))
	h.say(thread, "draw")
	h.rec.wait(t, 1)
	r := h.rec.last(thread)
	for _, want := range []string{"could not render the picture. The diagram is saved", `"export png"`, "again"} {
		if !strings.Contains(r.Text, want) {
			t.Errorf("reply text %q does not say %q", r.Text, want)
		}
	}
	if strings.Contains(r.Text, "chromium") {
		t.Errorf("reply text %q carries the renderer's error", r.Text)
	}
	if l := logs.String(); !strings.Contains(l, "level=ERROR") || !strings.Contains(l, "chromium exited during the render") {
		t.Errorf("the log lacks the renderer's error:\n%s", l)
	}
	if r.Image != nil || len(r.Files) != 1 {
		t.Errorf("reply has image %v and %d files; want no image and the .excalidraw file", r.Image != nil, len(r.Files))
	}
}
