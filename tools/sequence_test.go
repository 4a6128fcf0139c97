package tools

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/excalibot/excalibot/diagram/graph"
	"github.com/excalibot/excalibot/scene"
)

// fullSequenceCall uses every part of a sequence diagram: activations (nested on one lifeline
// too), notes on every side, alt with an else branch, loop, opt, self-messages, replies and
// numbering.
const fullSequenceCall = `{"autonumber":true,"messages":[
 {"from":"Browser","to":"API","label":"GET /cart","activate":true},
 {"from":"API","to":"Auth","label":"check token","activate":true},
 {"from":"Auth","to":"API","label":"ok","return":true,"deactivate":true},
 {"note":"token cached for 5 minutes","over":["API","Auth"]},
 {"block":"alt","label":"cart in cache","messages":[
   {"from":"API","to":"Cache","label":"GET cart:42"},
   {"from":"Cache","to":"API","label":"items","return":true}],
  "else":[{"label":"cache miss","messages":[
   {"from":"API","to":"DB","label":"SELECT items","activate":true},
   {"from":"DB","to":"API","label":"rows","return":true,"deactivate":true},
   {"from":"API","to":"API","label":"build cart","activate":true},
   {"note":"slow path","left_of":"API"}]}]},
 {"block":"loop","label":"every item","messages":[
   {"block":"opt","label":"on sale","messages":[{"from":"API","to":"Pricing","label":"discount(item)"}]},
   {"from":"API","to":"Pricing","label":"price(item)"}]},
 {"note":"prices in EUR","right_of":"Pricing"},
 {"from":"API","to":"Browser","label":"200 OK","return":true,"deactivate":true}]}`

// seqParts sorts a drawn sequence diagram's elements by what they are.
type seqParts struct {
	actors, feet, notes, tabs []scene.Element
	lifelines, bars, boxes    []scene.Element
	messages, badges          []scene.Element
}

func partsOf(sc *scene.Scene) seqParts {
	var p seqParts
	for _, e := range sc.Elements() {
		switch {
		case e.Type == scene.Arrow:
			p.messages = append(p.messages, e)
		case e.Type == scene.Line && strings.HasPrefix(e.ID, "life-"):
			p.lifelines = append(p.lifelines, e)
		case e.Type == scene.Line && strings.HasPrefix(e.ID, "act-"):
			p.bars = append(p.bars, e)
		case e.Type == scene.Line && strings.HasPrefix(e.ID, "block") && !strings.Contains(e.ID, "-else"):
			p.boxes = append(p.boxes, e)
		case e.Type == scene.Rectangle && strings.HasPrefix(e.ID, "note"):
			p.notes = append(p.notes, e)
		case e.Type == scene.Rectangle && strings.HasSuffix(e.ID, "-tab"):
			p.tabs = append(p.tabs, e)
		case e.Type == scene.Ellipse && strings.HasSuffix(e.ID, "-badge"):
			p.badges = append(p.badges, e)
		case e.Type.IsShape() && strings.HasSuffix(e.ID, "-foot"):
			p.feet = append(p.feet, e)
		case e.Type.IsShape():
			p.actors = append(p.actors, e)
		}
	}
	return p
}

// messageLabel is a message's label: bound to its arrow, or the free text beside a message to
// oneself.
func messageLabel(t *testing.T, sc *scene.Scene, m scene.Element) scene.Element {
	t.Helper()
	if id := m.Label(); id != "" {
		return get(t, sc, id)
	}
	return get(t, sc, m.ID+"-label")
}

// restsOn reports whether p lies on one of the lines (a lifeline or a bar's side).
func restsOn(p scene.Point, lines []scene.Element) bool {
	for _, l := range lines {
		if scene.ContainsPoint(l, p, 1) {
			return true
		}
	}
	return false
}

