package tools

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/excalibot/excalibot/internal/clip"
	"github.com/excalibot/excalibot/scene"
)

var update = flag.Bool("update", false, "rewrite testdata golden files")

// scripts are tool sequences a model could send. Each produces testdata/<name>.golden.excalidraw
// (open it in Excalidraw) and testdata/<name>.scene.golden (what get_scene shows the model).
var scripts = []struct {
	name  string
	steps []step
}{
	{"orgchart", []step{
		{"batch_create_elements", `{"elements":[
		 {"id":"ceo","type":"rectangle","x":320,"y":0,"text":"Ada Lovelace\nCEO","backgroundColor":"blue"},
		 {"id":"cto","type":"rectangle","x":0,"y":200,"text":"CTO","backgroundColor":"green"},
		 {"id":"cfo","type":"rectangle","x":320,"y":200,"text":"CFO","backgroundColor":"green"},
		 {"id":"coo","type":"rectangle","x":640,"y":200,"text":"COO","backgroundColor":"green"},
		 {"id":"eng","type":"rectangle","x":0,"y":400,"text":"Engineering","backgroundColor":"yellow"},
		 {"id":"ops","type":"rectangle","x":640,"y":400,"text":"Operations","backgroundColor":"yellow"},
		 {"id":"a1","type":"arrow","startElementId":"ceo","endElementId":"cto"},
		 {"id":"a2","type":"arrow","startElementId":"ceo","endElementId":"cfo"},
		 {"id":"a3","type":"arrow","startElementId":"ceo","endElementId":"coo"},
		 {"id":"a4","type":"arrow","startElementId":"cto","endElementId":"eng"},
		 {"id":"a5","type":"arrow","startElementId":"coo","endElementId":"ops"}]}`},
		{"update_element", `{"id":"cfo","y":230}`},
		{"align_elements", `{"ids":["cto","cfo","coo"],"alignment":"top"}`},
		{"create_element", `{"id":"title","type":"text","x":300,"y":-80,"text":"Org chart","fontSize":36}`},
	}},
	{"flowchart", []step{
		{"read_diagram_guide", `{}`},
		{"batch_create_elements", `{"elements":[
		 {"id":"start","type":"ellipse","x":20,"y":0,"text":"Start","backgroundColor":"gray"},
		 {"id":"read","type":"rectangle","x":10,"y":150,"text":"Read order"},
		 {"id":"ok","type":"diamond","x":-20,"y":290,"text":"In stock?","backgroundColor":"yellow"},
		 {"id":"ship","type":"rectangle","x":10,"y":540,"text":"Ship it","backgroundColor":"green"},
		 {"id":"back","type":"rectangle","x":340,"y":315,"text":"Back-order","backgroundColor":"red"},
		 {"id":"end","type":"ellipse","x":20,"y":700,"text":"End","backgroundColor":"gray"},
		 {"id":"f1","type":"arrow","startElementId":"start","endElementId":"read"},
		 {"id":"f2","type":"arrow","startElementId":"read","endElementId":"ok"},
		 {"id":"f3","type":"arrow","startElementId":"ok","endElementId":"ship","text":"yes"},
		 {"id":"f4","type":"arrow","startElementId":"ok","endElementId":"back","text":"no","strokeColor":"red"},
		 {"id":"f5","type":"arrow","startElementId":"ship","endElementId":"end"},
		 {"id":"f6","type":"arrow","startElementId":"back","endElementId":"end","strokeStyle":"dashed"}]}`},
		{"align_elements", `{"ids":["start","read","ok","ship","end"],"alignment":"center"}`},
	}},
	{"groups-frame", []step{
		{"batch_create_elements", `{"elements":[
		 {"id":"fe","type":"frame","x":-40,"y":-60,"width":320,"height":420,"text":"Frontend"},
		 {"id":"web","type":"rectangle","x":0,"y":0,"text":"Web app","frameId":"fe","backgroundColor":"violet"},
		 {"id":"mob","type":"rectangle","x":0,"y":200,"text":"Mobile app","frameId":"fe","backgroundColor":"violet"},
		 {"id":"api","type":"rectangle","x":440,"y":100,"text":"API","backgroundColor":"blue"},
		 {"id":"db","type":"ellipse","x":760,"y":95,"width":160,"height":90,"text":"Postgres","backgroundColor":"teal"},
		 {"id":"cache","type":"ellipse","x":760,"y":280,"text":"Redis","backgroundColor":"red-lightest","strokeStyle":"dotted"},
		 {"id":"h1","type":"arrow","startElementId":"web","endElementId":"api","text":"HTTPS"},
		 {"id":"h2","type":"arrow","startElementId":"mob","endElementId":"api","text":"HTTPS"},
		 {"id":"q1","type":"arrow","startElementId":"api","endElementId":"db","text":"SQL","startArrowhead":"dot"},
		 {"id":"q2","type":"arrow","startElementId":"api","endElementId":"cache","endArrowhead":"triangle"},
		 {"id":"note","type":"text","x":440,"y":260,"text":"stateless,\nscaled x3","fontSize":16,"strokeColor":"gray"}]}`},
		{"group_elements", `{"ids":["db","cache"],"groupId":"storage"}`},
		{"lock_elements", `{"ids":["fe"]}`},
		{"set_viewport", `{"ids":["fe","db","cache"]}`},
	}},
	// lint: a scene with one of each problem get_scene warns about.
	{"lint", []step{
		{"batch_create_elements", `{"elements":[
		 {"id":"r1","type":"rectangle","x":0,"y":0,"text":"API"},
		 {"id":"r2","type":"rectangle","x":100,"y":40,"text":"Worker"},
		 {"id":"r6","type":"ellipse","x":220,"y":60,"text":"Queue"},
		 {"id":"r3","type":"rectangle","x":0,"y":300,"text":"DB"},
		 {"id":"r4","type":"rectangle","x":0,"y":150,"width":60,"height":60},
		 {"id":"t1","type":"text","x":10,"y":320,"text":"x"},
		 {"id":"r5","type":"rectangle","x":200,"y":300,"text":"Cache"},
		 {"id":"a1","type":"arrow","startElementId":"r1","endElementId":"r3"},
		 {"id":"a2","type":"arrow","startElementId":"r3","endElementId":"r5","text":"a long label here"},
		 {"id":"a3","type":"arrow","x":400,"y":0,"points":[[0,0],[100,0]]},
		 {"id":"far","type":"ellipse","x":5000,"y":5000}]}`},
		{"update_element", `{"id":"r1","width":30}`},
	}},
}

