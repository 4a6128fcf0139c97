package render

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
)

// ErrNoChrome means no Chromium binary was found; its message says how to install one.
var ErrNoChrome = errors.New("render: Chromium not found; install it (Debian/Ubuntu: `apt-get install chromium`) " +
	"or give its path in the render config (excalibot render --chrome PATH)")

// chromeNames are tried in PATH order when no binary is configured; Debian's package comes first.
var chromeNames = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless_shell"}

// findChrome resolves the configured binary, or the first known name on PATH.
func findChrome(path string) (string, error) {
	if path != "" {
		p, err := exec.LookPath(path)
		if err != nil {
			return "", fmt.Errorf("%w (configured binary %q: %v)", ErrNoChrome, path, err)
		}
		return p, nil
	}
	for _, name := range chromeNames {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w (looked for %s on PATH)", ErrNoChrome, strings.Join(chromeNames, ", "))
}

// browser is one Chromium process. chromedp gives it a temporary profile directory, and removes
// it (killing any leftover child process that still uses it) when the process has exited.
type browser struct {
	gen    int // counts restarts; tabs of an older generation are thrown away
	pid    int
	ctx    context.Context // done when the process exits or stop is called
	cancel context.CancelFunc
	alloc  context.CancelFunc
}

// browserEnvNames are the variables Chromium is started with, when set: where its home and
// temporary files go (HOME, TMPDIR: profiles and, with --disable-dev-shm-usage, shared memory),
// PATH for the launcher scripts distributions install (Debian's runs grep, findmnt, tr), the
// locale and time zone, and what fontconfig reads to find fonts and its cache. Variables starting
// with LC_ pass too. Nothing else does: the environment of serve holds chat tokens and the
// database password, which a browser has no use for.
var browserEnvNames = []string{
	"HOME", "TMPDIR", "PATH", "LANG", "LANGUAGE", "TZ",
	"FONTCONFIG_FILE", "FONTCONFIG_PATH", "FONTCONFIG_SYSROOT",
	"XDG_CONFIG_HOME", "XDG_CONFIG_DIRS", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_DATA_DIRS", "XDG_RUNTIME_DIR",
}

// browserEnv keeps the variables of environ (NAME=value, as os.Environ gives them) that Chromium
// needs, in their order.
func browserEnv(environ []string) []string {
	var env []string
	for _, kv := range environ {
		name, _, ok := strings.Cut(kv, "=")
		if ok && (slices.Contains(browserEnvNames, name) || strings.HasPrefix(name, "LC_")) {
			env = append(env, kv)
		}
	}
	return env
}

// chromeFlags turn off everything that talks to the network on its own, and make every host name
// but loopback fail to resolve, so a stray fetch fails at once instead of leaving the machine.
// The browser starts with browserEnv's variables only.
func chromeFlags(path string) []chromedp.ExecAllocatorOption {
	return append(chromedp.DefaultExecAllocatorOptions[:], // headless, no background networking, no sync
		chromedp.ExecPath(path),
		chromedp.NoInheritEnv,
		chromedp.Env(browserEnv(os.Environ())...),
		chromedp.NoSandbox, // containers and root need it; the page is ours and reaches nothing outside
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-domain-reliability", true),
		chromedp.Flag("no-pings", true),
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"),
		chromedp.WindowSize(1280, 800),
	)
}

// startBrowser starts Chromium and waits until it answers. The browser's own context must carry no
// deadline (its expiry would kill the browser later), so a timer bounds the start instead.
func startBrowser(path string, gen int, timeout time.Duration, log *slog.Logger) (*browser, error) {
	actx, alloc := chromedp.NewExecAllocator(context.Background(), chromeFlags(path)...)
	ctx, cancel := chromedp.NewContext(actx,
		chromedp.WithErrorf(func(f string, a ...any) { log.Debug("chromedp: " + fmt.Sprintf(f, a...)) }))
	timer := time.AfterFunc(timeout, cancel)
	err := chromedp.Do(ctx)
	if !timer.Stop() {
		err = fmt.Errorf("no answer within %s (%v)", timeout, err)
	}
	if err != nil {
		cancel()
		alloc()
		return nil, fmt.Errorf("start %s: %w", path, err)
	}
	b := &browser{gen: gen, ctx: ctx, cancel: cancel, alloc: alloc}
	if c := chromedp.FromContext(ctx); c != nil && c.Browser != nil && c.Browser.Process() != nil {
		b.pid = c.Browser.Process().Pid
	}
	return b, nil
}

// alive reports whether the process still runs as far as chromedp knows.
func (b *browser) alive() bool { return b.ctx.Err() == nil }

// stop kills the process and waits until it and its profile directory are gone.
func (b *browser) stop() {
	b.cancel()
	b.alloc()
}
