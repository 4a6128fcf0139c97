// Package browser measures text in headless Chromium with Excalidraw 0.18.1's
// own fonts and wrapText. The fontmetrics generator and its live test use it;
// the shipped program never does.
//
// The fonts and the dist code come from the npm package pinned in this
// folder's package.json; run `npm ci --ignore-scripts --legacy-peer-deps` here first.
package browser

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/chromedp/chromedp"
)

//go:embed page.js
var pageJS []byte

const pageHTML = `<!doctype html><meta charset="utf-8"><title>fontmetrics</title>
<script src="/page.js"></script><script src="/wrap.js"></script>`

// Options say where Chromium and the npm package are.
type Options struct {
	Chromium string // path to the chromium binary
	// PackageDir holds node_modules/@excalidraw/excalidraw (this folder).
	PackageDir string
	Log        *slog.Logger
}

// Browser is a headless Chromium tab with every Excalidraw font loaded.
type Browser struct {
	log      *slog.Logger
	srv      *http.Server
	srvDone  chan struct{}
	cancels  []context.CancelFunc
	tab      context.Context
	userData string
}

// DistDir is the 0.18.1 dist folder inside dir.
func DistDir(dir string) string {
	return filepath.Join(dir, "node_modules", "@excalidraw", "excalidraw", "dist")
}

// Start serves the page on a loopback port, starts Chromium and waits until
// every face of Families has loaded; Xiaolai's 209 subsets are registered and
// load on demand, for the text being measured. Close stops both.
func Start(ctx context.Context, o Options) (*Browser, error) {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	dist := DistDir(o.PackageDir)
	if _, err := os.Stat(filepath.Join(dist, "prod", "fonts")); err != nil {
		return nil, fmt.Errorf("find Excalidraw fonts (run npm ci --ignore-scripts --legacy-peer-deps in %s): %w", o.PackageDir, err)
	}
	wrapJS, err := extractWrapText(filepath.Join(dist, "dev"))
	if err != nil {
		return nil, fmt.Errorf("extract wrapText: %w", err)
	}
	xiaolai, err := xiaolaiFamily(filepath.Join(dist, "dev"))
	if err != nil {
		return nil, fmt.Errorf("read Xiaolai faces: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(pageHTML))
	})
	serveJS := func(body []byte) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
			_, _ = w.Write(body)
		}
	}
	mux.HandleFunc("/page.js", serveJS(pageJS))
	mux.HandleFunc("/wrap.js", serveJS(wrapJS))
	mux.Handle("/fonts/", http.StripPrefix("/fonts/", http.FileServer(http.Dir(filepath.Join(dist, "prod", "fonts")))))

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen on loopback: %w", err)
	}
	b := &Browser{log: o.Log, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}, srvDone: make(chan struct{})}
	go func() {
		defer close(b.srvDone)
		if err := b.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			b.log.Error("page server", "err", err)
		}
	}()
	if b.userData, err = os.MkdirTemp("", "fontmetrics-chromium-"); err != nil {
		b.Close()
		return nil, fmt.Errorf("make chromium profile dir: %w", err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(o.Chromium),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.UserDataDir(b.userData),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	tab, cancelTab := chromedp.NewContext(actx)
	b.cancels = []context.CancelFunc{cancelTab, cancelAlloc}
	b.tab = tab
	if _, err = chromedp.Run(tab, chromedp.Navigate("http://"+ln.Addr().String()+"/")); err != nil {
		b.Close()
		return nil, fmt.Errorf("open measurement page: %w", err)
	}
	var loadErrs []string
	if err = b.call(&loadErrs, "loadFonts", Families, []Family{xiaolai}); err != nil {
		b.Close()
		return nil, fmt.Errorf("open measurement page: %w", err)
	}
	if len(loadErrs) > 0 {
		b.Close()
		return nil, fmt.Errorf("load fonts: %v", loadErrs)
	}
	return b, nil
}

// Close stops Chromium and the page server and removes the profile.
func (b *Browser) Close() {
	for _, c := range b.cancels {
		c()
	}
	shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = b.srv.Shutdown(shutCtx)
	<-b.srvDone
	if b.userData != "" {
		_ = os.RemoveAll(b.userData)
	}
}

// call evaluates fn(args...) in the page and decodes its result into out.
func (b *Browser) call(out any, fn string, args ...any) error {
	var buf bytes.Buffer
	buf.WriteString("window." + fn + "(")
	for i, a := range args {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.WriteString(mustJSON(a))
	}
	buf.WriteByte(')')
	raw, err := chromedp.Run(b.tab, chromedp.Evaluate[json.RawMessage](buf.String(), chromedp.EvalAwaitPromise))
	if err != nil {
		return fmt.Errorf("evaluate %s: %w", fn, err)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("decode %s result: %w", fn, err)
	}
	return nil
}

// MeasureStrings returns the canvas advance width of each string in font.
func (b *Browser) MeasureStrings(font string, strs []string) ([]float64, error) {
	var out []float64
	return out, b.call(&out, "measureStrings", font, strs)
}

// Item is one text in one font.
type Item struct {
	Font string `json:"font"`
	Text string `json:"text"`
}

// MeasureMany returns the canvas advance width of each item, in one round trip.
func (b *Browser) MeasureMany(items []Item) ([]float64, error) {
	var out []float64
	return out, b.call(&out, "measureMany", items)
}

// MeasureChars returns the advance width of each code point alone.
func (b *Browser) MeasureChars(font string, cps []rune) ([]float64, error) {
	var out []float64
	return out, b.call(&out, "measureChars", font, cps)
}

// Pair is a kerning correction: width(A+B) - width(A) - width(B).
type Pair struct {
	A, B  rune
	Delta float64
}

// MeasurePairs returns the pairs within each group whose correction exceeds minDelta px.
func (b *Browser) MeasurePairs(font string, groups [][]rune, minDelta float64) ([]Pair, error) {
	var raw [][3]float64
	if err := b.call(&raw, "measurePairs", font, groups, minDelta); err != nil {
		return nil, err
	}
	out := make([]Pair, len(raw))
	for i, r := range raw {
		out[i] = Pair{A: rune(r[0]), B: rune(r[1]), Delta: r[2]}
	}
	return out, nil
}

// UnicodeRanges returns the code point ranges V8 matches for each regex atom
// (like `\p{Extended_Pictographic}`).
func (b *Browser) UnicodeRanges(props []string) (map[string][][2]rune, error) {
	var out map[string][][2]rune
	return out, b.call(&out, "unicodeRanges", props)
}

// WrapCase is one call of Excalidraw's wrapText.
type WrapCase struct {
	Text     string  `json:"text"`
	Font     string  `json:"font"`
	MaxWidth float64 `json:"maxWidth"`
}

// Wrap runs Excalidraw's own wrapText on each case.
func (b *Browser) Wrap(cases []WrapCase) ([]string, error) {
	var out []string
	return out, b.call(&out, "wrapCases", cases)
}

// Tokens runs Excalidraw's own parseTokens (the line-break tokenizer of
// wrapText) on each line.
func (b *Browser) Tokens(lines []string) ([][]string, error) {
	var out [][]string
	return out, b.call(&out, "parseTokensCases", lines)
}

// WrapTestMetric runs Excalidraw's wrapText with its test suite's metric,
// 10 px per UTF-16 unit; Font is ignored.
func (b *Browser) WrapTestMetric(cases []WrapCase) ([]string, error) {
	var out []string
	return out, b.call(&out, "wrapCasesTestMetric", cases)
}