func TestGoldenScripts(t *testing.T) {
	for _, sc := range scripts {
		t.Run(sc.name, func(t *testing.T) {
			s := New(newTestScene(), DefaultLimits())
			for _, st := range sc.steps {
				mustCall(t, s, st.tool, st.args)
			}
			file := encode(t, s.Scene())
			goldenFile(t, filepath.Join("testdata", sc.name+".golden.excalidraw"), file)
			text := mustCall(t, s, "get_scene", `{}`).Text
			golden(t, filepath.Join("testdata", sc.name+".scene.golden"), []byte(text))

			// The file must load back into the same scene (what Excalidraw and the store will read).
			back, err := scene.Decode(file)
			if err != nil {
				t.Fatalf("decode golden: %v", err)
			}
			if got := describeScene(back, DefaultLimits()); got != text {
				t.Errorf("get_scene after a save/load round trip differs:\n%s\nwant:\n%s", got, text)
			}
		})
	}
}

// golden compares got with the file at path, or rewrites it with -update.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden (run go test ./tools -update to create it): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the output (rerun with -update if the change is intended):\n--- got\n%s", path, clip.Runes(string(got), 3000))
	}
}

// goldenFile is golden for .excalidraw files, tolerant of what the scene package may change
// without changing the drawing: seeds and nonces (its random formulas) and coordinates within
// 0.5 px (regenerated font tables). Everything else must match.
func goldenFile(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		golden(t, path, got)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden (run go test ./tools -update to create it): %v", err)
	}
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("output is not JSON: %v", err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("%s is not JSON: %v", path, err)
	}
	if diff := jsonDiff("", g, w); diff != "" {
		t.Errorf("%s differs from the output at %s (rerun with -update if the change is intended)", path, diff)
	}
}

// jsonDiff returns the path of the first difference between got and want, or "".
func jsonDiff(path string, got, want any) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok || len(g) != len(w) {
			return fmt.Sprintf("%s (keys %d, want %d)", path, len(g), len(w))
		}
		for k, wv := range w {
			if k == "seed" || k == "versionNonce" {
				continue
			}
			if d := jsonDiff(path+"."+k, g[k], wv); d != "" {
				return d
			}
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Sprintf("%s (length %d, want %d)", path, len(g), len(w))
		}
		for i := range w {
			if d := jsonDiff(fmt.Sprintf("%s[%d]", path, i), g[i], w[i]); d != "" {
				return d
			}
		}
	case float64:
		if g, ok := got.(float64); !ok || math.Abs(g-w) > 0.5 {
			return fmt.Sprintf("%s (%v, want %v)", path, got, w)
		}
	default:
		if got != want {
			return fmt.Sprintf("%s (%v, want %v)", path, got, want)
		}
	}
	return ""
}
