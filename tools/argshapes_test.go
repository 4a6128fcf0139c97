package tools

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/excalibot/excalibot/scene"
)

// readers used by TestArgShapes: each reads one field and shows what it got, as text.
var shapeReaders = map[string]func(o *object) string{
	"strList": func(o *object) string {
		v, ok := o.strList("ids")
		return fmt.Sprintf("%q %v", v, ok)
	},
	"objList": func(o *object) string {
		items, ok := o.objList("nodes")
		var parts []string
		for _, it := range items {
			id, _ := it.str("id")
			parts = append(parts, it.path+"="+id)
		}
		return fmt.Sprintf("%v %v", parts, ok)
	},
	"sub": func(o *object) string {
		a, ok := o.sub("area")
		if !ok {
			return "none"
		}
		x, _ := a.num("x")
		return fmt.Sprintf("%s x=%g", a.path, x)
	},
	"points": func(o *object) string {
		return fmt.Sprint(decodePoints(o, DefaultLimits(), "points"))
	},
	"num": func(o *object) string {
		v, ok := o.num("width")
		return fmt.Sprintf("%g %v", v, ok)
	},
	"boolean": func(o *object) string {
		v, ok := o.boolean("rounded")
		return fmt.Sprintf("%v %v", v, ok)
	},
	"font": func(o *object) string {
		if f := optFont(o, "fontFamily"); f != nil {
			return fmt.Sprint(*f)
		}
		return "none"
	},
	"str": func(o *object) string {
		v, ok := o.str("label")
		return fmt.Sprintf("%q %v", v, ok)
	},
}

// TestArgShapes: arguments right in meaning but wrong in shape, as small models send them, are
// read as meant; what cannot be meant stays a clear error.
func TestArgShapes(t *testing.T) {
	tests := []struct {
		name, reader, args string
		want               string
		problems           []string
	}{
		// A list sent as a JSON-encoded string.
		{"ids as an encoded list", "strList", `{"ids": "[\"a\",\"b\"]"}`, `["a" "b"] true`, nil},
		{"ids as an encoded list with spaces", "strList", `{"ids": " [\"a\", 2] "}`, `["a" "2"] true`, nil},
		{"nodes as an encoded list", "objList", `{"nodes": "[{\"id\":\"a\",\"label\":\"A\"}]"}`, `[nodes[0]=a] true`, nil},
		{"nodes as an encoded object", "objList", `{"nodes": "{\"id\":\"a\",\"label\":\"A\"}"}`, `[nodes=a] true`, nil},
		{"node items as encoded objects", "objList", `{"nodes": ["{\"id\":\"a\"}", {"id":"b"}]}`, `[nodes[0]=a nodes[1]=b] true`, nil},
		{"area as an encoded object", "sub", `{"area": "{\"x\":5,\"y\":0}"}`, `area x=5`, nil},
		{"points as an encoded list", "points", `{"points": "[[0,0],[200,\"10\"]]"}`, `[{0 0} {200 10}]`, nil},
		// A lone value where a list belongs.
		{"one id", "strList", `{"ids": "a"}`, `["a"] true`, nil},
		{"one number id", "strList", `{"ids": 7}`, `["7"] true`, nil},
		{"one node", "objList", `{"nodes": {"id":"a","label":"A"}}`, `[nodes=a] true`, nil},
		// Numbers and booleans as strings.
		{"width as a string", "num", `{"width": "160"}`, `160 true`, nil},
		{"width with a unit", "num", `{"width": "160px"}`, `0 false`, []string{`width: want a number like 120, got a string "160px"`}},
		{"boolean as a string", "boolean", `{"rounded": "true"}`, `true true`, nil},
		{"boolean as a capitalised string", "boolean", `{"rounded": " False "}`, `false true`, nil},
		{"boolean as yes", "boolean", `{"rounded": "yes"}`, `false false`, []string{`rounded: want true or false, got a string "yes"`}},
		{"font number as a string", "font", `{"fontFamily": "5"}`, `5`, nil},
		{"font name", "font", `{"fontFamily": "Nunito"}`, `6`, nil},
		// Null for an optional field means absent.
		{"null list", "strList", `{"ids": null}`, `[] false`, nil},
		{"null objects", "objList", `{"nodes": null}`, `[] false`, nil},
		{"null area", "sub", `{"area": null}`, `none`, nil},
		{"null number", "num", `{"width": null}`, `0 false`, nil},
		{"null string", "str", `{"label": null}`, `"" false`, nil},
		// What cannot be meant stays an error.
		{"plain string for objects", "objList", `{"nodes": "a, b"}`, `[] false`,
			[]string{`nodes: want a list of objects like [{"id": "r1", …}], got a string "a, b"`}},
		{"broken JSON string for objects", "objList", `{"nodes": "[{\"id\":\"a\"}"}`, `[] false`,
			[]string{`nodes: want a list of objects like [{"id": "r1", …}], got a string "[{\"id\":\"a\"}" (the string is not valid JSON: unexpected end of JSON input)`}},
		{"strings for objects", "objList", `{"nodes": ["a"]}`, `[] true`, []string{`nodes[0]: want a JSON object {…}, got a string "a"`}},
		{"encoded object for ids", "strList", `{"ids": "{\"a\":1}"}`, `[] false`, []string{`ids: want a list of ids like ["r1", "r2"], got a string "{\"a\":1}"`}},
		// A string is decoded once: inside a decoded value, strings stay strings.
		{"items encoded twice", "objList", `{"nodes": "[\"{\\\"id\\\":\\\"a\\\"}\"]"}`, `[] true`,
			[]string{`nodes[0]: want a JSON object {…}, got a string "{\"id\":\"a\"}"`}},
		{"list encoded twice", "objList", `{"nodes": "\"[{\\\"id\\\":\\\"a\\\"}]\""}`, `[] false`,
			[]string{`nodes: want a list of objects like [{"id": "r1", …}], got a string "\"[{\\\"id\\\":\\\"a\\\"}]\""`}},
		{"ids encoded twice", "strList", `{"ids": "\"[\\\"a\\\"]\""}`, `["\"[\\\"a\\\"]\""] true`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &problems{}
			o, ok := parseArgs(json.RawMessage(tt.args), p)
			if !ok {
				t.Fatalf("not parsed: %v", p)
			}
			if got := shapeReaders[tt.reader](o); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
			if !reflect.DeepEqual(p.list, tt.problems) {
				t.Errorf("problems %q, want %q", p.list, tt.problems)
			}
		})
	}
}

