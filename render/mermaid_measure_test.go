package render

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// Measurements of a converted Mermaid diagram, for TestMermaidReal: what a reader sees wrong in
// the picture (a label on the node its arrow leaves, markup shown as text, arrow ends away from
// the shapes they are bound to).

// melem is the part of an element the measurements read.
type melem struct {
	ID              string       `json:"id"`
	Type            string       `json:"type"`
	X               float64      `json:"x"`
	Y               float64      `json:"y"`
	Width, Height   float64      `json:"-"`
	W               float64      `json:"width"`
	H               float64      `json:"height"`
	Text            string       `json:"text"`
	OriginalText    string       `json:"originalText"`
	ContainerID     string       `json:"containerId"`
	Link            *string      `json:"link"`
	StrokeColor     string       `json:"strokeColor"`
	BackgroundColor string       `json:"backgroundColor"`
	FontSize        float64      `json:"fontSize"`
	Points          [][2]float64 `json:"points"`
	StartArrowhead  *string      `json:"startArrowhead"`
	EndArrowhead    *string      `json:"endArrowhead"`
	StrokeStyle     string       `json:"strokeStyle"`
	StartBinding    *mbinding    `json:"startBinding"`
	EndBinding      *mbinding    `json:"endBinding"`
	BoundElements   []struct {
		ID   string `json:"id"`
		Type string `json:"type"`
	} `json:"boundElements"`
	GroupIDs []string `json:"groupIds"`
}

type mbinding struct {
	ElementID string  `json:"elementId"`
	Gap       float64 `json:"gap"`
}

func melems(t *testing.T, raw []json.RawMessage) []melem {
	t.Helper()
	out := make([]melem, len(raw))
	for i, r := range raw {
		if err := json.Unmarshal(r, &out[i]); err != nil {
			t.Fatalf("element %d: %v", i, err)
		}
		out[i].Width, out[i].Height = out[i].W, out[i].H
	}
	return out
}

type mpt struct{ X, Y float64 }

func (e melem) abs() []mpt {
	out := make([]mpt, len(e.Points))
	for i, p := range e.Points {
		out[i] = mpt{e.X + p[0], e.Y + p[1]}
	}
	return out
}

type mbox struct{ x0, y0, x1, y1 float64 }

func (e melem) box() mbox { return mbox{e.X, e.Y, e.X + e.Width, e.Y + e.Height} }

func (b mbox) overlaps(o mbox, inset float64) bool {
	return b.x0+inset < o.x1-inset && o.x0+inset < b.x1-inset && b.y0+inset < o.y1-inset && o.y0+inset < b.y1-inset
}

func (b mbox) contains(o mbox) bool {
	return b.x0 <= o.x0 && b.y0 <= o.y0 && b.x1 >= o.x1 && b.y1 >= o.y1
}

// mermaidStats are the measurements of one converted diagram.
type mermaidStats struct {
	Shapes, Arrows, Labels int
	// MidLabels counts arrow labels whose centre lies in the middle half of their arrow (by arc
	// length along its points); OffArrow those whose centre is more than 2 px from it.
	MidLabels, OffArrow int
	// LabelsOnNodes counts arrow labels overlapping a shape that is not a frame (a shape
	// holding others: subgraphs, boxes); LabelsOnLabels pairs of overlapping arrow labels.
	LabelsOnNodes, LabelsOnLabels int
	// Markup counts texts showing HTML tags or entities.
	Markup int
	// Unbound counts arrow ends bound to nothing; FarEnds bound ends more than 8 px from the
	// border of their shape (Excalidraw's gap is 5).
	Unbound, FarEnds int
}

var reMarkup = regexp.MustCompile(`(?i)<\s*/?\s*(br|a|b|i|u|span|div|p|img|strong|em|sub|sup|font)\b[^>]*>|&(amp|lt|gt|quot|nbsp|#\d+|#x[0-9a-f]+);`)

