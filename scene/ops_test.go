package scene

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// chain builds a -> b -> c with labels on every shape and arrow.
func chain(t *testing.T) *Scene {
	t.Helper()
	s := newTestScene()
	mustAdd(t, s, rect("a", 0, 0, 120, 60))
	mustAdd(t, s, shape(Ellipse, "b", 300, 0, 120, 60))
	mustAdd(t, s, shape(Diamond, "c", 600, 0, 120, 80))
	mustAdd(t, s, arrow("ab", "a", "b"))
	mustAdd(t, s, arrow("bc", "b", "c"))
	for _, id := range []string{"a", "b", "c", "ab", "bc"} {
		if _, err := s.SetLabel(id, strings.ToUpper(id)); err != nil {
			t.Fatal(err)
		}
	}
	assertConsistent(t, s)
	return s
}

func TestDelete(t *testing.T) {
	tests := []struct {
		name        string
		del         []string
		wantRemoved []string
		wantLeft    []string
	}{
		{"shape takes label and arrows", []string{"b"},
			[]string{"b", "b-label", "ab", "ab-label", "bc", "bc-label"},
			[]string{"a", "a-label", "c", "c-label"}},
		{"end shape", []string{"c"},
			[]string{"c", "c-label", "bc", "bc-label"},
			[]string{"a", "a-label", "b", "b-label", "ab", "ab-label"}},
		{"arrow takes its label only", []string{"ab"},
			[]string{"ab", "ab-label"},
			[]string{"a", "a-label", "b", "b-label", "c", "c-label", "bc", "bc-label"}},
		{"label only", []string{"a-label"},
			[]string{"a-label"},
			[]string{"a", "b", "b-label", "c", "c-label", "ab", "ab-label", "bc", "bc-label"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := chain(t)
			removed, err := s.Delete(tt.del...)
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(removed)
			slices.Sort(tt.wantRemoved)
			if !slices.Equal(removed, tt.wantRemoved) {
				t.Errorf("removed %v, want %v", removed, tt.wantRemoved)
			}
			left := s.IDs()
			slices.Sort(left)
			slices.Sort(tt.wantLeft)
			if !slices.Equal(left, tt.wantLeft) {
				t.Errorf("left %v, want %v", left, tt.wantLeft)
			}
			assertConsistent(t, s)
		})
	}
}

func TestDeleteRefusals(t *testing.T) {
	s := chain(t)
	before, _ := s.Encode()
	if _, err := s.Delete("a", "nope"); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("unknown id: got %v", err)
	}
	if err := s.Lock("c"); err != nil {
		t.Fatal(err)
	}
	// Deleting b would delete arrow bc, which is fine, but c itself is locked only if named.
	if _, err := s.Delete("c"); !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), `"c"`) {
		t.Errorf("locked: got %v", err)
	}
	if err := s.Lock("bc"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Delete("b"); !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), `"bc"`) {
		t.Errorf("deleting b would remove locked arrow bc: got %v", err)
	}
	if err := s.Unlock("c", "bc"); err != nil {
		t.Fatal(err)
	}
	after, _ := s.Encode()
	// Lock/unlock bumped versions; compare ids only for "nothing removed".
	if len(s.IDs()) != 10 || len(before) == 0 || len(after) == 0 {
		t.Errorf("elements lost after refused deletes: %v", s.IDs())
	}
}

