package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/excalibot/excalibot/agent/ollama"
	"github.com/excalibot/excalibot/agent/ollamafake"
	"github.com/excalibot/excalibot/scene"
	"github.com/excalibot/excalibot/tools"
)

// drawingModel is an instant model for the fake Ollama that draws the same architecture either
// way it is asked: with the plan schema as format it answers a plan built from the schema (the
// way a model constrained by the format writes it); with tools it calls create_graph, then done,
// and on a follow-up add_to_graph and update_graph, then done. A follow-up is a request whose
// scene is not empty.
func drawingModel(req api.ChatRequest) ollamafake.Turn {
	opening := ""
	for _, m := range req.Messages {
		if m.Role == "user" && strings.Contains(m.Content, "<request>") {
			opening = m.Content
		}
	}
	followUp := !strings.Contains(opening, "<scene>\nscene: empty") && strings.Contains(opening, "<scene>")
	if len(req.Format) > 0 {
		fill := planFill(followUp)
		b, err := ollamafake.FromSchema(req.Format, func(path string) any { return fill[path] })
		if err != nil {
			return ollamafake.Fail(500, err.Error())
		}
		return ollamafake.Say(string(b))
	}
	if last := req.Messages[len(req.Messages)-1]; last.Role == "tool" {
		return ollamafake.Calls(ollamafake.Call("done", `{"summary":"Done."}`))
	}
	if followUp {
		return ollamafake.Calls(ollamafake.Call("update_graph", `{"nodes":[{"node":"api","label":"API v2","color":"green"}]}`),
			ollamafake.Call("add_to_graph", `{"nodes":[{"id":"cache","label":"Cache"}],"edges":[{"from":"api","to":"cache"}]}`))
	}
	return ollamafake.Calls(ollamafake.Call("create_graph", `{"direction":"LR","nodes":[{"id":"web","label":"Web app"},{"id":"api","label":"API"},
		{"id":"db","label":"Database","shape":"ellipse"}],"edges":[{"from":"web","to":"api"},{"from":"api","to":"db"}]}`))
}

// planFill gives the plan's values by path, in the short form the schema teaches: a new
// architecture, or on a follow-up the API renamed and recoloured by id and a cache added. The
// nodes carry ids because the tool protocol's run of the same thread uses them.
func planFill(followUp bool) map[string]any {
	if followUp {
		return map[string]any{"kind": "architecture", "direction": "LR", "title": "Web stack", "groups": 0, "nodes": 2, "edges": 1,
			"nodes[0]": map[string]any{"label": "API v2", "id": "api", "color": "green"},
			"nodes[1]": map[string]any{"label": "Cache", "id": "cache", "shape": "ellipse"},
			"edges[0]": "api -> cache"}
	}
	return map[string]any{"kind": "architecture", "direction": "LR", "title": "Web stack", "groups": 0, "nodes": 3, "edges": 2,
		"nodes[0]": map[string]any{"label": "Web app", "id": "web"}, "nodes[1]": map[string]any{"label": "API", "id": "api"},
		"nodes[2]": map[string]any{"label": "Database", "id": "db", "shape": "ellipse"},
		"edges[0]": "Web app -> API", "edges[1]": "API -> Database"}
}

