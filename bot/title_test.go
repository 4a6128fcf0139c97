package bot

import (
	"context"
	"strings"
	"testing"
)

// titledScene is a diagram headed "Deploy pipeline": a larger text above two boxes.
func titledScene() []byte {
	return []byte(`{"type":"excalidraw","version":2,"elements":[
		{"id":"h","type":"text","x":0,"y":-80,"width":300,"height":45,"fontSize":36,"text":"Deploy pipeline","originalText":"Deploy pipeline"},
		{"id":"a","type":"rectangle","x":0,"y":0,"width":160,"height":80},
		{"id":"b","type":"rectangle","x":240,"y":0,"width":160,"height":80}]}`)
}

// TestRepliesNameTheirDiagram: every answer about a diagram carries its title, so a platform can
// say which diagram it answered about: pictures, commands without one, exports; a picture of an
// old revision keeps the current diagram's title.
func TestRepliesNameTheirDiagram(t *testing.T) {
	h := newHarness(t, Options{UserRatePerMinute: noRateLimit, ChatRatePerMinute: noRateLimit}, nil)
	h.say(thread, "", Attachment{Name: "deploy.excalidraw", Fetch: fetchOf(titledScene())})
	h.rec.wait(t, 1)
	for _, c := range []struct {
		say      string
		wantFile string // the first file's name, "" for none
	}{
		{"", ""}, // the import's own reply, already in
		{"history", ""},
		{"describe", ""},
		{"export svg", "deploy-pipeline-r1.svg"},
		{"draw a cache", "deploy-pipeline-r2.excalidraw"},
		{"show 1", "deploy-pipeline-r1.excalidraw"},
		{"undo", "deploy-pipeline-r1.excalidraw"},
	} {
		if c.say != "" {
			h.say(thread, c.say)
			h.rec.wait(t, 1)
		}
		r := h.rec.last(thread)
		if r.Title != "Deploy pipeline" {
			t.Errorf("%q: reply title %q, want %q (reply %q)", c.say, r.Title, "Deploy pipeline", r.Text)
		}
		if c.wantFile != "" && (len(r.Files) == 0 || r.Files[0].Name != c.wantFile) {
			t.Errorf("%q: files %+v, want %s first", c.say, names(r.Files), c.wantFile)
		}
		if strings.HasPrefix(c.say, "export") && !strings.Contains(r.Alt, "Deploy pipeline") {
			t.Errorf("%q: alt text %q, want it to name the diagram", c.say, r.Alt)
		}
	}
}

func names(fs []File) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Name)
	}
	return out
}

// fetchOf serves data as an attachment's content.
func fetchOf(data []byte) func(context.Context, int64) ([]byte, error) {
	return func(context.Context, int64) ([]byte, error) { return data, nil }
}
