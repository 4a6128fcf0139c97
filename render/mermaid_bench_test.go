package render

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"testing"
	"time"
)

// benchFlowchart is a 12-node flowchart with a subgraph and edge labels, the size of a chat diagram.
const benchFlowchart = `flowchart LR
  user([User]) -->|HTTPS| lb[Load balancer]
  lb --> web1[Web 1] & web2[Web 2]
  subgraph backend [Backend]
    api[API] --> auth{Signed in?}
    auth -->|yes| svc[Orders service]
    auth -->|no| login[Login page]
    svc --> queue[[Queue]]
    queue --> worker[Worker]
  end
  web1 --> api
  web2 --> api
  svc --> db[(Postgres)]
  worker --> db
`

// BenchmarkMermaid measures converting a 12-node flowchart: the first call of a renderer (which
// opens and warms the Mermaid tab) and warm calls, each against the baseline of a warm PNG render
// of the converted diagram in the same run.
//
//	go test ./render -run '^$' -bench Mermaid -benchtime 10x
func BenchmarkMermaid(b *testing.B) {
	needChrome(b)
	ctx := context.Background()
	r, err := New(ctx, Config{ChromePath: os.Getenv("CHROME"), RenderTimeout: 5 * time.Minute}, testLogger(b))
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	t0 := time.Now()
	res, err := r.Mermaid(ctx, benchFlowchart)
	if err != nil {
		b.Fatal(err)
	}
	first := time.Since(t0)
	doc, err := json.Marshal(map[string]any{"type": "excalidraw", "version": 2, "elements": res.Elements, "files": res.Files})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := r.PNG(ctx, doc, Options{}); err != nil { // loads the glyphs
		b.Fatal(err)
	}
	var warm, page, png []time.Duration
	b.ResetTimer()
	for range b.N {
		t := time.Now()
		res, err := r.Mermaid(ctx, benchFlowchart)
		if err != nil {
			b.Fatal(err)
		}
		warm = append(warm, time.Since(t))
		page = append(page, time.Duration(res.PageMS*float64(time.Millisecond)))
		t = time.Now()
		if _, err := r.PNG(ctx, doc, Options{}); err != nil {
			b.Fatal(err)
		}
		png = append(png, time.Since(t))
	}
	b.StopTimer()
	med := func(d []time.Duration) time.Duration {
		s := slices.Clone(d)
		slices.Sort(s)
		return s[len(s)/2]
	}
	b.ReportMetric(float64(first.Milliseconds()), "first-ms")
	b.ReportMetric(float64(med(warm).Milliseconds()), "warm-ms")
	b.ReportMetric(float64(med(page).Milliseconds()), "in-page-ms")
	b.ReportMetric(float64(med(png).Milliseconds()), "png-ms")
	b.Logf("%d elements; first call %s (%.1f× a warm PNG render), warm median %s (%.2f× a warm PNG render of %s; %s inside the page)",
		len(res.Elements), first.Round(time.Millisecond), float64(first)/float64(med(png)),
		med(warm).Round(time.Millisecond), float64(med(warm))/float64(med(png)), med(png).Round(time.Millisecond),
		med(page).Round(time.Millisecond))
}
