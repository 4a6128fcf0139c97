package sequence

import (
	"bytes"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/excalibot/excalibot/scene"
)

var update = flag.Bool("update", false, "rewrite testdata golden files")

// goldenSequences are drawn into testdata/<name>.golden.excalidraw. The render package loads each
// in Excalidraw (restore) in Chromium and checks that nothing moves or is repaired.
var goldenSequences = []struct {
	name string
	seq  Sequence
}{
	{"request-reply", Sequence{
		Actors: []Actor{{ID: "web", Label: "Browser"}, {ID: "api", Label: "API"}, {ID: "db", Label: "Database"}},
		Steps: []Step{
			{Message: &Message{From: "web", To: "api", Label: "GET /orders", Activate: true}},
			{Message: &Message{From: "api", To: "db", Label: "SELECT * FROM orders", Activate: true}},
			{Message: &Message{From: "db", To: "api", Label: "rows", Style: "dashed", Deactivate: true}},
			{Message: &Message{From: "api", To: "web", Label: "200 OK", Style: "dashed", Deactivate: true}},
		},
	}},
	{"full", Sequence{
		Actors: []Actor{{ID: "user", Label: "User", Shape: scene.Ellipse}, {ID: "app", Label: "Mobile app"},
			{ID: "auth", Label: "Auth service", Fill: "#a5d8ff"}, {ID: "cache", Label: "Cache"}, {ID: "db", Label: "DB"}},
		Autonumber: true,
		Steps: []Step{
			{Message: &Message{From: "user", To: "app", Label: "open", Activate: true}},
			{Note: &Note{Text: "first start after install", Side: LeftOf, Actors: []string{"user"}}},
			{Message: &Message{From: "app", To: "auth", Label: "login(email, password)", Activate: true}},
			{Message: &Message{From: "auth", To: "auth", Label: "hash password", Activate: true}},
			{Message: &Message{From: "auth", To: "auth", Label: "compare", Deactivate: true}},
			{Note: &Note{Text: "bcrypt, cost 12", Side: RightOf, Actors: []string{"auth"}}},
			{Block: &Block{Kind: "alt", Label: "session cached", Steps: []Step{
				{Message: &Message{From: "auth", To: "cache", Label: "GET session"}},
				{Message: &Message{From: "cache", To: "auth", Label: "session", Style: "dashed"}},
			}, Else: []Branch{{Label: "no session", Steps: []Step{
				{Message: &Message{From: "auth", To: "db", Label: "INSERT session", Activate: true}},
				{Message: &Message{From: "db", To: "auth", Label: "id", Style: "dashed", Deactivate: true}},
			}}}}},
			{Note: &Note{Text: "tokens expire after one hour", Side: Over, Actors: []string{"app", "auth"}}},
			{Message: &Message{From: "auth", To: "app", Label: "token", Style: "dashed", Deactivate: true}},
			{Block: &Block{Kind: "loop", Label: "every 5 minutes", Steps: []Step{
				{Message: &Message{From: "app", To: "auth", Label: "refresh", Arrow: "both"}},
			}}},
			{Note: &Note{Text: "signed in", Side: Over, Actors: []string{"app"}}},
			{Message: &Message{From: "app", To: "user", Label: "home screen", Style: "dashed", Deactivate: true}},
		},
	}},
	{"scripts", Sequence{
		Actors: []Actor{{ID: "k", Label: "Клиент"}, {ID: "s", Label: "Сервер авторизации"}, {ID: "z", Label: "支付网关"}, {ID: "g", Label: "Διακομιστής"}},
		Steps: []Step{
			{Message: &Message{From: "k", To: "s", Label: "Запрос токена доступа", Activate: true}},
			{Message: &Message{From: "s", To: "z", Label: "发送验证码到手机，并等待用户确认支付请求"}},
			{Note: &Note{Text: "用户在登录页面输入手机号码", Side: RightOf, Actors: []string{"z"}}},
			{Message: &Message{From: "z", To: "g", Label: "Αίτημα πληρωμής"}},
			{Message: &Message{From: "g", To: "k", Label: "Ответ 200 OK — данные профиля", Style: "dashed"}},
			{Message: &Message{From: "s", To: "k", Label: "Токен доступа (JWT)", Style: "dashed", Deactivate: true}},
		},
	}},
}

