package bot

import (
	"fmt"
	"strings"
	"testing"

	"github.com/excalibot/excalibot/scene"
)

// el is one element of a test scene, written as Excalidraw writes it.
type el map[string]any

func box(id string, x float64, label string) []el {
	out := []el{{"id": id, "type": "rectangle", "x": x, "y": 0, "width": 160, "height": 80}}
	if label != "" {
		out = append(out, el{"id": id + "-label", "type": "text", "x": x + 10, "y": 30, "width": 140, "height": 25,
			"text": label, "originalText": label, "containerId": id, "fontSize": 20})
	}
	return out
}

func arrow(id, from, to string) []el {
	return []el{{"id": id, "type": "arrow", "x": 160, "y": 40, "width": 40, "height": 0,
		"points":       [][2]float64{{0, 0}, {40, 0}},
		"startBinding": map[string]any{"elementId": from, "focus": 0, "gap": 1},
		"endBinding":   map[string]any{"elementId": to, "focus": 0, "gap": 1}}}
}

func text(id, s string) []el {
	return []el{{"id": id, "type": "text", "x": 0, "y": 200, "width": 100, "height": 25, "text": s, "originalText": s, "fontSize": 20}}
}

// with returns els with fields of element id replaced.
func with(els []el, id string, fields el) []el {
	out := make([]el, len(els))
	for i, e := range els {
		c := el{}
		for k, v := range e {
			c[k] = v
		}
		if c["id"] == id {
			for k, v := range fields {
				c[k] = v
			}
		}
		out[i] = c
	}
	return out
}

func testScene(t *testing.T, groups ...[]el) *scene.Scene {
	t.Helper()
	var all []el
	for _, g := range groups {
		all = append(all, g...)
	}
	var parts []string
	for _, e := range all {
		parts = append(parts, jsonOf(t, e))
	}
	sc, err := scene.Decode([]byte(`{"type":"excalidraw","version":2,"elements":[` + strings.Join(parts, ",") + `]}`))
	if err != nil {
		t.Fatalf("decode test scene: %v", err)
	}
	return sc
}

func jsonOf(t *testing.T, e el) string {
	t.Helper()
	var fields []string
	for k, v := range e {
		var s string
		switch v := v.(type) {
		case string:
			s = fmt.Sprintf("%q", v)
		case [][2]float64:
			var ps []string
			for _, p := range v {
				ps = append(ps, fmt.Sprintf("[%g,%g]", p[0], p[1]))
			}
			s = "[" + strings.Join(ps, ",") + "]"
		case map[string]any:
			s = fmt.Sprintf(`{"elementId":%q,"focus":0,"gap":1}`, v["elementId"])
		case bool:
			s = fmt.Sprint(v)
		case []string:
			s = "[]"
			if len(v) > 0 {
				s = `["` + strings.Join(v, `","`) + `"]`
			}
		default:
			s = fmt.Sprintf("%v", v)
		}
		fields = append(fields, fmt.Sprintf("%q:%s", k, s))
	}
	return "{" + strings.Join(fields, ",") + "}"
}

