package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/excalibot/excalibot/scene"
)

func TestCmdTools(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "org.jsonl")
	out := filepath.Join(dir, "org.excalidraw")
	body := `# an org chart
{"tool":"batch_create_elements","args":{"elements":[{"id":"ceo","type":"rectangle","x":0,"y":0,"text":"CEO"},{"id":"cto","type":"rectangle","x":0,"y":200,"text":"CTO"},{"id":"a1","type":"arrow","startElementId":"ceo","endElementId":"cto"}]}}

{"tool":"get_scene","args":{}}
{"tool":"done","args":{"summary":"ok"}}
{"tool":"clear_canvas","args":{}}
`
	if err := os.WriteFile(script, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := cmdTools(context.Background(), []string{"-o", out, script}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr.String())
	}
	for _, want := range []string{"created 3: ceo, cto, a1", "ceo -> cto (a1)", "done: ok", "wrote " + out + " (5 elements)"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, stdout.String())
		}
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scene.Decode(data)
	if err != nil || sc.Len() != 5 {
		t.Fatalf("written scene: %v, %d elements; want 5 (the script stops at done)", err, sc.Len())
	}

	// A refused call stops the script with exit code 1 and names the line.
	stdout.Reset()
	stderr.Reset()
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte(`{"tool":"update_element","args":{"id":"nope","x":1}}`+"\n"+`{"tool":"get_scene"}`+"\n"), 0o644)
	if code := cmdTools(context.Background(), []string{"--in", out, bad}, &stdout, &stderr); code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if !strings.Contains(stderr.String(), "line 1: update_element was refused") || strings.Contains(stdout.String(), "> get_scene") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
}
