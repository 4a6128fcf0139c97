// Measurement page for the fontmetrics generator. Go calls these functions
// through chromedp; every width comes from canvas measureText, which is what
// Excalidraw 0.18.1's getLineWidth returns (metrics.width, the advance width).
"use strict";

const ctx = document.createElement("canvas").getContext("2d");

// loadFonts registers every face like ExcalidrawFontFace does and waits until
// all are loaded: canvas text never triggers a load by itself, so measuring
// before this would silently use a fallback font.
window.loadFonts = async (families, lazy) => {
  const loads = [];
  for (const f of lazy) {
    for (const face of f.faces) {
      const desc = { display: "swap", style: "normal", weight: "400", unicodeRange: face.unicodeRange };
      document.fonts.add(new FontFace(f.name, `url(/fonts/${face.file}) format("woff2")`, desc));
    }
  }
  for (const f of families) {
    for (const face of f.faces || []) {
      const desc = { display: "swap", style: "normal", weight: "400" };
      if (face.unicodeRange) desc.unicodeRange = face.unicodeRange;
      if (face.weight) desc.weight = face.weight;
      const ff = new FontFace(f.name, `url(/fonts/${face.file}) format("woff2")`, desc);
      document.fonts.add(ff);
      loads.push(ff.load().then(() => null, (e) => `${f.name} ${face.file}: ${e}`));
    }
  }
  const errs = (await Promise.all(loads)).filter(Boolean);
  await document.fonts.ready;
  return errs;
};


// need loads the lazily registered faces (Xiaolai's 209 subsets) that text
// in font touches, as the browser would on first use.
const need = async (font, texts) => {
  const all = texts.join("");
  // check() is synchronous and cheap; load() costs a task even when done.
  if (all && !document.fonts.check(font, all)) await document.fonts.load(font, all);
};

// measureStrings returns the advance width of each string.
window.measureStrings = async (font, strings) => {
  await need(font, strings);
  ctx.font = font;
  return strings.map((s) => ctx.measureText(s).width);
};

// measureMany returns the width of each {font, text}.
window.measureMany = async (items) => {
  for (const it of items) await need(it.font, [it.text]);
  return items.map((it) => {
    ctx.font = it.font;
    return ctx.measureText(it.text).width;
  });
};

// measureChars returns the advance width of each code point alone.
window.measureChars = async (font, cps) => {
  await need(font, [String.fromCodePoint(...cps)]);
  ctx.font = font;
  return cps.map((cp) => ctx.measureText(String.fromCodePoint(cp)).width);
};

// measurePairs returns [a, b, d] for every pair inside each group whose width
// differs from the sum of its two characters by more than minDelta: kerning,
// and anything else shaping does to two neighbours.
window.measurePairs = (font, groups, minDelta) => {
  ctx.font = font;
  const single = new Map();
  const w1 = (cp) => {
    let w = single.get(cp);
    if (w === undefined) {
      w = ctx.measureText(String.fromCodePoint(cp)).width;
      single.set(cp, w);
    }
    return w;
  };
  const seen = new Set();
  const out = [];
  for (const g of groups) {
    const strs = g.map((cp) => String.fromCodePoint(cp));
    for (let i = 0; i < g.length; i++) {
      const wa = w1(g[i]);
      for (let j = 0; j < g.length; j++) {
        const key = g[i] * 0x110000 + g[j];
        if (seen.has(key)) continue;
        seen.add(key);
        const d = ctx.measureText(strs[i] + strs[j]).width - wa - w1(g[j]);
        if (Math.abs(d) > minDelta) out.push([g[i], g[j], d]);
      }
    }
  }
  return out;
};

// unicodeRanges returns, for each property regex source, the code point ranges
// V8 matches, so Go uses the same Unicode data as Excalidraw's regexes.
window.unicodeRanges = (props) => {
  const out = {};
  for (const p of props) {
    const re = new RegExp(`^${p}$`, "u");
    const ranges = [];
    let start = -1;
    for (let cp = 0; cp <= 0x110000; cp++) {
      const ok = cp < 0x110000 && !(cp >= 0xd800 && cp <= 0xdfff) && re.test(String.fromCodePoint(cp));
      if (ok && start < 0) start = cp;
      if (!ok && start >= 0) {
        ranges.push([start, cp - 1]);
        start = -1;
      }
    }
    out[p] = ranges;
  }
  return out;
};

// wrapCases runs Excalidraw's own wrapText (extracted from the 0.18.1 dist
// into /wrap.js) on each case.
window.parseTokensCases = (lines) => lines.map((l) => window.excalidrawParseTokens(l));

window.wrapCases = async (cases) => {
  for (const c of cases) await need(c.font, [c.text]);
  return cases.map((c) => window.excalidrawWrapText(c.text, c.font, c.maxWidth));
};

// wrapCasesTestMetric runs wrapText with the metric of Excalidraw's test
// suite (jest-canvas-mock: 10 px per UTF-16 unit), so its test-file cases can
// be replayed against the 0.18.1 code itself.
window.wrapCasesTestMetric = (cases) => {
  const real = getLineWidth;
  getLineWidth = (text) => text.length * 10;
  try {
    return cases.map((c) => window.excalidrawWrapText(c.text, "test-metric", c.maxWidth));
  } finally {
    getLineWidth = real;
  }
};