func TestChanges(t *testing.T) {
	pipeline := [][]el{box("a", 0, "API"), box("b", 200, "DB"), arrow("ab", "a", "b")}
	tests := []struct {
		name          string
		before, after [][]el
		want          string
	}{
		{"first revision", nil, pipeline, "added 2 boxes, 1 arrow"},
		{"one of each", [][]el{box("a", 0, "API")}, [][]el{box("a", 0, "API"), box("b", 200, "DB"), arrow("ab", "a", "b")},
			"added 1 box, 1 arrow"},
		{"nothing", pipeline, pipeline, ""},
		{"renamed", pipeline, [][]el{box("a", 0, "API"), box("b", 200, "Postgres"), arrow("ab", "a", "b")},
			"renamed ‘DB’ to ‘Postgres’"},
		{"labelled", [][]el{box("a", 0, "")}, [][]el{box("a", 0, "API")}, "labelled a box ‘API’"},
		{"label taken off", [][]el{box("a", 0, "API")}, [][]el{box("a", 0, "")}, "took the label ‘API’ off a box"},
		{"removed a box and its arrow", pipeline, [][]el{box("a", 0, "API")}, "removed 1 box, 1 arrow"},
		{"deleted elements are gone", pipeline, [][]el{box("a", 0, "API"), with(with(box("b", 200, "DB"), "b", el{"isDeleted": true}), "b-label", el{"isDeleted": true}), with(arrow("ab", "a", "b"), "ab", el{"isDeleted": true})},
			"removed 1 box, 1 arrow"},
		{"moved", pipeline, [][]el{box("a", 0, "API"), with(box("b", 200, "DB"), "b", el{"y": 300}), arrow("ab", "a", "b")},
			"moved 1 box"},
		{"under a pixel is rounding", pipeline, [][]el{box("a", 0, "API"), with(box("b", 200, "DB"), "b", el{"x": 200.9}), arrow("ab", "a", "b")}, ""},
		{"resized", pipeline, [][]el{with(box("a", 0, "API"), "a", el{"width": 300}), box("b", 200, "DB"), arrow("ab", "a", "b")},
			"resized 1 box"},
		{"recoloured", pipeline, [][]el{with(box("a", 0, "API"), "a", el{"backgroundColor": "#ffc9c9"}), with(box("b", 200, "DB"), "b", el{"strokeColor": "#e03131"}), arrow("ab", "a", "b")},
			"recoloured 2 boxes"},
		{"label colour is the box's", pipeline, [][]el{with(box("a", 0, "API"), "a-label", el{"strokeColor": "#e03131"}), box("b", 200, "DB"), arrow("ab", "a", "b")},
			"recoloured 1 box"},
		{"restyled", pipeline, [][]el{box("a", 0, "API"), box("b", 200, "DB"), with(arrow("ab", "a", "b"), "ab", el{"strokeStyle": "dashed"})},
			"restyled 1 arrow"},
		{"recoloured and restyled", pipeline, [][]el{with(box("a", 0, "API"), "a", el{"strokeColor": "#e03131", "strokeStyle": "dashed"}), box("b", 200, "DB"), arrow("ab", "a", "b")},
			"recoloured 1 box; restyled 1 box"},
		{"regrouped", pipeline, [][]el{with(box("a", 0, "API"), "a", el{"groupIds": []string{"g"}}), with(box("b", 200, "DB"), "b", el{"groupIds": []string{"g"}}), arrow("ab", "a", "b")},
			"regrouped 2 boxes"},
		{"arrows follow boxes", pipeline, [][]el{box("a", 0, "API"), box("b", 200, "DB"), with(arrow("ab", "a", "b"), "ab", el{"y": 90})}, ""},
		{"reconnected", [][]el{box("a", 0, "API"), box("b", 200, "DB"), box("c", 400, "Cache"), arrow("x", "a", "b")},
			[][]el{box("a", 0, "API"), box("b", 200, "DB"), box("c", 400, "Cache"), arrow("x", "a", "c")}, "reconnected 1 arrow"},
		{"free text", [][]el{text("t", "draft")}, [][]el{text("t", "final"), text("u", "note")}, "added 1 text; rewrote ‘draft’ as ‘final’"},
		{"many renames", [][]el{box("a", 0, "A"), box("b", 200, "B"), box("c", 400, "C"), box("d", 600, "D")},
			[][]el{box("a", 0, "A1"), box("b", 200, "B1"), box("c", 400, "C1"), box("d", 600, "D1")},
			"renamed ‘A’ to ‘A1’, renamed ‘B’ to ‘B1’ and 2 others"},
		{"everything at once", pipeline, [][]el{with(box("a", 0, "Gateway"), "a", el{"x": 50}), box("c", 400, "Cache"), box("d", 600, ""), text("t", "v2")},
			"added 2 boxes, 1 text; removed 1 box, 1 arrow; renamed ‘API’ to ‘Gateway’; moved 1 box"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before *scene.Scene
			if tt.before != nil {
				before = testScene(t, tt.before...)
			}
			if got := Changes(before, testScene(t, tt.after...)); got != tt.want {
				t.Errorf("Changes = %q, want %q", got, tt.want)
			}
		})
	}
}
