package render

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/excalibot/excalibot/diagram/mermaid"
	"github.com/excalibot/excalibot/internal/logkey"
)

// MaxMermaidBytes bounds the Mermaid text Mermaid accepts (its own maxTextSize is 50,000).
const MaxMermaidBytes = 50_000

// MermaidResult is a Mermaid diagram as Excalidraw elements, made by @excalidraw/mermaid-to-excalidraw
// and Excalidraw's convertToExcalidrawElements: labels are bound to their shapes, arrows to the
// shapes they join, and text is measured in Excalifont. The diagram's elements are at Mermaid's own
// coordinates (top-left near 0,0); a type Excalidraw has no shapes for (anything but flowchart,
// sequence, class, ER and state diagrams) is one image element of Mermaid's own SVG, as Excalidraw
// itself inserts such diagrams.
type MermaidResult struct {
	mermaid.Diagram
	// Fenced is true when the diagram was taken out of a ``` fence.
	Fenced bool
	// Source is the diagram that was converted, after the fixes.
	Source string
	// PageMS is the time the conversion took inside the page.
	PageMS float64
}

// ErrMermaid wraps diagrams that are valid Mermaid but could not be converted.
var ErrMermaid = errors.New("render: mermaid conversion failed")

// mermaidTab is the Mermaid page's one tab, opened on first use and kept warm. Calls take turns:
// Mermaid keeps global state in the page and serialises its work anyway.
type mermaidTab struct {
	turn chan struct{} // a token held by the call using the tab
	once sync.Once
	t    *tab // guarded by turn
}

func (m *mermaidTab) init() { m.once.Do(func() { m.turn = make(chan struct{}, 1) }) }

// mermaidReply is the page's answer to convert().
type mermaidReply struct {
	Elements []json.RawMessage          `json:"elements"`
	Files    map[string]json.RawMessage `json:"files"`
	Type     string                     `json:"type"`
	Image    bool                       `json:"image"`
	Fixes    []string                   `json:"fixes"`
	Fenced   bool                       `json:"fenced"`
	Source   string                     `json:"source"`
	Routes   map[string]mermaid.Route   `json:"routes"`
	MS       float64                    `json:"ms"`
	Error    *struct {
		Code    string   `json:"code"`
		Message string   `json:"message"`
		Line    *int     `json:"line"`
		Source  string   `json:"source"`
		Offset  int      `json:"offset"`
		Fixes   []string `json:"fixes"`
	} `json:"error"`
}

// Mermaid converts a Mermaid diagram into Excalidraw elements. src may be a chat message with a
// ```mermaid fence; common mistakes are repaired the way Excalidraw's text-to-diagram repairs them
// (MermaidResult.Fixes). A diagram Mermaid refuses returns a *mermaid.Error.
//
// The Mermaid page runs in its own tab of the renderer's Chromium, opened on the first call
// (about a second) and reused; a tab that fails is replaced and the call retried once.
func (r *Renderer) Mermaid(ctx context.Context, src string) (MermaidResult, error) {
	if strings.TrimSpace(src) == "" {
		return MermaidResult{}, &mermaid.Error{Message: "the diagram is empty", Hint: "start with a diagram type, e.g. `flowchart TD` and a line `A --> B`"}
	}
	if len(src) > MaxMermaidBytes {
		return MermaidResult{}, fmt.Errorf("%w: the diagram is %d bytes; the limit is %d", ErrMermaid, len(src), MaxMermaidBytes)
	}
	lit, err := json.Marshal(src)
	if err != nil {
		return MermaidResult{}, fmt.Errorf("render: quote mermaid: %w", err)
	}
	expr := "ExcalidrawMermaid.convert(" + string(lit) + ")"
	var raw []byte
	for attempt := 1; attempt <= 2; attempt++ {
		raw, err = r.mermaidEval(ctx, expr)
		if err == nil || ctx.Err() != nil || errors.Is(err, ErrClosed) {
			break
		}
		if attempt == 1 {
			r.log.Warn("mermaid attempt failed; retrying on a fresh tab", logkey.Err, err)
		}
	}
	if err != nil {
		return MermaidResult{}, err
	}
	var rep mermaidReply
	if err := json.Unmarshal(raw, &rep); err != nil {
		return MermaidResult{}, fmt.Errorf("render: decode mermaid answer: %w", err)
	}
	if e := rep.Error; e != nil {
		switch e.Code {
		case "syntax", "empty":
			return MermaidResult{}, syntaxError(e.Message, e.Line, e.Source, e.Offset, e.Fixes)
		default:
			return MermaidResult{}, fmt.Errorf("%w: %s", ErrMermaid, firstLine(e.Message))
		}
	}
	if len(rep.Elements) == 0 {
		return MermaidResult{}, fmt.Errorf("%w: the diagram has nothing to draw", ErrMermaid)
	}
	if !rep.Image {
		// The page read Mermaid's routes; the arrows are fitted to them here, in Go.
		if rep.Elements, err = mermaid.Finish(rep.Elements, rep.Routes, rep.Type); err != nil {
			return MermaidResult{}, fmt.Errorf("%w: %v", ErrMermaid, err)
		}
	}
	r.log.Debug("converted mermaid", "type", rep.Type, "elements", len(rep.Elements), "image", rep.Image,
		"fixes", len(rep.Fixes), "page_ms", rep.MS)
	return MermaidResult{
		Diagram: mermaid.Diagram{Elements: rep.Elements, Files: rep.Files, Type: rep.Type, Image: rep.Image, Fixes: rep.Fixes},
		Fenced:  rep.Fenced, Source: rep.Source, PageMS: rep.MS,
	}, nil
}