// measure computes the stats of converted elements.
func measure(es []melem) mermaidStats {
	var st mermaidStats
	byID := map[string]melem{}
	for _, e := range es {
		byID[e.ID] = e
	}
	var shapes []melem
	for _, e := range es {
		switch e.Type {
		case "rectangle", "ellipse", "diamond":
			shapes = append(shapes, e)
		}
	}
	frame := map[string]bool{}
	for _, a := range shapes {
		for _, b := range shapes {
			if a.ID != b.ID && a.box().contains(b.box()) && a.Width*a.Height > b.Width*b.Height {
				frame[a.ID] = true
			}
		}
	}
	var labels []mbox
	for _, e := range es {
		if e.Type == "text" && reMarkup.MatchString(e.Text) {
			st.Markup++
		}
		if e.Type == "rectangle" || e.Type == "ellipse" || e.Type == "diamond" {
			if !frame[e.ID] {
				st.Shapes++
			}
			continue
		}
		if e.Type != "arrow" {
			continue
		}
		st.Arrows++
		pts := e.abs()
		for i, b := range []*mbinding{e.StartBinding, e.EndBinding} {
			end := pts[0]
			if i == 1 {
				end = pts[len(pts)-1]
			}
			if b == nil {
				st.Unbound++
				continue
			}
			if s, ok := byID[b.ElementID]; ok && borderDist(s, end) > 8 {
				st.FarEnds++
			}
		}
		for _, ref := range e.BoundElements {
			t, ok := byID[ref.ID]
			if !ok || ref.Type != "text" {
				continue
			}
			st.Labels++
			c := mpt{t.X + t.Width/2, t.Y + t.Height/2}
			d, at, total := onPolyline(pts, c)
			if d > 2 {
				st.OffArrow++
			}
			if total > 0 && at/total >= 0.25 && at/total <= 0.75 {
				st.MidLabels++
			}
			lb := t.box()
			for _, s := range shapes {
				if !frame[s.ID] && lb.overlaps(s.box(), 1) {
					st.LabelsOnNodes++
					break
				}
			}
			for _, o := range labels {
				if lb.overlaps(o, 1) {
					st.LabelsOnLabels++
				}
			}
			labels = append(labels, lb)
		}
	}
	return st
}

// onPolyline returns the distance from p to the polyline, the arc length of the nearest point
// and the polyline's length.
func onPolyline(pts []mpt, p mpt) (d, at, total float64) {
	d = math.Inf(1)
	for i := 1; i < len(pts); i++ {
		a, b := pts[i-1], pts[i]
		dx, dy := b.X-a.X, b.Y-a.Y
		l := math.Hypot(dx, dy)
		u := 0.0
		if l > 0 {
			u = math.Max(0, math.Min(1, ((p.X-a.X)*dx+(p.Y-a.Y)*dy)/(l*l)))
		}
		if q := math.Hypot(a.X+u*dx-p.X, a.Y+u*dy-p.Y); q < d {
			d, at = q, total+u*l
		}
		total += l
	}
	return d, at, total
}

// borderDist is the distance from p to the border of a shape's box, ellipse or diamond.
func borderDist(s melem, p mpt) float64 {
	cx, cy, hw, hh := s.X+s.Width/2, s.Y+s.Height/2, s.Width/2, s.Height/2
	var poly []mpt
	switch s.Type {
	case "diamond":
		poly = []mpt{{cx, cy - hh}, {cx + hw, cy}, {cx, cy + hh}, {cx - hw, cy}, {cx, cy - hh}}
	case "ellipse":
		for k := 0; k <= 64; k++ {
			a := 2 * math.Pi * float64(k) / 64
			poly = append(poly, mpt{cx + hw*math.Cos(a), cy + hh*math.Sin(a)})
		}
	default:
		poly = []mpt{{s.X, s.Y}, {s.X + s.Width, s.Y}, {s.X + s.Width, s.Y + s.Height}, {s.X, s.Y + s.Height}, {s.X, s.Y}}
	}
	d, _, _ := onPolyline(poly, p)
	return d
}

func (s mermaidStats) add(o mermaidStats) mermaidStats {
	return mermaidStats{s.Shapes + o.Shapes, s.Arrows + o.Arrows, s.Labels + o.Labels, s.MidLabels + o.MidLabels,
		s.OffArrow + o.OffArrow, s.LabelsOnNodes + o.LabelsOnNodes, s.LabelsOnLabels + o.LabelsOnLabels,
		s.Markup + o.Markup, s.Unbound + o.Unbound, s.FarEnds + o.FarEnds}
}

