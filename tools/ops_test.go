package tools

import (
	"strings"
	"testing"

	"github.com/excalibot/excalibot/scene"
)

var withOrg = []step{{"batch_create_elements", orgChart}}

func TestUpdateElement(t *testing.T) {
	runCases(t, []toolCase{
		{name: "move shape, arrows follow", setup: withOrg, tool: "update_element", args: `{"id":"cto","x":-100,"y":300}`,
			want: []string{"updated: cto rect -100,300"},
			check: func(t *testing.T, sc *scene.Scene) {
				if e := get(t, sc, "cto"); e.X != -100 || e.Y != 300 {
					t.Errorf("cto at %v,%v", e.X, e.Y)
				}
				onBorder(t, sc, "a1")
			}},
		{name: "change label and colours", setup: withOrg, tool: "update_element",
			args: `{"id":"cfo","text":"Finance","backgroundColor":"green","strokeColor":"red"}`,
			check: func(t *testing.T, sc *scene.Scene) {
				e := get(t, sc, "cfo")
				if got := labelText(t, sc, "cfo"); got != "Finance" {
					t.Errorf("label %q", got)
				}
				if e.BackgroundColor != "#b2f2bb" || e.StrokeColor != "#e03131" {
					t.Errorf("colours bg %s stroke %s, want #b2f2bb #e03131", e.BackgroundColor, e.StrokeColor)
				}
				if l := get(t, sc, e.Label()); l.StrokeColor != "#e03131" {
					t.Errorf("label colour %s, want the stroke colour", l.StrokeColor)
				}
			}},
		{name: "remove label", setup: withOrg, tool: "update_element", args: `{"id":"cfo","text":""}`,
			check: func(t *testing.T, sc *scene.Scene) { wantLen(8)(t, sc) }},
		{name: "label font size", setup: withOrg, tool: "update_element", args: `{"id":"ceo","fontSize":28}`,
			check: func(t *testing.T, sc *scene.Scene) {
				ceo := get(t, sc, "ceo")
				if l := get(t, sc, ceo.Label()); l.FontSize != 28 {
					t.Errorf("label size %v", l.FontSize)
				}
			}},
		{name: "re-attach arrow end", setup: withOrg, tool: "update_element", args: `{"id":"a1","endElementId":"cfo"}`,
			want: []string{"updated: ceo -> cfo (a1)"},
			check: func(t *testing.T, sc *scene.Scene) {
				if b := get(t, sc, "a1").EndBinding; b == nil || b.ElementID != "cfo" {
					t.Errorf("a1 end binding %+v", b)
				}
				onBorder(t, sc, "a1")
			}},
		{name: "arrowheads", setup: withOrg, tool: "update_element", args: `{"id":"a1","startArrowhead":"dot","endArrowhead":"none"}`,
			want: []string{"ceo <- cto (a1) start=dot"},
			check: func(t *testing.T, sc *scene.Scene) {
				if a := get(t, sc, "a1"); a.StartArrowhead != "dot" || a.EndArrowhead != "" {
					t.Errorf("heads %q %q", a.StartArrowhead, a.EndArrowhead)
				}
			}},
		{name: "unlock and edit in one call", setup: append(withOrg, step{"lock_elements", `{"ids":["cto"]}`}), tool: "update_element",
			args: `{"id":"cto","locked":false,"x":10}`,
			check: func(t *testing.T, sc *scene.Scene) {
				if e := get(t, sc, "cto"); e.Locked || e.X != 10 {
					t.Errorf("cto locked=%v x=%v", e.Locked, e.X)
				}
			}},
		{name: "unknown id lists closest", setup: withOrg, tool: "update_element", args: `{"id":"CTO2","x":1}`,
			wantErr: true, want: []string{`id: no element with id "CTO2"`, `closest ids: "cto"`}},
		{name: "locked refused", setup: append(withOrg, step{"lock_elements", `{"ids":["cto"]}`}), tool: "update_element",
			args: `{"id":"cto","x":10}`, wantErr: true, want: []string{`"cto" is locked`, "unlock_elements"}},
		{name: "type change refused", setup: withOrg, tool: "update_element", args: `{"id":"cto","type":"ellipse"}`,
			wantErr: true, want: []string{"cannot change type"}},
		{name: "label id redirected", setup: withOrg, tool: "update_element", args: `{"id":"cto-label","text":"x"}`,
			wantErr: true, want: []string{`is the label of "cto"`}},
		{name: "nothing to change", setup: withOrg, tool: "update_element", args: `{"id":"cto"}`,
			wantErr: true, want: []string{"nothing to change"}},
		{name: "arrow field on shape", setup: withOrg, tool: "update_element", args: `{"id":"cto","endElementId":"cfo"}`,
			wantErr: true, want: []string{"only arrows and lines have endElementId"}},
		{name: "bad colour", setup: withOrg, tool: "update_element", args: `{"id":"cto","backgroundColor":"rainbow"}`,
			wantErr: true, want: []string{"backgroundColor: unknown colour"}},
		{name: "end to unknown", setup: withOrg, tool: "update_element", args: `{"id":"a1","endElementId":"cf0"}`,
			wantErr: true, want: []string{`endElementId: no element with id "cf0"`, `"cfo"`}},
		{name: "missing id", setup: withOrg, tool: "update_element", args: `{"x":1}`, wantErr: true, want: []string{"id: missing"}},
		{name: "arrow has no width", setup: withOrg, tool: "update_element", args: `{"id":"a1","width":300}`,
			wantErr: true, want: []string{"width: an arrow has no width or height"}},
	})
}

