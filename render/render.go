// Package render turns Excalidraw scenes into PNG and SVG with Excalidraw's own export code running
// in headless Chromium, so the picture is what the editor shows: hand-drawn strokes, Excalidraw's
// fonts, labels where the editor puts them.
//
// One Renderer owns one Chromium process and a pool of warm tabs, each with the embedded render
// page loaded. The page is served from this binary on a loopback port and can reach nothing else.
package render

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/excalibot/excalibot/internal/logkey"
	"github.com/excalibot/excalibot/scene"
)

// Chat limits: Telegram's sendPhoto takes at most 10 MB, width + height at most 10000 and a ratio
// of at most 20 (https://core.telegram.org/bots/api#sendphoto). Larger pictures are scaled down
// to fit, which also keeps big 2× exports from coming out blank.
const (
	MaxSideSum = 10000    // width + height in pixels
	MaxAspect  = 20       // longer side / shorter side
	MaxBytes   = 10 << 20 // encoded PNG size
)

// DefaultMaxPixels caps a picture's area (width × height) unless Options.MaxPixels says otherwise:
// 4 Mpx, a 2× picture of a 1400 × 700 scene. Chats show less anyway (Telegram shrinks photos to
// 2560 px on the long side), while allocating, drawing, encoding and posting a picture cost time
// in proportion to its pixels: a 290-element scene at 2× is 19 Mpx, and 80% of its render time.
const DefaultMaxPixels = 4_000_000

// MaxSceneBytes bounds the .excalidraw document a render accepts.
const MaxSceneBytes = 32 << 20

// Defaults for Options and Config fields left at zero.
const (
	DefaultScale         = 2
	DefaultPadding       = 20
	DefaultTabs          = 2
	DefaultRenderTimeout = 20 * time.Second
	DefaultStartTimeout  = 60 * time.Second
	// DefaultPracticeRenders: a tab's renders settle at their speed from about the twelfth.
	DefaultPracticeRenders = 12
)

var (
	// ErrEmptyScene means the scene has no element that can be drawn.
	ErrEmptyScene = errors.New("render: the scene has nothing to draw")
	// ErrInvalidScene means the document is not a scene Excalidraw can load; the wrapping error
	// says what is wrong.
	ErrInvalidScene = errors.New("render: invalid scene")
	// ErrTimeout means a render did not finish within Config.RenderTimeout, twice.
	ErrTimeout = errors.New("render: timed out")
	// ErrClosed means the Renderer was closed.
	ErrClosed = errors.New("render: renderer is closed")
)

// Config sets up a Renderer.
type Config struct {
	// ChromePath is the Chromium binary; empty means the first of chromium, chromium-browser,
	// google-chrome, google-chrome-stable, headless_shell found on PATH.
	ChromePath string
	// Tabs is the number of warm tabs, which is also how many renders run at once (default 2).
	Tabs int
	// RenderTimeout bounds one render attempt (default 20 s). A failed attempt is retried once.
	RenderTimeout time.Duration
	// StartTimeout bounds starting Chromium and loading the render page in a tab (default 60 s;
	// both take about a second on an idle machine, but much longer on an overloaded one).
	StartTimeout time.Duration
	// PracticeRenders is how many renders of a built-in diagram each tab does before it is lent
	// (default DefaultPracticeRenders; negative: none). V8 optimises the drawing code only after
	// it has run a while, so without practice a tab's first renders take several times as long.
	// One-shot commands that render once turn it off.
	PracticeRenders int
	// WarmMermaid opens the Mermaid page's tab in the background as soon as the render tabs are
	// ready, so the first Mermaid conversion does not wait for that page to load (3-5 s); without
	// it the tab opens on first use.
	WarmMermaid bool
}

// Rect is a region of the scene in scene coordinates.
type Rect struct {
	X, Y, Width, Height float64
}