func TestSequenceFull(t *testing.T) {
	s := New(newTestScene(), DefaultLimits())
	r := mustCall(t, s, "create_sequence", fullSequenceCall)
	if want := "6 actors, 11 messages, 3 notes, 3 blocks, 4 activations"; !strings.Contains(r.Text, want) {
		t.Errorf("result %q, want %q", r.Text, want)
	}
	sc := s.Scene()
	if w := Warnings(sc); len(w) > 0 {
		t.Errorf("warnings:\n%s", strings.Join(w, "\n"))
	}
	p := partsOf(sc)
	if len(p.actors) != 6 || len(p.feet) != 6 || len(p.lifelines) != 6 || len(p.bars) != 4 || len(p.boxes) != 3 || len(p.tabs) != 3 || len(p.notes) != 3 || len(p.messages) != 11 {
		t.Fatalf("parts: %d actors, %d lifelines, %d bars, %d boxes, %d tabs, %d notes, %d messages",
			len(p.actors), len(p.lifelines), len(p.bars), len(p.boxes), len(p.tabs), len(p.notes), len(p.messages))
	}
	// Every message end rests on a lifeline or on a bar's side.
	rests := append(append([]scene.Element(nil), p.lifelines...), p.bars...)
	for _, m := range p.messages {
		pts := m.AbsPoints()
		for _, end := range []scene.Point{pts[0], pts[len(pts)-1]} {
			if !restsOn(end, rests) {
				t.Errorf("%s end %v rests on no lifeline or bar", m.ID, end)
			}
		}
	}
	// No two of actors, notes, tabs and labels overlap (lint checks shapes; labels here too).
	var boxes []scene.Element
	boxes = append(boxes, p.actors...)
	boxes = append(boxes, p.feet...)
	boxes = append(boxes, p.notes...)
	boxes = append(boxes, p.tabs...)
	for _, m := range p.messages {
		boxes = append(boxes, messageLabel(t, sc, m))
	}
	for i := range boxes {
		for j := i + 1; j < len(boxes); j++ {
			if scene.Overlap(boxes[i], boxes[j]) {
				t.Errorf("%s %v overlaps %s %v", boxes[i].ID, boxes[i].Bounds(), boxes[j].ID, boxes[j].Bounds())
			}
		}
	}
	// No message label sits on a lifeline (the ones it passes included).
	for _, m := range p.messages {
		l := messageLabel(t, sc, m)
		for _, life := range p.lifelines {
			if l.X < life.X && life.X < l.X+l.Width {
				t.Errorf("label of %s (%v) lies on %s at x %v", m.ID, l.Bounds(), life.ID, life.X)
			}
		}
	}
	const seqBarWidth, seqBarPad = 12.0, 6.0 // diagram/sequence draws bars this wide, starting this far above their message
	tests := []struct {
		name string
		got  bool
	}{
		{"numbered", len(p.badges) == 11 && get(t, sc, "msg1-badge-text").Text == "1" && get(t, sc, "msg11-badge-text").Text == "11" &&
			labelText(t, sc, "msg11") == "200 OK"},
		{"replies dashed", get(t, sc, "msg3").StrokeStyle == "dashed" && get(t, sc, "msg1").StrokeStyle == "solid"},
		{"self-message loops out and back", len(get(t, sc, "msg8").Points) == 4 && get(t, sc, "msg8").Points[1].X > 0},
		{"reply ends on the caller's bar", pointsOf(t, sc, "msg3")[1].X == get(t, sc, "act-api-1").X+seqBarWidth},
		{"nested bar shifted right", get(t, sc, "act-api-4").X > get(t, sc, "act-api-1").X},
		{"first call opens a bar at its end", math.Abs(get(t, sc, "act-api-1").Y-(get(t, sc, "msg1").Y-seqBarPad)) < 0.01},
		{"left note left of its lifeline", noteAt(sc, "slow path").X+noteAt(sc, "slow path").Width < get(t, sc, "life-api").X},
		{"right note right of its lifeline", noteAt(sc, "prices in EUR").X > get(t, sc, "life-pricing").X},
		{"over note spans both lifelines", noteAt(sc, "token cached for 5 minutes").X < get(t, sc, "life-api").X &&
			noteAt(sc, "token cached for 5 minutes").X+noteAt(sc, "token cached for 5 minutes").Width > get(t, sc, "life-auth").X},
		{"actor moves with its lifeline, bars and foot", inGroup(t, sc, "act-api-1", "seq-api") && inGroup(t, sc, "life-api", "seq-api") && inGroup(t, sc, "api-foot", "seq-api")},
		{"foot under the lifeline's end", math.Abs(get(t, sc, "api-foot").Y-pointsOf(t, sc, "life-api")[1].Y) < 0.01 && labelText(t, sc, "api-foot") == "API"},
	}
	for _, tc := range tests {
		if !tc.got {
			t.Errorf("%s: no", tc.name)
		}
	}
	// Blocks hold their messages, nest, and the else divider runs between the two branches.
	inside := func(box scene.Element, ids ...string) {
		t.Helper()
		b := box.Bounds()
		for _, id := range ids {
			for _, pt := range pointsOf(t, sc, id) {
				if pt.X < b.X || pt.X > b.X+b.Width || pt.Y < b.Y || pt.Y > b.Y+b.Height {
					t.Errorf("%s point %v outside %s %v", id, pt, box.ID, b)
				}
			}
		}
	}
	alt, loop, opt := get(t, sc, "block1"), get(t, sc, "block2"), get(t, sc, "block3")
	inside(alt, "msg4", "msg5", "msg6", "msg7", "msg8")
	inside(loop, "msg9", "msg10")
	inside(opt, "msg9")
	if lb, ob := loop.Bounds(), opt.Bounds(); !(ob.X > lb.X && ob.Y > lb.Y && ob.X+ob.Width < lb.X+lb.Width && ob.Y+ob.Height < lb.Y+lb.Height) {
		t.Errorf("opt %v not strictly inside loop %v", ob, lb)
	}
	if d := get(t, sc, "block1-else1"); !(d.Y > get(t, sc, "msg5").Y && d.Y < get(t, sc, "msg6").Y) {
		t.Errorf("else divider at y %v, want between msg5 (%v) and msg6 (%v)", d.Y, get(t, sc, "msg5").Y, get(t, sc, "msg6").Y)
	}
	// Rows go down in order and graph tools leave the whole diagram alone.
	for k := 2; k <= 11; k++ {
		a, b := get(t, sc, "msg"+strconv.Itoa(k-1)), get(t, sc, "msg"+strconv.Itoa(k))
		if b.Y <= a.Y {
			t.Errorf("msg%d at y %v not below msg%d at %v", k, b.Y, k-1, a.Y)
		}
	}
	if g := graph.Read(sc); len(g.Nodes()) != 0 {
		t.Errorf("graph tools see nodes %v in a sequence diagram", g.Nodes())
	}
}

