package scene

import (
	"math"
	"strings"
	"testing"

	"github.com/excalibot/excalibot/scene/fontmetrics"
)

// The expected values below are computed from fontmetrics (which another package owns and tests)
// and the layout rules of Excalidraw's textElement.ts, so these tests check the layout, not the
// font tables.

func TestLabelLayout(t *testing.T) {
	long := "a fairly long label that has to wrap over several lines to fit"
	lh := fontmetrics.LineHeight(DefaultFontFamily)
	tests := []struct {
		name   string
		typ    Type
		w, h   float64
		text   string
		maxW   float64 // inner width per container type
		ox, oy float64 // inner box offset
		wantH  func(textH float64) float64
	}{
		{"rectangle fits", Rectangle, 200, 60, "Hello", 190, 5, 5, nil},
		{"rectangle grows", Rectangle, 120, 40, long, 110, 5, 5, func(th float64) float64 { return math.Ceil(th) + 10 }},
		{"diamond grows", Diamond, 160, 80, long, math.Round(160.0/2) - 10, 5 + 40, 0, func(th float64) float64 { return 2 * (math.Ceil(th) + 10) }},
		{"ellipse grows", Ellipse, 200, 60, long, math.Round(100*math.Sqrt2) - 10, 5 + 100*(1-math.Sqrt2/2), 0, func(th float64) float64 { return math.Round((math.Ceil(th) + 10) / math.Sqrt2 * 2) }},
		{"ellipse fits", Ellipse, 240, 120, "DB", math.Round(120*math.Sqrt2) - 10, 5 + 120*(1-math.Sqrt2/2), 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestScene()
			mustAdd(t, s, shape(tt.typ, "c", 10, 20, tt.w, tt.h))
			lid, err := s.SetLabel("c", tt.text)
			if err != nil {
				t.Fatal(err)
			}
			l, _ := s.Get(lid)
			c, _ := s.Get("c")
			wrapped := fontmetrics.Wrap(DefaultFontFamily, DefaultFontSize, tt.text, tt.maxW)
			if l.Text != wrapped || l.OriginalText != tt.text {
				t.Errorf("text %q (original %q), want %q (%q)", l.Text, l.OriginalText, wrapped, tt.text)
			}
			lines := strings.Count(wrapped, "\n") + 1
			if wantH := float64(lines) * DefaultFontSize * lh; !near(l.Height, wantH) {
				t.Errorf("label height %g, want %g (%d lines)", l.Height, wantH, lines)
			}
			if tt.wantH != nil {
				if want := tt.wantH(l.Height); !near(c.Height, want) {
					t.Errorf("container height %g, want %g", c.Height, want)
				}
			} else if c.Height != tt.h {
				t.Errorf("container height changed to %g", c.Height)
			}
			// Centred horizontally in the inner box; vertically in the (grown) inner box.
			_, _, _, maxH := containerInner(&c, DefaultFontSize)
			oy := tt.oy
			switch tt.typ {
			case Rectangle:
				oy = 5
			case Diamond:
				oy = 5 + c.Height/4
			case Ellipse:
				oy = 5 + c.Height/2*(1-math.Sqrt2/2)
			}
			if want := c.X + tt.ox + (tt.maxW-l.Width)/2; !near(l.X, want) {
				t.Errorf("label x %g, want %g", l.X, want)
			}
			if want := c.Y + oy + (maxH-l.Height)/2; !near(l.Y, want) {
				t.Errorf("label y %g, want %g", l.Y, want)
			}
			if l.TextAlign != "center" || l.VerticalAlign != "middle" || l.ContainerID != "c" {
				t.Errorf("align %s/%s container %q", l.TextAlign, l.VerticalAlign, l.ContainerID)
			}
			assertConsistent(t, s)
		})
	}
}

