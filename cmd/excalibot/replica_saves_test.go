package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/excalibot/excalibot/config"
)

// Six people save a diagram of the largest size the store keeps, made of bare elements, at once.
// Each save is refused with the element cap that imports have, before the scene is built; the
// replica's peak memory over the saves is the figure.
func testSaveMemory(t *testing.T, sh *replicaShared) {
	c := newCluster(t, sh, 10*time.Millisecond)
	a := c.start("A", "")
	tr := newTraffic(t, c, 1, 12)
	var slackThs []*rthread
	var want []string
	for _, th := range tr.ths {
		if th.platform == "slack" {
			slackThs = append(slackThs, th)
			tr.send(t, th, 1, nil)
			want = append(want, msgTag(th.n, 1))
		}
	}
	waitAnswered(t, tr, c.waitTO, want...)
	cfg := config.Default()
	doc, n := bareScene(cfg.MaxSceneSize - 1<<10)

	rssBefore := statusKB(fmt.Sprintf("/proc/%d/status", a.pid()), "VmRSS:")
	hwmBefore := a.peakRSS()
	stop := make(chan struct{})
	var peak uint64
	var sampler sync.WaitGroup
	sampler.Go(func() {
		for {
			peak = max(peak, statusKB(fmt.Sprintf("/proc/%d/status", a.pid()), "VmRSS:"))
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	})
	type result struct {
		status int
		body   string
		err    error
	}
	results := make([]result, len(slackThs))
	var wg sync.WaitGroup
	start := time.Now()
	for i, th := range slackThs {
		token := editToken(t, c, th)
		wg.Go(func() {
			req, err := http.NewRequest(http.MethodPut, "http://"+a.addr+"/d/"+token+"/scene", bytes.NewReader(doc))
			if err != nil {
				results[i].err = err
				return
			}
			req.Header.Set("If-Match", `"1"`)
			req.Header.Set("Content-Type", "application/json")
			resp, err := (&http.Client{Timeout: 2 * time.Minute}).Do(req)
			if err != nil {
				results[i].err = err
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			results[i] = result{status: resp.StatusCode, body: strings.TrimSpace(string(b))}
		})
	}
	wg.Wait()
	took := time.Since(start)
	close(stop)
	sampler.Wait()
	hwm := a.peakRSS()
	mib := func(n uint64) float64 { return float64(n) / (1 << 20) }
	t.Logf("six concurrent editor saves of %.1f MB (%d bare elements each): replica RSS %.0f MiB before, peak %.0f MiB during (VmHWM %.0f MiB before, %.0f MiB after); answered in %.1f s",
		float64(len(doc))/(1<<20), n, mib(rssBefore), mib(peak), mib(hwmBefore), mib(hwm), took.Seconds())
	for i, r := range results {
		th := slackThs[i]
		switch {
		case r.err != nil:
			t.Errorf("%s: the save got no answer (%v): the replica built the scene before checking it", th, r.err)
		case r.status < 400 || r.status >= 500:
			t.Errorf("%s: a save of %d elements answered %d %q, want a refusal (4xx)", th, n, r.status, r.body)
		case !strings.Contains(r.body, "element") || !strings.Contains(r.body, strconv.Itoa(cfg.MaxElements)):
			t.Errorf("%s: a save of %d elements was refused with %d %q, want the element cap (%d) named, as for imports", th, n, r.status, r.body, cfg.MaxElements)
		}
		if revs := revisions(t, c.st, tr.key(th)); len(revs) != 1 {
			t.Errorf("%s: %d revisions after the refused save, want 1", th, len(revs))
		}
	}
}

// bareScene is a .excalidraw document of at most size bytes made of bare rectangles (an id and a
// type each, as a hand-written file may have them); it returns the document and the element count.
func bareScene(size int) ([]byte, int) {
	var b bytes.Buffer
	b.WriteString(`{"type":"excalidraw","version":2,"source":"test","elements":[`)
	const tail = `],"appState":{},"files":{}}`
	n := 0
	for {
		el := fmt.Sprintf(`{"id":"e%07d","type":"rectangle"}`, n)
		if b.Len()+len(el)+1+len(tail) > size {
			break
		}
		if n > 0 {
			b.WriteByte(',')
		}
		b.WriteString(el)
		n++
	}
	b.WriteString(tail)
	return b.Bytes(), n
}

// editToken reads the editor link of th's latest answer (the "Open in editor" button of the Slack
// reply) and returns its token.
func editToken(t *testing.T, c *cluster, th *rthread) string {
	t.Helper()
	var token string
	for _, m := range c.sl.fake.Thread(th.channel, th.root) {
		if m.BotID == "" || m.Blocks == nil {
			continue
		}
		var blocks []struct {
			Elements []struct {
				ActionID string `json:"action_id"`
				URL      string `json:"url"`
			} `json:"elements"`
		}
		if err := json.Unmarshal(m.Blocks, &blocks); err != nil {
			t.Fatalf("%s: the reply's blocks: %v", th, err)
		}
		for _, b := range blocks {
			for _, e := range b.Elements {
				if e.ActionID != "open_editor" {
					continue
				}
				u, err := url.Parse(e.URL)
				if err != nil {
					t.Fatalf("%s: editor link %q: %v", th, e.URL, err)
				}
				token = strings.TrimPrefix(u.Path, "/d/")
			}
		}
	}
	if token == "" {
		t.Fatalf("%s: no editor link in the replies", th)
	}
	return token
}
