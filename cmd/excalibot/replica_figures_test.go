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

// Figures for docs/reliability.md, logged and never asserted as times: the memory of a replica
// during six concurrent maximum-size editor saves (which must be refused by the element cap before
// the scene is built), and messages per second with one and with two replicas against a model of
// fixed turn time.
func testReplicaFigures(t *testing.T, sh *replicaShared) {
	t.Run("editor saves", func(t *testing.T) { testSaveMemory(t, sh) })
	t.Run("throughput", func(t *testing.T) {
		const turn = 300 * time.Millisecond
		var rate [3]float64
		for _, n := range []int{1, 2} {
			t.Run(fmt.Sprintf("%d replicas", n), func(t *testing.T) {
				c := newCluster(t, sh, turn)
				reps := c.startAll([]string{"A", "B"}[:n], []string{"", ""}[:n])
				tr := newTraffic(t, c, 1, 10)
				deadline := time.Now().Add(loadWait)
				playAll(t, tr, 3, func(*rthread, int) bool { return false }, deadline)
				rep, ok := tr.waitSettled(time.Until(deadline), 0)
				if !ok {
					t.Errorf("waited %s for every acknowledged message to be answered or told", loadWait)
				}
				rep.check(t, true)
				wall := tr.wall()
				rate[n] = float64(rep.Sent) / wall.Seconds()
				var share []string
				for _, r := range reps {
					share = append(share, fmt.Sprintf("%s %d", r.name, len(r.model.Requests())))
				}
				t.Logf("throughput, %d replica(s), model %s per turn (3 turns a run), %d runs at once per replica: %d messages in %.1f s: %.2f messages/s, %.2f pictures/s; model requests per replica: %s",
					n, turn, config.Default().MaxConcurrentRuns, rep.Sent, wall.Seconds(), rate[n], float64(rep.Pictures)/wall.Seconds(), strings.Join(share, ", "))
			})
		}
		if rate[1] > 0 && rate[2] > 0 {
			t.Logf("throughput: two replicas %.2f× one", rate[2]/rate[1])
		}
	})
}

// wall is the time from the first message sent to the last picture seen.
func (tr *traffic) wall() time.Duration {
	var first, last time.Time
	for _, th := range tr.ths {
		posts := tr.run.posts(th.loadThread)
		th.mu.Lock()
		for _, at := range th.sent {
			if first.IsZero() || at.Before(first) {
				first = at
			}
		}
		for _, p := range posts {
			if at := th.seen[p.id]; p.picture && at.After(last) {
				last = at
			}
		}
		th.mu.Unlock()
	}
	return last.Sub(first)
}

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
			t.Errorf("%s: the save failed: %v", th, r.err)
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
