package agent

import (
	"strings"
	"testing"
)

const twoBoxes = `{"elements":[{"id":"api","type":"rectangle","x":0,"y":0,"width":160,"height":80,"text":"API"},
	{"id":"db","type":"ellipse","x":300,"y":0,"width":160,"height":80,"text":"Postgres"},
	{"id":"a1","type":"arrow","startElementId":"api","endElementId":"db"}]}`

func TestEmptyReplyGetsOneNudge(t *testing.T) {
	f, srv := newFakeOllama(t,
		say("<think>The user wants two boxes.</think>"),
		calls(call("batch_create_elements", twoBoxes)),
		say(""),
	)
	b := newBoard()
	res, err := runOn(t, newAgent(t, srv.URL, Limits{}), b, "API talks to Postgres", Memory{})
	if err != nil {
		t.Fatal(err)
	}
	if got := toolMessages(f.request(1)); len(got) != 0 {
		t.Fatalf("tool messages after an empty reply: %v", got)
	}
	msgs := f.request(1).Messages
	if last := msgs[len(msgs)-1]; last.Role != "user" || last.Content != emptyReplyText {
		t.Errorf("the second request ends with %q, want the empty-reply nudge", last.Content)
	}
	if !res.Finished || len(b.els) != 3 {
		t.Errorf("finished %v, %d elements; want the drawing after the nudge", res.Finished, len(b.els))
	}
	// The model wrote no summary: the reply says what changed in a person's words.
	if want := "Drew API and Postgres; 2 boxes, 1 arrow."; res.Summary != want {
		t.Errorf("summary %q, want %q", res.Summary, want)
	}
}

func TestGarbledCallGetsOneNudge(t *testing.T) {
	f, srv := newFakeOllama(t,
		say(`<tool_call>{"name": "batch_create_elements", "arguments": {"elements": [{"id": "a"`),
		calls(call("batch_create_elements", twoBoxes)),
		calls(call("done", `{"summary":"Drew the API and its database."}`)),
	)
	res, err := runOn(t, newAgent(t, srv.URL, Limits{}), newBoard(), "API talks to Postgres", Memory{})
	if err != nil {
		t.Fatal(err)
	}
	// The cut-off call in tags is answered as a call with an error (it names a tool), not ignored.
	tm := toolMessages(f.request(1))
	if len(tm) != 1 || !strings.Contains(tm[0].Content, "not valid JSON") {
		t.Fatalf("tool messages %+v, want one error naming the broken JSON", tm)
	}
	if res.Summary != "Drew the API and its database." || !res.Finished {
		t.Errorf("summary %q finished %v", res.Summary, res.Finished)
	}

	// Prose that looks like a call but names no tool gets the garbled-call nudge once.
	f2, srv2 := newFakeOllama(t,
		say(`I will call batch_create_elements({elements: [ ... ]}) now.`),
		calls(call("batch_create_elements", twoBoxes)),
		say("Done."),
	)
	if _, err := runOn(t, newAgent(t, srv2.URL, Limits{}), newBoard(), "API talks to Postgres", Memory{}); err != nil {
		t.Fatal(err)
	}
	msgs := f2.request(1).Messages
	if last := msgs[len(msgs)-1]; last.Content != garbledText {
		t.Errorf("second request ends with %q, want the garbled-call nudge", last.Content)
	}
}

func TestNoDrawingIsNeverDone(t *testing.T) {
	f, srv := newFakeOllama(t,
		say("Here is your org chart: CEO at the top, the CTO and CFO below."),
		calls(call("done", `{"summary":"Drew the org chart."}`)),
	)
	res, err := runOn(t, newAgent(t, srv.URL, Limits{}), newBoard(), "org chart: CEO, CTO, CFO", Memory{})
	if err != nil {
		t.Fatal(err)
	}
	msgs := f.request(1).Messages
	if last := msgs[len(msgs)-1]; last.Content != nothingText {
		t.Errorf("second request ends with %q, want the nothing-drawn nudge", last.Content)
	}
	if res.Reason != StopNoChange || res.Finished || res.Corrections != (Corrections{Nudges: 1}) {
		t.Errorf("reason %s finished %v corrections %+v, want no_change, not finished, one nudge", res.Reason, res.Finished, res.Corrections)
	}
	if want := "The model answered without drawing: Drew the org chart."; res.Summary != want {
		t.Errorf("summary %q, want %q", res.Summary, want)
	}
}

