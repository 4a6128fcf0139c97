package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/excalibot/excalibot/config"
	"github.com/excalibot/excalibot/scene"
)

func TestLoadConfigMixesFlagsAndPrompt(t *testing.T) {
	tests := []struct {
		args      []string
		prompt    string
		out       string
		model     string
		quiet     bool
		wantFails bool
	}{
		{[]string{"org chart"}, "org chart", "diagram.png", "qwen3:8b", false, false},
		{[]string{"org chart", "-o", "x.png", "--model", "llama3.1:8b", "-q"}, "org chart", "x.png", "llama3.1:8b", true, false},
		{[]string{"-q", "--model=m:1", "two", "words"}, "two words", "diagram.png", "m:1", true, false},
		{[]string{"--", "-starts with a dash"}, "-starts with a dash", "diagram.png", "qwen3:8b", false, false},
		{[]string{"x", "--num-ctx", "nope"}, "", "", "", false, true},
	}
	for _, tt := range tests {
		fs := flag.NewFlagSet("draw", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		out := fs.String("o", "diagram.png", "")
		quiet := fs.Bool("q", false, "")
		var stderr bytes.Buffer
		l, pos, code := loadConfig(fs, tt.args, &stderr, "draw")
		if tt.wantFails {
			if l != nil || code != 2 {
				t.Errorf("%q: want a usage error, got code %d", tt.args, code)
			}
			continue
		}
		if l == nil {
			t.Fatalf("%q: %s", tt.args, stderr.String())
		}
		if got := strings.Join(pos, " "); got != tt.prompt || *out != tt.out || l.Model != tt.model || *quiet != tt.quiet {
			t.Errorf("%q: prompt %q out %q model %q quiet %v; want %q %q %q %v", tt.args, got, *out, l.Model, *quiet,
				tt.prompt, tt.out, tt.model, tt.quiet)
		}
	}
}

// ndjsonOllama plays canned /api/chat replies, one per request, in Ollama's NDJSON form.
type ndjsonOllama struct {
	mu      sync.Mutex
	replies []string
}

// serveModel answers the model's turns with replies in order, from a server that OLLAMA_HOST
// points at until the test ends.
func serveModel(t *testing.T, replies ...string) {
	t.Helper()
	srv := httptest.NewServer(&ndjsonOllama{replies: replies})
	t.Cleanup(srv.Close)
	t.Setenv("OLLAMA_HOST", srv.URL)
}

func (f *ndjsonOllama) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/api/show": // the commands ask what the model can do before the first request
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		io.WriteString(w, `{"details":{"format":"gguf","family":"qwen3","families":["qwen3"],"parameter_size":"8.2B","quantization_level":"Q4_K_M"},`+
			`"model_info":{"general.architecture":"qwen3","qwen3.context_length":40960},"capabilities":["completion","tools","thinking"]}`)
		return
	case "/api/chat":
	default:
		http.NotFound(w, r)
		return
	}
	f.mu.Lock()
	var reply string
	if len(f.replies) > 0 {
		reply, f.replies = f.replies[0], f.replies[1:]
	}
	f.mu.Unlock()
	if reply == "" {
		http.Error(w, `{"error":"no reply left"}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	io.WriteString(w, reply)
}

func toolReply(name, args string) string {
	return `{"model":"qwen3:8b","message":{"role":"assistant","content":"","tool_calls":[{"id":"c1","function":{"index":0,"name":"` +
		name + `","arguments":` + args + `}}]},"done":false}` + "\n" +
		`{"model":"qwen3:8b","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":900,"eval_count":40}` + "\n"
}

func TestChatThread(t *testing.T) {
	f := &ndjsonOllama{replies: []string{
		toolReply("batch_create_elements", `{"elements":[{"id":"api","type":"rectangle","x":0,"y":0,"text":"API"},{"id":"db","type":"rectangle","x":0,"y":200,"text":"DB"},{"id":"a1","type":"arrow","startElementId":"api","endElementId":"db"}]}`),
		toolReply("done", `{"summary":"API writes to DB."}`),
		// the second request fails: the model is gone, the diagram must stay
	}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	cfg := config.Default()
	cfg.OllamaHost, cfg.ChromePath = srv.URL, filepath.Join(t.TempDir(), "no-chromium")
	var out, logs bytes.Buffer
	k, err := newKit(cfg, &logs, false, false)
	if err != nil {
		t.Fatal(err)
	}
	defer k.close()
	png := filepath.Join(t.TempDir(), "d.png")
	th := &thread{k: k, out: &out, png: png, set: k.tools(scene.New())}
	in := strings.Join([]string{"API and DB", "make it blue", "save", "undo", "undo", "reset", "undo", "quit", "never read"}, "\n")
	if err := th.loop(context.Background(), strings.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"[1] batch_create_elements",
		"API writes to DB.",
		"That did not work:", "The diagram is unchanged.",
		"Wrote " + strings.TrimSuffix(png, ".png") + ".excalidraw.",
		"No PNG:",
		"Undone (0 elements now).",
		"Nothing to undo.",
		"Started over with an empty canvas",
		"Undone (0 elements now).",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	saved, err := os.ReadFile(strings.TrimSuffix(png, ".png") + ".excalidraw")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scene.Decode(saved)
	if err != nil || sc.LabelText("db") != "DB" {
		t.Errorf("saved scene: %v, db label %q", err, sc.LabelText("db"))
	}
	if strings.Contains(got, "never read") {
		t.Error("lines after quit were read")
	}
}

func TestDrawWritesSceneAndPicture(t *testing.T) {
	serveModel(t,
		toolReply("batch_create_elements", `{"elements":[{"id":"r1","type":"rectangle","x":0,"y":0,"text":"Hello"}]}`),
		toolReply("done", `{"summary":"One box that says Hello."}`),
	)
	_, chromeErr := exec.LookPath("chromium")
	dir := t.TempDir()
	png := filepath.Join(dir, "hello.png")
	args := []string{"a box saying Hello", "-o", png}
	if chromeErr != nil {
		args = append(args, "--chrome", filepath.Join(dir, "no-chromium"))
	}
	var out, errw bytes.Buffer
	code := cmdDraw(context.Background(), args, &out, &errw)
	for _, want := range []string{"[1] batch_create_elements", "One box that says Hello.", "wrote " + filepath.Join(dir, "hello.excalidraw")} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	doc, err := os.ReadFile(filepath.Join(dir, "hello.excalidraw"))
	if err != nil {
		t.Fatal(err)
	}
	if sc, err := scene.Decode(doc); err != nil || sc.LabelText("r1") != "Hello" {
		t.Errorf("scene file: %v", err)
	}
	if chromeErr != nil {
		if code != 1 || !strings.Contains(errw.String(), "no PNG") {
			t.Errorf("without Chromium: code %d, stderr %q", code, errw.String())
		}
		return
	}
	pic, err := os.ReadFile(png)
	if code != 0 || err != nil || !scene.IsPNG(pic) {
		t.Fatalf("code %d, PNG %d bytes, %v; stderr %s", code, len(pic), err, errw.String())
	}
}

func TestDrawNeedsOllama(t *testing.T) {
	t.Setenv("OLLAMA_HOST", "127.0.0.1:1")
	var out, errw bytes.Buffer
	if code := cmdDraw(context.Background(), []string{"x", "-o", filepath.Join(t.TempDir(), "x.png")}, &out, &errw); code != 1 {
		t.Errorf("code %d, want 1", code)
	}
	if !strings.Contains(errw.String(), "Ollama is not reachable at http://127.0.0.1:1; start it with `ollama serve`") {
		t.Errorf("stderr %q", errw.String())
	}
}

// TestDrawWithMermaid: in `excalibot draw` the model's create_from_mermaid converts in the same
// Chromium that renders the picture.
func TestDrawWithMermaid(t *testing.T) {
	if _, err := exec.LookPath("chromium"); err != nil {
		t.Skip("chromium is not installed (apt-get install chromium); .ci/run installs it")
	}
	serveModel(t,
		toolReply("create_from_mermaid", `{"mermaid":"flowchart LR\n  A[Checkout] --> B{Paid?}\n  B -->|yes| C[Ship]"}`),
		toolReply("done", `{"summary":"Checkout flow from Mermaid."}`),
	)
	dir := t.TempDir()
	png := filepath.Join(dir, "flow.png")
	var out, errw bytes.Buffer
	if code := cmdDraw(context.Background(), []string{"checkout flow", "-o", png}, &out, &errw); code != 0 {
		t.Fatalf("code %d\nstdout %s\nstderr %s", code, out.String(), errw.String())
	}
	if !strings.Contains(out.String(), "[1] create_from_mermaid") || strings.Contains(out.String(), "create_from_mermaid failed") {
		t.Errorf("output:\n%s", out.String())
	}
	doc, err := os.ReadFile(filepath.Join(dir, "flow.excalidraw"))
	if err != nil {
		t.Fatal(err)
	}
	for _, label := range []string{"Checkout", "Paid?", "Ship", "yes"} {
		if !bytes.Contains(doc, []byte(`"text": "`+label+`"`)) && !bytes.Contains(doc, []byte(`"text":"`+label+`"`)) {
			t.Errorf("the scene lacks the label %q", label)
		}
	}
	if pic, err := os.ReadFile(png); err != nil || !scene.IsPNG(pic) {
		t.Errorf("PNG: %d bytes, %v", len(pic), err)
	}
}