func TestDeleteFrameKeepsChildren(t *testing.T) {
	s := newTestScene()
	f := shape(Frame, "f", -20, -20, 400, 200)
	f.Name = "Box"
	mustAdd(t, s, f)
	mustAdd(t, s, rect("a", 0, 0, 100, 50))
	if _, err := s.SetLabel("a", "A"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetFrame("f", "a"); err != nil {
		t.Fatal(err)
	}
	if l, _ := s.Get("a-label"); l.FrameID != "f" {
		t.Errorf("label frameId %q, want f", l.FrameID)
	}
	if _, err := s.Delete("f"); err != nil {
		t.Fatal(err)
	}
	a, ok := s.Get("a")
	if !ok || a.FrameID != "" {
		t.Errorf("child after frame delete: ok=%v frameId=%q", ok, a.FrameID)
	}
	assertConsistent(t, s)
}

func TestUpdateRefusals(t *testing.T) {
	tests := []struct {
		name string
		id   string
		fn   func(e *Element) error
		want string
	}{
		{"id", "a", func(e *Element) error { e.ID = "z"; return nil }, "id cannot be changed"},
		{"type", "a", func(e *Element) error { e.Type = Ellipse; return nil }, "type cannot be changed"},
		{"index", "a", func(e *Element) error { e.Index = "b0"; return nil }, "index cannot be changed"},
		{"boundElements", "a", func(e *Element) error { e.BoundElements = nil; return nil }, "boundElements cannot be changed"},
		{"groupIds", "a", func(e *Element) error { e.GroupIDs = []string{"g"}; return nil }, "groupIds cannot be changed"},
		{"containerId", "a-label", func(e *Element) error { e.ContainerID = "b"; return nil }, "containerId cannot be changed"},
		{"negative width", "a", func(e *Element) error { e.Width = -1; return nil }, "width and height must be positive"},
		{"NaN", "a", func(e *Element) error { e.X = nan(); return nil }, "must be finite"},
		{"opacity", "a", func(e *Element) error { e.Opacity = 101; return nil }, "opacity must be 0..100"},
		{"empty text", "a-label", func(e *Element) error { e.Text, e.OriginalText = "", ""; return nil }, "text is empty"},
		{"bind to missing", "ab", func(e *Element) error { e.EndBinding = &Binding{ElementID: "zz"}; return nil }, `"zz": no such element`},
		{"bind to label", "ab", func(e *Element) error { e.EndBinding = &Binding{ElementID: "a-label"}; return nil }, "label of a"},
		{"bind to itself", "ab", func(e *Element) error { e.EndBinding = &Binding{ElementID: "ab"}; return nil }, "bind to itself"},
		{"binding on a shape", "a", func(e *Element) error { e.StartBinding = &Binding{ElementID: "b"}; return nil }, "only arrows"},
		{"frame that is not a frame", "a", func(e *Element) error { e.FrameID = "b"; return nil }, "not a frame"},
		{"fn error", "a", func(e *Element) error { return errors.New("boom") }, "boom"},
		{"one point", "ab", func(e *Element) error { e.Points = e.Points[:1]; return nil }, "at least 2 points"},
		{"unknown", "nope", func(e *Element) error { return nil }, "no such element"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := chain(t)
			before, _ := s.Encode()
			err := s.Update(tt.id, tt.fn)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error containing %q", err, tt.want)
			}
			after, _ := s.Encode()
			if string(before) != string(after) {
				t.Errorf("a refused update changed the scene")
			}
		})
	}
}