// TestDecodedOnce: a field inside a value decoded from a string is not decoded again, however
// deep, so encoding cannot be stacked to multiply the work.
func TestDecodedOnce(t *testing.T) {
	p := &problems{}
	o, _ := parseArgs(json.RawMessage(`{"elements": "[{\"id\":\"a1\",\"points\":\"[[0,0],[9,9]]\"}]"}`), p)
	items, _ := o.objList("elements")
	if len(items) != 1 || !items[0].decoded {
		t.Fatalf("items %v, want one decoded object", items)
	}
	if got := decodePoints(items[0], DefaultLimits(), "points"); got != nil {
		t.Errorf("points inside a decoded list were decoded again: %v", got)
	}
	if want := []string{`elements[0].points: want a list of points like [[0,0],[200,0]], got a string "[[0,0],[9,9]]"`}; !reflect.DeepEqual(p.list, want) {
		t.Errorf("problems %q, want %q", p.list, want)
	}
}

// TestUnknownFields: an unknown key is ignored and named, unless nothing the tool knows was sent.
func TestUnknownFields(t *testing.T) {
	tests := []struct {
		name, args   string
		problems     []string
		note, refuse string // p.ignoredNote() and p.ignoredLines()
	}{
		{"beside a known field", `{"x":1,"colour":"red"}`, nil,
			"\nIgnored unknown field colour.", "\n- colour: unknown field; known fields: x, ids, locked"},
		{"with a hint", `{"x":1,"lockd":true}`, nil,
			"\nIgnored unknown field lockd (did you mean \"locked\"?).", "\n- lockd: unknown field (did you mean \"locked\"?)"},
		{"with a field hint", `{"ids":["a"],"elementIds":["b"]}`, nil,
			"\nIgnored unknown field elementIds (did you mean \"ids\"?).", "\n- elementIds: unknown field (did you mean \"ids\"?)"},
		{"only unknown", `{"zz":1}`, []string{"zz: unknown field; known fields: x, ids, locked"}, "", ""},
		{"known only as null", `{"x":null,"lockd":true}`, []string{`lockd: unknown field (did you mean "locked"?)`}, "", ""},
		{"nothing sent", `{}`, nil, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &problems{}
			o, _ := parseArgs(json.RawMessage(tt.args), p)
			o.num("x")
			o.strList("ids")
			o.boolean("locked")
			o.finish("x", "ids", "locked")
			if !reflect.DeepEqual(p.list, tt.problems) {
				t.Errorf("problems %q, want %q", p.list, tt.problems)
			}
			if got := p.ignoredNote(); got != tt.note {
				t.Errorf("note %q, want %q", got, tt.note)
			}
			if got := p.ignoredLines(); got != tt.refuse {
				t.Errorf("refusal lines %q, want %q", got, tt.refuse)
			}
		})
	}
}

