package main

import (
	"context"
	"io"
	"log/slog"
	"net/url"
	"sort"
	"strings"

	"github.com/excalibot/excalibot/config"
)

// newLogger returns the process logger: text lines at the configured level, with every configured
// secret replaced by "[redacted]" wherever it appears (an error that quotes a URL with a token
// must not put the token in the log).
func newLogger(w io.Writer, cfg config.Config) *slog.Logger {
	level := slog.LevelInfo
	_ = level.UnmarshalText([]byte(cfg.LogLevel))
	h := slog.NewTextHandler(w, &slog.HandlerOptions{Level: level})
	secrets := cfg.Secrets()
	if len(secrets) == 0 {
		return slog.New(h)
	}
	return slog.New(redactHandler{h, strings.NewReplacer(pairs(secrets)...)})
}

// pairs builds the replacer's arguments: each secret as it is and as it appears escaped in a URL
// query or path ("123:AA" is "123%3AAA" in a query string), longest first, so that a longer
// secret containing a shorter one is replaced whole.
func pairs(secrets []string) []string {
	seen := map[string]bool{}
	var all []string
	for _, s := range secrets {
		for _, v := range []string{s, url.QueryEscape(s), url.PathEscape(s)} {
			if !seen[v] {
				seen[v] = true
				all = append(all, v)
			}
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return len(all[i]) > len(all[j]) })
	out := make([]string, 0, 2*len(all))
	for _, s := range all {
		out = append(out, s, "[redacted]")
	}
	return out
}

// redactHandler rewrites the message and string-valued attributes before the inner handler sees them.
type redactHandler struct {
	inner slog.Handler
	r     *strings.Replacer
}

func (h redactHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.inner.Enabled(ctx, l)
}

func (h redactHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, h.r.Replace(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.inner.Handle(ctx, out)
}

func (h redactHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.r.Replace(v.String()))
	case slog.KindGroup:
		as := v.Group()
		out := make([]any, len(as))
		for i, g := range as {
			out[i] = h.attr(g)
		}
		return slog.Group(a.Key, out...)
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.String(a.Key, h.r.Replace(err.Error()))
		}
		return slog.String(a.Key, h.r.Replace(v.String()))
	}
	return a
}

func (h redactHandler) WithAttrs(as []slog.Attr) slog.Handler {
	out := make([]slog.Attr, len(as))
	for i, a := range as {
		out[i] = h.attr(a)
	}
	return redactHandler{h.inner.WithAttrs(out), h.r}
}

func (h redactHandler) WithGroup(name string) slog.Handler {
	return redactHandler{h.inner.WithGroup(name), h.r}
}