func TestLabelFollowsContainer(t *testing.T) {
	s := newTestScene()
	mustAdd(t, s, rect("c", 0, 0, 300, 60))
	lid, _ := s.SetLabel("c", "Follow me around please")
	before, _ := s.Get(lid)
	if err := s.Update("c", func(e *Element) error { e.X += 100; e.Y += 50; return nil }); err != nil {
		t.Fatal(err)
	}
	after, _ := s.Get(lid)
	if !near(after.X-before.X, 100) || !near(after.Y-before.Y, 50) {
		t.Errorf("label moved by (%g,%g), want (100,50)", after.X-before.X, after.Y-before.Y)
	}
	// Narrowing the container re-wraps the label.
	if err := s.Update("c", func(e *Element) error { e.Width = 80; return nil }); err != nil {
		t.Fatal(err)
	}
	narrow, _ := s.Get(lid)
	if want := fontmetrics.Wrap(DefaultFontFamily, DefaultFontSize, "Follow me around please", 70); narrow.Text != want {
		t.Errorf("after narrowing: text %q, want %q", narrow.Text, want)
	}
	c, _ := s.Get("c")
	if c.Height < narrow.Height+10 {
		t.Errorf("container height %g does not fit label %g", c.Height, narrow.Height)
	}
	// Rotating the container rotates the label.
	if err := s.Update("c", func(e *Element) error { e.Angle = 0.5; return nil }); err != nil {
		t.Fatal(err)
	}
	rot, _ := s.Get(lid)
	if rot.Angle != 0.5 {
		t.Errorf("label angle %g, want 0.5", rot.Angle)
	}
	assertConsistent(t, s)
}

func TestSetLabelEditAndRemove(t *testing.T) {
	s := newTestScene()
	mustAdd(t, s, rect("c", 0, 0, 200, 60))
	lid, _ := s.SetLabel("c", "one")
	lid2, err := s.SetLabel("c", "two", TextStyle{FontSize: 28, StrokeColor: "#e03131"})
	if err != nil || lid2 != lid {
		t.Fatalf("second SetLabel: %q, %v; want same id %q", lid2, err, lid)
	}
	l, _ := s.Get(lid)
	if l.OriginalText != "two" || l.FontSize != 28 || l.StrokeColor != "#e03131" || l.Version < 2 {
		t.Errorf("label %q size %g colour %s version %d", l.OriginalText, l.FontSize, l.StrokeColor, l.Version)
	}
	if got := s.LabelText("c"); got != "two" {
		t.Errorf("LabelText = %q, want two", got)
	}
	// Editing the label through Update re-lays it out.
	if err := s.Update(lid, func(e *Element) error { e.Text = "three"; return nil }); err != nil {
		t.Fatal(err)
	}
	if got := s.LabelText("c"); got != "three" {
		t.Errorf("LabelText after Update = %q", got)
	}
	if _, err := s.SetLabel("c", ""); err != nil {
		t.Fatal(err)
	}
	c, _ := s.Get("c")
	if s.Has(lid) || len(c.BoundElements) != 0 {
		t.Errorf("label still there: has=%v bound=%v", s.Has(lid), c.BoundElements)
	}
	if _, err := s.SetLabel("c", "x", TextStyle{TextAlign: "middle"}); err == nil {
		t.Error("bad textAlign accepted")
	}
	assertConsistent(t, s)
}

