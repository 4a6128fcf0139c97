package mermaid

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/excalibot/excalibot/scene"
)

// Elements the way the converter writes them (convertToExcalidrawElements), reduced to what
// Finish reads.

func rect(id string, x, y, w, h float64, bound ...string) map[string]any {
	var refs []any
	for _, b := range bound {
		typ := "arrow"
		if strings.HasPrefix(b, "t_") {
			typ = "text"
		}
		refs = append(refs, map[string]any{"id": b, "type": typ})
	}
	return map[string]any{"id": id, "type": "rectangle", "x": x, "y": y, "width": w, "height": h, "boundElements": refs}
}

func arrow(id, from, to string, pts ...float64) map[string]any {
	rel := []any{}
	for i := 0; i+1 < len(pts); i += 2 {
		rel = append(rel, []any{pts[i] - pts[0], pts[i+1] - pts[1]})
	}
	a := map[string]any{"id": id, "type": "arrow", "x": pts[0], "y": pts[1], "width": 0, "height": 0, "points": rel,
		"boundElements": []any{map[string]any{"id": "t_" + id, "type": "text"}}}
	if from != "" {
		a["startBinding"] = map[string]any{"elementId": from, "focus": 0, "gap": 1}
	}
	if to != "" {
		a["endBinding"] = map[string]any{"elementId": to, "focus": 0, "gap": 1}
	}
	return a
}

func label(container, text string, w, h float64) map[string]any {
	return map[string]any{"id": "t_" + container, "type": "text", "x": 0, "y": 0, "width": w, "height": h, "text": text,
		"originalText": text, "fontSize": 20, "fontFamily": 5, "containerId": container, "lineHeight": 1.25}
}

func finish(t *testing.T, typ string, routes map[string]Route, els ...map[string]any) map[string]map[string]any {
	t.Helper()
	raw := make([]json.RawMessage, len(els))
	for i, e := range els {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		raw[i] = b
	}
	out, err := Finish(raw, routes, typ)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]map[string]any{}
	for _, r := range out {
		var e map[string]any
		if err := json.Unmarshal(r, &e); err != nil {
			t.Fatal(err)
		}
		m[e["id"].(string)] = e
	}
	return m
}

func element(m map[string]any) scene.Element {
	return scene.Element{Type: scene.Type(m["type"].(string)), X: num(m, "x"), Y: num(m, "y"), Width: num(m, "width"), Height: num(m, "height")}
}

func labelCentre(m map[string]any) scene.Point {
	return scene.Point{X: num(m, "x") + num(m, "width")/2, Y: num(m, "y") + num(m, "height")/2}
}

// TestFinishFollowsTheRoute: the arrow traces Mermaid's path, its ends sit DefaultGap outside the
// shapes' borders (the route started inside one and short of the other), its label is its middle
// point, and its bindings carry the focus and gap of the ends.
func TestFinishFollowsTheRoute(t *testing.T) {
	// A above B; Mermaid's path bends out to the right and back (a cubic), label on its far side.
	routes := map[string]Route{"A_B": {
		Paths: []RoutePath{{D: "M50,25 C50,100 200,100 200,150 C200,200 50,200 50,240", M: [6]float64{1, 0, 0, 1, 0, 0}}},
		Label: &[2]float64{170, 145},
	}}
	got := finish(t, "flowchart-v2", routes,
		rect("A", 0, 0, 100, 50, "A_B"), rect("B", 0, 250, 100, 50, "A_B"),
		arrow("A_B", "A", "B", 50, 50, 50, 250), label("A_B", "yes", 30, 25))
	a := got["A_B"]
	pts, _ := absPoints(a)
	if len(pts)%2 == 0 || len(pts) < 5 {
		t.Fatalf("%d points %v, want an odd number tracing the bend", len(pts), pts)
	}
	path, _ := routes["A_B"].polyline()
	for _, p := range pts {
		if d := offRoute(path, p); d > 0.01 && !near(p, pts[0]) && !near(p, pts[len(pts)-1]) {
			t.Errorf("point %v is %.2f px off Mermaid's path", p, d)
		}
	}
	// Each end is DefaultGap along the path from where it crosses the shape's border (less than
	// that straight out from a border it leaves at a slant).
	for i, end := range []scene.Point{pts[0], pts[len(pts)-1]} {
		shape := element(got[[]string{"A", "B"}[i]])
		if d := scene.DistanceToBorder(shape, end); d > scene.DefaultGap+0.1 || d < 2 || scene.ContainsPoint(shape, end, 0) {
			t.Errorf("end %d at %v is %.2f px from its shape's border, want up to %d outside", i, end, d, scene.DefaultGap)
		}
	}
	if c, m := labelCentre(got["t_A_B"]), pts[len(pts)/2]; !near(c, m) {
		t.Errorf("label centred at %v, want the middle point %v", c, m)
	}
	if c := labelCentre(got["t_A_B"]); offRoute(path, c) > 0.01 {
		t.Errorf("label centre %v is off the path", c)
	}
	for i, k := range []string{"startBinding", "endBinding"} {
		b := a[k].(map[string]any)
		shape := element(got[[]string{"A", "B"}[i]])
		end := []scene.Point{pts[0], pts[len(pts)-1]}[i]
		if g, want := num(b, "gap"), scene.DistanceToBorder(shape, end); math.Abs(g-want) > 0.01 {
			t.Errorf("%s gap %.3f, want the end's distance %.3f", k, g, want)
		}
		adj := []scene.Point{pts[1], pts[len(pts)-2]}[i]
		if f, want := num(b, "focus"), scene.FocusOf(shape, adj, end); math.Abs(f-want) > 0.001 {
			t.Errorf("%s focus %.3f, want %.3f", k, f, want)
		}
	}
}