func TestQuestionsAndSmallTalkNeedNoDrawing(t *testing.T) {
	for _, tt := range []struct{ prompt, answer string }{
		{"what does this diagram show?", "Two services and a database."},
		{"thanks!", "You're welcome."},
		{"make the box bigger", "Which box do you mean?"}, // a clarifying question ends the run
	} {
		f, srv := newFakeOllama(t, say(tt.answer))
		res, err := runOn(t, newAgent(t, srv.URL, Limits{}), newBoard(), tt.prompt, Memory{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Reason != StopNoToolCalls || res.Summary != tt.answer || f.count() != 1 {
			t.Errorf("%q: reason %s summary %q requests %d, want the answer as it is after one request",
				tt.prompt, res.Reason, res.Summary, f.count())
		}
	}
}

func TestCallsBesideToolCallsRunOnce(t *testing.T) {
	turn := calls(call("batch_create_elements", twoBoxes))
	// The same call again in the text, and one more that only the text has.
	turn.chunks[0].Message.Content = "<tool_call>{\"name\":\"batch_create_elements\",\"arguments\":" + twoBoxes +
		"}</tool_call>\n<tool_call>{\"name\":\"update_element\",\"arguments\":{\"id\":\"db\",\"text\":\"Primary DB\"}}</tool_call><|im_end|>"
	f, srv := newFakeOllama(t, turn, say(""))
	b := newBoard()
	res, err := runOn(t, newAgent(t, srv.URL, Limits{}), b, "API talks to Postgres", Memory{})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(toolMessages(f.request(1))); got != 2 {
		t.Errorf("%d calls ran, want 2 (the duplicate dropped, the text-only call run)", got)
	}
	if b.els["db"].Text != "Primary DB" || res.ToolErrors != 0 {
		t.Errorf("db label %q, errors %d", b.els["db"].Text, res.ToolErrors)
	}
	if strings.Contains(res.Summary, "<|") || strings.Contains(res.Summary, "tool_call") {
		t.Errorf("summary %q shows the model's markup", res.Summary)
	}
}

func TestAsksForDrawing(t *testing.T) {
	for _, tt := range []struct {
		prompt string
		want   bool
	}{
		{"org chart: CEO, two VPs", true},
		{"draw our deploy pipeline", true},
		{"the database should be red", true},
		{"can you add a cache?", true},
		{"what does this show?", false},
		{"can you show me how our deploy flows?", true},
		{"could you visualise the data platform?", true},
		{"can I get a diagram of the login flow?", true},
		{"what does this diagram show?", false},
		{"is the cache shown?", false},
		{"what changed?", false},
		{"thanks!", false},
		{"ok", false},
		{"", false},
	} {
		if got := asksForDrawing(tt.prompt); got != tt.want {
			t.Errorf("asksForDrawing(%q) = %v, want %v", tt.prompt, got, tt.want)
		}
	}
}

func TestChangeSummary(t *testing.T) {
	build := ElementState{ID: "b", Type: "rectangle", Label: "Build", Stroke: "#1e1e1e"}
	deploy := ElementState{ID: "d", Type: "rectangle", Label: "Deploy", Stroke: "#1e1e1e"}
	arrow := ElementState{ID: "a1", Type: "arrow", From: "b", To: "d"}
	before := []ElementState{build, deploy, arrow}
	mon := ElementState{ID: "m", Type: "rectangle", Label: "Monitoring"}
	red := deploy
	red.Stroke = "#e03131"
	renamed := build
	renamed.Label = "Compile"
	tests := []struct {
		name   string
		before []ElementState
		after  []ElementState
		want   string
	}{
		{"new diagram", nil, before, "Drew Build and Deploy; 2 boxes, 1 arrow."},
		{"added after", before, append(append([]ElementState(nil), before...), mon,
			ElementState{ID: "a2", Type: "arrow", From: "d", To: "m"}), "Added Monitoring after Deploy; 3 boxes, 2 arrows."},
		{"recoloured", before, []ElementState{build, red, arrow}, "Recoloured Deploy; 2 boxes, 1 arrow."},
		{"renamed", before, []ElementState{renamed, deploy, arrow}, "Renamed Build to Compile; 2 boxes, 1 arrow."},
		{"removed", before, []ElementState{build}, "Removed Deploy; 1 box."},
		{"connected", []ElementState{build, deploy}, before, "Connected 1 more arrow; 2 boxes, 1 arrow."},
		{"arrow removed", before, []ElementState{build, deploy}, "Removed 1 arrow; 2 boxes."},
		{"unchanged", before, before, ""},
		{"a memory without colours", []ElementState{{ID: "b", Type: "rectangle", Label: "Build"}, {ID: "d", Type: "rectangle", Label: "Deploy"}, arrow},
			before, ""},
		{"labelled", before, []ElementState{build, deploy, {ID: "a1", Type: "arrow", From: "b", To: "d", Label: "on merge"}},
			"Labelled an arrow on merge; 2 boxes, 1 arrow."},
		{"label taken off", before, []ElementState{{ID: "b", Type: "rectangle", Stroke: "#1e1e1e"}, deploy, arrow},
			"Took the label Build off; 2 boxes, 1 arrow."},
		{"an arrow by its ends", []ElementState{build, deploy, {ID: "a1", Type: "arrow", From: "b", To: "d", Stroke: "#1e1e1e"}},
			[]ElementState{build, deploy, {ID: "a1", Type: "arrow", From: "b", To: "d", Stroke: "#e03131"}},
			"Recoloured the arrow from Build to Deploy; 2 boxes, 1 arrow."},
		{"reconnected", append(append([]ElementState(nil), before...), mon), []ElementState{build, deploy, {ID: "a1", Type: "arrow", From: "b", To: "m"}, mon},
			"Reconnected the arrow from Build to Monitoring; 3 boxes, 1 arrow."},
		{"moved", before, []ElementState{build, {ID: "d", Type: "rectangle", Label: "Deploy", Stroke: "#1e1e1e", Y: 200}, arrow},
			"Moved Deploy; 2 boxes, 1 arrow."},
		{"resized", before, []ElementState{build, {ID: "d", Type: "rectangle", Label: "Deploy", Stroke: "#1e1e1e", W: 300}, arrow},
			"Resized Deploy; 2 boxes, 1 arrow."},
		{"a rename grows its box", before, []ElementState{{ID: "b", Type: "rectangle", Label: "Compile everything", Stroke: "#1e1e1e", W: 300}, deploy, arrow},
			"Renamed Build to Compile everything; 2 boxes, 1 arrow."},
		{"moves beside an addition are the layout's", before, append([]ElementState{{ID: "b", Type: "rectangle", Label: "Build", Stroke: "#1e1e1e", X: 80}, deploy, arrow}, mon),
			"Added Monitoring; 3 boxes, 1 arrow."},
	}
	for _, tt := range tests {
		if got := ChangeSummary(tt.before, tt.after); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}
