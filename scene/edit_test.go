package scene

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// newTestScene returns a deterministic scene: fixed random source and clock.
func newTestScene() *Scene {
	return New(WithRand(rand.New(rand.NewPCG(1, 2))), WithClock(func() time.Time {
		return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	}))
}

func mustAdd(t *testing.T, s *Scene, e Element) Element {
	t.Helper()
	got, err := s.Add(e)
	if err != nil {
		t.Fatalf("Add(%s %q): %v", e.Type, e.ID, err)
	}
	return got
}

func rect(id string, x, y, w, h float64) Element {
	e := NewElement(Rectangle)
	e.ID, e.X, e.Y, e.Width, e.Height = id, x, y, w, h
	return e
}

func shape(t Type, id string, x, y, w, h float64) Element {
	e := NewElement(t)
	e.ID, e.X, e.Y, e.Width, e.Height = id, x, y, w, h
	return e
}

func arrow(id, from, to string) Element {
	e := NewElement(Arrow)
	e.ID = id
	e.Points = nil
	e.StartBinding = &Binding{ElementID: from}
	e.EndBinding = &Binding{ElementID: to}
	return e
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-6 }

func TestAddFillsFields(t *testing.T) {
	s := newTestScene()
	got := mustAdd(t, s, rect("a", 10, 20, 100, 50))
	if got.Seed == 0 || got.Seed == 1 || got.VersionNonce == 0 {
		t.Errorf("seed %d nonce %d: want random values", got.Seed, got.VersionNonce)
	}
	if got.Version != 1 || got.Index != "a0" || got.Updated == 0 {
		t.Errorf("version %d index %q updated %d, want 1, a0, set", got.Version, got.Index, got.Updated)
	}
	if got.Roundness == nil || got.Roundness.Type != RoundnessAdaptive {
		t.Errorf("roundness %v, want type 3", got.Roundness)
	}
	b := mustAdd(t, s, rect("b", 200, 20, 100, 50))
	if b.Index <= got.Index {
		t.Errorf("second index %q not above %q", b.Index, got.Index)
	}
	if _, err := s.Add(rect("a", 0, 0, 10, 10)); !errors.Is(err, ErrExists) {
		t.Errorf("duplicate id: got %v, want ErrExists", err)
	}
	assertConsistent(t, s)
}

func TestArrowBoundEdgeToEdge(t *testing.T) {
	s := newTestScene()
	mustAdd(t, s, rect("a", 0, 0, 100, 50))
	mustAdd(t, s, rect("b", 300, 0, 100, 50))
	a := mustAdd(t, s, arrow("ab", "a", "b"))
	// Horizontal: from a's right border + gap to b's left border - gap, at y = 25.
	if !near(a.X, 100+DefaultGap) || !near(a.Y, 25) {
		t.Errorf("start (%g,%g), want (%g,25)", a.X, a.Y, 100.0+DefaultGap)
	}
	end := a.Points[len(a.Points)-1]
	if !near(a.X+end.X, 300-DefaultGap) || !near(a.Y+end.Y, 25) {
		t.Errorf("end (%g,%g), want (%g,25)", a.X+end.X, a.Y+end.Y, 300.0-DefaultGap)
	}
	ra, _ := s.Get("a")
	if len(ra.BoundElements) != 1 || ra.BoundElements[0] != (BoundElement{ID: "ab", Type: Arrow}) {
		t.Errorf("a.boundElements = %v", ra.BoundElements)
	}
	// Moving b drags the arrow along.
	if err := s.Update("b", func(e *Element) error { e.Y = 200; return nil }); err != nil {
		t.Fatal(err)
	}
	a, _ = s.Get("ab")
	pts := a.AbsPoints()
	bb, _ := s.Get("b")
	// The gap is measured along the arrow: stepping DefaultGap px further along the arrow lands on
	// b's border.
	p, q := pts[len(pts)-1], pts[0]
	l := math.Hypot(q.X-p.X, q.Y-p.Y)
	onBorder := Point{p.X - (q.X-p.X)/l*DefaultGap, p.Y - (q.Y-p.Y)/l*DefaultGap}
	if d := DistanceToBorder(bb, onBorder); d > 1e-6 {
		t.Errorf("end minus gap is %g px from b's border, want 0", d)
	}
	assertConsistent(t, s)
}

func TestLabel(t *testing.T) {
	s := newTestScene()
	mustAdd(t, s, rect("a", 0, 0, 100, 50))
	lid, err := s.SetLabel("a", "Hello")
	if err != nil {
		t.Fatal(err)
	}
	l, _ := s.Get(lid)
	c, _ := s.Get("a")
	if l.ContainerID != "a" || c.Label() != lid {
		t.Fatalf("label %q container %q, container label %q", lid, l.ContainerID, c.Label())
	}
	if !near(l.X+l.Width/2, 50) || !near(l.Y+l.Height/2, 25) {
		t.Errorf("label centre (%g,%g), want (50,25)", l.X+l.Width/2, l.Y+l.Height/2)
	}
	assertConsistent(t, s)
}

func TestLockedRefuses(t *testing.T) {
	s := newTestScene()
	mustAdd(t, s, rect("a", 0, 0, 100, 50))
	if err := s.Lock("a"); err != nil {
		t.Fatal(err)
	}
	err := s.Update("a", func(e *Element) error { e.X = 5; return nil })
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("got %v, want ErrLocked", err)
	}
	if err := s.Update("a", func(e *Element) error { e.Locked = false; return nil }); err != nil {
		t.Fatalf("unlock through Update: %v", err)
	}
}