func TestDeleteLockUnlock(t *testing.T) {
	runCases(t, []toolCase{
		{name: "delete shape takes label and arrows", setup: withOrg, tool: "delete_elements", args: `{"ids":["cfo"]}`,
			want: []string{"deleted cfo; also deleted the arrows attached to them: a2"},
			check: func(t *testing.T, sc *scene.Scene) {
				wantLen(5)(t, sc)
				ceo := get(t, sc, "ceo")
				for _, b := range ceo.BoundElements {
					if b.ID == "a2" {
						t.Error("ceo still lists deleted arrow a2")
					}
				}
			}},
		{name: "delete arrow only", setup: withOrg, tool: "delete_elements", args: `{"ids":"a1"}`,
			check: func(t *testing.T, sc *scene.Scene) { wantLen(8)(t, sc) }},
		{name: "delete unknown", setup: withOrg, tool: "delete_elements", args: `{"ids":["cfo","zzz"]}`,
			wantErr: true, want: []string{`no element with id "zzz"`}},
		{name: "delete locked", setup: append(withOrg, step{"lock_elements", `{"ids":["cfo"]}`}), tool: "delete_elements",
			args: `{"ids":["cfo"]}`, wantErr: true, want: []string{"locked", "unlock_elements"}},
		{name: "delete label refers to shape", setup: withOrg, tool: "delete_elements", args: `{"ids":["cfo-label"]}`,
			wantErr: true, want: []string{`"cfo-label" is the label of "cfo"`}},
		{name: "delete nothing", setup: withOrg, tool: "delete_elements", args: `{"ids":[]}`, wantErr: true, want: []string{"at least 1"}},
		{name: "lock", setup: withOrg, tool: "lock_elements", args: `{"ids":["ceo","cto"]}`,
			check: func(t *testing.T, sc *scene.Scene) {
				if !get(t, sc, "ceo").Locked || !get(t, sc, "cto").Locked {
					t.Error("not locked")
				}
			}},
		{name: "lock unknown", setup: withOrg, tool: "lock_elements", args: `{"ids":["nope"]}`, wantErr: true, want: []string{"no element"}},
		{name: "unlock", setup: append(withOrg, step{"lock_elements", `{"ids":["ceo"]}`}), tool: "unlock_elements", args: `{"ids":["ceo"]}`,
			check: func(t *testing.T, sc *scene.Scene) {
				if get(t, sc, "ceo").Locked {
					t.Error("still locked")
				}
			}},
		{name: "unlock wrong field", setup: withOrg, tool: "unlock_elements", args: `{"elementIds":["ceo"]}`,
			wantErr: true, want: []string{`elementIds: unknown field (did you mean "ids"?)`}},
	})
}

func TestGetAndQuery(t *testing.T) {
	runCases(t, []toolCase{
		{name: "get element", setup: withOrg, tool: "get_element", args: `{"id":"ceo"}`,
			want: []string{"ceo: rectangle", `text: "CEO"`, "backgroundColor: blue", "arrows attached: a1, a2"}},
		{name: "get arrow", setup: withOrg, tool: "get_element", args: `{"id":"a2"}`,
			want: []string{"startElementId: ceo", "endElementId: cfo", `text: "reports"`}},
		{name: "get unknown", setup: withOrg, tool: "get_element", args: `{"id":"cf"}`, wantErr: true, want: []string{`closest ids: "cfo"`}},
		{name: "query by type", setup: withOrg, tool: "query_elements", args: `{"type":"arrow"}`,
			want: []string{"2 matching", "connections:", "ceo -> cto (a1)"}},
		{name: "query by text", setup: withOrg, tool: "query_elements", args: `{"text":"cf"}`, want: []string{"1 matching", `cfo rect 400,200`}},
		{name: "query by area", setup: withOrg, tool: "query_elements", args: `{"area":{"x":-10,"y":190,"width":100,"height":100},"type":"rectangle"}`,
			want: []string{"1 matching", "cto rect"}},
		{name: "query no match", setup: withOrg, tool: "query_elements", args: `{"text":"zebra"}`, want: []string{"no elements match"}},
		{name: "query bad area", setup: withOrg, tool: "query_elements", args: `{"area":{"x":0,"y":0}}`,
			wantErr: true, want: []string{"an area needs x, y, width and height"}},
		{name: "query unknown ids", setup: withOrg, tool: "query_elements", args: `{"ids":["ceo","cxo"]}`,
			wantErr: true, want: []string{`no element with id "cxo"`}},
	})
}