func testScene() *scene.Scene {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return scene.New(scene.WithRand(rand.New(rand.NewPCG(1, 2))), scene.WithClock(func() time.Time { return t0 }))
}

func TestGolden(t *testing.T) {
	for _, g := range goldenSequences {
		t.Run(g.name, func(t *testing.T) {
			sc := testScene()
			if _, err := Draw(sc, g.seq); err != nil {
				t.Fatal(err)
			}
			checkGeometry(t, sc, g.seq)
			got, err := sc.Encode()
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", g.name+".golden.excalidraw")
			if *update {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("read golden (refresh with go test ./diagram/sequence -update): %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from what Draw makes now (refresh with -update if the change is meant)", path)
			}
		})
	}
}

// parts sorts a drawn diagram's elements by what they are, from their ids.
type parts struct {
	actors, lifelines, bars, notes map[string]scene.Element
	messages                       []scene.Element
}

func partsOf(sc *scene.Scene, seq Sequence) parts {
	p := parts{actors: map[string]scene.Element{}, lifelines: map[string]scene.Element{}, bars: map[string]scene.Element{}, notes: map[string]scene.Element{}}
	actor := map[string]bool{}
	for _, a := range seq.Actors {
		actor[a.ID] = true
	}
	for _, e := range sc.Elements() {
		switch {
		case actor[e.ID]:
			p.actors[e.ID] = e
		case e.Type == scene.Arrow:
			p.messages = append(p.messages, e)
		case e.Type == scene.Line && strings.HasPrefix(e.ID, "life-"):
			p.lifelines[strings.TrimPrefix(e.ID, "life-")] = e
		case e.Type == scene.Line && strings.HasPrefix(e.ID, "act-"):
			p.bars[e.ID] = e
		case e.Type == scene.Rectangle && strings.HasPrefix(e.ID, "note"):
			p.notes[e.ID] = e
		}
	}
	return p
}

