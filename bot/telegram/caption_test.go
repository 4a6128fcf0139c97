package telegram

import (
	"strings"
	"testing"

	"github.com/excalibot/excalibot/bot"
)

func TestCaptionOf(t *testing.T) {
	alt := "Flowchart: Browser → API → Postgres. 3 boxes and 2 arrows."
	first := "Flowchart: Browser → API → Postgres."
	// long is n characters of words, ending in a letter.
	long := func(n int) string { return strings.Repeat("word ", n/5+1)[:n-1] + "x" }
	tests := []struct {
		name, text, alt       string
		wantCaption, wantRest string
	}{
		{"summary then alt", "Added a cache.", alt, "Added a cache.\n\n" + alt, ""},
		{"no alt", "Added a cache.", "", "Added a cache.", ""},
		{"no summary: the alt alone", "", alt, alt, ""},
		{"only the whole sentences that fit", long(1024 - 2 - units(first)), alt, long(1024-2-units(first)) + "\n\n" + first, ""},
		{"no room for a sentence: the summary alone", long(1020), alt, long(1020), ""},
		{"emoji count twice", strings.Repeat("😀", 500), alt, strings.Repeat("😀", 500), ""},
	}
	// A summary longer than a caption goes on in the next message, and the alt text at its end.
	caption, rest := captionOf(long(1500), alt)
	if more, ok := strings.CutSuffix(rest, "\n\n"+alt); !ok || caption+" "+more != long(1500) || units(caption) > maxCaption {
		t.Errorf("long summary: caption of %d units, rest %q; want the summary cut at a space, then the alt text", units(caption), clipped(rest))
	}
	for _, tc := range tests {
		caption, rest := captionOf(tc.text, tc.alt)
		if caption != tc.wantCaption || rest != tc.wantRest {
			t.Errorf("%s:\n got caption %q\n rest %q\nwant caption %q\n rest %q", tc.name, clipped(caption), rest, clipped(tc.wantCaption), tc.wantRest)
		}
		if n := units(caption); n > maxCaption {
			t.Errorf("%s: caption of %d UTF-16 units, more than %d", tc.name, n, maxCaption)
		}
	}
}

// TestCaptionLongAlt: without a summary, an alt text longer than a caption keeps its whole leading
// sentences (here two of 385 characters, not the third), or, one sentence alone, its first words.
func TestCaptionLongAlt(t *testing.T) {
	sentence := "Boxes " + strings.Repeat("and more boxes ", 25) + "end."
	caption, _ := captionOf("", sentence+" "+sentence+" "+sentence)
	if caption != sentence+" "+sentence {
		t.Errorf("three long sentences: got %d units %q…, want the first two", units(caption), clipped(caption))
	}
	one := strings.Repeat("box, ", 300) + "end."
	caption, _ = captionOf("", one)
	if n := units(caption); n > maxCaption || n < maxCaption-10 || !strings.HasSuffix(caption, "…") || !strings.HasPrefix(one, strings.TrimSuffix(caption, "…")) {
		t.Errorf("one long sentence: got %d units ending %q, want its first words up to the limit, then …", n, caption[max(0, len(caption)-20):])
	}
}

func clipped(s string) string {
	if len(s) > 60 {
		return s[:30] + "…" + s[len(s)-30:]
	}
	return s
}

// TestPictureCaptionAndNames: through the fake, the picture's caption carries the summary and the
// alt text, and the picture and files keep the names the core gave them (a picture without one is
// named after the diagram); an exported picture, sent as a file, has the alt text as its caption.
func TestPictureCaptionAndNames(t *testing.T) {
	a, fake, _ := sendOnly(t)
	key := bot.ThreadKey{Platform: Platform, Channel: "-1001", Thread: "0:1"}
	alt := "Flowchart: Build → Test → Deploy. 3 boxes and 2 arrows."
	err := a.Send(t.Context(), key, bot.Reply{
		Text:  "Added a deploy step.",
		Alt:   alt,
		Title: "Deploy pipeline",
		Image: &bot.File{Name: "deploy-pipeline-r3.png", MIME: "image/png", Content: smallPNG()},
		Files: []bot.File{{Name: "deploy-pipeline-r3.excalidraw", MIME: "application/json", Content: []byte("{}")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	// Too big for a photo: sent as a document, with the same caption; no name: the diagram's.
	err = a.Send(t.Context(), key, bot.Reply{Alt: alt, Title: "Deploy pipeline", Image: &bot.File{Content: pngHeader(9000, 2000)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Send(t.Context(), key, bot.Reply{Text: "No title.", Image: &bot.File{Content: smallPNG()}}); err != nil {
		t.Fatal(err)
	}
	// An export: the picture is a file, and the alt text is its caption.
	err = a.Send(t.Context(), key, bot.Reply{Text: "Revision 3 as svg.", Alt: alt, Title: "Deploy pipeline",
		Files: []bot.File{{Name: "deploy-pipeline-r3.svg", MIME: "image/svg+xml", Content: []byte("<svg/>")}}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"photo:Added a deploy step.  " + alt + ":deploy-pipeline-r3.png",
		"document::deploy-pipeline-r3.excalidraw",
		"document:" + alt + ":deploy-pipeline.png",
		"photo:No title.:diagram.png",
		"text:Revision 3 as svg.:",
		"document:" + alt + ":deploy-pipeline-r3.svg",
	}
	got := summary(fake.BotMessages(group.ID))
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("messages\n got %q\nwant %q", got, want)
	}
}

// TestNamedCaptionSaysTheTitleOnce: an answer that names its diagram by title does not name it
// again in the alt text's heading that follows in the caption, and quotes it one way.
func TestNamedCaptionSaysTheTitleOnce(t *testing.T) {
	tests := []struct {
		name string
		n    naming
		r    bot.Reply
		want string
	}{
		{"by title", naming{byTitle: true},
			bot.Reply{Text: "Undone: back to revision 2.", Title: "Deploy pipeline", Alt: "Flowchart “Deploy pipeline” with 3 boxes: Build, Test, Deploy."},
			"‘Deploy pipeline’ — Undone: back to revision 2.\n\nFlowchart with 3 boxes: Build, Test, Deploy."},
		{"two-word kind", naming{byTitle: true},
			bot.Reply{Text: "Undone.", Title: "Login", Alt: "Sequence diagram “Login” with 2 participants."},
			"‘Login’ — Undone.\n\nSequence diagram with 2 participants."},
		{"the title only further on stays", naming{byTitle: true},
			bot.Reply{Text: "Undone.", Title: "API", Alt: "Flowchart with 2 boxes: “API”, DB."},
			"‘API’ — Undone.\n\nFlowchart with 2 boxes: “API”, DB."},
		{"not named: the alt text whole", naming{},
			bot.Reply{Text: "Added a box.", Title: "Deploy pipeline", Alt: "Flowchart “Deploy pipeline” with 3 boxes."},
			"Added a box.\n\nFlowchart “Deploy pipeline” with 3 boxes."},
		{"named by request: the alt text whole", naming{literal: "Your last diagram"},
			bot.Reply{Text: "Undone.", Alt: "Flowchart with 3 boxes."},
			"Your last diagram — Undone.\n\nFlowchart with 3 boxes."},
	}
	for _, tc := range tests {
		r := tc.n.apply(tc.r)
		if got, _ := captionOf(r.Text, r.Alt); got != tc.want {
			t.Errorf("%s: caption\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}