// planThread draws a new diagram and a follow-up with the real agent and Ollama client against
// the fake, and returns the chat requests each run sent.
func planThread(t *testing.T, host string, fake *ollamafake.Server, model string, proto Protocol) (a *Agent, sc *scene.Scene, counts [2]int) {
	t.Helper()
	m, err := ollama.New(ollama.Config{Host: host, Model: model}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a = New(m, Config{Protocol: proto}, nil)
	set := tools.New(scene.New(), tools.Limits{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	mem := Memory{}
	for i, prompt := range []string{"architecture: web app, API, database", "rename the API to API v2, make it green, add a cache"} {
		before := len(fake.Requests())
		res, err := a.Run(ctx, SetRequest(set, prompt, mem, nil))
		if err != nil {
			t.Fatalf("%s %s run %d: %v", model, proto, i+1, err)
		}
		if res.Reason != StopDone || res.ToolErrors != 0 || len(res.Warnings) > 0 {
			t.Fatalf("%s %s run %d: %s, %d tool errors, warnings %q: %+v", model, proto, i+1, res.Reason, res.ToolErrors, res.Warnings, res.Steps)
		}
		counts[i] = len(fake.Requests()) - before
		mem = res.Memory
	}
	labels := map[string]string{}
	for _, e := range StateOf(set.Scene()) {
		labels[e.ID] = e.Label
	}
	for id, want := range map[string]string{"web": "Web app", "api": "API v2", "db": "Database", "cache": "Cache"} {
		if labels[id] != want {
			t.Errorf("%s %s: node %s is %q, want %q", model, proto, id, labels[id], want)
		}
	}
	return a, set.Scene(), counts
}

// TestPlanEndToEnd runs the real agent and Ollama client over HTTP against the fake Ollama: a
// model with tools through the tool loop, a model without them through auto (which asks
// /api/show and picks plans), and one whose server does not report capabilities (auto tries
// tools, is refused with a 400 and switches for good). It prints the model requests per new
// diagram and per follow-up in each protocol (go test ./agent -run TestPlanEndToEnd -v).
func TestPlanEndToEnd(t *testing.T) {
	fake := ollamafake.New(t, ollamafake.Config{
		Models:    []string{ollamafake.ToolModel, ollamafake.ToolLessModel},
		Responder: drawingModel,
	})
	type row struct {
		model string
		proto Protocol
	}
	rows := []row{{ollamafake.ToolModel, ProtocolTools}, {ollamafake.ToolModel, ProtocolPlan},
		{ollamafake.ToolLessModel, ProtocolAuto}}
	var table []string
	for _, r := range rows {
		start := len(fake.Requests())
		_, _, counts := planThread(t, fake.URL(), fake, r.model, r.proto)
		reqs := fake.Requests()[start:]
		for _, q := range reqs {
			if r.proto != ProtocolTools && (len(q.Tools) > 0 || len(q.Format) == 0) {
				t.Errorf("%s %s: a request with %d tools and format %s; want the plan schema and no tools", r.model, r.proto, len(q.Tools), q.Format)
			}
			if r.proto == ProtocolTools && len(q.Format) > 0 {
				t.Errorf("%s tools: a request with a format", r.model)
			}
		}
		if r.proto != ProtocolTools && counts != [2]int{1, 1} {
			t.Errorf("%s %s: %v requests (new, follow-up), want one each", r.model, r.proto, counts)
		}
		table = append(table, fmt.Sprintf("%-10s %-6s %3d %3d", r.model, r.proto, counts[0], counts[1]))
	}

	// A server that does not say what the model can do (an Ollama before 0.6.4 has no
	// capabilities in /api/show) but refuses tools: tools first, then plans for good.
	old := httptest.NewServer(oldShow(fake))
	t.Cleanup(old.Close)
	start := len(fake.Requests())
	a, _, counts := planThread(t, old.URL, fake, ollamafake.ToolLessModel, ProtocolAuto)
	reqs := fake.Requests()[start:]
	if len(reqs) != 3 || len(reqs[0].Tools) == 0 || len(reqs[1].Format) == 0 || len(reqs[2].Format) == 0 {
		t.Errorf("old server: %d requests, want a refused tools request, then one plan per run", len(reqs))
	}
	if !a.main.plan.noTools.Load() {
		t.Error("the agent did not remember that the model has no tools")
	}
	table = append(table, fmt.Sprintf("%-10s %-6s %3d %3d   (no capabilities reported: the first run's refused tools request included)",
		ollamafake.ToolLessModel, ProtocolAuto, counts[0], counts[1]))
	t.Logf("model requests per run against the fake Ollama:\nmodel      proto  new follow-up\n%s", strings.Join(table, "\n"))
}

// oldShow passes requests to the fake but answers /api/show without capabilities, as an Ollama
// before 0.6.4 does.
func oldShow(fake *ollamafake.Server) http.Handler {
	target, _ := url.Parse(fake.URL())
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = func(r *http.Response) error {
		if r.Request.URL.Path != "/api/show" {
			return nil
		}
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			return err
		}
		r.Body.Close()
		delete(body, "capabilities")
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
		r.Header.Set("Content-Length", strconv.Itoa(len(b)))
		return nil
	}
	return proxy
}
