package tools

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/excalibot/excalibot/diagram/graph"
	"github.com/excalibot/excalibot/internal/clip"
	"github.com/excalibot/excalibot/scene"
)

// The graph tools' short forms, the same a plan is written in: a node as its label alone
// ("API"), an edge as one string ("API -> DB: reads"), a group with the nodes it holds
// ({"title": "Backend", "nodes": ["API", "Worker"]}). Each is turned into the object form here,
// keeping its path, so the rest of decoding and every message is the same for both forms.

// itemList reads an array whose items are objects or strings; fromString turns a string item
// into an object's fields, or says why it cannot.
func (o *object) itemList(name string, fromString func(s string) (map[string]json.RawMessage, error)) ([]*object, bool) {
	v, isString := o.structured(name)
	if v == nil {
		return nil, false
	}
	decoded := o.decoded || isString
	if v[0] == '{' || v[0] == '"' {
		v = append(append(json.RawMessage{'['}, v...), ']') // a lone item: a list of one
	}
	var list []json.RawMessage
	if err := json.Unmarshal(v, &list); err != nil {
		o.p.add(o.at(name), "want a list, got %s%s", describeJSON(o.raw(name)), notJSONString(o.raw(name)))
		return nil, false
	}
	out := make([]*object, 0, len(list))
	for i, item := range list {
		path := fmt.Sprintf("%s[%d]", o.at(name), i)
		if s, ok := fastString(item); ok || (len(item) > 0 && item[0] == '"' && json.Unmarshal(item, &s) == nil) {
			fields, err := fromString(s)
			if err != nil {
				o.p.add(path, "%q: %v", clip.Runes(s, 60), err)
				continue
			}
			sub := &object{path: path, fields: fields, p: o.p, decoded: true}
			sub.sortKeys()
			out = append(out, sub)
			continue
		}
		if sub, ok := newObject(path, item, o.p, decoded); ok {
			out = append(out, sub)
		}
	}
	return out, true
}

// jsonFields makes object fields of string values.
func jsonFields(kv ...string) map[string]json.RawMessage {
	m := make(map[string]json.RawMessage, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			continue
		}
		b, _ := json.Marshal(kv[i+1])
		m[kv[i]] = b
	}
	return m
}

// labelNode is a node written as its label: its id is made from the label.
func labelNode(s string) (map[string]json.RawMessage, error) {
	return map[string]json.RawMessage{"label": mustJSON(s)}, nil
}

func mustJSON(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// graphNodeObjs reads a call's nodes: those listed in nodes and those its groups hold (before
// them, in the groups' order), each of the latter put into its group.
func graphNodeObjs(o *object, groupObjs []*object) []*object {
	var out []*object
	for _, g := range groupObjs {
		if !g.has("nodes") {
			continue
		}
		ref, _ := g.str("id")
		if ref == "" {
			ref, _ = g.str("title")
		}
		members, _ := g.itemList("nodes", labelNode)
		for _, m := range members {
			if !m.has("group") && ref != "" {
				m.fields["group"] = mustJSON(ref)
			}
			out = append(out, m)
		}
	}
	nodes, _ := o.itemList("nodes", labelNode)
	return append(out, nodes...)
}

// graphEdgeObjs reads a call's edges; a string is read with ParseEdge, its names checked
// against the call's nodes and the canvas's.
func graphEdgeObjs(o *object, w *scene.Scene, nodes []nodeArgs) []*object {
	names := map[string]bool{}
	for _, n := range nodes {
		names[normName(n.id)], names[normName(n.label)] = true, true
	}
	var g graph.View
	canvas := false
	isNode := func(s string) bool {
		if names[normName(s)] {
			return true
		}
		if !canvas {
			g, canvas = graph.Read(w), true
		}
		_, err := g.Node(s)
		return err == nil
	}
	edges, _ := o.itemList("edges", func(s string) (map[string]json.RawMessage, error) {
		e, err := ParseEdge(s, isNode)
		if err != nil {
			return nil, err
		}
		f := jsonFields("from", e.From, "to", e.To, "label", e.Label)
		if e.Style != "solid" {
			f["style"] = mustJSON(e.Style)
		}
		if e.Arrow != "end" {
			f["arrow"] = mustJSON(e.Arrow)
		}
		return f, nil
	})
	return edges
}

func normName(s string) string { return strings.Join(strings.Fields(strings.ToLower(s)), " ") }

// listLen is the number of items of a list field (1 for a lone item, 0 when absent), for the
// batch limit, which is checked before the items are read.
func listLen(o *object, name string) int {
	v, _ := o.structured(name)
	if v == nil {
		return 0
	}
	var list []json.RawMessage
	if json.Unmarshal(v, &list) != nil {
		return 1
	}
	return len(list)
}