// Options shape one picture. The zero value is a light 2× PNG on the scene's background colour
// with 20 px padding and the scene embedded.
type Options struct {
	// Scale multiplies the scene's size in pixels (default 2). PNG only; it is lowered when the
	// picture would exceed the chat limits (MaxSideSum, MaxBytes).
	Scale float64
	// Dark renders with Excalidraw's dark theme.
	Dark bool
	// Transparent leaves the background out.
	Transparent bool
	// Background is a CSS colour for the background; empty means the scene's
	// appState.viewBackgroundColor, else white.
	Background string
	// Padding around the drawing in scene pixels; 0 means DefaultPadding, negative means none.
	// Not used with Viewport.
	Padding int
	// Viewport is the frame to draw; nil means the one the scene asks for in
	// appState.excalibotViewport (set by package scene), else the whole drawing with padding.
	Viewport *Rect
	// MaxPixels caps the picture's width × height by lowering the scale (PNG only); 0 means
	// DefaultMaxPixels, negative means no cap but the chat limits.
	MaxPixels int
	// NoEmbedScene leaves the scene out of the picture. By default the PNG carries it (an
	// application/vnd.excalidraw+json tEXt chunk), so dropping the PNG on excalidraw.com opens it
	// editable; SVGs carry it in their metadata.
	NoEmbedScene bool
	// Title and Description, when set, go into an SVG as its <title> and <desc>, which screen
	// readers announce and image viewers show (the picture's alt text). PNG ignores them.
	Title, Description string
}

// pageOptions is Options as the page reads them.
type pageOptions struct {
	Scale           float64   `json:"scale"`
	Dark            bool      `json:"dark"`
	Background      bool      `json:"background"`
	BackgroundColor string    `json:"backgroundColor,omitempty"`
	Padding         int       `json:"padding"`
	Viewport        *pageRect `json:"viewport,omitempty"`
	EmbedScene      bool      `json:"embedScene"`
	MaxSideSum      int       `json:"maxSideSum"`
	MaxAspect       float64   `json:"maxAspect"`
	MaxBytes        int       `json:"maxBytes"`
	MaxPixels       int       `json:"maxPixels,omitempty"`
	Reserve         int       `json:"reserve,omitempty"` // bytes kept free under MaxBytes for the scene Go embeds
}

type pageRect struct {
	X      float64 `json:"x"`
	Y      float64 `json:"y"`
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
}

func (o Options) page() (pageOptions, error) {
	p := pageOptions{
		Scale:           o.Scale,
		Dark:            o.Dark,
		Background:      !o.Transparent,
		BackgroundColor: o.Background,
		Padding:         o.Padding,
		EmbedScene:      !o.NoEmbedScene,
		MaxSideSum:      MaxSideSum,
		MaxAspect:       MaxAspect,
		MaxBytes:        MaxBytes,
		MaxPixels:       o.MaxPixels,
	}
	switch {
	case p.MaxPixels == 0:
		p.MaxPixels = DefaultMaxPixels
	case p.MaxPixels < 0:
		p.MaxPixels = 0
	}
	switch {
	case p.Scale == 0:
		p.Scale = DefaultScale
	case p.Scale < 0 || p.Scale > 10:
		return p, fmt.Errorf("render: scale %g is out of range (0 < scale ≤ 10)", o.Scale)
	}
	switch {
	case p.Padding == 0:
		p.Padding = DefaultPadding
	case p.Padding < 0:
		p.Padding = 0
	}
	if v := o.Viewport; v != nil {
		if !(v.Width > 0 && v.Height > 0) {
			return p, fmt.Errorf("render: viewport %gx%g must have a positive width and height", v.Width, v.Height)
		}
		p.Viewport = &pageRect{X: v.X, Y: v.Y, Width: v.Width, Height: v.Height}
	}
	return p, nil
}

// Renderer renders scenes in one Chromium process with a pool of warm tabs. Its methods may be
// called concurrently.
type Renderer struct {
	cfg    Config
	chrome string
	log    *slog.Logger
	srv    *server

	startMu sync.Mutex // serialises (re)starting Chromium
	mu      sync.Mutex // guards b, idle, closed
	b       *browser
	idle    []*tab
	closed  bool
	closing chan struct{} // closed by Close
	slots   chan struct{} // one token per tab in use or being opened

	wg sync.WaitGroup // supervise and the tabs' console watchers

	mermaid mermaidTab // the Mermaid page's tab, opened on first use (mermaid.go)
}