func TestArrowLabelAtMidpoint(t *testing.T) {
	s := newTestScene()
	mustAdd(t, s, rect("a", 0, 0, 100, 60))
	mustAdd(t, s, rect("b", 400, 0, 100, 60))
	mustAdd(t, s, arrow("ab", "a", "b"))
	lid, err := s.SetLabel("ab", "yes")
	if err != nil {
		t.Fatal(err)
	}
	l, _ := s.Get(lid)
	a, _ := s.Get("ab")
	m := linearMidpoint(&a)
	if !near(l.X+l.Width/2, m.X) || !near(l.Y+l.Height/2, m.Y) {
		t.Errorf("label centre (%g,%g), want arrow midpoint %v", l.X+l.Width/2, l.Y+l.Height/2, m)
	}
	// Moving a target moves the arrow and its label.
	if err := s.Update("b", func(e *Element) error { e.Y = 300; return nil }); err != nil {
		t.Fatal(err)
	}
	l, _ = s.Get(lid)
	a, _ = s.Get("ab")
	m = linearMidpoint(&a)
	if !near(l.X+l.Width/2, m.X) || !near(l.Y+l.Height/2, m.Y) {
		t.Errorf("after move: label centre (%g,%g), want %v", l.X+l.Width/2, l.Y+l.Height/2, m)
	}
	assertConsistent(t, s)
}

// TestArrowLabelPathsBreakAfterSlashes: a path wider than an arrow's label wraps at is broken
// after a slash, not between two letters as Excalidraw would; words that fit, words without a
// slash, a path on a long arrow (its label wraps wider) and a box's label are as given.
func TestArrowLabelPathsBreakAfterSlashes(t *testing.T) {
	for _, tc := range []struct {
		container, text, want string
		shown                 string // as Excalidraw wraps it on this arrow; "" for not compared
		long                  bool   // the arrow runs 900 px instead of 300
	}{
		{"ab", "localhost:16686/search", "localhost:16686/\nsearch", "localhost:16686/\nsearch", false},
		{"ab", "GET localhost:9090/api/v1/otlp now", "GET localhost:9090/api/\nv1/otlp now", "GET\nlocalhost:9090/api/\nv1/otlp now", false},
		{"ab", "localhost:3000/dashboard\nUI", "localhost:3000/\ndashboard\nUI", "localhost:3000/\ndashboard\nUI", false},
		{"ab", "read/write", "read/write", "read/write", false},
		{"ab", "supercalifragilisticexpialidocious", "supercalifragilisticexpialidocious", "", false},
		{"ab", "localhost:16686/search", "localhost:16686/search", "localhost:16686/search", true},
		{"a", "localhost:16686/search", "localhost:16686/search", "", false},
	} {
		s := newTestScene()
		bx := 400.0
		if tc.long {
			bx = 1000
		}
		mustAdd(t, s, rect("a", 0, 0, 100, 60))
		mustAdd(t, s, rect("b", bx, 0, 100, 60))
		mustAdd(t, s, arrow("ab", "a", "b"))
		lid, err := s.SetLabel(tc.container, tc.text)
		if err != nil {
			t.Fatal(err)
		}
		l, _ := s.Get(lid)
		if l.OriginalText != tc.want {
			t.Errorf("%s labelled %q: got %q (shown %q), want %q", tc.container, tc.text, l.OriginalText, l.Text, tc.want)
		}
		if tc.shown != "" && l.Text != tc.shown {
			t.Errorf("%s labelled %q: shown %q, want %q", tc.container, tc.text, l.Text, tc.shown)
		}
		assertConsistent(t, s)
	}
}

func TestFreeTextMeasured(t *testing.T) {
	s := newTestScene()
	e := NewElement(Text)
	e.ID, e.Text = "t", "Title\nsecond line"
	got := mustAdd(t, s, e)
	w, _ := fontmetrics.Measure(DefaultFontFamily, DefaultFontSize, e.Text)
	if !near(got.Width, w) || !near(got.Height, 2*DefaultFontSize*fontmetrics.LineHeight(DefaultFontFamily)) {
		t.Errorf("size %gx%g, want %gx%g", got.Width, got.Height, w, 2*DefaultFontSize*1.25)
	}
	if err := s.Update("t", func(e *Element) error { e.FontSize = 40; return nil }); err != nil {
		t.Fatal(err)
	}
	got, _ = s.Get("t")
	if !near(got.Height, 2*40*fontmetrics.LineHeight(DefaultFontFamily)) {
		t.Errorf("height after font size change %g", got.Height)
	}
}