// TestIgnoredCap: a batch that repeats one stray key in every item gets a note of bounded size.
func TestIgnoredCap(t *testing.T) {
	var items []string
	for i := range 12 {
		items = append(items, fmt.Sprintf(`{"id":"r%d","type":"rectangle","x":%d,"y":0,"colour":"red"}`, i, i*200))
	}
	s := New(newTestScene(), DefaultLimits())
	r := mustCall(t, s, "batch_create_elements", `{"elements":[`+strings.Join(items, ",")+`]}`)
	if got, want := strings.Count(r.Text, "Ignored unknown field elements["), maxProblems; got != want {
		t.Errorf("%d ignored lines, want %d:\n%s", got, want, r.Text)
	}
	if !strings.HasSuffix(r.Text, "\nIgnored 4 more unknown fields.") {
		t.Errorf("no count of the rest:\n%s", r.Text)
	}
}

// TestToolArgShapes: whole calls as small models send them run as meant; the ones that ask for
// nothing the tool can do are refused with the fields named.
func TestToolArgShapes(t *testing.T) {
	withOrgAndGraph := append(append([]step(nil), withOrg...), withGraph...)
	runCases(t, []toolCase{
		// Lists and objects as JSON-encoded strings.
		{name: "graph nodes as a string", tool: "create_graph", args: `{"nodes": "[{\"id\":\"a\",\"label\":\"A\"},{\"id\":\"b\",\"label\":\"B\"}]", "edges": "[{\"from\":\"a\",\"to\":\"b\"}]"}`,
			want: []string{"2 nodes, 1 edge", "created 3: a, b, e-a-b"}},
		{name: "elements as a string", tool: "batch_create_elements", args: `{"elements": "[{\"id\":\"r1\",\"type\":\"rectangle\",\"x\":0,\"y\":0,\"text\":\"API\"}]"}`,
			want: []string{"created 1: r1"}, check: wantLen(2)},
		{name: "ids as a string", setup: withOrg, tool: "delete_elements", args: `{"ids": "[\"cto\",\"cfo\"]"}`,
			want: []string{"deleted cto, cfo"}},
		{name: "area as a string", setup: withOrg, tool: "query_elements", args: `{"area": "{\"x\":-10,\"y\":190,\"width\":100,\"height\":100}", "type": "rectangle"}`,
			want: []string{"1 matching", "cto rect"}},
		{name: "points as a string", tool: "create_element", args: `{"id":"l1","type":"line","x":0,"y":0,"points":"[[0,0],[200,0]]"}`,
			want: []string{"created 1: l1"}},
		{name: "messages as a string", tool: "create_sequence", args: `{"messages": "[{\"from\":\"a\",\"to\":\"b\",\"label\":\"hi\"}]"}`,
			want: []string{"2 actors, 1 message"}},
		{name: "the whole arguments as a string", setup: withOrg, tool: "delete_elements", args: `"{\"ids\":[\"cto\"]}"`,
			want: []string{"deleted cto"}},
		{name: "remove nodes as a string", setup: withGraph, tool: "remove_from_graph", args: `{"nodes": "[\"db\"]"}`,
			want: []string{"removed", "db"}},
		// Lone values where a list belongs.
		{name: "one id", setup: withOrg, tool: "lock_elements", args: `{"ids": "cto"}`, want: []string{"locked cto"}},
		{name: "one node", tool: "create_graph", args: `{"nodes": {"id":"a","label":"A"}}`, want: []string{"created 1: a"}},
		{name: "one element", tool: "batch_create_elements", args: `{"elements": {"id":"r1","type":"rectangle","x":0,"y":0}}`,
			want: []string{"created 1: r1"}, check: wantLen(1)},
		{name: "one edge to add", setup: withGraph, tool: "add_to_graph", args: `{"edges": {"from":"web","to":"db"}}`,
			want: []string{"created 1: e-web-db"}},
		{name: "not JSON where elements belong", tool: "batch_create_elements", args: `{"elements": "a rectangle called API"}`, wantErr: true,
			want: []string{`elements: want a list of objects like [{"id": "r1", …}], got a string "a rectangle called API"`}},
		// Numbers, booleans and nulls.
		{name: "numbers and booleans as strings", tool: "create_element",
			args: `{"id":"r1","type":"rectangle","x":"0","y":"-20","width":"160","height":"80","locked":"true","fontFamily":"6","text":"T"}`,
			want: []string{"created 1: r1"}, check: func(t *testing.T, sc *scene.Scene) {
				if e := get(t, sc, "r1"); e.Width != 160 || e.Y != -20 || !e.Locked {
					t.Errorf("r1 = width %v, y %v, locked %v", e.Width, e.Y, e.Locked)
				}
			}},
		{name: "nulls for optional fields", tool: "create_element",
			args: `{"id":"r1","type":"rectangle","x":0,"y":0,"width":null,"text":null,"strokeColor":null,"frameId":null,"points":null}`,
			want: []string{"created 1: r1"}, check: func(t *testing.T, sc *scene.Scene) {
				if e := get(t, sc, "r1"); e.Width != 160 {
					t.Errorf("r1 width %v, want the default 160", e.Width)
				}
			}},
		// Unknown fields.
		{name: "stray field beside the ids", setup: withOrg, tool: "delete_elements", args: `{"ids":["cto"],"confirm":true}`,
			want: []string{"deleted cto", "\nIgnored unknown field confirm."}},
		{name: "stray field in a node", tool: "create_graph", args: `{"nodes":[{"id":"a","label":"A"},{"id":"b","label":"B"},{"id":"c","label":"C","colour":"red"}]}`,
			want: []string{"created 3", `Ignored unknown field nodes[2].colour (did you mean "color"?).`}},
		{name: "only a misnamed field", setup: withOrg, tool: "set_viewport", args: `{"zoom":2}`, wantErr: true,
			want: []string{"zoom: unknown field; known fields: ids, x, y, width, height"}},
		{name: "only a misnamed direction", setup: withGraph, tool: "relayout_graph", args: `{"dir":"LR"}`, wantErr: true,
			want: []string{`dir: unknown field (did you mean "direction"?)`}},
		{name: "only a misnamed query", setup: withOrg, tool: "query_elements", args: `{"label":"CTO"}`, wantErr: true,
			want: []string{`label: unknown field (did you mean "text"?)`}},
		{name: "update with only a misnamed change", setup: withOrg, tool: "update_element", args: `{"id":"ceo","colour":"red"}`, wantErr: true,
			want: []string{"nothing to change", `colour: unknown field (did you mean "strokeColor"?)`}},
		{name: "graph update with only a misnamed change", setup: withGraph, tool: "update_graph", args: `{"nodes":[{"node":"api","colour":"red"}]}`, wantErr: true,
			want: []string{"nodes[0]: nothing to change: give label, shape, color or group", `nodes[0].colour: unknown field (did you mean "color"?)`}},
		{name: "edge update with only a misnamed change", setup: withGraph, tool: "update_graph", args: `{"edges":[{"from":"web","to":"api","dashed":true}]}`, wantErr: true,
			want: []string{"edges[0]: nothing to change: give label, style or arrow", "edges[0].dashed: unknown field"}},
		{name: "a link is refused, not ignored", tool: "create_element", args: `{"id":"evil","type":"rectangle","x":0,"y":0,"text":"click me","link":"javascript:alert(1)"}`, wantErr: true,
			want: []string{`link: unknown field; the tools write no links, URLs or files, so this call does nothing: send it again without "link"`}},
		{name: "a URL in an item is refused", tool: "create_graph", args: `{"nodes":[{"id":"a","label":"A","imageUrl":"https://x.example/a.png"}]}`, wantErr: true,
			want: []string{`nodes[0].imageUrl: unknown field; the tools write no links`}},
		{name: "graph update with a change and a stray field", setup: withOrgAndGraph, tool: "update_graph", args: `{"nodes":[{"node":"api","color":"red","size":"big"}]}`,
			want: []string{"changed 1: api", "Ignored unknown field nodes[0].size."}},
	})
}

func TestOutward(t *testing.T) {
	for _, tt := range []struct {
		name string
		want bool
	}{
		{"link", true}, {"Link", true}, {"links", true}, {"hyperlink", true}, {"url", true}, {"imageUrl", true},
		{"image_url", true}, {"dataURL", true}, {"href", true}, {"src", true}, {"fileId", true}, {"uri", true},
		{"colour", false}, {"profile", false}, {"security", false}, {"description", false}, {"path", false}, {"label", false},
	} {
		if got := outward(tt.name); got != tt.want {
			t.Errorf("outward(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}
