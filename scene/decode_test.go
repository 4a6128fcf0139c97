package scene

import (
	"encoding/json"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
)

func loadTolerant(t *testing.T) *Scene {
	t.Helper()
	data, err := os.ReadFile("testdata/tolerant.excalidraw")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Decode(data, WithRand(newTestScene().rnd.r))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestDecodeTolerant(t *testing.T) {
	s := loadTolerant(t)
	get := func(id string) Element {
		t.Helper()
		i, ok := s.pos.m[id]
		if !ok {
			t.Fatalf("element %q missing", id)
		}
		return *s.elems[i]
	}
	ids := []string{}
	for _, e := range s.AllElements() {
		ids = append(ids, e.ID)
	}
	wantIDs := []string{"r1", "r2", "v2-arrow", "legacy-arrow", "fd", "img", "mystery", "dead", "t1", "orphan", "r1-2"}
	if !slices.Equal(ids, wantIDs) {
		t.Errorf("ids %v, want %v (duplicate renamed, nothing dropped)", ids, wantIDs)
	}
	checks := []struct {
		name string
		ok   bool
	}{
		{"strokeSharpness round -> adaptive roundness", get("r1").Roundness != nil && get("r1").Roundness.Type == RoundnessAdaptive},
		{"legacy keys dropped", get("r1").extra["strokeSharpness"] == nil && get("r1").extra["boundElementIds"] == nil},
		{"customData kept", string(get("r1").extra["customData"]) == `{"team":"a"}`},
		{"seed/version kept", get("r1").Seed == 7 && get("r1").Version == 3 && get("r1").VersionNonce == 9},
		{"boundElementIds migrated and text listed", slices.Equal(get("r1").BoundElements, []BoundElement{{"legacy-arrow", Arrow}, {"v2-arrow", Arrow}, {"t1", Text}})},
		{"ghost arrow dropped from r2", slices.Equal(get("r2").BoundElements, []BoundElement{{"v2-arrow", Arrow}})},
		{"v2 binding kept", get("v2-arrow").StartBinding != nil && get("v2-arrow").StartBinding.Mode == "orbit" && get("v2-arrow").StartBinding.FixedPoint != nil},
		{"dangling binding removed", get("legacy-arrow").EndBinding == nil && get("legacy-arrow").StartBinding != nil},
		{"arrow without points gets a line", len(get("legacy-arrow").Points) == 2 && get("legacy-arrow").Points[1] == Point{0, 100}},
		{"freedraw points kept", string(get("fd").extra["points"]) == `[[0,0],[10,5],[30,20]]` && string(get("fd").extra["pressures"]) == `[0.5,0.6,0.7]`},
		{"image fields kept", string(get("img").extra["fileId"]) == `"file-1"` && string(get("img").extra["scale"]) == `[1,1]`},
		{"unknown type kept with its fields", get("mystery").Type == "magicframe" && string(get("mystery").extra["name"]) == `"future"`},
		{"tombstone kept", get("dead").IsDeleted},
		{"text defaults", get("t1").FontSize == 20 && get("t1").FontFamily == 5 && get("t1").OriginalText == "Hi" && get("t1").LineHeight == 1.25},
		{"baseline kept as extra", string(get("t1").extra["baseline"]) == "18"},
		{"dangling containerId and frameId cleared", get("orphan").ContainerID == "" && get("orphan").FrameID == ""},
		{"orphan lineHeight from family", get("orphan").LineHeight == 1.25 && get("orphan").FontSize == 16},
		{"files kept", strings.Contains(string(s.files["file-1"]), "iVBORw0KGgo=")},
		{"appState kept", string(s.appState["theme"]) == `"dark"`},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: failed", c.name)
		}
	}
	// Invalid or out-of-order indices were repaired; valid ones kept.
	assertConsistent(t, s)
	if get("r1").Index != "a0" || get("r2").Index != "a1" || get("img").Index != "a5" {
		t.Errorf("valid indices changed: %s %s %s", get("r1").Index, get("r2").Index, get("img").Index)
	}
	// Live API hides tombstones.
	if s.Has("dead") || s.Len() != len(wantIDs)-1 {
		t.Errorf("tombstone visible: has=%v len=%d", s.Has("dead"), s.Len())
	}
	// Round trip: encode, decode, same elements and bytes.
	out, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	s2, err := Decode(out)
	if err != nil {
		t.Fatal(err)
	}
	assertSameElements(t, s, s2)
	var env map[string]json.RawMessage
	if err := json.Unmarshal(out, &env); err != nil {
		t.Fatal(err)
	}
	if string(env["type"]) != `"excalidraw"` || string(env["version"]) != "2" || !strings.Contains(string(env["files"]), "file-1") {
		t.Errorf("envelope: type %s version %s files %s", env["type"], env["version"], env["files"])
	}
}

func TestDecodedShapeMoveReroutesV2Arrow(t *testing.T) {
	s := loadTolerant(t)
	if err := s.Update("r2", func(e *Element) error { e.Y = 200; return nil }); err != nil {
		t.Fatal(err)
	}
	a, _ := s.Get("v2-arrow")
	if a.EndBinding == nil || a.EndBinding.FixedPoint != nil || a.EndBinding.Mode != "" {
		t.Errorf("re-routed binding not rewritten in v1 form: %+v", a.EndBinding)
	}
	assertArrowsOnBorders(t, s)
	assertConsistent(t, s)
	// Freedraw moves but does not resize.
	if err := s.Update("fd", func(e *Element) error { e.X += 5; return nil }); err != nil {
		t.Errorf("moving freedraw: %v", err)
	}
	if err := s.Update("fd", func(e *Element) error { e.Width = 5; return nil }); err == nil {
		t.Error("resizing freedraw was accepted")
	}
}

func TestViewportRoundTrip(t *testing.T) {
	s := newTestScene()
	if err := s.SetViewport(Rect{-10, 20, 800, 600}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetViewport(Rect{0, 0, 0, 10}); err == nil {
		t.Error("zero-width viewport accepted")
	}
	if err := s.SetViewport(Rect{math.NaN(), 0, 10, 10}); err == nil {
		t.Error("NaN viewport accepted")
	}
	out, _ := s.Encode()
	s2, err := Decode(out)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := s2.Viewport(); !ok || v != (Rect{-10, 20, 800, 600}) {
		t.Errorf("viewport after round trip: %v %v", v, ok)
	}
	if !strings.Contains(string(out), `"excalibotViewport"`) {
		t.Errorf("viewport key missing from appState")
	}
}

func TestElementMarshalJSON(t *testing.T) {
	s := loadTolerant(t)
	for _, e := range s.AllElements() {
		got, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		if want := encodeElement(&e); string(got) != string(want) {
			t.Errorf("%s: json.Marshal gives %s, want %s", e.ID, got, want)
		}
		back, err := decodeElement(got)
		if err != nil || !sameElement(back, &e) {
			t.Errorf("%s: does not decode back: %v", e.ID, err)
		}
	}
}
