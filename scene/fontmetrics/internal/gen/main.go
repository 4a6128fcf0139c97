// Command gen measures Excalidraw 0.18.1's fonts in headless Chromium and
// writes the tables that package fontmetrics embeds, plus the golden files its
// tests compare against. Run it with `go generate ./scene/fontmetrics` after
// `npm ci --ignore-scripts --legacy-peer-deps` in scene/fontmetrics/internal/browser.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/excalibot/excalibot/scene/fontmetrics/internal/browser"
)

// measureSize is the font size of the per-character tables: large, so that
// canvas rounding is far below the 1/4096 em the tables keep.
const measureSize = 100

// minPairDelta drops pair corrections below 0.003 em (0.1 px at 36 px).
const minPairDelta = 0.3

func main() {
	out := flag.String("out", ".", "the fontmetrics package folder")
	pkg := flag.String("npm", "internal/browser", "folder with node_modules/@excalidraw/excalidraw")
	chromium := flag.String("chromium", "/usr/bin/chromium", "Chromium binary")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	if err := run(ctx, log, *out, *pkg, *chromium); err != nil {
		log.Error("generate font metrics", "err", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, log *slog.Logger, out, pkg, chromium string) error {
	start := time.Now()
	b, err := browser.Start(ctx, browser.Options{Chromium: chromium, PackageDir: pkg, Log: log})
	if err != nil {
		return fmt.Errorf("start browser: %w", err)
	}
	defer b.Close()

	props, err := b.UnicodeRanges(unicodeProps)
	if err != nil {
		return fmt.Errorf("read unicode properties: %w", err)
	}
	cps := measuredCodePoints(props[`\p{Emoji_Presentation}`])

	var fams []familyData
	for _, f := range browser.Families {
		font := browser.FontString(f.ID, measureSize)
		t0 := time.Now()
		adv, err := b.MeasureChars(font, cps)
		log.Info("chars", "family", f.Name, "took", time.Since(t0))
		if err != nil {
			return fmt.Errorf("measure %s characters: %w", f.Name, err)
		}
		var fit [][]float64
		for _, size := range fitSizes {
			ws, err := b.MeasureChars(browser.FontString(f.ID, size), cps)
			if err != nil {
				return fmt.Errorf("measure %s characters at %v px: %w", f.Name, size, err)
			}
			fit = append(fit, ws)
		}
		pairs, err := b.MeasurePairs(font, pairGroups(), minPairDelta)
		if err != nil {
			return fmt.Errorf("measure %s pairs: %w", f.Name, err)
		}
		t1 := time.Now()
		fd := newFamilyData(f.ID, cps, adv, fit, pairs, measureSize)
		log.Info("fitted", "family", f.Name, "took", time.Since(t1))
		if fd.wide, fd.hangul, err = wideEstimates(b, f); err != nil {
			return fmt.Errorf("measure %s CJK: %w", f.Name, err)
		}
		fams = append(fams, fd)
		log.Info("measured", "family", f.Name, "chars", len(cps), "fitted", fd.fitted, "unitsPerEm", fd.upms, "pairs", len(pairs))
	}
	log.Info("tables measured", "took", time.Since(start).Round(time.Millisecond))
	data := encode(fams)
	if err := os.WriteFile(filepath.Join(out, "metrics.bin"), data, 0o644); err != nil {
		return fmt.Errorf("write metrics.bin: %w", err)
	}
	if err := writeUnicodeTables(filepath.Join(out, "unicode_gen.go"), props); err != nil {
		return fmt.Errorf("write unicode tables: %w", err)
	}
	if err := writeGoldens(b, filepath.Join(out, "testdata")); err != nil {
		return fmt.Errorf("write golden files: %w", err)
	}
	log.Info("done", "bytes", len(data), "took", time.Since(start).Round(time.Millisecond))
	return nil
}
