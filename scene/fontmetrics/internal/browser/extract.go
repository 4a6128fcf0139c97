package browser

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
)

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("marshal %T: %v", v, err)) // only our own plain values reach here
	}
	return string(b)
}

// wrapPrelude stands in for what the extracted code imports from other
// chunks: production mode, and getLineWidth as CanvasTextMetricsProvider
// computes it outside tests (measureText(text).width).
const wrapPrelude = `"use strict";
var define_import_meta_env_default = { MODE: "production", DEV: false };
var ENV = { TEST: "test", DEVELOPMENT: "development" };
var __wrapCtx = document.createElement("canvas").getContext("2d");
var getLineWidth = (text, font) => { __wrapCtx.font = font; return __wrapCtx.measureText(text).width; };
`

// extractWrapText cuts charWidth and the whole textWrapping module out of the
// 0.18.1 dev build, so the page runs Excalidraw's wrapText verbatim.
func extractWrapText(devDir string) ([]byte, error) {
	files, err := filepath.Glob(filepath.Join(devDir, "chunk-*.js"))
	if err != nil {
		return nil, fmt.Errorf("list dev chunks: %w", err)
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", f, err)
		}
		cw, err1 := cut(src, "\nvar charWidth = ", "\nvar getMaxCharWidth")
		tw, err2 := cut(src, "\n// element/textWrapping.ts", "\n// element/bounds.ts")
		if err1 != nil || err2 != nil {
			continue
		}
		var out bytes.Buffer
		out.WriteString(wrapPrelude)
		out.Write(cw)
		out.Write(tw)
		out.WriteString("\nwindow.excalidrawWrapText = wrapText;\nwindow.excalidrawParseTokens = parseTokens;\n")
		return out.Bytes(), nil
	}
	return nil, fmt.Errorf("no chunk in %s holds charWidth and element/textWrapping.ts", devDir)
}

func cut(src []byte, from, to string) ([]byte, error) {
	i := bytes.Index(src, []byte(from))
	if i < 0 {
		return nil, fmt.Errorf("marker %q not found", from)
	}
	j := bytes.Index(src[i:], []byte(to))
	if j < 0 {
		return nil, fmt.Errorf("marker %q not found after %q", to, from)
	}
	return src[i : i+j], nil
}

var xiaolaiFace = regexp.MustCompile(`uri: Xiaolai_Regular_([0-9a-f]+)_default,\s*descriptors:\s*\{\s*unicodeRange:\s*"([^"]+)"`)

// xiaolaiFamily reads the 209 unicode-range faces of Xiaolai, Excalifont's
// CJK fallback, from the dev build: too many to copy by hand, and the page
// needs them so Excalifont's CJK text is measured in the font Excalidraw uses.
func xiaolaiFamily(devDir string) (Family, error) {
	files, err := filepath.Glob(filepath.Join(devDir, "chunk-*.js"))
	if err != nil {
		return Family{}, fmt.Errorf("list dev chunks: %w", err)
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return Family{}, fmt.Errorf("read %s: %w", f, err)
		}
		block, err := cut(src, "\nvar XiaolaiFontFaces = [", "\n];")
		if err != nil {
			continue
		}
		fam := Family{ID: 100, Name: "Xiaolai"}
		for _, m := range xiaolaiFace.FindAllSubmatch(block, -1) {
			fam.Faces = append(fam.Faces, Face{File: "Xiaolai/Xiaolai-Regular-" + string(m[1]) + ".woff2", UnicodeRange: string(m[2])})
		}
		if len(fam.Faces) < 100 {
			return Family{}, fmt.Errorf("found only %d Xiaolai faces in %s", len(fam.Faces), f)
		}
		return fam, nil
	}
	return Family{}, fmt.Errorf("no chunk in %s declares XiaolaiFontFaces", devDir)
}
