package scene

import (
	"errors"
	"slices"
	"testing"
)

func TestGroupUngroup(t *testing.T) {
	s := chain(t)
	g1, err := s.Group("g1", "a", "b")
	if err != nil || g1 != "g1" {
		t.Fatalf("Group: %q %v", g1, err)
	}
	g2, err := s.Group("", "a", "b", "c")
	if err != nil || g2 == "" {
		t.Fatalf("outer Group: %q %v", g2, err)
	}
	a, _ := s.Get("a")
	if want := []string{"g1", g2}; !slices.Equal(a.GroupIDs, want) {
		t.Errorf("a.groupIds %v, want %v (innermost first)", a.GroupIDs, want)
	}
	if l, _ := s.Get("a-label"); !slices.Equal(l.GroupIDs, a.GroupIDs) {
		t.Errorf("label groupIds %v, want %v", l.GroupIDs, a.GroupIDs)
	}
	if got := s.GroupMembers("g1"); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("members %v", got)
	}
	if got := s.Groups(); !slices.Equal(got, []string{"g1", g2}) {
		t.Errorf("groups %v", got)
	}
	if _, err := s.Group("g1", "a", "c"); err == nil {
		t.Error("regrouping into an existing group id was accepted")
	}
	if _, err := s.Group("x", "a"); !errors.Is(err, ErrInvalid) {
		t.Errorf("one-element group: %v", err)
	}
	if _, err := s.Group("x", "a", "a-label"); !errors.Is(err, ErrInvalid) {
		t.Errorf("grouping a label: %v", err)
	}
	members, err := s.Ungroup("g1")
	if err != nil || !slices.Equal(members, []string{"a", "b"}) {
		t.Fatalf("Ungroup: %v %v", members, err)
	}
	a, _ = s.Get("a")
	if !slices.Equal(a.GroupIDs, []string{g2}) {
		t.Errorf("after ungroup: %v", a.GroupIDs)
	}
	if _, err := s.Ungroup("g1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("ungroup twice: %v", err)
	}
	assertConsistent(t, s)
}

func TestAlign(t *testing.T) {
	tests := []struct {
		a    Alignment
		want func(r Rect) float64
		val  float64
	}{
		{AlignLeft, func(r Rect) float64 { return r.X }, 0},
		{AlignRight, func(r Rect) float64 { return r.X + r.Width }, 720},
		{AlignCenter, func(r Rect) float64 { return r.X + r.Width/2 }, 360},
		{AlignTop, func(r Rect) float64 { return r.Y }, 0},
		{AlignBottom, func(r Rect) float64 { return r.Y + r.Height }, 300},
		{AlignMiddle, func(r Rect) float64 { return r.Y + r.Height/2 }, 150},
	}
	for _, tt := range tests {
		t.Run(string(tt.a), func(t *testing.T) {
			s := chain(t)
			if err := s.Update("c", func(e *Element) error { e.Y = 220; return nil }); err != nil {
				t.Fatal(err)
			}
			if err := s.Align([]string{"a", "b", "c"}, tt.a); err != nil {
				t.Fatal(err)
			}
			for _, id := range []string{"a", "b", "c"} {
				e, _ := s.Get(id)
				if got := tt.want(BoundingBox(e)); !near(got, tt.val) {
					t.Errorf("%s: got %g, want %g", id, got, tt.val)
				}
				// The label moved with its shape.
				l, _ := s.Get(id + "-label")
				if c := l.Center(); !BoundingBox(e).Contains(c) {
					t.Errorf("label of %s at %v is outside its shape %+v", id, c, BoundingBox(e))
				}
			}
			assertArrowsOnBorders(t, s)
			assertConsistent(t, s)
		})
	}
}

func TestAlignMovesGroupsAsOne(t *testing.T) {
	s := chain(t)
	if _, err := s.Group("g", "a", "b"); err != nil {
		t.Fatal(err)
	}
	if err := s.Update("c", func(e *Element) error { e.Y = 300; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := s.Align([]string{"a", "b", "c"}, AlignBottom); err != nil {
		t.Fatal(err)
	}
	a, _ := s.Get("a")
	b, _ := s.Get("b")
	c, _ := s.Get("c")
	// a and b keep their relative position; the group's bottom meets c's.
	if a.Y != b.Y || !near(a.Y+a.Height, c.Y+c.Height) {
		t.Errorf("a.y=%g b.y=%g, group bottom %g, c bottom %g", a.Y, b.Y, a.Y+a.Height, c.Y+c.Height)
	}
	if err := s.Align([]string{"a", "b"}, AlignTop); !errors.Is(err, ErrInvalid) {
		t.Errorf("aligning one group: got %v, want ErrInvalid", err)
	}
	if err := s.Align([]string{"a", "c"}, "diagonal"); !errors.Is(err, ErrInvalid) {
		t.Errorf("bad alignment: %v", err)
	}
}

func TestDistribute(t *testing.T) {
	s := newTestScene()
	mustAdd(t, s, rect("a", 0, 0, 100, 50))
	mustAdd(t, s, rect("b", 130, 100, 60, 50))
	mustAdd(t, s, rect("c", 500, 30, 100, 50))
	mustAdd(t, s, arrow("ab", "a", "b"))
	mustAdd(t, s, arrow("bc", "b", "c"))
	if err := s.Distribute([]string{"c", "a", "b"}, Horizontal); err != nil {
		t.Fatal(err)
	}
	a, _ := s.Get("a")
	b, _ := s.Get("b")
	c, _ := s.Get("c")
	gap1, gap2 := b.X-(a.X+a.Width), c.X-(b.X+b.Width)
	if !near(gap1, gap2) || a.X != 0 || c.X != 500 {
		t.Errorf("gaps %g and %g; a.x=%g c.x=%g", gap1, gap2, a.X, c.X)
	}
	if err := s.Distribute([]string{"a", "b", "c"}, Vertical); err != nil {
		t.Fatal(err)
	}
	a, _ = s.Get("a")
	b, _ = s.Get("b")
	c, _ = s.Get("c")
	// Sorted by centre: a (25), c (55), b (125).
	if g1, g2 := c.Y-(a.Y+a.Height), b.Y-(c.Y+c.Height); !near(g1, g2) {
		t.Errorf("vertical gaps %g and %g", g1, g2)
	}
	assertArrowsOnBorders(t, s)
	assertConsistent(t, s)
	if err := s.Distribute([]string{"a", "b"}, Horizontal); !errors.Is(err, ErrInvalid) {
		t.Errorf("two elements: %v", err)
	}
}

func TestRestack(t *testing.T) {
	s := chain(t)
	if err := s.SendToBack("c"); err != nil {
		t.Fatal(err)
	}
	ids := s.IDs()
	if ids[0] != "c" || ids[1] != "c-label" {
		t.Errorf("after SendToBack: %v", ids)
	}
	if err := s.BringToFront("a"); err != nil {
		t.Fatal(err)
	}
	ids = s.IDs()
	if n := len(ids); ids[n-2] != "a" || ids[n-1] != "a-label" {
		t.Errorf("after BringToFront: %v", ids)
	}
	assertConsistent(t, s)
}
