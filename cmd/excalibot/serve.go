package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/excalibot/excalibot/bot"
	"github.com/excalibot/excalibot/bot/agentdraw"
	"github.com/excalibot/excalibot/bot/relay"
	"github.com/excalibot/excalibot/bot/webchat"
	"github.com/excalibot/excalibot/config"
	"github.com/excalibot/excalibot/links"
	"github.com/excalibot/excalibot/render"
	"github.com/excalibot/excalibot/scene"
	"github.com/excalibot/excalibot/store"
	"github.com/excalibot/excalibot/store/postgres"
	"github.com/excalibot/excalibot/store/sqlite"
	"github.com/excalibot/excalibot/web"
)

// shutdownGrace is how long running work may finish after SIGTERM.
const shutdownGrace = 30 * time.Second

// cmdServe runs the bot: the store, the renderer, the agent, the chat adapters that have
// credentials, and the HTTP server.
func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: excalibot serve [settings flags]

Runs the bot: the Slack and Telegram adapters whose credentials are set, the HTTP server (editor
links, the chat page, webhooks, health, metrics) and the store. Every setting can also come from
its environment variable or a config file (--config); flags win.

`)
		fs.PrintDefaults()
	}
	l, err := config.Load(fs, args, os.Environ(), settingsOf("serve")...)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "excalibot serve: %v\n", err)
		return 2
	}
	log := newLogger(stderr, l.Config)
	if err := serve(ctx, l.Config, log, nil); err != nil {
		log.Error("excalibot stopped", "err", err)
		return 1
	}
	return 0
}

// serve runs until ctx ends. ready, when not nil, receives the HTTP address once everything is up
// (tests listen on port 0).
func serve(ctx context.Context, cfg config.Config, log *slog.Logger, ready chan<- string) error {
	st, err := openStore(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer st.Close()

	rend := newRenderer(ctx, cfg, log)
	defer rend.Close()

	ag, model, err := newAgent(cfg, false, log)
	if err != nil {
		return err
	}
	// Ollama down or the model not pulled is logged now, not at the first message; serve goes on.
	if _, err := checkModel(ctx, model, log); err != nil {
		log.Error("model check: "+err.Error(), "model", cfg.Model, "ollama", model.URL())
	}
	drawer := agentdraw.Drawer{Agent: ag, Log: log, Limits: toolLimits(cfg)}

	metrics := web.NewMetrics()
	drawer.Observer = metrics
	mermaid := wireMermaid(rend, &drawer, cfg.MaxElements)
	// Each process its own name in the store's leases and claims, even two on one host.
	owner := relay.NewOwner()
	// The links replies carry are made before the core and the web server, which both use them.
	editor := links.NewEditor(st, cfg.PublicURL, cfg.LinkTTL, nil)
	var replyLinks bot.Links = editor
	if cfg.ShareLinks && cfg.PublicURL == "" {
		replyLinks = &links.Share{Linker: links.ShareLinker{PostURL: cfg.ShareURL}}
	} else if cfg.ShareLinks {
		log.Warn("share links are off because EXCALIBOT_PUBLIC_URL is set: replies link to this server's editor")
	}
	core := bot.New(st, drawer, rend, replyLinks, bot.Options{
		MaxMessageLength:  cfg.MaxMessageLength,
		UserRatePerMinute: cfg.UserRatePerMinute,
		ChatRatePerMinute: cfg.ChatRatePerMinute,
		MaxSceneBytes:     cfg.MaxSceneSize,
		MaxImageBytes:     int64(cfg.MaxImageSize),
		ImageSide:         cfg.ImageSize,
		MaxElements:       cfg.MaxElements,
		Observer:          metrics,
	}, log)
	if mermaid != nil {
		core.SetMermaid(mermaid)
	}
	// The engine keeps each message, hands each thread's to the conversation in order and posts
	// the replies: it is what the adapters hand their messages to.
	work := relay.New(st, core, relay.Options{
		Owner:             owner,
		MaxConcurrentRuns: cfg.MaxConcurrentRuns,
		RunTimeout:        cfg.RunTimeout + cfg.RenderTimeout + 30*time.Second,
		LeaseTTL:          cfg.LeaseTTL,
		PollInterval:      cfg.PollInterval,
		ReplyGiveUp:       cfg.ReplyGiveUp,
		MaxInterruptions:  cfg.MaxInterruptions,
		NotifyEdits:       cfg.NotifyEdits,
		WorkingAfter:      workingAfter(cfg.WorkingAfter),
		Observer:          metrics,
	}, log)
	metrics.QueueDepth(work.QueueDepth)

	srvWeb := web.New(st, rend, work, metrics, web.Options{MaxBody: int64(cfg.MaxSceneSize) + 1<<20,
		Limits: scene.Limits{MaxBytes: cfg.MaxSceneSize, MaxElements: cfg.MaxElements}}, log)
	srvWeb.AddCheck(web.Check{Name: "renderer", Fn: func(context.Context) error { return rend.Ready() }})
	srvWeb.AddCheck(web.Check{Name: "store", Fn: func(ctx context.Context) error {
		_, err := st.Load(ctx, store.ThreadKey{Platform: "probe", Workspace: "-", Thread: "-"})
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		return err
	}})

	// The chat page: open on localhost, from elsewhere only with EXCALIBOT_CHAT_SECRET.
	chat := webchat.New(work, webchat.Options{Secret: cfg.ChatSecret, Page: web.ChatPage,
		Secure: strings.HasPrefix(cfg.PublicURL, "https:"), MaxImageBytes: int64(cfg.MaxImageSize)}, log)
	for _, r := range chat.Routes() {
		if r.MaxBody > 0 {
			srvWeb.HandleUpload(r.Pattern, r.Handler, r.MaxBody)
		} else {
			srvWeb.HandleBrowser(r.Pattern, r.Handler, r.Stream)
		}
	}
	work.Register(chat)

	// Telegram's message→thread index, written behind the replies (runs after the adapters stop,
	// before the store closes).
	threads := newLaterIndex(tgIndex{st}, log)
	defer threads.Close()
	runners, err := startAdapters(cfg, core, work, threads, srvWeb, log)
	if err != nil {
		return err
	}
	if msg := cfg.MissingChat(); msg != "" {
		log.Warn(msg)
	}

	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s (set --listen or EXCALIBOT_LISTEN): %w", cfg.Listen, err)
	}
	editor.SetBase(localURL(ln.Addr()))
	switch {
	case cfg.PublicURL == "" && cfg.ShareLinks:
		log.Info("replies link to excalidraw.com: each posted revision is uploaded there, encrypted, with the key only in the link", "store", cfg.ShareURL)
	case cfg.PublicURL == "":
		log.Warn("links in replies point at this machine only; set EXCALIBOT_PUBLIC_URL to the address people open, or EXCALIBOT_SHARE_LINKS=true for excalidraw.com links", "using", localURL(ln.Addr()))
	}
	srv := &http.Server{Handler: srvWeb.Handler(), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 60 * time.Second, IdleTimeout: 2 * time.Minute}
	srv.RegisterOnShutdown(chat.Close) // end the chat page's event streams, or Shutdown waits for them
	var wg sync.WaitGroup
	errc := make(chan error, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errc <- fmt.Errorf("http server: %w", err)
		}
	}()
	log.Info("excalibot is up", "http", "http://"+ln.Addr().String(), "chat", "http://"+ln.Addr().String()+"/chat", "model", cfg.Model,
		"ollama", cfg.OllamaHost, "owner", owner)

	// The work starts, every adapter registered: threads whose owner is gone are told, and
	// messages kept before this start (here or by another replica) are drawn.
	if err := work.Recover(ctx); err != nil {
		log.Warn("could not recover interrupted runs", "err", err)
	}
	adapterCtx, stopAdapters := context.WithCancel(ctx)
	for _, r := range runners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A refused token stops that platform only: HTTP and the other platform keep serving.
			if err := r.run(adapterCtx); err != nil && adapterCtx.Err() == nil {
				log.Error("chat platform stopped; fix its settings and restart", "platform", r.name, "err", err)
			}
		}()
	}
	pruneDone := startPruning(adapterCtx, st, cfg.PruneAfter, log, &wg)
	if ready != nil {
		ready <- ln.Addr().String()
	}

	var runErr error
	select {
	case <-ctx.Done():
		log.Info("shutting down: letting running drawings finish", "grace", shutdownGrace)
	case runErr = <-errc:
		log.Error("a component failed; shutting down", "err", runErr)
	}
	stopAdapters()
	grace, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	work.Close(grace)
	if err := srv.Shutdown(grace); err != nil {
		log.Warn("http shutdown", "err", err)
	}
	<-pruneDone
	wg.Wait()
	return runErr
}

// runner is a chat adapter's receive loop.
type runner struct {
	name string
	run  func(ctx context.Context) error
}

// storeCloser is the store as serve uses it.
type storeCloser interface {
	bot.Store
	relay.Store
	web.Store
	messageThreads
	Prune(ctx context.Context, before time.Time) (store.PruneStats, error)
	Close() error
}

var (
	_ storeCloser = (*sqlite.Store)(nil)
	_ storeCloser = (*postgres.Store)(nil)
	_ links.Store = storeCloser(nil)

	// The threads hear of saves in the editor.
	_ web.Notifier = (*relay.Engine)(nil)
)

func openStore(ctx context.Context, cfg config.Config, log *slog.Logger) (storeCloser, error) {
	kind, target, err := cfg.StoreTarget()
	if err != nil {
		return nil, err
	}
	opt := store.Options{MaxSceneBytes: cfg.MaxSceneSize, HistoryLimit: cfg.HistoryKeep}
	if kind == "postgres" {
		st, err := postgres.Open(ctx, target, opt, log)
		if err != nil {
			return nil, fmt.Errorf("open PostgreSQL store: %w", err)
		}
		return st, nil
	}
	if target == "" {
		if target, err = sqlite.DefaultPath(); err != nil {
			return nil, fmt.Errorf("default SQLite path (set --database sqlite:PATH): %w", err)
		}
	}
	st, err := sqlite.Open(ctx, target, opt, log)
	if err != nil {
		return nil, fmt.Errorf("open SQLite store %s: %w", target, err)
	}
	log.Info("store", "sqlite", target)
	return st, nil
}

// startPruning removes old threads every hour when PruneAfter is set; the returned channel closes
// when the loop has stopped.
func startPruning(ctx context.Context, st storeCloser, after time.Duration, log *slog.Logger, wg *sync.WaitGroup) <-chan struct{} {
	done := make(chan struct{})
	if after <= 0 {
		close(done)
		return done
	}
	go func() {
		defer close(done)
		t := time.NewTicker(time.Hour)
		defer t.Stop()
		for {
			stats, err := st.Prune(ctx, time.Now().Add(-after))
			if err != nil && ctx.Err() == nil {
				log.Warn("prune old threads", "err", err)
			} else if err == nil {
				log.Info("pruned", "stats", fmt.Sprintf("%+v", stats))
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return done
}

// chromeRenderer adapts the renderer to the bot and the web server: the scene's own viewport
// frames the picture.
type chromeRenderer struct {
	r     *render.Renderer
	err   error // why there is no renderer
	scale float64
}

var (
	_ bot.Renderer = (*chromeRenderer)(nil)
	_ web.Renderer = (*chromeRenderer)(nil)
)

func newRenderer(ctx context.Context, cfg config.Config, log *slog.Logger) *chromeRenderer {
	// The Mermaid tab opens right after the render tabs, so the first Mermaid diagram after a start
	// does not wait 3-5 s for its page.
	r, err := render.New(ctx, render.Config{ChromePath: cfg.ChromePath, Tabs: cfg.RenderTabs, RenderTimeout: cfg.RenderTimeout,
		WarmMermaid: true}, log)
	if err != nil {
		// The bot still answers with the .excalidraw file; the reason goes into every reply and the log.
		log.Error("renderer unavailable: replies will carry the .excalidraw file without a picture", "err", err)
		return &chromeRenderer{err: err}
	}
	return &chromeRenderer{r: r, scale: cfg.RenderScale}
}

// Render draws sc: the viewport is read from the scene, and doc (sc as stored) goes to the page
// and into the PNG.
func (c *chromeRenderer) Render(ctx context.Context, sc *scene.Scene, doc []byte, format string, dark bool) ([]byte, error) {
	if c.r == nil {
		return nil, c.err
	}
	opt := render.Options{Scale: c.scale, Dark: dark}
	if v, ok := sc.Viewport(); ok {
		opt.Viewport = &render.Rect{X: v.X, Y: v.Y, Width: v.Width, Height: v.Height}
	}
	if format == "svg" {
		opt.Title, opt.Description = altText(sc)
		return c.r.SVG(ctx, doc, opt)
	}
	return c.r.PNG(ctx, doc, opt)
}

func (c *chromeRenderer) Ready() error {
	if c.r == nil {
		return c.err
	}
	return c.r.Ready()
}

func (c *chromeRenderer) Close() {
	if c.r != nil {
		_ = c.r.Close()
	}
}

// localURL is the base URL of links when no public URL is set: the listen address, with a
// wildcard address (0.0.0.0, ::) replaced by localhost, which a browser can open.
func localURL(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "http://" + addr.String()
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// workingAfter is the setting as the bot takes it: 0 there means its default, so "at once" is
// negative.
func workingAfter(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}
