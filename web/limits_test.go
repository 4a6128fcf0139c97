package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/excalibot/excalibot/scene"
)

// bareElements is a scene of n rectangles with nothing but an id and a type: the cheapest
// elements to send, and the most to decode per byte.
func bareElements(n int, extra ...string) []byte {
	var b bytes.Buffer
	b.WriteString(`{"type":"excalidraw","version":2,"elements":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"e%06d","type":"rectangle"}`, i)
	}
	for _, e := range extra {
		if n > 0 || b.Bytes()[b.Len()-1] != '[' {
			b.WriteByte(',')
		}
		b.WriteString(e)
		n++
	}
	b.WriteString(`],"appState":{},"files":{}}`)
	return b.Bytes()
}

func TestPutSceneOverCap(t *testing.T) {
	lim := scene.Limits{MaxBytes: 4 << 10, MaxElements: 3, MaxTextLength: 10}
	e := newEnv(t, Options{MaxBody: 64 << 10, Limits: lim})
	long := `{"id":"t1","type":"text","text":"` + strings.Repeat("é", 11) + `"}`
	gone := `{"id":"g","type":"rectangle","isDeleted":true}`
	for _, tc := range []struct {
		name string
		body []byte
		code int
		want string // in the reply's error
	}{
		{"elements", bareElements(4), 413, "Not saved: the diagram has 4 elements, over the limit of 3. To save, split it, or remove some elements"},
		{"text", bareElements(1, long), 413, `the text of element "t1" is 11 characters long, over the limit of 10. To save, shorten that text`},
		{"bytes before elements", bareElements(150), 413, "Not saved: the diagram is 5 KB, over the 4 KB limit. To save, remove some elements or images"},
		{"deleted", bareElements(0, gone, gone, gone, gone), 413, "the diagram keeps 4 deleted elements, over the limit of 3"},
		{"within", bareElements(3, gone), 200, ""},
	} {
		before := e.rev(t)
		res := e.do(t, "PUT", "/d/"+e.edit+"/scene", tc.body, map[string]string{"If-Match": strconv.FormatInt(before.Rev, 10)})
		var got saveReply
		if err := json.NewDecoder(res.Body).Decode(&got); err != nil {
			t.Fatalf("%s: reply is not JSON: %v", tc.name, err)
		}
		if res.StatusCode != tc.code || !strings.Contains(got.Error, tc.want) {
			t.Errorf("%s: got %d %q, want %d with %q", tc.name, res.StatusCode, got.Error, tc.code, tc.want)
		}
		after := e.rev(t)
		if tc.code != 200 && (after.Rev != before.Rev || !bytes.Equal(after.Scene, before.Scene)) {
			t.Errorf("%s: refused, but the stored scene went from revision %d to %d", tc.name, before.Rev, after.Rev)
		}
		if tc.code == 200 && after.Rev != before.Rev+1 {
			t.Errorf("%s: saved, but the revision is %d, want %d", tc.name, after.Rev, before.Rev+1)
		}
	}
}

// memPeak samples the live heap and the resident set while f runs, and returns both peaks and
// what they were before, in MB.
type memFigures struct{ heapBefore, heapPeak, rssBefore, rssPeak float64 }

func (m memFigures) String() string {
	return fmt.Sprintf("heap %.0f → %.0f MB peak, RSS %.0f → %.0f MB peak", m.heapBefore, m.heapPeak, m.rssBefore, m.rssPeak)
}

func measure(f func()) memFigures {
	runtime.GC()
	debug.FreeOSMemory()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() (heap, rss float64) {
		metrics.Read(sample)
		return float64(sample[0].Value.Uint64()) / (1 << 20), residentMB()
	}
	var m memFigures
	m.heapBefore, m.rssBefore = read()
	m.heapPeak, m.rssPeak = m.heapBefore, m.rssBefore
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			h, r := read()
			m.heapPeak, m.rssPeak = max(m.heapPeak, h), max(m.rssPeak, r)
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	f()
	close(stop)
	<-done
	return m
}

