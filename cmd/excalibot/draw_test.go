package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/excalibot/excalibot/agent/ollamafake"
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

// TestDrawEmptied: a request that empties the diagram writes the empty .excalidraw file, says
// there is nothing to draw, removes the picture from before (it would contradict the file) and
// exits 0 without Chromium: an empty result is an answer, not a failure.
func TestDrawEmptied(t *testing.T) {
	for _, oldPicture := range []bool{true, false} {
		t.Run(fmt.Sprintf("picture from before %v", oldPicture), func(t *testing.T) {
			fake := ollamafake.New(t, ollamafake.Config{Responder: ollamafake.Script(
				ollamafake.Calls(ollamafake.Call("delete_elements", `{"ids":["api","db"]}`)),
				ollamafake.Calls(ollamafake.Call("done", `{"summary":"Removed both boxes; the canvas is empty."}`)),
			)})
			t.Setenv("OLLAMA_HOST", fake.URL())
			dir := t.TempDir()
			start := scene.New()
			for i, id := range []string{"api", "db"} {
				if _, err := start.Add(scene.Element{ID: id, Type: scene.Rectangle, X: float64(200 * i), Width: 160, Height: 60}); err != nil {
					t.Fatal(err)
				}
			}
			doc, err := start.Encode()
			if err != nil {
				t.Fatal(err)
			}
			in, png := filepath.Join(dir, "start.excalidraw"), filepath.Join(dir, "d.png")
			if err := os.WriteFile(in, doc, 0o644); err != nil {
				t.Fatal(err)
			}
			if oldPicture {
				if err := os.WriteFile(png, []byte("the two boxes"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var out, errw bytes.Buffer
			code := cmdDraw(context.Background(), []string{"remove everything", "--in", in, "-o", png,
				"--chrome", filepath.Join(dir, "no-chromium")}, &out, &errw)
			if code != 0 || errw.Len() > 0 {
				t.Fatalf("exit %d, stderr %q; want 0 and nothing\nstdout %s", code, errw.String(), out.String())
			}
			want := []string{"[1] delete_elements", "Removed both boxes; the canvas is empty.",
				"wrote " + filepath.Join(dir, "d.excalidraw"), "The diagram is empty: there is nothing to draw, so no PNG."}
			if oldPicture {
				want = append(want, "removed "+png+", the picture from before")
			}
			for _, w := range want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
			if !oldPicture && strings.Contains(out.String(), "removed") {
				t.Errorf("output speaks of a removed picture there was none of:\n%s", out.String())
			}
			saved, err := os.ReadFile(filepath.Join(dir, "d.excalidraw"))
			if err != nil {
				t.Fatal(err)
			}
			if sc, err := scene.Decode(saved); err != nil || sc.Len() != 0 {
				t.Errorf("the scene file: %v, %d elements; want an empty diagram", err, sc.Len())
			}
			if _, err := os.Stat(png); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the picture is there (%v), want none", err)
			}
		})
	}
}

// TestDrawFailedRun: a run that fails exits 1 with the reason and writes nothing, unlike an
// emptied diagram. The error text is Ollama's own (llm/server.go, v0.17.4).
func TestDrawFailedRun(t *testing.T) {
	const crashed = "model runner has unexpectedly stopped, this may be due to resource limitations or an internal error, check ollama server logs for details"
	fake := ollamafake.New(t, ollamafake.Config{Responder: ollamafake.Script(ollamafake.Fail(500, crashed))})
	t.Setenv("OLLAMA_HOST", fake.URL())
	dir := t.TempDir()
	var out, errw bytes.Buffer
	code := cmdDraw(context.Background(), []string{"two boxes", "-o", filepath.Join(dir, "d.png"),
		"--chrome", filepath.Join(dir, "no-chromium")}, &out, &errw)
	if code != 1 || !strings.Contains(errw.String(), "unexpectedly stopped") {
		t.Errorf("exit %d, stderr %q; want 1 with Ollama's reason", code, errw.String())
	}
	if files, _ := os.ReadDir(dir); len(files) != 0 {
		t.Errorf("a failed run wrote %d files, want none", len(files))
	}
}
