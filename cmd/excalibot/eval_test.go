package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEvalRunsSuiteAndReports(t *testing.T) {
	serveModel(t,
		toolReply("batch_create_elements", `{"elements":[{"id":"ceo","type":"rectangle","x":0,"y":0,"text":"CEO"},{"id":"cto","type":"rectangle","x":0,"y":200,"text":"CTO"},{"id":"a1","type":"arrow","startElementId":"ceo","endElementId":"cto"}]}`),
		toolReply("done", `{"summary":"CEO over CTO."}`),
		toolReply("update_element", `{"id":"cto","text":"VP Engineering"}`),
		toolReply("done", `{"summary":"Renamed."}`),
		toolReply("done", `{"summary":"Nothing drawn."}`),
		toolReply("done", `{"summary":"Still nothing."}`), // after the nudge that nothing was drawn
	)
	dir := t.TempDir()
	suite := filepath.Join(dir, "suite.json")
	if err := os.WriteFile(suite, []byte(`{"cases":[
	 {"name":"org","kind":"follow-up","prompts":["CEO over CTO","rename CTO to VP Engineering"],"labels":["CEO","VP Engineering"],"absent":["CTO"]},
	 {"name":"empty","kind":"flowchart","prompts":["a flow"],"labels":["Start"]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	var stdout, stderr bytes.Buffer
	if code := cmdEval(context.Background(), []string{"--suite", suite, "--out", out, "--no-png"}, &stdout, &stderr); code != 0 {
		t.Fatalf("code %d: %s", code, stderr.String())
	}
	lines := map[string]string{}
	for _, l := range strings.Split(stdout.String(), "\n") {
		if f := strings.Fields(l); len(f) > 2 {
			lines[f[0]] = l
		}
	}
	if l := lines["org"]; !strings.Contains(l, "follow-up  yes") {
		t.Errorf("org line %q, want finished", l)
	}
	if l := lines["empty"]; !strings.Contains(l, " no ") || !strings.Contains(l, "missing Start") {
		t.Errorf("empty line %q, want not finished, missing Start", l)
	}
	if _, err := os.Stat(filepath.Join(out, "org.excalidraw")); err != nil {
		t.Errorf("scene not written: %v", err)
	}
}