// New starts Chromium, loads Config.Tabs tabs and returns when they are warm.
// It returns an error wrapping ErrNoChrome when there is no Chromium binary.
func New(ctx context.Context, cfg Config, log *slog.Logger) (*Renderer, error) {
	if cfg.Tabs <= 0 {
		cfg.Tabs = DefaultTabs
	}
	if cfg.RenderTimeout <= 0 {
		cfg.RenderTimeout = DefaultRenderTimeout
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = DefaultStartTimeout
	}
	if cfg.PracticeRenders == 0 {
		cfg.PracticeRenders = DefaultPracticeRenders
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	path, err := findChrome(cfg.ChromePath)
	if err != nil {
		return nil, err
	}
	srv, err := startServer(log)
	if err != nil {
		return nil, err
	}
	r := &Renderer{
		cfg:     cfg,
		chrome:  path,
		log:     log,
		srv:     srv,
		closing: make(chan struct{}),
		slots:   make(chan struct{}, cfg.Tabs),
	}
	stop := context.AfterFunc(ctx, func() { r.Close() })
	defer stop()
	if _, err := r.liveBrowser(); err != nil {
		r.Close()
		return nil, fmt.Errorf("render: %w", err)
	}
	if err := r.warm(); err != nil {
		r.Close()
		return nil, fmt.Errorf("render: warm tabs: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r.wg.Add(1)
	go r.supervise()
	if cfg.WarmMermaid {
		r.wg.Add(1)
		go r.warmMermaid()
	}
	return r, nil
}

// Ready reports whether the renderer can render now: it is not closed and Chromium runs.
// A dead Chromium is restarted in the background; Ready returns nil again once it is up.
func (r *Renderer) Ready() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ErrClosed
	}
	if r.b == nil || !r.b.alive() {
		return errors.New("render: chromium is restarting")
	}
	return nil
}

// Close stops Chromium and waits until its processes and temporary profile are gone.
func (r *Renderer) Close() error {
	r.startMu.Lock()
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		r.startMu.Unlock()
		return nil
	}
	r.closed = true
	close(r.closing)
	idle, b := r.idle, r.b
	r.idle = nil
	r.mu.Unlock()
	r.startMu.Unlock()

	for _, t := range idle {
		t.cancel()
	}
	if b != nil {
		b.stop() // renders in flight fail now and give their slots back
	}
	for range cap(r.slots) {
		r.slots <- struct{}{}
	}
	r.wg.Wait()
	if err := r.srv.close(); err != nil {
		return fmt.Errorf("render: close page server: %w", err)
	}
	return nil
}

// PNG renders doc, an .excalidraw document, to PNG.
func (r *Renderer) PNG(ctx context.Context, doc []byte, opts Options) ([]byte, error) {
	png, _, err := r.png(ctx, doc, opts)
	return png, err
}

// pngReply is the page's answer to a png job (png() answers the same, plus the picture in base64).
type pngReply struct {
	pageReply
	PNG    string  `json:"png"`
	Width  int     `json:"width"`
	Height int     `json:"height"`
	Scale  float64 `json:"scale"`
	Bytes  int     `json:"bytes"` // PNG size, as posted
	MS     float64 `json:"ms"`    // time the export took inside the page: the floor of a render
	// Canvas is "reused" when the tab drew on the pixels of its previous render (same size), else
	// "new": allocating them is most of a small render's drawing time on a VM.
	Canvas string `json:"canvas"`
	// Transport says how the job reached the page: "inline", "gzip" or "fetch" (see jobArg).
	Transport string `json:"transport"`
	// Stages splits a render into prepare, draw and encode (which add up to MS); free (keeping or
	// releasing the canvas), the page's fetch of the job and upload of the picture, job (all the
	// page did), and embed (done here), in ms.
	Stages map[string]float64 `json:"stages"`
}