func TestSnapshotsViewportClear(t *testing.T) {
	runCases(t, []toolCase{
		{name: "restore", setup: append(withOrg, step{"snapshot_scene", `{"name":"v1"}`}, step{"delete_elements", `{"ids":["cfo"]}`}),
			tool: "restore_snapshot", args: `{"name":"v1"}`, want: []string{`restored snapshot "v1"`},
			check: func(t *testing.T, sc *scene.Scene) { wantLen(9)(t, sc) }},
		{name: "restore unknown", setup: append(withOrg, step{"snapshot_scene", `{"name":"v1"}`}),
			tool: "restore_snapshot", args: `{"name":"v2"}`, wantErr: true, want: []string{`no snapshot "v2"`, `did you mean "v1"`}},
		{name: "restore none saved", tool: "restore_snapshot", args: `{"name":"v1"}`, wantErr: true, want: []string{"none saved yet"}},
		{name: "snapshot without name", tool: "snapshot_scene", args: `{}`, wantErr: true, want: []string{"name: missing"}},
		{name: "one element counts singular", setup: []step{{"batch_create_elements", `{"elements":[{"id":"a","type":"rectangle","x":0,"y":0,"width":100,"height":50}]}`},
			{"snapshot_scene", `{"name":"one"}`}},
			tool: "clear_canvas", args: `{}`, want: []string{"cleared 1 element. To undo"}},
		{name: "snapshot of one element", setup: []step{{"batch_create_elements", `{"elements":[{"id":"a","type":"rectangle","x":0,"y":0,"width":100,"height":50}]}`}},
			tool: "snapshot_scene", args: `{"name":"v1"}`, want: []string{`saved snapshot "v1" (1 element)`}},
		{name: "clear keeps a snapshot", setup: withOrg, tool: "clear_canvas", args: `{}`, want: []string{"cleared 9 elements", "before-clear"},
			check: func(t *testing.T, sc *scene.Scene) { wantLen(0)(t, sc) }},
		{name: "viewport on ids", setup: withOrg, tool: "set_viewport", args: `{"ids":["cto","cfo"]}`,
			check: func(t *testing.T, sc *scene.Scene) {
				vp, ok := sc.Viewport()
				if !ok || vp.X != -40 || vp.Y != 160 || vp.Width != 640 {
					t.Errorf("viewport %+v %v, want cto..cfo with a 40 px margin", vp, ok)
				}
			}},
		{name: "viewport area", setup: withOrg, tool: "set_viewport", args: `{"x":0,"y":0,"width":800,"height":600}`,
			check: func(t *testing.T, sc *scene.Scene) {
				if vp, ok := sc.Viewport(); !ok || vp != (scene.Rect{Width: 800, Height: 600}) {
					t.Errorf("viewport %+v", vp)
				}
			}},
		{name: "viewport reset", setup: append(withOrg, step{"set_viewport", `{"ids":["cto"]}`}), tool: "set_viewport", args: `{}`,
			check: func(t *testing.T, sc *scene.Scene) {
				if _, ok := sc.Viewport(); ok {
					t.Error("viewport still set")
				}
			}},
		{name: "viewport partial area", setup: withOrg, tool: "set_viewport", args: `{"x":0,"y":0}`, wantErr: true, want: []string{"needs all of x, y, width and height"}},
		{name: "viewport both", setup: withOrg, tool: "set_viewport", args: `{"ids":["cto"],"x":0}`, wantErr: true, want: []string{"not both"}},
	})
}

func TestClearThenRestore(t *testing.T) {
	s := New(newTestScene(), DefaultLimits())
	mustCall(t, s, "batch_create_elements", orgChart)
	before := encode(t, s.Scene())
	mustCall(t, s, "clear_canvas", `{}`)
	mustCall(t, s, "restore_snapshot", `{"name":"before-clear"}`)
	if after := encode(t, s.Scene()); string(after) != string(before) {
		t.Error("restoring before-clear did not give back the same scene")
	}
	// The snapshot must not share state with the restored scene: editing it keeps the snapshot.
	mustCall(t, s, "delete_elements", `{"ids":["ceo"]}`)
	mustCall(t, s, "restore_snapshot", `{"name":"before-clear"}`)
	if got := s.Scene().Len(); got != 9 {
		t.Errorf("second restore gave %d elements, want 9", got)
	}
}

func TestSnapshotEviction(t *testing.T) {
	lim := DefaultLimits()
	lim.MaxSnapshots = 2
	s := New(newTestScene(), lim)
	for _, n := range []string{"a", "b", "c"} {
		mustCall(t, s, "snapshot_scene", `{"name":"`+n+`"}`)
	}
	r := s.Call(t.Context(), "restore_snapshot", []byte(`{"name":"a"}`))
	if !r.IsError || !strings.Contains(r.Text, "saved: b, c") {
		t.Errorf("evicted snapshot: got %q", r.Text)
	}
}
