package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/excalibot/excalibot/agent/ollamafake"
	"github.com/excalibot/excalibot/config"
	"github.com/excalibot/excalibot/web"
)

// TestHomePageShowsModel: serve's home page shows the model as the fake Ollama describes it
// through the real client: Ollama's version, the model, its capabilities and protocol, and the
// pulled models that read pictures when the model cannot.
func TestHomePageShowsModel(t *testing.T) {
	fake := ollamafake.New(t, ollamafake.Config{Models: []string{ollamafake.ToolModel, ollamafake.ToolLessModel}})
	cfg := testConfig(t)
	cfg.OllamaHost, cfg.Model = fake.URL(), ollamafake.ToolModel
	cfg.ChromePath = filepath.Join(t.TempDir(), "no-chromium") // the renderer is not what is shown
	addr, stop := startServe(t, cfg, &lockedBuffer{})
	defer stop()
	code, page := httpGet("http://" + addr + "/")
	if code != 200 {
		t.Fatalf("GET / = %d %s", code, page)
	}
	for _, want := range []string{
		`<li>Ollama: <span class="ok">ready</span> (version 0.17.4)</li>`,
		`<li>model qwen3:8b: <span class="ok">pulled</span>; can do completion, tools, thinking; draws with tool calls (protocol <code>tools</code>)</li>`,
		`<li>pictures: <span class="bad">qwen3:8b cannot read pictures, so pictures are refused</span>: set EXCALIBOT_VISION_MODEL to a pulled model that reads pictures: gemma3:4b</li>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the home page lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, fake.URL()) {
		t.Errorf("the home page shows Ollama's address:\n%s", page)
	}
}

// TestModelWatch: the page's view of the model is asked afresh, at most every modelHealthTTL,
// and callers meanwhile share the answer: a model removed shows as not pulled once the view is
// stale, and one pulled shows as ready.
func TestModelWatch(t *testing.T) {
	fake := ollamafake.New(t, ollamafake.Config{Models: []string{ollamafake.ToolModel}})
	cfg := config.Default()
	cfg.OllamaHost, cfg.Model, cfg.VisionModel = fake.URL(), ollamafake.ToolModel, ollamafake.ToolLessModel
	m, err := newModel(cfg, quietLog())
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	w := newModelWatch(cfg, m)
	w.now = func() time.Time { return now }

	h := w.Health(context.Background())
	if h.Problem != "" || !h.Pulled || h.Protocol != "tools" || h.VisionReady ||
		h.VisionProblem != "gemma3:4b (EXCALIBOT_VISION_MODEL) is not pulled into Ollama, so pictures are refused" ||
		h.VisionFix != "run `ollama pull gemma3:4b`, or pull a model that reads pictures (qwen2.5vl, gemma3, llama3.2-vision) and set EXCALIBOT_VISION_MODEL to it" {
		t.Errorf("first view: %+v", h)
	}
	asked := len(fake.Shown())

	// Many page loads within the TTL, some at once: one answer, no new question.
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if got := w.Health(context.Background()); got.Model != h.Model || got.Problem != h.Problem {
				t.Errorf("a cached view differs: %+v", got)
			}
		}()
	}
	wg.Wait()
	if n := len(fake.Shown()); n != asked {
		t.Errorf("views within %s asked /api/show %d more times, want none", modelHealthTTL, n-asked)
	}

	fake.Remove(ollamafake.ToolModel)
	fake.Pull(ollamafake.ToolLessModel, ollamafake.Known[ollamafake.ToolLessModel])
	now = now.Add(modelHealthTTL - time.Second)
	if got := w.Health(context.Background()); !got.Pulled {
		t.Errorf("within the TTL the view changed: %+v", got)
	}
	now = now.Add(time.Second)
	got := w.Health(context.Background())
	want := web.ModelHealth{Reachable: true, Version: "0.17.4", Model: "qwen3:8b",
		Problem: "the model qwen3:8b is not pulled into Ollama", Fix: "run `ollama pull qwen3:8b`, or set EXCALIBOT_MODEL to a model that is",
		Vision: "gemma3:4b", VisionReady: true}
	if !equalHealth(got, want) {
		t.Errorf("after the TTL:\ngot  %+v\nwant %+v", got, want)
	}

	fake.Stop()
	now = now.Add(modelHealthTTL)
	got = w.Health(context.Background())
	want = web.ModelHealth{Model: "qwen3:8b", Problem: "Ollama does not answer",
		Fix: "start it (`ollama serve`) or set OLLAMA_HOST to where it runs; `excalibot doctor` names the address it tried"}
	if !equalHealth(got, want) {
		t.Errorf("Ollama down:\ngot  %+v\nwant %+v", got, want)
	}
}

func equalHealth(a, b web.ModelHealth) bool {
	return slices.Equal(a.Capabilities, b.Capabilities) && fmt.Sprintf("%+v", a) == fmt.Sprintf("%+v", b)
}