func (r *Renderer) png(ctx context.Context, doc []byte, opts Options) ([]byte, pngReply, error) {
	var rep pngReply
	// The scene's chunk (the document as sent, so the picture carries exactly the .excalidraw file
	// the caller keeps) is compressed while the page draws: it took 2-4 ms after the picture.
	var chunk []byte
	var chunkErr error
	chunked := make(chan struct{})
	if opts.NoEmbedScene {
		close(chunked)
	} else {
		go func() {
			defer close(chunked)
			chunk, chunkErr = scene.SceneChunk(doc)
		}()
	}
	defer func() { <-chunked }() // the goroutine never outlives png
	body, err := r.job(ctx, "png", doc, opts, &rep)
	if err != nil {
		return nil, rep, err
	}
	if rep.Bytes <= 0 || rep.Bytes != len(body) || !scene.IsPNG(body) {
		return nil, rep, fmt.Errorf("render: page returned no PNG (%d bytes posted, %d announced)", len(body), rep.Bytes)
	}
	png := body
	if !opts.NoEmbedScene {
		// Excalidraw restores the embedded document on load the way the page did before drawing.
		start := time.Now()
		<-chunked
		err = chunkErr
		if err == nil {
			png, err = scene.EmbedSceneChunk(png, chunk)
		}
		if err != nil {
			return nil, rep, fmt.Errorf("render: embed the scene in the PNG: %w", err)
		}
		if rep.Stages == nil {
			rep.Stages = map[string]float64{}
		}
		rep.Stages["embed"] = float64(time.Since(start).Microseconds()) / 1000
		// The page kept room for the document's whole text; compressed it takes far less.
		if len(png) > MaxBytes {
			return nil, rep, fmt.Errorf("render: the PNG with its scene embedded is %d bytes, above the chat limit of %d", len(png), MaxBytes)
		}
	}
	r.log.Debug("rendered png", "width", rep.Width, "height", rep.Height, "scale", rep.Scale,
		"bytes", len(png), "page_ms", rep.MS, "canvas", rep.Canvas, "stages", rep.Stages)
	return png, rep, nil
}

// SVG renders doc, an .excalidraw document, to SVG with the used glyphs of each font embedded.
// Options.Scale does not apply.
func (r *Renderer) SVG(ctx context.Context, doc []byte, opts Options) ([]byte, error) {
	var rep struct {
		pageReply
		SVG string  `json:"svg"`
		MS  float64 `json:"ms"`
	}
	svg, err := r.job(ctx, "svg", doc, opts, &rep)
	if err != nil {
		return nil, err
	}
	if !bytes.Contains(svg[:min(len(svg), 512)], []byte("<svg")) {
		return nil, fmt.Errorf("render: page returned no SVG (%d bytes)", len(svg))
	}
	return withTitle(svg, opts.Title, opts.Description), nil
}

// withTitle puts <title> and <desc> first inside the root <svg> element, where SVG's
// accessibility rules look for them, and marks the picture role="img".
func withTitle(svg []byte, title, desc string) []byte {
	if title == "" && desc == "" {
		return svg
	}
	start := bytes.Index(svg, []byte("<svg"))
	if start < 0 {
		return svg
	}
	end := bytes.IndexByte(svg[start:], '>')
	if end < 0 {
		return svg
	}
	end += start
	var b bytes.Buffer
	b.Grow(len(svg) + len(title) + len(desc) + 64)
	open := svg[start:end]
	selfClosing := bytes.HasSuffix(open, []byte("/"))
	open = bytes.TrimSuffix(open, []byte("/"))
	b.Write(svg[:start])
	b.Write(open)
	if !bytes.Contains(open, []byte(" role=")) {
		b.WriteString(` role="img"`)
	}
	b.WriteByte('>')
	if title != "" {
		b.WriteString("<title>")
		xml.EscapeText(&b, []byte(title))
		b.WriteString("</title>")
	}
	if desc != "" {
		b.WriteString("<desc>")
		xml.EscapeText(&b, []byte(desc))
		b.WriteString("</desc>")
	}
	if selfClosing {
		b.WriteString("</svg>")
	}
	b.Write(svg[end+1:])
	return b.Bytes()
}

// job renders doc with the page's fn ("png" or "svg") and returns what the page posted back. The
// document reaches the page as JSON data through the page server (jobs.go), never as code.
func (r *Renderer) job(ctx context.Context, fn string, doc []byte, opts Options, out reply) ([]byte, error) {
	in, err := jobInput(fn, doc, opts)
	if err != nil {
		return nil, err
	}
	// The picture may exceed MaxBytes when the page gives up shrinking it, and an SVG carries the
	// scene (pretty-printed) and its fonts, so it can be a few times the document's size.
	maxOut := int64(4*MaxBytes + 4*len(doc))
	arg := jobArg(in)
	var body []byte
	err = r.retry(ctx, out, func() ([]byte, error) {
		j, err := r.srv.jobs.add(in, maxOut)
		if err != nil {
			return nil, err
		}
		defer r.srv.jobs.remove(j)
		raw, err := r.evalOnce(ctx, jobExpr(j.id, arg))
		body = j.result()
		return raw, err
	})
	if err != nil {
		return nil, err
	}
	if body == nil {
		return nil, errors.New("render: the page answered but posted no picture")
	}
	return body, nil
}