func statsHeader() string {
	return fmt.Sprintf("%-28s %6s %6s %6s %6s %6s %6s %6s %6s %6s %6s %s", "diagram", "shapes", "arrows", "labels",
		"mid", "off", "onNode", "onLbl", "markup", "unbnd", "far", "check")
}

func (s mermaidStats) row(name, check string) string {
	return fmt.Sprintf("%-28s %6d %6d %6d %6d %6d %6d %6d %6d %6d %6d %s", name, s.Shapes, s.Arrows, s.Labels,
		s.MidLabels, s.OffArrow, s.LabelsOnNodes, s.LabelsOnLabels, s.Markup, s.Unbound, s.FarEnds, check)
}

// summary is the golden record of a converted diagram: what it holds, without coordinates
// (they follow Chromium's text measurement).
func summary(es []melem) string {
	byID := map[string]melem{}
	for _, e := range es {
		byID[e.ID] = e
	}
	labelOf := func(e melem) (string, string) {
		for _, ref := range e.BoundElements {
			if t, ok := byID[ref.ID]; ok && ref.Type == "text" {
				return t.OriginalText, t.StrokeColor
			}
		}
		return "", ""
	}
	var lines []string
	for _, e := range es {
		link := ""
		if e.Link != nil && *e.Link != "" {
			link = " link=" + *e.Link
		}
		switch e.Type {
		case "rectangle", "ellipse", "diamond":
			text, colour := labelOf(e)
			if isRandomID(e.ID) && text == "" {
				continue // sequence-diagram furniture (activations, group boxes)
			}
			id := e.ID
			if isRandomID(id) {
				id = "_"
			}
			lines = append(lines, fmt.Sprintf("%s %s %q fill=%s stroke=%s text=%s%s", e.Type, id, text, e.BackgroundColor, e.StrokeColor, colour, link))
		case "arrow":
			text, _ := labelOf(e)
			from, to := "-", "-"
			if e.StartBinding != nil {
				from = e.StartBinding.ElementID
			}
			if e.EndBinding != nil {
				to = e.EndBinding.ElementID
			}
			head := func(h *string) string {
				if h == nil {
					return "none"
				}
				return *h
			}
			lines = append(lines, fmt.Sprintf("arrow %s -> %s %q %s/%s %s stroke=%s%s", from, to, text,
				head(e.StartArrowhead), head(e.EndArrowhead), e.StrokeStyle, e.StrokeColor, link))
		case "text":
			if e.ContainerID == "" {
				lines = append(lines, fmt.Sprintf("text %q%s", e.Text, link))
			}
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n"
}

var reRandomID = regexp.MustCompile(`^[A-Za-z0-9_-]{21}$`)

// isRandomID reports whether an id is one of Excalidraw's generated ones (nanoid: 21 characters
// of A-Z a-z 0-9 _ -). A Mermaid name of 21 letters ("AuthenticationService") is told apart by
// what nanoid's ids nearly always have: a digit, '_' or '-', or many capitals among many small
// letters. Testing for a digit alone missed about one id in forty.
func isRandomID(id string) bool {
	if !reRandomID.MatchString(id) {
		return false
	}
	if strings.ContainsAny(id, "0123456789_-") {
		return true
	}
	upper := 0
	for _, r := range id {
		if r >= 'A' && r <= 'Z' {
			upper++
		}
	}
	return upper >= 5 && len(id)-upper >= 5
}

func TestIsRandomID(t *testing.T) {
	for _, c := range []struct {
		id   string
		want bool
	}{
		{"PgfXAaEZuvNJMONwFTkbj", true}, // generated, no digit
		{"V1StGXR8_Z5jdHi6B-myT", true},
		{"AuthenticationService", false}, // a Mermaid name of 21 letters
		{"Клиент-bottom-4", false},
		{"A", false},
	} {
		if got := isRandomID(c.id); got != c.want {
			t.Errorf("isRandomID(%q) = %v, want %v", c.id, got, c.want)
		}
	}
}