func pointsOf(t *testing.T, sc *scene.Scene, id string) []scene.Point {
	e := get(t, sc, id)
	return e.AbsPoints()
}

func inGroup(t *testing.T, sc *scene.Scene, id, group string) bool {
	e := get(t, sc, id)
	return e.InGroup(group)
}

func noteAt(sc *scene.Scene, text string) scene.Element {
	for _, e := range sc.Elements() {
		if e.Type == scene.Rectangle && sc.LabelText(e.ID) == text {
			return e
		}
	}
	return scene.Element{}
}

func TestSequenceRefusals(t *testing.T) {
	runCases(t, []toolCase{
		{name: "note without a place", tool: "create_sequence", args: `{"messages":[{"from":"a","to":"b"},{"note":"hi"}]}`, wantErr: true,
			want: []string{`messages[1]: say where the note goes`}},
		{name: "note on two sides", tool: "create_sequence", args: `{"messages":[{"from":"a","to":"b"},{"note":"hi","over":"a","left_of":"b"}]}`, wantErr: true,
			want: []string{`messages[1].left_of: give one of over, left_of and right_of`}},
		{name: "left note of two actors", tool: "create_sequence", args: `{"messages":[{"from":"a","to":"b"},{"note":"hi","left_of":["a","b"]}]}`, wantErr: true,
			want: []string{`messages[1].left_of: give one actor`}},
		{name: "unknown block", tool: "create_sequence", args: `{"messages":[{"block":"switch","messages":[{"from":"a","to":"b"}]}]}`, wantErr: true,
			want: []string{`messages[0].block: "switch" is not allowed`}},
		{name: "empty block", tool: "create_sequence", args: `{"messages":[{"block":"loop","label":"forever"}]}`, wantErr: true,
			want: []string{`messages[0].messages: a block needs the messages it holds`}},
		{name: "else on a loop", tool: "create_sequence", args: `{"messages":[{"block":"loop","messages":[{"from":"a","to":"b"}],"else":[{"messages":[{"from":"b","to":"a"}]}]}]}`, wantErr: true,
			want: []string{`messages[0].else: only alt and par blocks have branches`}},
		{name: "bad step inside a block", tool: "create_sequence", args: `{"messages":[{"block":"opt","messages":[{"from":"a"}]}]}`, wantErr: true,
			want: []string{`messages[0].messages[0]: give from and to`}},
		{name: "field slip", tool: "create_sequence", args: `{"messages":[{"from":"a","to":"b","text":"hi"}]}`,
			want: []string{"1 message", `Ignored unknown field messages[0].text (did you mean "label"?).`}},
		{name: "note on an unknown actor", tool: "create_sequence", args: `{"actors":[{"id":"a","label":"A"},{"id":"b","label":"B"}],"messages":[{"from":"a","to":"b"},{"note":"x","over":"c"}]}`, wantErr: true,
			want: []string{`messages[1]: no actor "c"; actors: a ("A"), b ("B")`}},
		{name: "note over two actors in one string", tool: "create_sequence", args: `{"messages":[{"from":"a","to":"b"},{"from":"b","to":"c"},{"note":"both","over":"a, c"}]}`,
			want: []string{"3 actors, 2 messages, 1 note"}, check: func(t *testing.T, sc *scene.Scene) {
				n := noteAt(sc, "both")
				if a, c := get(t, sc, "life-a"), get(t, sc, "life-c"); !(n.X < a.X && n.X+n.Width > c.X) {
					t.Errorf("note %v does not span lifelines a (%v) and c (%v)", n.Bounds(), a.X, c.X)
				}
			}},
		{name: "actor slip in a note", tool: "create_sequence", args: `{"messages":[{"from":"a","to":"b"},{"note":"x","actor":"a"}]}`, wantErr: true,
			want: []string{`messages[1].actor: unknown field (did you mean "over"?)`}},
		{name: "par with branches", tool: "create_sequence", args: `{"messages":[{"block":"par","label":"to all","messages":[{"from":"hub","to":"a","label":"ping"}],"else":[{"label":"and","messages":[{"from":"hub","to":"b","label":"ping"}]}]}]}`,
			want: []string{"3 actors, 2 messages, 0 notes, 1 block"}},
	})
}