func near(a, b scene.Point) bool { return dist(a, b) < 0.01 }

// TestFinishLabelAvoidsNodes: the middle of the route is taken by a node, so the label goes where
// Mermaid put it.
func TestFinishLabelAvoidsNodes(t *testing.T) {
	routes := map[string]Route{"A_B": {
		Paths: []RoutePath{{D: "M50,50 L50,450", M: [6]float64{1, 0, 0, 1, 0, 0}}},
		Label: &[2]float64{50, 100},
	}}
	got := finish(t, "flowchart-v2", routes,
		rect("A", 0, 0, 100, 50, "A_B"), rect("B", 0, 450, 100, 50, "A_B"), rect("C", 30, 230, 40, 40),
		arrow("A_B", "A", "B", 50, 50, 50, 450), label("A_B", "a long label", 110, 25))
	c := labelCentre(got["t_A_B"])
	if math.Abs(c.Y-100) > 0.5 || math.Abs(c.X-50) > 0.5 {
		t.Errorf("label at %v, want Mermaid's spot (50,100) off node C", c)
	}
}

// TestFinishSelfLoop: a route in three pieces (Mermaid's self-loop) becomes one arrow around the
// shape, leaving and entering it on its border.
func TestFinishSelfLoop(t *testing.T) {
	id := [6]float64{1, 0, 0, 1, 0, 0}
	routes := map[string]Route{"A_A": {Paths: []RoutePath{
		{D: "M80,50 L80,80", M: id}, {D: "M80,80 L120,100 L150,60", M: id}, {D: "M150,60 L100,40", M: id},
	}, Label: &[2]float64{120, 100}}}
	got := finish(t, "flowchart-v2", routes, rect("A", 0, 0, 100, 50, "A_A"), arrow("A_A", "A", "A", 80, 50, 100, 40), label("A_A", "retry", 50, 25))
	pts, _ := absPoints(got["A_A"])
	shape := element(got["A"])
	if len(pts) < 3 || scene.ContainsPoint(shape, pts[len(pts)/2], 0) {
		t.Fatalf("points %v do not loop outside A", pts)
	}
	for _, end := range []scene.Point{pts[0], pts[len(pts)-1]} {
		if d := scene.DistanceToBorder(shape, end); math.Abs(d-scene.DefaultGap) > 0.6 {
			t.Errorf("end %v is %.2f px from A's border", end, d)
		}
	}
}

// TestFinishSequenceUnbinds: a message bound to an actor's box far above it loses the binding on
// both sides; one that touches its box keeps it.
func TestFinishSequenceUnbinds(t *testing.T) {
	got := finish(t, "sequence", nil,
		rect("Alice-top", 0, 0, 100, 50, "m1", "m2"), rect("Bob-top", 300, 0, 100, 50, "m1", "m2"),
		arrow("m1", "Alice-top", "Bob-top", 50, 300, 350, 300), label("m1", "hi", 20, 25),
		arrow("m2", "Alice-top", "Bob-top", 105, 25, 295, 25), label("m2", "touching", 80, 25))
	if got["m1"]["startBinding"] != nil || got["m1"]["endBinding"] != nil {
		t.Errorf("m1 is still bound: %v %v", got["m1"]["startBinding"], got["m1"]["endBinding"])
	}
	for _, box := range []string{"Alice-top", "Bob-top"} {
		refs := fmt.Sprint(got[box]["boundElements"])
		if strings.Contains(refs, "m1") || !strings.Contains(refs, "m2") {
			t.Errorf("%s lists %s, want m2 and not m1", box, refs)
		}
	}
	if got["m2"]["startBinding"] == nil || got["m2"]["endBinding"] == nil {
		t.Error("m2, which touches both boxes, lost a binding")
	}
	if c := labelCentre(got["t_m1"]); math.Abs(c.X-200) > 0.01 || math.Abs(c.Y-300) > 0.01 {
		t.Errorf("m1's label at %v, want the message's middle (200,300)", c)
	}
}

// TestFinishLinks: only http and https links stay.
func TestFinishLinks(t *testing.T) {
	a, b, c := rect("A", 0, 0, 10, 10), rect("B", 50, 0, 10, 10), rect("C", 100, 0, 10, 10)
	a["link"], b["link"], c["link"] = "https://example.org/a", "javascript:alert(1)", "data:text/html,x"
	got := finish(t, "flowchart-v2", nil, a, b, c)
	if got["A"]["link"] != "https://example.org/a" || got["B"]["link"] != nil || got["C"]["link"] != nil {
		t.Errorf("links %v %v %v, want the https one only", got["A"]["link"], got["B"]["link"], got["C"]["link"])
	}
}

// TestFinishBadRoute: route data that is not SVG path data leaves the arrow on its own points.
func TestFinishBadRoute(t *testing.T) {
	routes := map[string]Route{"A_B": {Paths: []RoutePath{{D: "Q oops", M: [6]float64{1, 0, 0, 1, 0, 0}}}}}
	got := finish(t, "flowchart-v2", routes, rect("A", 0, 0, 100, 50, "A_B"), rect("B", 0, 250, 100, 50, "A_B"),
		arrow("A_B", "A", "B", 50, 55, 50, 245), label("A_B", "x", 10, 25))
	pts, _ := absPoints(got["A_B"])
	if pts[0].X != 50 || pts[len(pts)-1].X != 50 {
		t.Errorf("points %v, want the straight arrow kept", pts)
	}
}

func TestFinishRejectsNonObjects(t *testing.T) {
	if _, err := Finish([]json.RawMessage{json.RawMessage(`[1]`)}, nil, "flowchart-v2"); err == nil || !strings.Contains(err.Error(), "element 0") {
		t.Errorf("err = %v, want one naming element 0", err)
	}
}