// residentMB reads VmRSS from /proc/self/status (0 where there is none).
func residentMB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

// sixMaxSaves sends six 3.4 MB saves of 100 000 bare elements at once, the load that used to take
// the process from 61 MB to 1.8 GB, and checks that each is refused naming the element cap and
// that the stored scene is unchanged.
func sixMaxSaves(t testing.TB, e *env, body []byte) {
	before := e.rev(t)
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for range 6 {
		wg.Go(func() {
			req, _ := http.NewRequest("PUT", e.ts.URL+"/d/"+e.edit+"/scene", bytes.NewReader(body))
			req.Header.Set("If-Match", strconv.FormatInt(before.Rev, 10))
			res, err := e.ts.Client().Do(req)
			if err != nil {
				errs <- err
				return
			}
			defer res.Body.Close()
			var got saveReply
			json.NewDecoder(res.Body).Decode(&got)
			if res.StatusCode != 413 || !strings.Contains(got.Error, "has 100000 elements, over the limit of 500") {
				errs <- fmt.Errorf("got %d %q, want 413 naming the element cap", res.StatusCode, got.Error)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if after := e.rev(t); after.Rev != before.Rev || !bytes.Equal(after.Scene, before.Scene) {
		t.Errorf("refused saves changed the stored scene: revision %d → %d", before.Rev, after.Rev)
	}
}

// TestConcurrentMaxSizeSaves: six concurrent 3.4 MB saves of 100 000 bare elements, with the
// default limits (5 MB, 500 elements), are refused before decoding. The heap the saves take is
// logged; it stays within a generous bound (the six bodies are 20 MB; decoding them took GBs).
func TestConcurrentMaxSizeSaves(t *testing.T) {
	e := newEnv(t, Options{})
	body := bareElements(100_000)
	if mb := float64(len(body)) / (1 << 20); mb < 3.3 || mb > 3.5 {
		t.Fatalf("the test body is %.2f MB, want about 3.4", mb)
	}
	m := measure(func() { sixMaxSaves(t, e, body) })
	t.Logf("six concurrent %.1f MB saves of 100 000 elements: %v", float64(len(body))/(1<<20), m)
	if grew := m.heapPeak - m.heapBefore; grew > 200 {
		t.Errorf("the heap grew by %.0f MB during six refused saves, want well under 200 MB", grew)
	}
}

// BenchmarkConcurrentMaxSizeSaves measures memory, not time: the same six saves as
// TestConcurrentMaxSizeSaves through the handler, against a baseline in the same run that decodes
// and encodes each body before any check, as saves did before they were bounded. The baseline
// needs a few GB. Run: go test ./web -run '^$' -bench ConcurrentMaxSizeSaves -benchtime 1x
func BenchmarkConcurrentMaxSizeSaves(b *testing.B) {
	body := bareElements(100_000)
	e := newEnv(b, Options{})
	var bounded, decoded memFigures
	for b.Loop() {
		bounded = measure(func() { sixMaxSaves(b, e, body) })
		decoded = measure(func() {
			var wg sync.WaitGroup
			for range 6 {
				wg.Go(func() {
					sc, err := scene.Decode(body)
					if err != nil {
						b.Error(err)
						return
					}
					if _, err := sc.Encode(); err != nil {
						b.Error(err)
					}
				})
			}
			wg.Wait()
		})
	}
	b.Logf("bounded (refused before decoding): %v", bounded)
	b.Logf("baseline (decoded and encoded first): %v", decoded)
	b.ReportMetric(bounded.heapPeak-bounded.heapBefore, "bounded-heap-MB")
	b.ReportMetric(decoded.heapPeak-decoded.heapBefore, "decoded-heap-MB")
	b.ReportMetric(bounded.rssPeak, "bounded-rss-MB")
	b.ReportMetric(decoded.rssPeak, "decoded-rss-MB")
}