// pageReply is the error half of every page answer: set when the scene, not the tab, failed.
type pageReply struct {
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (p *pageReply) pageError() error {
	if p.Error == nil {
		return nil
	}
	switch p.Error.Code {
	case "empty":
		return fmt.Errorf("%w: %s", ErrEmptyScene, p.Error.Message)
	case "invalid":
		return fmt.Errorf("%w: %s", ErrInvalidScene, p.Error.Message)
	default:
		return fmt.Errorf("render: excalidraw export failed: %s", p.Error.Message)
	}
}

type reply interface{ pageError() error }

// call evaluates expr in a warm tab and decodes its answer into out, like retry.
func (r *Renderer) call(ctx context.Context, expr string, out reply) error {
	return r.retry(ctx, out, func() ([]byte, error) { return r.evalOnce(ctx, expr) })
}

// retry runs one attempt (an evaluation in a warm tab) and decodes its answer into out. A failure
// of the tab or of Chromium (hang, crash, exit) is retried once on a fresh tab; an error from the
// scene is not.
func (r *Renderer) retry(ctx context.Context, out reply, attemptOnce func() ([]byte, error)) error {
	var err error
	for attempt := 1; attempt <= 2; attempt++ {
		var raw []byte
		raw, err = attemptOnce()
		if err == nil {
			if err := json.Unmarshal(raw, out); err != nil {
				return fmt.Errorf("render: decode page answer: %w", err)
			}
			return out.pageError()
		}
		if ctx.Err() != nil || errors.Is(err, ErrClosed) {
			return err
		}
		if attempt == 1 {
			r.log.Warn("render attempt failed; retrying on a fresh tab", logkey.Err, err)
		}
	}
	return err
}

// evalOnce runs expr on one borrowed tab within the render timeout. A tab that fails is closed.
func (r *Renderer) evalOnce(ctx context.Context, expr string) ([]byte, error) {
	t, err := r.borrow(ctx)
	if err != nil {
		return nil, fmt.Errorf("render: get a tab: %w", err)
	}
	raw, err := r.evalOn(ctx, t, expr, "the render")
	if err != nil {
		r.discard(t)
		return nil, err
	}
	r.put(t)
	return raw, nil
}

// evalOn evaluates expr on tab t within the render timeout, for what ("the render", "the mermaid
// conversion"). A failed call says whether ctx ended, Chromium died, the page took too long, or
// the tab broke; the caller closes the tab.
func (r *Renderer) evalOn(ctx context.Context, t *tab, expr, what string) ([]byte, error) {
	tctx, cancel := context.WithTimeout(t.ctx, r.cfg.RenderTimeout)
	stop := context.AfterFunc(ctx, cancel)
	raw, err := chromedp.Run(tctx, chromedp.Evaluate[json.RawMessage](expr, chromedp.EvalAwaitPromise))
	timedOut := errors.Is(tctx.Err(), context.DeadlineExceeded)
	stop()
	cancel()
	if err == nil {
		return raw, nil
	}
	if ctx.Err() == nil && !timedOut && t.b.alive() {
		// A killed Chromium shows first as a failed call (the pipe's EOF) and only a moment later
		// as a done browser context. Waiting for that moment keeps the retry from borrowing
		// another tab of the dead browser (seen under load: both attempts failed in 0.6 s).
		select {
		case <-t.b.ctx.Done():
		case <-time.After(2 * time.Second):
		}
	}
	switch {
	case ctx.Err() != nil:
		return nil, fmt.Errorf("render: %w", ctx.Err())
	case !t.b.alive():
		return nil, fmt.Errorf("render: chromium exited during %s: %w", what, err)
	case timedOut:
		return nil, fmt.Errorf("%w: %s took over %s", ErrTimeout, what, r.cfg.RenderTimeout)
	default:
		return nil, fmt.Errorf("render: evaluate in tab (%s): %w", what, err)
	}
}