// Converter is r's Mermaid page as a mermaid.Converter: the diagram alone. A diagram Mermaid
// refuses comes back as the *mermaid.Error Mermaid returns.
func (r *Renderer) Converter() mermaid.Converter { return converter{r} }

type converter struct{ r *Renderer }

func (c converter) Mermaid(ctx context.Context, src string) (mermaid.Diagram, error) {
	res, err := c.r.Mermaid(ctx, src)
	return res.Diagram, err
}

// mermaidEval runs expr in the Mermaid tab, opening it (and restarting Chromium) when needed.
func (r *Renderer) mermaidEval(ctx context.Context, expr string) ([]byte, error) {
	m := &r.mermaid
	if err := r.mermaidTurn(ctx); err != nil {
		return nil, err
	}
	defer func() { <-m.turn }()
	raw, err := r.evalOn(ctx, m.t, expr, "the mermaid conversion")
	if err != nil {
		m.t.cancel()
		m.t = nil
		return nil, err
	}
	return raw, nil
}

// mermaidTurn waits for the Mermaid tab's turn and makes sure the tab is open, on a live
// Chromium. On success the caller holds the turn (and may use r.mermaid.t) until it receives
// from r.mermaid.turn.
func (r *Renderer) mermaidTurn(ctx context.Context) error {
	m := &r.mermaid
	m.init()
	select {
	case m.turn <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("render: wait for the mermaid tab: %w", ctx.Err())
	case <-r.closing:
		return ErrClosed
	}
	r.mu.Lock()
	current, closed := r.b, r.closed
	r.mu.Unlock()
	err := ErrClosed
	if !closed {
		err = r.openMermaid(current)
	}
	if err != nil {
		<-m.turn
	}
	return err
}

// openMermaid opens the Mermaid tab unless it is open on the current Chromium. The caller holds
// the turn.
func (r *Renderer) openMermaid(current *browser) error {
	m := &r.mermaid
	if m.t != nil && (m.t.b != current || !m.t.b.alive()) {
		m.t.cancel() // its Chromium was restarted: the tab went with it
		m.t = nil
	}
	if m.t != nil {
		return nil
	}
	b, err := r.liveBrowser()
	if err != nil {
		return fmt.Errorf("render: start chromium for mermaid: %w", err)
	}
	m.t, err = r.openMermaidTab(b)
	return err
}

// warmMermaid opens the Mermaid tab ahead of the first conversion (Config.WarmMermaid). A failure
// only costs that conversion the wait: it opens the tab again itself.
func (r *Renderer) warmMermaid() {
	defer r.wg.Done()
	start := time.Now()
	if err := r.mermaidTurn(context.Background()); err != nil {
		if !errors.Is(err, ErrClosed) {
			r.log.Warn("could not open the mermaid tab ahead of use; it opens on first use", logkey.Err, err)
		}
		return
	}
	<-r.mermaid.turn
	r.log.Debug("mermaid tab opened ahead of use", "ms", time.Since(start).Milliseconds())
}

// openMermaidTab opens a tab on b with the Mermaid page and waits until its font is loaded. Like
// openTab, the first action runs without a deadline (it would close the tab later); a timer bounds it.
func (r *Renderer) openMermaidTab(b *browser) (*tab, error) {
	start := time.Now()
	ctx, cancel := chromedp.NewContext(b.ctx)
	timer := time.AfterFunc(r.cfg.StartTimeout, cancel)
	url := strings.TrimSuffix(r.srv.url, "render.html") + "mermaid.html"
	err := chromedp.Do(ctx, chromedp.Navigate(url))
	if err == nil {
		_, err = chromedp.Run(ctx, chromedp.Evaluate[bool]("ExcalidrawMermaid.whenReady()", chromedp.EvalAwaitPromise))
	}
	if !timer.Stop() {
		err = fmt.Errorf("no answer within %s (%v)", r.cfg.StartTimeout, err)
	}
	if err != nil {
		cancel()
		return nil, fmt.Errorf("render: load mermaid page: %w", err)
	}
	t := &tab{b: b, ctx: ctx, cancel: cancel}
	r.watchConsole(t)
	r.log.Debug("mermaid tab ready", "ms", time.Since(start).Milliseconds())
	return t, nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
