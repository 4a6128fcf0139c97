package sequence

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/excalibot/excalibot/scene"
)

func msg(from, to, label string) Step {
	return Step{Message: &Message{From: from, To: to, Label: label}}
}

func get(t *testing.T, sc *scene.Scene, id string) scene.Element {
	t.Helper()
	e, ok := sc.Get(id)
	if !ok {
		t.Fatalf("no element %q", id)
	}
	return e
}

func TestDraw(t *testing.T) {
	sc := scene.New()
	res, err := Draw(sc, Sequence{
		Actors: []Actor{{ID: "web", Label: "Browser"}, {ID: "api", Label: "API", Fill: "#a5d8ff"}},
		Steps: []Step{
			{Message: &Message{From: "web", To: "api", Label: "GET /cart", Activate: true}},
			{Note: &Note{Text: "cached for 5 minutes", Side: Over, Actors: []string{"web", "api"}}},
			{Block: &Block{Kind: "alt", Label: "cached", Steps: []Step{{Message: &Message{From: "api", To: "web", Label: "200 OK", Style: "dashed", Deactivate: true}}},
				Else: []Branch{{Label: "miss", Steps: []Step{msg("api", "api", "load")}}}}},
		},
		Autonumber: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	got := []int{res.Actors, res.Messages, res.Notes, res.Blocks, res.Activations}
	want := []int{2, 3, 1, 1, 1}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("actors, messages, notes, blocks, activations = %v, want %v", got, want)
		}
	}
	if first := map[string]bool{res.IDs[0]: true, res.IDs[1]: true}; !first["web"] || !first["api"] {
		t.Errorf("ids start %v, want the actors first", res.IDs[:2])
	}
	web, api := get(t, sc, "web"), get(t, sc, "api")
	if web.X >= api.X {
		t.Errorf("web at x %v, api at %v: want the actors left to right in the order given", web.X, api.X)
	}
	if api.BackgroundColor != "#a5d8ff" {
		t.Errorf("api fill %q, want #a5d8ff", api.BackgroundColor)
	}
	for id, group := range map[string]string{"web": "seq-web", "life-web": "seq-web", "act-api-1": "seq-api"} {
		if e := get(t, sc, id); len(e.GroupIDs) == 0 || e.GroupIDs[0] != group {
			t.Errorf("%s groups %v, want %s", id, e.GroupIDs, group)
		}
	}
	if got := sc.LabelText("msg1"); got != "GET /cart" {
		t.Errorf("first message reads %q, want its label alone (the number is a badge)", got)
	}
	for k, id := range []string{"msg1", "msg2", "msg3"} {
		m, badge, num := get(t, sc, id), get(t, sc, id+"-badge"), get(t, sc, id+"-badge-text")
		start := m.AbsPoints()[0]
		if c := badge.Center(); math.Abs(c.X-start.X) > 1e-6 || math.Abs(c.Y-start.Y) > 1e-6 || badge.Type != scene.Ellipse {
			t.Errorf("%s's badge is a %s centred at %v, want a circle on the message's start %v", id, badge.Type, c, start)
		}
		if want := fmt.Sprint(k + 1); num.Text != want || math.Abs(num.Center().X-start.X) > 1 {
			t.Errorf("%s's badge reads %q at x %v, want %q centred on %v", id, num.Text, num.Center().X, want, start.X)
		}
		if g := m.GroupIDs; len(g) != 1 || !slices.Equal(badge.GroupIDs, g) || !slices.Equal(num.GroupIDs, g) {
			t.Errorf("%s groups %v, badge %v, number %v: want one group, so they move together", id, g, badge.GroupIDs, num.GroupIDs)
		}
	}
	if reply := get(t, sc, "msg2"); reply.StrokeStyle != "dashed" {
		t.Errorf("reply style %q, want dashed", reply.StrokeStyle)
	}
	if self := get(t, sc, "msg3"); len(self.Points) != 4 {
		t.Errorf("message to itself has %d points, want a loop of 4", len(self.Points))
	}
	m1 := get(t, sc, "msg1")
	if m1.Y <= web.Y+web.Height {
		t.Errorf("first message at y %v, want it below the actors (bottom %v)", m1.Y, web.Y+web.Height)
	}
}

func TestDrawBesideTheDrawing(t *testing.T) {
	sc := scene.New()
	old := scene.NewElement(scene.Rectangle)
	old.ID, old.X, old.Y, old.Width, old.Height = "old", -50, 30, 300, 100
	if _, err := sc.Add(old); err != nil {
		t.Fatal(err)
	}
	if _, err := Draw(sc, Sequence{Actors: []Actor{{ID: "a", Label: "A"}, {ID: "b", Label: "B"}}, Steps: []Step{msg("a", "b", "hi")}}); err != nil {
		t.Fatal(err)
	}
	if a := get(t, sc, "a"); a.X < 250 || a.Y < 30 {
		t.Errorf("actor a at %v,%v, want right of the old box (right edge 250), not above its top (30)", a.X, a.Y)
	}
}