// checkGeometry checks what Excalidraw's restore() and a reader of the diagram need: messages
// are free arrows (nothing to repair) whose points are already in the form restore() keeps, and
// whose ends rest on a lifeline or an activation bar; every bar sits on its lifeline and spans
// the messages that open and close it; notes sit where Mermaid puts them.
func checkGeometry(t *testing.T, sc *scene.Scene, seq Sequence) {
	t.Helper()
	p := partsOf(sc, seq)
	var rests []scene.Element
	for _, l := range p.lifelines {
		rests = append(rests, l)
	}
	for _, b := range p.bars {
		rests = append(rests, b)
	}
	lastY := math.Inf(-1)
	for _, m := range p.messages {
		if m.StartBinding != nil || m.EndBinding != nil {
			t.Errorf("%s is bound (%v, %v); a message touches only lines, which Excalidraw cannot bind to", m.ID, m.StartBinding, m.EndBinding)
		}
		if len(m.Points) < 2 || m.Points[0] != (scene.Point{}) {
			t.Errorf("%s points %v: want the first at 0,0, as restore() rebases them", m.ID, m.Points)
		}
		lo, hi := scene.Point{X: math.Inf(1), Y: math.Inf(1)}, scene.Point{X: math.Inf(-1), Y: math.Inf(-1)}
		for _, q := range m.Points {
			lo.X, lo.Y, hi.X, hi.Y = math.Min(lo.X, q.X), math.Min(lo.Y, q.Y), math.Max(hi.X, q.X), math.Max(hi.Y, q.Y)
		}
		if math.Abs(m.Width-(hi.X-lo.X)) > 1e-9 || math.Abs(m.Height-(hi.Y-lo.Y)) > 1e-9 {
			t.Errorf("%s is %v×%v, its points span %v×%v: restore() would resize it", m.ID, m.Width, m.Height, hi.X-lo.X, hi.Y-lo.Y)
		}
		abs := m.AbsPoints()
		for _, end := range []scene.Point{abs[0], abs[len(abs)-1]} {
			if !restsOnAny(end, rests) {
				t.Errorf("%s ends at %v, on no lifeline or activation bar", m.ID, end)
			}
		}
		if abs[0].Y < lastY {
			t.Errorf("%s starts at y %v, above the message before it (%v): steps go down in order", m.ID, abs[0].Y, lastY)
		}
		lastY = abs[0].Y
	}
	for id, b := range p.bars {
		actorID := strings.TrimPrefix(id, "act-")
		actorID = actorID[:strings.LastIndex(actorID, "-")]
		life := p.lifelines[actorID]
		box := scene.BoundingBox(b)
		if box.Width != seqBarWidth || box.X > life.X || box.X+box.Width < life.X {
			t.Errorf("bar %s spans x %v..%v, want %v wide on the lifeline at %v", id, box.X, box.X+box.Width, seqBarWidth, life.X)
		}
		// It opens seqBarPad above a message that reaches it and closes seqBarPad below one, or at
		// the foot of the lifeline when nothing closes it.
		top, bottom := box.Y+seqBarPad, box.Y+box.Height-seqBarPad
		if !messageAt(p.messages, b, top) {
			t.Errorf("bar %s opens at y %v with no message there touching it", id, top)
		}
		if foot := life.Y + life.Height; !messageAt(p.messages, b, bottom) && math.Abs(box.Y+box.Height-foot) > 1e-6 && bottom-top > 2*seqBarPad+1e-6 {
			t.Errorf("bar %s closes at y %v with no message there touching it (lifeline ends at %v)", id, bottom, foot)
		}
	}
	checkNotes(t, sc, seq, p)
	checkSelfLabels(t, sc, seq)
}

// checkSelfLabels checks every message to oneself: its label is a free text grouped with the loop,
// left of nothing it could cover — beside the loop's far side and level with its middle, clear of
// the loop's line, of every lifeline and bar, and of every other text.
func checkSelfLabels(t *testing.T, sc *scene.Scene, seq Sequence) {
	t.Helper()
	p := partsOf(sc, seq)
	var texts []scene.Element
	for _, e := range sc.Elements() {
		if e.Type == scene.Text && !strings.HasSuffix(e.ID, "-badge-text") {
			texts = append(texts, e)
		}
	}
	for _, m := range p.messages {
		abs := m.AbsPoints()
		if abs[0].X != abs[len(abs)-1].X {
			continue
		}
		if sc.LabelText(m.ID) != "" {
			t.Errorf("%s, a message to itself, has a bound label %q: Excalidraw draws it on the loop's line", m.ID, sc.LabelText(m.ID))
		}
		l, ok := sc.Get(m.ID + "-label")
		if !ok {
			continue // no label
		}
		far := math.Inf(-1)
		for _, q := range abs {
			far = math.Max(far, q.X)
		}
		mid := (abs[0].Y + abs[len(abs)-1].Y) / 2
		if l.X < far+seqSelfGap-1e-6 || l.Y > mid || l.Y+l.Height < mid {
			t.Errorf("%s's label spans %v..%v × %v..%v, want it from %v past the loop's far side and across its middle %v", m.ID, l.X, l.X+l.Width, l.Y, l.Y+l.Height, far+seqSelfGap, mid)
		}
		if len(m.GroupIDs) == 0 || !slices.Equal(l.GroupIDs, m.GroupIDs) {
			t.Errorf("%s's label groups %v, the message %v: want them together", m.ID, l.GroupIDs, m.GroupIDs)
		}
		box := scene.Rect{X: l.X, Y: l.Y, Width: l.Width, Height: l.Height}
		for _, line := range append(mapValues(p.lifelines), mapValues(p.bars)...) {
			if b := scene.BoundingBox(line); overlaps(box, b) {
				t.Errorf("%s's label %v covers %s %v", m.ID, box, line.ID, b)
			}
		}
		for _, o := range texts {
			if o.ID == l.ID {
				continue
			}
			if overlaps(box, scene.Rect{X: o.X, Y: o.Y, Width: o.Width, Height: o.Height}) {
				t.Errorf("%s's label %v covers the text %s %q", m.ID, box, o.ID, o.Text)
			}
		}
	}
}

