package slack

import (
	"strings"
	"testing"

	"github.com/excalibot/excalibot/bot"
)

// Every picture a reply posts carries the reply's alt text, naming what the diagram shows; the
// .excalidraw file, which is no picture, carries none; every file keeps the name the core gave it.
func TestPicturesCarryAltText(t *testing.T) {
	svg := []byte(`<svg xmlns="http://www.w3.org/2000/svg"><title>Deploy pipeline</title></svg>`)
	alt := "Flowchart Deploy pipeline: Build leads to Test, Test to Stage, Stage to Release."
	for _, tc := range []struct {
		name  string
		reply bot.Reply
		want  map[string]string // file name → alt text
	}{
		{"picture and exports", bot.Reply{Text: "Drew it.", Alt: alt,
			Image: &bot.File{Name: "deploy-pipeline-r3.png", MIME: "image/png", Content: pngBytes},
			Files: []bot.File{{Name: "deploy-pipeline-r3.excalidraw", MIME: "application/json", Content: sceneJSON},
				{Name: "deploy-pipeline-r3.svg", MIME: "image/svg+xml", Content: svg}}},
			map[string]string{"deploy-pipeline-r3.png": alt, "deploy-pipeline-r3.excalidraw": "", "deploy-pipeline-r3.svg": alt}},
		{"with links", bot.Reply{Text: "Drew it.", Alt: alt, EditURL: "https://excalibot.example/edit/x",
			Image: &bot.File{Name: "deploy-pipeline-r4.png", MIME: "image/png", Content: pngBytes}},
			map[string]string{"deploy-pipeline-r4.png": alt}},
		{"an SVG known by its name", bot.Reply{Alt: alt,
			Files: []bot.File{{Name: "deploy-pipeline-r5.svg", Content: svg}}},
			map[string]string{"deploy-pipeline-r5.svg": alt}},
		{"no description: the title says what it is", bot.Reply{Title: "Deploy pipeline",
			Image: &bot.File{Name: "deploy-pipeline-r6.png", MIME: "image/png", Content: pngBytes}},
			map[string]string{"deploy-pipeline-r6.png": "Diagram: Deploy pipeline"}},
		{"longer than Slack takes", bot.Reply{Alt: strings.Repeat("Box A leads to box B. ", 100),
			Image: &bot.File{Name: "long-r1.png", MIME: "image/png", Content: pngBytes}},
			map[string]string{"long-r1.png": truncate(strings.Repeat("Box A leads to box B. ", 100), maxAltText)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := start(t, ModeSocket, newRecorder(), nil)
			key := bot.ThreadKey{Platform: Platform, Workspace: "T0FAKE", Channel: "D1"}
			must(t, e.a.Send(e.ctx, key, tc.reply))
			got := map[string]string{}
			for _, m := range e.fake.Thread("D1", "") {
				for _, f := range m.Files {
					got[f.Name] = f.Alt
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("files posted = %v, want %v", got, tc.want)
			}
			for name, want := range tc.want {
				a, ok := got[name]
				if !ok {
					t.Errorf("no file named %s among %v", name, got)
				}
				if a != want {
					t.Errorf("%s alt text = %q, want %q", name, a, want)
				}
			}
		})
	}
}

func TestIsPicture(t *testing.T) {
	for _, tc := range []struct {
		f    bot.File
		want bool
	}{
		{bot.File{Name: "a.png", MIME: "image/png"}, true},
		{bot.File{Name: "a.svg"}, true},
		{bot.File{Name: "A.PNG"}, true},
		{bot.File{Name: "a.excalidraw", MIME: "application/json"}, false},
		{bot.File{Name: "notes.txt", MIME: "text/plain"}, false},
		{bot.File{Name: "blob", MIME: "image/webp"}, true},
	} {
		if got := isPicture(tc.f); got != tc.want {
			t.Errorf("isPicture(%s, %s) = %v, want %v", tc.f.Name, tc.f.MIME, got, tc.want)
		}
	}
}
