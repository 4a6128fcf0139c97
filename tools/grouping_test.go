package tools

import (
	"math"
	"slices"
	"testing"

	"github.com/excalibot/excalibot/scene"
)

// row is three shapes at uneven heights and gaps, with arrows between them.
var row = []step{{"batch_create_elements", `{"elements":[
 {"id":"r1","type":"rectangle","x":0,"y":0,"text":"one"},
 {"id":"r2","type":"rectangle","x":200,"y":40,"text":"two"},
 {"id":"r3","type":"rectangle","x":600,"y":-30,"text":"three"},
 {"id":"a1","type":"arrow","startElementId":"r1","endElementId":"r2"},
 {"id":"a2","type":"arrow","startElementId":"r2","endElementId":"r3"}]}`}}

func TestGroupUngroup(t *testing.T) {
	runCases(t, []toolCase{
		{name: "group with chosen id", setup: row, tool: "group_elements", args: `{"ids":["r1","r2"],"groupId":"top"}`,
			want: []string{`grouped r1, r2 as "top"`},
			check: func(t *testing.T, sc *scene.Scene) {
				for _, id := range []string{"r1", "r2", "r1-label"} {
					if e := get(t, sc, id); !slices.Contains(e.GroupIDs, "top") {
						t.Errorf("%s groups %v, want top", id, e.GroupIDs)
					}
				}
				if slices.Contains(get(t, sc, "r3").GroupIDs, "top") {
					t.Error("r3 grouped")
				}
			}},
		{name: "group with generated id", setup: row, tool: "group_elements", args: `{"ids":["r1","r3"]}`, want: []string{`as "g1"`},
			check: func(t *testing.T, sc *scene.Scene) {
				if !slices.Contains(get(t, sc, "r3").GroupIDs, "g1") {
					t.Error("r3 not in g1")
				}
			}},
		{name: "group id taken", setup: append(row, step{"group_elements", `{"ids":["r1","r2"],"groupId":"g"}`}), tool: "group_elements",
			args: `{"ids":["r2","r3"],"groupId":"g"}`, wantErr: true, want: []string{`"g" is already a group`}},
		{name: "group one element", setup: row, tool: "group_elements", args: `{"ids":["r1"]}`, wantErr: true, want: []string{"at least 2 ids"}},
		{name: "group unknown", setup: row, tool: "group_elements", args: `{"ids":["r1","r4"]}`, wantErr: true, want: []string{`no element with id "r4"`}},
		{name: "ungroup", setup: append(row, step{"group_elements", `{"ids":["r1","r2"],"groupId":"g"}`}), tool: "ungroup_elements",
			args: `{"groupId":"g"}`, want: []string{`ungrouped "g": r1, r2`},
			check: func(t *testing.T, sc *scene.Scene) {
				if len(get(t, sc, "r1").GroupIDs) != 0 {
					t.Error("r1 still grouped")
				}
			}},
		{name: "ungroup unknown", setup: append(row, step{"group_elements", `{"ids":["r1","r2"],"groupId":"g1"}`}), tool: "ungroup_elements",
			args: `{"groupId":"g2"}`, wantErr: true, want: []string{`no group "g2"`, `did you mean "g1"`}},
		{name: "ungroup none", setup: row, tool: "ungroup_elements", args: `{"groupId":"g1"}`, wantErr: true, want: []string{"no groups"}},
		{name: "ungroup by ids", setup: append(row, step{"group_elements", `{"ids":["r1","r2"],"groupId":"g"}`}), tool: "ungroup_elements",
			args: `{"ids":["r2"]}`, want: []string{`ungrouped "g": r1, r2`},
			check: func(t *testing.T, sc *scene.Scene) {
				if len(get(t, sc, "r1").GroupIDs) != 0 || len(get(t, sc, "r2").GroupIDs) != 0 {
					t.Error("still grouped")
				}
			}},
		{name: "ungroup ids not grouped", setup: row, tool: "ungroup_elements", args: `{"ids":["r3"]}`, wantErr: true, want: []string{"r3 is not in any group"}},
		{name: "ungroup nothing given", setup: row, tool: "ungroup_elements", args: `{}`, wantErr: true, want: []string{"groupId: missing"}},
	})
}

func TestAlignDistribute(t *testing.T) {
	runCases(t, []toolCase{
		{name: "align top", setup: row, tool: "align_elements", args: `{"ids":["r1","r2","r3"],"alignment":"top"}`,
			want: []string{"aligned r1, r2, r3 on their top", "r2 rect 200,-30"},
			check: func(t *testing.T, sc *scene.Scene) {
				for _, id := range []string{"r1", "r2", "r3"} {
					if y := get(t, sc, id).Y; y != -30 {
						t.Errorf("%s y = %v, want -30", id, y)
					}
				}
				onBorder(t, sc, "a1")
				onBorder(t, sc, "a2")
			}},
		{name: "align alias centre", setup: row, tool: "align_elements", args: `{"ids":["r1","r2"],"alignment":"centre"}`,
			check: func(t *testing.T, sc *scene.Scene) {
				c1, c2 := get(t, sc, "r1"), get(t, sc, "r2")
				if math.Abs(c1.Center().X-c2.Center().X) > 0.01 {
					t.Errorf("centres %v %v", c1.Center().X, c2.Center().X)
				}
			}},
		{name: "align bad value", setup: row, tool: "align_elements", args: `{"ids":["r1","r2"],"alignment":"topp"}`,
			wantErr: true, want: []string{`alignment: "topp" is not allowed`, `did you mean "top"`}},
		{name: "align missing", setup: row, tool: "align_elements", args: `{"ids":["r1","r2"]}`, wantErr: true, want: []string{"alignment: missing"}},
		{name: "align locked", setup: append(row, step{"lock_elements", `{"ids":["r2"]}`}), tool: "align_elements",
			args: `{"ids":["r1","r2"],"alignment":"left"}`, wantErr: true, want: []string{"locked"}},
		{name: "distribute", setup: row, tool: "distribute_elements", args: `{"ids":["r1","r2","r3"],"direction":"horizontal"}`,
			check: func(t *testing.T, sc *scene.Scene) {
				r1, r2, r3 := get(t, sc, "r1"), get(t, sc, "r2"), get(t, sc, "r3")
				g1, g2 := r2.X-(r1.X+r1.Width), r3.X-(r2.X+r2.Width)
				if math.Abs(g1-g2) > 0.01 {
					t.Errorf("gaps %v and %v, want equal", g1, g2)
				}
				onBorder(t, sc, "a1")
			}},
		{name: "distribute two", setup: row, tool: "distribute_elements", args: `{"ids":["r1","r2"],"direction":"vertical"}`,
			wantErr: true, want: []string{"at least 3 ids"}},
		{name: "distribute bad direction", setup: row, tool: "distribute_elements", args: `{"ids":["r1","r2","r3"],"direction":"diagonal"}`,
			wantErr: true, want: []string{`direction: "diagonal" is not allowed`}},
	})
}