// TestDrawPartIDs: a part whose id the scene already has gets "-2", and a part named after a long
// actor id is cut to maxID, as the graph builder cuts its ids.
func TestDrawPartIDs(t *testing.T) {
	sc := scene.New()
	taken := scene.NewElement(scene.Rectangle)
	taken.ID, taken.X, taken.Width, taken.Height = "msg1", -500, 10, 10
	if _, err := sc.Add(taken); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("a", 62)
	res, err := Draw(sc, Sequence{
		Actors: []Actor{{ID: long, Label: "Long"}, {ID: "b", Label: "B"}},
		Steps:  []Step{{Message: &Message{From: "b", To: long, Label: "hi", Activate: true}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if m := get(t, sc, "msg1-2"); m.Type != scene.Arrow {
		t.Errorf("msg1-2 is a %s, want the message arrow", m.Type)
	}
	get(t, sc, "life-"+long[:55]) // "life-" and the actor id, cut to 60 so a suffix still fits
	for _, id := range res.IDs {
		if id != long && len(id) > maxID {
			t.Errorf("part id %q is %d long, want at most %d", id, len(id), maxID)
		}
	}
}

func TestDrawErrors(t *testing.T) {
	actors := []Actor{{ID: "a", Label: "A", Ref: "actors[0]"}, {ID: "b", Label: "B"}}
	for _, tc := range []struct {
		name  string
		seq   Sequence
		where string // ItemError.Where(); "" for a plain error
		want  string
	}{
		{"unknown actor", Sequence{Actors: actors, Steps: []Step{{Ref: "messages[0]", Message: &Message{From: "a", To: "c"}}}}, "messages[0].to", `no actor "c"`},
		{"two kinds in one step", Sequence{Actors: actors, Steps: []Step{{Ref: "messages[0]", Message: &Message{From: "a", To: "b"}, Note: &Note{Text: "x", Side: Over, Actors: []string{"a"}}}}}, "messages[0]", "one of a message"},
		{"note beside two actors", Sequence{Actors: actors, Steps: []Step{{Ref: "messages[0]", Note: &Note{Text: "x", Side: LeftOf, Actors: []string{"a", "b"}}}}}, "messages[0]", "one actor beside it"},
		{"actor id twice", Sequence{Actors: []Actor{{ID: "a"}, {ID: "a", Ref: "actors[1]"}}, Steps: []Step{msg("a", "a", "")}}, "actors[1].id", "two actors"},
		{"not a node shape", Sequence{Actors: []Actor{{ID: "a", Shape: scene.Arrow, Ref: "actors[0]"}}, Steps: []Step{msg("a", "a", "")}}, "actors[0].shape", "not a node shape"},
		{"id taken on the canvas", Sequence{Actors: []Actor{{ID: "taken", Label: "T", Ref: "actors[0]"}}, Steps: []Step{msg("taken", "taken", "")}}, "actors[0]", "taken"},
		{"no steps", Sequence{Actors: actors}, "", "at least one actor and one step"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := scene.New()
			taken := scene.NewElement(scene.Rectangle)
			taken.ID, taken.Width, taken.Height = "taken", 10, 10
			if _, err := sc.Add(taken); err != nil {
				t.Fatal(err)
			}
			_, err := Draw(sc, tc.seq)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
			var ie *ItemError
			if got := errors.As(err, &ie); got != (tc.where != "") || got && ie.Where() != tc.where {
				t.Errorf("err %v: ItemError %v at %q, want at %q", err, got, where(ie), tc.where)
			}
		})
	}
}

func where(e *ItemError) string {
	if e == nil {
		return ""
	}
	return e.Where()
}

// TestSelfMessageLabels: a message to oneself has its label beside the loop, level with its
// middle, off the loop's line, its own lifeline and bars, the next lifeline and every other text.
func TestSelfMessageLabels(t *testing.T) {
	for _, tc := range []struct {
		name string
		seq  Sequence
	}{
		{"short", Sequence{Actors: []Actor{{ID: "a", Label: "A"}, {ID: "b", Label: "B"}},
			Steps: []Step{msg("a", "b", "call"), msg("b", "b", "check")}}},
		{"long label wraps", Sequence{Actors: []Actor{{ID: "a", Label: "A"}, {ID: "b", Label: "B"}},
			Steps: []Step{msg("a", "a", "validate the whole request against the schema and the user's quota"), msg("a", "b", "go")}}},
		{"on bars", Sequence{Actors: []Actor{{ID: "a", Label: "Client"}, {ID: "b", Label: "Server"}, {ID: "c", Label: "DB"}},
			Steps: []Step{
				{Message: &Message{From: "a", To: "b", Label: "request", Activate: true}},
				{Message: &Message{From: "b", To: "b", Label: "hash password", Activate: true}},
				{Message: &Message{From: "b", To: "b", Label: "compare with stored hash", Deactivate: true}},
				{Message: &Message{From: "b", To: "a", Label: "ok", Style: "dashed", Deactivate: true}},
			}}},
		{"last actor, numbered", Sequence{Actors: []Actor{{ID: "a", Label: "A"}, {ID: "b", Label: "B"}}, Autonumber: true,
			Steps: []Step{msg("a", "b", "x"), msg("b", "b", "retry three times"), msg("b", "a", "y")}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := scene.New()
			if _, err := Draw(sc, tc.seq); err != nil {
				t.Fatal(err)
			}
			checkSelfLabels(t, sc, tc.seq)
		})
	}
}
