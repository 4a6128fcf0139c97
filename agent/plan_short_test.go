package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/excalibot/excalibot/scene"
)

// TestPlanShortForm draws and edits a diagram with plans in the short form the schema teaches:
// nodes named by their labels, groups holding their nodes (one nested in another), edges as
// strings with their styles and heads; then a follow-up that recolours a node by its label,
// renames one by its id, adds a node into an existing group and an arrow to it, and removes an
// arrow written as a string; no summary, so the reply is made from the scene.
func TestPlanShortForm(t *testing.T) {
	m := &scriptedPlanner{answers: []string{examplePlan(t, "shop-new")}}
	set := newRecordingSet(nil)
	a := planAgent(m, ProtocolPlan)
	first := runPlanned(t, a, set.request("a shop: web, gateway, API and its database in the cloud", Memory{}))
	if first.Reason != StopDone || first.ToolErrors != 0 {
		t.Fatalf("first run: %s: %+v", first.Reason, first.Steps)
	}
	sc := set.Scene()
	inBackend := func(id string) bool { // the Backend box inside the Cloud frame
		e, ok := sc.Get(id)
		return ok && e.FrameID == "Cloud" && slices.Contains(e.GroupIDs, "grp-Backend")
	}
	if !inBackend("API") {
		t.Fatalf("API is not in the Backend group inside Cloud:\n%s", set.Call(t.Context(), "get_scene", []byte("{}")).Text)
	}
	if db, ok := sc.Get("orders-db"); !ok || db.Type != scene.Ellipse {
		t.Errorf("Orders DB: %+v, want an ellipse with the id made from its label", db)
	}
	arrow := arrowBetween(sc, "API", "orders-db")
	if arrow == nil || arrow.StrokeStyle != "dashed" || arrow.StartArrowhead == "" || arrow.EndArrowhead == "" {
		t.Errorf("API <-.-> Orders DB drew %+v; want a dashed arrow with two heads", arrow)
	}
	if first.Summary == "" {
		t.Error("no summary; the reply should say what was drawn")
	}

	set2 := newRecordingSet(sc)
	m.answers = []string{examplePlan(t, "shop-follow-up")}
	second := runPlanned(t, a, set2.request("make Web green, rename the API to API v2, add a cache it reads, drop the gateway arrow", first.Memory))
	if second.Reason != StopDone || second.ToolErrors != 0 {
		t.Fatalf("second run: %s: %+v", second.Reason, second.Steps)
	}
	if got, want := set2.names(), []string{"remove_from_graph", "update_graph", "add_to_graph"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("calls %v, want %v", got, want)
	}
	if _, ok := set2.calls[1].args["edges"]; ok { // "Web -> Gateway: HTTPS" is drawn already
		t.Errorf("an unchanged edge was updated: %v", set2.calls[1].args)
	}
	sc = set2.Scene()
	if got := sc.LabelText("API"); got != "API v2" {
		t.Errorf("API's label %q, want API v2", got)
	}
	if web, _ := sc.Get("Web"); web.BackgroundColor != "#b2f2bb" {
		t.Errorf("Web's fill %s, want green", web.BackgroundColor)
	}
	if !inBackend("Cache") {
		t.Errorf("Cache is not in the Backend group:\n%s", set2.Call(t.Context(), "get_scene", []byte("{}")).Text)
	}
	if arrowBetween(sc, "Gateway", "API") != nil {
		t.Error("the arrow from Gateway to API is still there")
	}
	if arrowBetween(sc, "API", "Cache") == nil {
		t.Error("no arrow from API to Cache")
	}
}

// examplePlan is one of the example plans of agent/plan/testdata/examples, which the plan
// package checks against its schema.
func examplePlan(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("plan", "testdata", "examples", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// arrowBetween is the arrow bound from a to b, or nil.
func arrowBetween(sc *scene.Scene, a, b string) *scene.Element {
	for _, e := range sc.Elements() {
		if e.Type == scene.Arrow && e.StartBinding != nil && e.EndBinding != nil &&
			e.StartBinding.ElementID == a && e.EndBinding.ElementID == b {
			return &e
		}
	}
	return nil
}

// TestPlanSequenceShortForm: a sequence's messages as strings, a reply written with -->, the
// participants named by label.
func TestPlanSequenceShortForm(t *testing.T) {
	m := &scriptedPlanner{answers: []string{examplePlan(t, "cart-sequence")}}
	set := newRecordingSet(nil)
	res := runPlanned(t, planAgent(m, ProtocolPlan), set.request("sequence: the browser gets the cart", Memory{}))
	if got := set.names(); !reflect.DeepEqual(got, []string{"create_sequence"}) || res.Reason != StopDone || res.ToolErrors != 0 {
		t.Fatalf("calls %v, %s: %+v", got, res.Reason, res.Steps)
	}
	var got []string
	for _, m := range set.calls[0].args["messages"].([]any) {
		mm := m.(map[string]any)
		got = append(got, fmt.Sprintf("%v>%v %v %v", mm["from"], mm["to"], mm["label"], mm["return"]))
	}
	want := []string{"Browser>cart-api GET /cart <nil>", "cart-api>Browser 200 OK: 3 items true"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("messages %q, want %q", got, want)
	}
}
