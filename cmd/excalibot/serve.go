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
	"github.com/excalibot/excalibot/internal/logkey"
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
	m := newMain(l.Config, log)
	err = m.Open(ctx)
	if err == nil {
		err = m.Run(ctx)
		if cerr := m.Close(); cerr != nil {
			log.Warn("close", logkey.Err, cerr)
		}
	}
	if err != nil {
		log.Error("excalibot stopped", logkey.Err, err)
		return 1
	}
	return 0
}

// Main is the bot as serve runs it: Open builds every part from the settings (the Graphviz
// worker, the store, the renderer, the agent, the conversation and the work around it, the chat
// adapters that have credentials, the HTTP listener and server), Run serves until its context ends and then lets
// running work finish, and Close releases what Open made. The end-to-end tests run it as serve
// does.
type Main struct {
	cfg config.Config
	log *slog.Logger

	stopDot func() // the Graphviz worker, which every layout of the process uses
	st      storeCloser
	rend    *render.Scenes
	ln      net.Listener
	work    *relay.Engine
	chat    *webchat.Adapter
	runners []runner
	srv     *http.Server
	owner   string

	ready     chan struct{} // closed by Run once everything is up
	ran       bool          // Run started: it shuts the server, the engine and the chat page down
	closeOnce sync.Once
	closeErr  error
}

func newMain(cfg config.Config, log *slog.Logger) *Main {
	return &Main{cfg: cfg, log: log, ready: make(chan struct{})}
}

// Open builds the bot. When it fails, what it opened is released, and Close does nothing more.
func (m *Main) Open(ctx context.Context) (err error) {
	defer func() {
		if err != nil {
			_ = m.Close()
		}
	}()
	cfg, log := m.cfg, m.log
	m.stopDot = useDotWorker(ctx, log)
	if m.st, err = openStore(ctx, cfg, log); err != nil {
		return err
	}
	m.rend = newRenderer(ctx, cfg, log)
	ag, model, err := newAgent(cfg, false, log)
	if err != nil {
		return err
	}
	// Ollama down, the model not pulled or unable to read pictures is logged now, not at the
	// first message; serve goes on.
	inspectModels(ctx, cfg, model, false).log(log)
	// The listener comes before the links: without a public URL they point at its address.
	if m.ln, err = net.Listen("tcp", cfg.Listen); err != nil {
		return fmt.Errorf("listen on %s (set --listen or EXCALIBOT_LISTEN): %w", cfg.Listen, err)
	}
	base := cfg.PublicURL
	if base == "" {
		base = localURL(m.ln.Addr())
	}

	metrics := web.NewMetrics()
	// Without Chromium there is no converter: Mermaid then goes to the agent, which draws without it.
	drawer := agentdraw.New(ag, agentdraw.Options{Limits: toolLimits(cfg), Observer: metrics, Mermaid: m.rend.Converter()}, log)
	// Each process its own name in the store's leases and claims, even two on one host.
	m.owner = relay.NewOwner()
	// The links replies carry are made before the core and the web server, which both use them.
	editor := links.NewEditor(m.st, base, cfg.LinkTTL, nil)
	var replyLinks bot.Links = editor
	if cfg.ShareLinks && cfg.PublicURL == "" {
		replyLinks = &links.Share{Linker: links.ShareLinker{PostURL: cfg.ShareURL}}
	} else if cfg.ShareLinks {
		log.Warn("share links are off because EXCALIBOT_PUBLIC_URL is set: replies link to this server's editor")
	}
	core := bot.New(m.st, drawer, m.rend, replyLinks, bot.Options{
		MaxMessageLength:  cfg.MaxMessageLength,
		UserRatePerMinute: cfg.UserRatePerMinute,
		ChatRatePerMinute: cfg.ChatRatePerMinute,
		MaxSceneBytes:     cfg.MaxSceneSize,
		MaxImageBytes:     int64(cfg.MaxImageSize),
		ImageSide:         cfg.ImageSize,
		MaxElements:       cfg.MaxElements,
		Observer:          metrics,
	}, log)
	// The engine keeps each message, hands each thread's to the conversation in order and posts
	// the replies: it is what the adapters hand their messages to.
	m.work = relay.New(m.st, core, relay.Options{
		Owner:             m.owner,
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

	srvWeb := web.New(m.st, m.rend, m.work, metrics, web.Options{
		MaxBody: int64(cfg.MaxSceneSize) + 1<<20,
		Limits:  scene.Limits{MaxBytes: cfg.MaxSceneSize, MaxElements: cfg.MaxElements},
		Checks: []web.Check{
			{Name: "renderer", Fn: func(context.Context) error { return m.rend.Ready() }},
			{Name: "store", Fn: m.st.Ping},
		},
		Model: newModelWatch(cfg, model).Health,
		Queue: m.work,
	}, log)

	// The chat page: open on localhost, from elsewhere only with EXCALIBOT_CHAT_SECRET.
	m.chat = webchat.New(m.work, webchat.Options{Secret: cfg.ChatSecret, Page: web.ChatPage,
		Secure: strings.HasPrefix(cfg.PublicURL, "https:"), MaxImageBytes: int64(cfg.MaxImageSize)}, log)
	for _, r := range m.chat.Routes() {
		if r.MaxBody > 0 {
			srvWeb.HandleUpload(r.Pattern, r.Handler, r.MaxBody)
		} else {
			srvWeb.HandleBrowser(r.Pattern, r.Handler, r.Stream)
		}
	}
	// Every adapter is registered here, before Run starts the engine.
	m.work.Register(m.chat)
	if m.runners, err = startAdapters(cfg, core, m.work, tgIndex{m.st}, srvWeb, log); err != nil {
		return err
	}
	if msg := cfg.MissingChat(); msg != "" {
		log.Warn(msg)
	}
	switch {
	case cfg.PublicURL == "" && cfg.ShareLinks:
		log.Info("replies link to excalidraw.com: each posted revision is uploaded there, encrypted, with the key only in the link", "store", cfg.ShareURL)
	case cfg.PublicURL == "":
		log.Warn("links in replies point at this machine only; set EXCALIBOT_PUBLIC_URL to the address people open, or EXCALIBOT_SHARE_LINKS=true for excalidraw.com links", "using", base)
	}
	m.srv = &http.Server{Handler: srvWeb.Handler(), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 60 * time.Second, IdleTimeout: 2 * time.Minute}
	m.srv.RegisterOnShutdown(m.chat.Close) // end the chat page's event streams, or Shutdown waits for them
	return nil
}

// Addr is the HTTP listener's address (tests listen on port 0).
func (m *Main) Addr() string { return m.ln.Addr().String() }

// Ready is closed once Run has everything up: the HTTP server, the work and the adapters.
func (m *Main) Ready() <-chan struct{} { return m.ready }

// Run serves until ctx ends or the HTTP server fails, then stops the adapters and lets running
// drawings finish for shutdownGrace. Call it once, after Open.
func (m *Main) Run(ctx context.Context) error {
	cfg, log := m.cfg, m.log
	m.ran = true
	var wg sync.WaitGroup
	errc := make(chan error, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := m.srv.Serve(m.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errc <- fmt.Errorf("http server: %w", err)
		}
	}()
	addr := m.ln.Addr().String()
	log.Info("excalibot is up", "http", "http://"+addr, logkey.Chat, "http://"+addr+"/chat", logkey.Model, cfg.Model,
		"ollama", cfg.OllamaHost, "owner", m.owner)

	// The work starts, every adapter registered: threads whose owner is gone are told, and
	// messages kept before this start (here or by another replica) are drawn.
	if err := m.work.Recover(ctx); err != nil {
		log.Warn("could not recover interrupted runs", logkey.Err, err)
	}
	adapterCtx, stopAdapters := context.WithCancel(ctx)
	defer stopAdapters()
	for _, r := range m.runners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A refused token stops that platform only: HTTP and the other platform keep serving.
			if err := r.run(adapterCtx); err != nil && adapterCtx.Err() == nil {
				log.Error("chat platform stopped; fix its settings and restart", logkey.Platform, r.name, logkey.Err, err)
			}
		}()
	}
	pruneDone := startPruning(adapterCtx, m.st, cfg.PruneAfter, log, &wg)
	close(m.ready)

	var runErr error
	select {
	case <-ctx.Done():
		log.Info("shutting down: letting running drawings finish", "grace", shutdownGrace)
	case runErr = <-errc:
		log.Error("a component failed; shutting down", logkey.Err, runErr)
	}
	stopAdapters()
	grace, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	m.work.Close(grace)
	if err := m.srv.Shutdown(grace); err != nil {
		log.Warn("http shutdown", logkey.Err, err)
	}
	<-pruneDone
	wg.Wait()
	return runErr
}