func overlaps(a, b scene.Rect) bool {
	return a.X < b.X+b.Width && b.X < a.X+a.Width && a.Y < b.Y+b.Height && b.Y < a.Y+a.Height
}

func mapValues(m map[string]scene.Element) []scene.Element {
	var out []scene.Element
	for _, e := range m {
		out = append(out, e)
	}
	return out
}

func restsOnAny(q scene.Point, lines []scene.Element) bool {
	for _, l := range lines {
		if scene.ContainsPoint(l, q, 0.5) {
			return true
		}
	}
	return false
}

// messageAt reports whether a message has a point at height y touching bar.
func messageAt(msgs []scene.Element, bar scene.Element, y float64) bool {
	for _, m := range msgs {
		for _, q := range m.AbsPoints() {
			if math.Abs(q.Y-y) < 1e-6 && scene.ContainsPoint(bar, q, 0.5) {
				return true
			}
		}
	}
	return false
}

// checkNotes checks the notes against Mermaid's placement, in the order the steps list them.
func checkNotes(t *testing.T, sc *scene.Scene, seq Sequence, p parts) {
	t.Helper()
	var notes []*Note
	var walk func([]Step)
	walk = func(steps []Step) {
		for _, s := range steps {
			switch {
			case s.Note != nil:
				notes = append(notes, s.Note)
			case s.Block != nil:
				walk(s.Block.Steps)
				for _, br := range s.Block.Else {
					walk(br.Steps)
				}
			}
		}
	}
	walk(seq.Steps)
	for k, n := range notes {
		id := "note" + string(rune('1'+k))
		e, ok := p.notes[id]
		if !ok {
			t.Errorf("no element %s for note %q", id, n.Text)
			continue
		}
		if got := sc.LabelText(id); got != n.Text {
			t.Errorf("%s reads %q, want %q", id, got, n.Text)
		}
		first, last := p.lifelines[n.Actors[0]].X, p.lifelines[n.Actors[len(n.Actors)-1]].X
		lo, hi := math.Min(first, last), math.Max(first, last)
		switch {
		case n.Side == RightOf:
			if e.X != lo+seqNoteOffset {
				t.Errorf("%s right of %s starts at x %v, want %v past the lifeline at %v", id, n.Actors[0], e.X, seqNoteOffset, lo)
			}
		case n.Side == LeftOf:
			if e.X+e.Width != lo-seqNoteOffset {
				t.Errorf("%s left of %s ends at x %v, want %v before the lifeline at %v", id, n.Actors[0], e.X+e.Width, seqNoteOffset, lo)
			}
		case lo == hi:
			a := p.actors[n.Actors[0]]
			if math.Abs(e.X+e.Width/2-lo) > 1e-6 || e.Width < a.Width {
				t.Errorf("%s over %s spans x %v..%v, want it centred on %v and at least the actor's %v wide", id, n.Actors[0], e.X, e.X+e.Width, lo, a.Width)
			}
		default:
			if e.X > lo-seqNoteOffset+1e-6 || e.X+e.Width < hi+seqNoteOffset-1e-6 {
				t.Errorf("%s over %v spans x %v..%v, want at least %v..%v", id, n.Actors, e.X, e.X+e.Width, lo-seqNoteOffset, hi+seqNoteOffset)
			}
		}
	}
}