func TestLocked(t *testing.T) {
	s := chain(t)
	if err := s.Lock("a"); err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"update":    s.Update("a", func(e *Element) error { e.X = 1; return nil }),
		"label":     s.Update("a-label", func(e *Element) error { e.Text = "x"; return nil }),
		"setLabel":  func() error { _, err := s.SetLabel("a", "x"); return err }(),
		"move":      s.MoveBy([]string{"a"}, 1, 1),
		"align":     s.Align([]string{"a", "b"}, AlignTop),
		"group":     func() error { _, err := s.Group("", "a", "b"); return err }(),
		"frame":     s.SetFrame("", "a"),
		"restack":   s.BringToFront("a"),
		"lock only": s.Update("a", func(e *Element) error { e.Locked = true; e.X = 5; return nil }),
	} {
		if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), `"a"`) {
			t.Errorf("%s on locked a: got %v, want ErrLocked naming a", name, err)
		}
	}
	// Arrows bound to a locked shape still follow the other end.
	if err := s.Update("b", func(e *Element) error { e.Y = 200; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := s.Unlock("a"); err != nil {
		t.Fatal(err)
	}
	if l, _ := s.Get("a-label"); l.Locked {
		t.Error("label still locked after Unlock")
	}
	assertConsistent(t, s)
}

func TestMoveByAndFrameMove(t *testing.T) {
	s := chain(t)
	f := shape(Frame, "f", -50, -50, 900, 300)
	mustAdd(t, s, f)
	if err := s.SetFrame("f", "a", "b"); err != nil {
		t.Fatal(err)
	}
	a0, _ := s.Get("a")
	c0, _ := s.Get("c")
	if err := s.Update("f", func(e *Element) error { e.X += 10; e.Y += 20; return nil }); err != nil {
		t.Fatal(err)
	}
	a1, _ := s.Get("a")
	c1, _ := s.Get("c")
	if a1.X-a0.X != 10 || a1.Y-a0.Y != 20 {
		t.Errorf("frame child moved by (%g,%g), want (10,20)", a1.X-a0.X, a1.Y-a0.Y)
	}
	if c1.X != c0.X || c1.Y != c0.Y {
		t.Errorf("non-child moved")
	}
	if err := s.MoveBy([]string{"c"}, 0, 100); err != nil {
		t.Fatal(err)
	}
	assertArrowsOnBorders(t, s)
	assertConsistent(t, s)
}

// assertArrowsOnBorders checks every bound arrow end sits DefaultGap px outside its target's border,
// measured along the ray from the target's centre through the end (the arrow's own direction, unless
// the targets overlap so much that the arrow turns back).
func assertArrowsOnBorders(t *testing.T, s *Scene) {
	t.Helper()
	for _, e := range s.Elements() {
		if e.Type != Arrow {
			continue
		}
		pts := e.AbsPoints()
		check := func(b *Binding, end, prev Point) {
			if b == nil {
				return
			}
			tg, _ := s.Get(b.ElementID)
			// Back off the gap along the ray from the centre (centre-aimed ends) or along the
			// arrow's last segment (ends that keep a focus or fixed point).
			c := tg.Center()
			d := Point{end.X - c.X, end.Y - c.Y}
			l := hypot(d)
			back := Point{end.X - d.X/l*DefaultGap, end.Y - d.Y/l*DefaultGap}
			d2 := Point{end.X - prev.X, end.Y - prev.Y}
			l2 := hypot(d2)
			back2 := Point{end.X + d2.X/l2*DefaultGap, end.Y + d2.Y/l2*DefaultGap}
			if dist := min(DistanceToBorder(tg, back), DistanceToBorder(tg, back2)); dist > 0.05 {
				t.Errorf("arrow %s end at %v: %g px from %s's border after removing the gap", e.ID, end, dist, tg.ID)
			}
		}
		n := len(pts)
		check(e.StartBinding, pts[0], pts[1])
		check(e.EndBinding, pts[n-1], pts[n-2])
	}
}

func TestArrowWithBendKeepsMiddlePoint(t *testing.T) {
	s := newTestScene()
	mustAdd(t, s, rect("a", 0, 0, 100, 60))
	mustAdd(t, s, rect("b", 300, 300, 100, 60))
	ar := NewElement(Arrow)
	ar.ID, ar.X, ar.Y = "ab", 50, 30
	ar.Points = []Point{{0, 0}, {300, 0}, {300, 300}} // via (350, 30)
	ar.StartBinding, ar.EndBinding = &Binding{ElementID: "a"}, &Binding{ElementID: "b"}
	got := mustAdd(t, s, ar)
	pts := got.AbsPoints()
	if len(pts) != 3 || !nearPt(pts[1], Point{350, 30}, 1e-9) {
		t.Fatalf("points %v: the bend moved", pts)
	}
	// Each end is aimed at the bend: right border of a, top border of b.
	if !nearPt(pts[0], Point{100 + DefaultGap, 30}, 1e-9) || !nearPt(pts[2], Point{350, 300 - DefaultGap}, 1e-9) {
		t.Errorf("ends %v and %v", pts[0], pts[2])
	}
	assertArrowsOnBorders(t, s)
	loop := NewElement(Arrow)
	loop.ID, loop.Points = "loop", nil
	loop.StartBinding, loop.EndBinding = &Binding{ElementID: "a"}, &Binding{ElementID: "a"}
	if _, err := s.Add(loop); !errors.Is(err, ErrInvalid) {
		t.Errorf("two-point self loop: got %v, want ErrInvalid", err)
	}
}

func TestArrowsFollowRotatedTargets(t *testing.T) {
	s := newTestScene()
	mustAdd(t, s, rect("a", 0, 0, 120, 60))
	mustAdd(t, s, shape(Diamond, "d", 300, 200, 120, 90))
	mustAdd(t, s, shape(Ellipse, "e", -300, 250, 150, 70))
	mustAdd(t, s, arrow("ad", "a", "d"))
	mustAdd(t, s, arrow("ea", "e", "a"))
	for _, id := range []string{"a", "d", "e"} {
		if err := s.Update(id, func(e *Element) error { e.Angle = 0.7; return nil }); err != nil {
			t.Fatal(err)
		}
		assertArrowsOnBorders(t, s)
	}
	if err := s.Update("d", func(e *Element) error { e.Width, e.Height = 200, 140; return nil }); err != nil {
		t.Fatal(err)
	}
	assertArrowsOnBorders(t, s)
	assertConsistent(t, s)
}

func TestUpdatePropagatesFrameAndLockToLabel(t *testing.T) {
	s := chain(t)
	mustAdd(t, s, shape(Frame, "f", -100, -100, 1000, 400))
	if err := s.Update("a", func(e *Element) error { e.FrameID = "f"; e.Locked = true; return nil }); err != nil {
		t.Fatal(err)
	}
	l, _ := s.Get("a-label")
	if l.FrameID != "f" || !l.Locked {
		t.Errorf("label frameId %q locked %v, want f, true", l.FrameID, l.Locked)
	}
	assertConsistent(t, s)
}