// Close releases what Open made: after Run, the thread index (once the adapters stopped), the
// renderer, the Graphviz worker and the store; without Run, also the engine, the chat page and
// the listener.
func (m *Main) Close() error {
	m.closeOnce.Do(func() {
		if !m.ran {
			if m.work != nil {
				m.work.Close(context.Background()) // never started: it has nothing to wait for
			}
			if m.chat != nil {
				m.chat.Close()
			}
			if m.ln != nil {
				_ = m.ln.Close()
			}
		}
		var errs []error
		if m.rend != nil {
			if err := m.rend.Close(); err != nil {
				errs = append(errs, fmt.Errorf("close renderer: %w", err))
			}
		}
		if m.stopDot != nil {
			m.stopDot()
		}
		if m.st != nil {
			if err := m.st.Close(); err != nil {
				errs = append(errs, fmt.Errorf("close store: %w", err))
			}
		}
		m.closeErr = errors.Join(errs...)
	})
	return m.closeErr
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
	Ping(ctx context.Context) error
	Close() error
}

var (
	_ storeCloser = (*sqlite.Store)(nil)
	_ storeCloser = (*postgres.Store)(nil)
	_ links.Store = storeCloser(nil)

	// The threads hear of saves in the editor, and /metrics reports the work's depth.
	_ web.Notifier = (*relay.Engine)(nil)
	_ web.Queue    = (*relay.Engine)(nil)

	// Replies carry this server's editor links, or excalidraw.com's.
	_ bot.Links = (*links.Editor)(nil)
	_ bot.Links = (*links.Share)(nil)

	// The metrics hear of tool calls, model answers, renders and runs.
	_ bot.Observer   = (*web.Metrics)(nil)
	_ relay.Observer = (*web.Metrics)(nil)
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
				log.Warn("prune old threads", logkey.Err, err)
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

func newRenderer(ctx context.Context, cfg config.Config, log *slog.Logger) *render.Scenes {
	// The Mermaid tab opens right after the render tabs, so the first Mermaid diagram after a start
	// does not wait 3-5 s for its page.
	r, err := render.New(ctx, render.Config{ChromePath: cfg.ChromePath, Tabs: cfg.RenderTabs, RenderTimeout: cfg.RenderTimeout,
		WarmMermaid: true}, log)
	if err != nil {
		// The bot still answers with the .excalidraw file; the reason goes into every reply and the log.
		log.Error("renderer unavailable: replies will carry the .excalidraw file without a picture", logkey.Err, err)
		return render.Unavailable(err)
	}
	return render.NewScenes(r, cfg.RenderScale)
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
