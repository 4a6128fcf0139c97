package ollamafake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	_ "image/jpeg" // the formats Ollama's model package decodes
	_ "image/png"
	"net/http"
	"slices"
	"strings"

	"github.com/ollama/ollama/api"
	_ "golang.org/x/image/bmp"
	_ "golang.org/x/image/tiff"
	_ "golang.org/x/image/webp"
)

// NoVisionError is what Ollama's runner answers (HTTP 500) when a chat request carries images
// for a model that has no vision data, verbatim. It is how the ollama engine's multimodal
// architectures without their vision tensors answer; a text-only architecture (qwen3, llama3.1)
// drops the images silently and answers without them. The fake refuses in both cases, so a
// client that forgets to check the model's vision capability first fails loudly.
const NoVisionError = "Failed to create new sequence: failed to process inputs: this model is missing data required for image input"

// checkImages says what Ollama answers a request whose images the model cannot take, or "".
func (s *Server) checkImages(req api.ChatRequest, pulled string) (int, string) {
	sp := s.spec(pulled)
	for _, m := range req.Messages {
		for _, img := range m.Images {
			if len(sp.Capabilities) > 0 && !slices.Contains(sp.Capabilities, "vision") {
				return http.StatusInternalServerError, NoVisionError
			}
			// The runner decodes each image with Go's image package before the model sees it.
			if _, _, err := image.DecodeConfig(bytes.NewReader(img)); err != nil {
				return http.StatusInternalServerError, "Failed to create new sequence: failed to process inputs: " + err.Error()
			}
		}
	}
	return 0, ""
}

// Pictures returns the images of a request's messages, in order, as the server decoded them
// from base64.
func Pictures(req api.ChatRequest) [][]byte {
	var out [][]byte
	for _, m := range req.Messages {
		for _, img := range m.Images {
			out = append(out, img)
		}
	}
	return out
}

// Sketch is what a fake vision model reads in any picture it is sent: nodes, edges and groups.
type Sketch struct {
	Kind      string // plan kind, default "flowchart"
	Direction string // "TB" or "LR"
	Nodes     []SketchNode
	Edges     []SketchEdge
	Groups    []SketchGroup
	Summary   string
}

// SketchNode is a box of a Sketch.
type SketchNode struct {
	ID, Label, Shape, Group string
}

// SketchEdge is an arrow of a Sketch, between node ids.
type SketchEdge struct {
	From, To, Label, Style string
}

// SketchGroup is a frame of a Sketch.
type SketchGroup struct {
	ID, Title string
}

// Sees is an instant vision model that reads s in the picture of a request: asked with a format
// (a typed plan) it answers the plan of s; asked with tools it calls create_graph with s, then
// done once the tool has answered. A request without a picture gets a 500 naming the fact, so a
// test whose picture went missing fails loudly.
func Sees(s Sketch) Responder {
	return func(req api.ChatRequest) Turn {
		if len(Pictures(req)) == 0 {
			return Fail(http.StatusInternalServerError, "ollamafake: the request carries no picture")
		}
		if len(req.Format) > 0 {
			b, err := json.Marshal(s.plan())
			if err != nil {
				return Fail(http.StatusInternalServerError, err.Error())
			}
			return Say(string(b))
		}
		if answered(req) {
			return Calls(Call("done", fmt.Sprintf(`{"summary":%q}`, s.summary())))
		}
		b, err := json.Marshal(s.graph())
		if err != nil {
			return Fail(http.StatusInternalServerError, err.Error())
		}
		return Calls(Call("create_graph", string(b)))
	}
}

func (s Sketch) summary() string {
	if s.Summary != "" {
		return s.Summary
	}
	var labels []string
	for _, n := range s.Nodes {
		labels = append(labels, n.Label)
	}
	return "Redrew the picture: " + strings.Join(labels, ", ") + "."
}

// plan is s as the agent's plan schema writes it, in the short form: each group with its nodes,
// edges as strings ("a -> b: label"), no summary (the reply says what changed).
func (s Sketch) plan() map[string]any {
	kind := s.Kind
	if kind == "" {
		kind = "flowchart"
	}
	dir := s.Direction
	if dir == "" {
		dir = "TB"
	}
	node := func(n SketchNode) map[string]string {
		m := map[string]string{"id": n.ID, "label": n.Label}
		if n.Shape != "" {
			m["shape"] = n.Shape
		}
		return m
	}
	groups, nodes, edges := []map[string]any{}, []map[string]string{}, []string{}
	for _, g := range s.Groups {
		members := []map[string]string{}
		for _, n := range s.Nodes {
			if n.Group == g.ID {
				members = append(members, node(n))
			}
		}
		groups = append(groups, map[string]any{"id": g.ID, "title": g.Title, "nodes": members})
	}
	declared := map[string]bool{}
	for _, g := range s.Groups {
		declared[g.ID] = true
	}
	for _, n := range s.Nodes {
		if !declared[n.Group] {
			m := node(n)
			if n.Group != "" { // a group the sketch does not declare: the long form's field names it
				m["group"] = n.Group
			}
			nodes = append(nodes, m)
		}
	}
	for _, e := range s.Edges {
		arrow := map[string]string{"dashed": "-.->", "dotted": "..>"}[e.Style]
		if arrow == "" {
			arrow = "->"
		}
		t := e.From + " " + arrow + " " + e.To
		if e.Label != "" {
			t += ": " + e.Label
		}
		edges = append(edges, t)
	}
	return map[string]any{"kind": kind, "direction": dir, "title": "", "groups": groups, "nodes": nodes, "edges": edges}
}

// graph is s as create_graph's arguments.
func (s Sketch) graph() map[string]any {
	g := map[string]any{"nodes": s.nodes(), "edges": s.edges()}
	if s.Direction != "" {
		g["direction"] = s.Direction
	}
	if len(s.Groups) > 0 {
		g["groups"] = s.groups()
	}
	return g
}

func (s Sketch) nodes() []map[string]string {
	out := []map[string]string{}
	for _, n := range s.Nodes {
		m := map[string]string{"id": n.ID, "label": n.Label}
		if n.Shape != "" {
			m["shape"] = n.Shape
		}
		if n.Group != "" {
			m["group"] = n.Group
		}
		out = append(out, m)
	}
	return out
}

func (s Sketch) edges() []map[string]string {
	out := []map[string]string{}
	for _, e := range s.Edges {
		m := map[string]string{"from": e.From, "to": e.To}
		if e.Label != "" {
			m["label"] = e.Label
		}
		if e.Style != "" {
			m["style"] = e.Style
		}
		out = append(out, m)
	}
	return out
}

func (s Sketch) groups() []map[string]string {
	var out []map[string]string
	for _, g := range s.Groups {
		out = append(out, map[string]string{"id": g.ID, "title": g.Title})
	}
	return out
}
