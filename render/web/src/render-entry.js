// The render page's script: Excalidraw's own export code behind a small JSON-in/JSON-out API that
// the Go side calls with Runtime.evaluate. Bundled by ../build.mjs into dist/render.js.
//
// window.ExcalidrawRender:
//   whenReady()          resolves once every font family is loaded (see warmUp)
//   job(id, input?)      runs the render the Go side put at /job/<id> (or passes as input: JSON text, or
//                        {gzip: base64}) and posts the picture back there;
//                        answers {width, height, scale, bytes, ms, stages, canvas, transport} | {svg…} | {error}
//   png(doc, opts)       {png: base64, width, height, scale, bytes, ms, stages, canvas} | {error: {code, message}}
//   svg(doc, opts)       {svg, ms} | {error}
//   check(doc)           what Excalidraw's restore() changes in the scene | {error}
//   canvas(doc, opts)    an HTMLCanvasElement with the picture (benchmarks only)
//   practice(rounds)     renders a built-in diagram rounds times so V8 optimises the drawing code
//                        before real renders: {rounds, practiced, ms} | {error}
//   practiced()          how many practice renders this page has done
//   fontsStatus()        ["Excalifont:loaded", ...]
//
// Problems with the scene come back as {error} instead of a thrown exception, so the Go side can
// tell a bad scene (report it, keep the tab) from a broken tab (replace it, retry).
import {
  convertToExcalidrawElements,
  exportToBlob,
  exportToCanvas,
  exportToSvg,
  FONT_FAMILY,
  getCommonBounds,
  restore,
} from "@excalidraw/excalidraw";

// Every font but the CJK fallback is inlined; Xiaolai chunks are fetched from this page's origin.
// Excalidraw reads the asset path when it first registers its fonts, which is after this line runs.
window.EXCALIDRAW_ASSET_PATH = location.origin + "/";

const FAMILY_NAME = Object.fromEntries(Object.entries(FONT_FAMILY).map(([name, id]) => [id, name]));
const EXCALIFONT = FONT_FAMILY.Excalifont;

class SceneError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

// Excalidraw registers its FontFaces lazily inside the exporters and measures text with whatever is
// loaded at that moment, so the first scene of a fresh tab would be measured with a fallback font.
// Exporting one text per family to a 1×1 canvas registers and loads them all up front.
const WARM_TEXT = "ABCDEFGHIJKLMNOPQRSTUVWXYZ abcdefghijklmnopqrstuvwxyz 0123456789 .,;:!?()[]{}<>-+*/=_'\"#&%@$";
const warmUp = (async () => {
  const families = [...new Set(Object.values(FONT_FAMILY))];
  const elements = convertToExcalidrawElements(
    families.map((fontFamily, i) => ({ type: "text", x: 0, y: i * 40, text: WARM_TEXT, fontFamily })),
  );
  await exportToBlob({
    elements,
    files: {},
    mimeType: "image/png",
    getDimensions: () => ({ width: 1, height: 1, scale: 0.01 }),
  });
  await document.fonts.ready;
})();

// loadTextFonts loads the font chunks the scene's labels need (Cyrillic, Greek, CJK …) before
// restore() re-measures them; the warm-up only covered Latin.
const loadTextFonts = async (elements) => {
  const chars = new Map();
  for (const e of elements) {
    if (e.type !== "text" || typeof e.text !== "string" || !/[^\x00-\x7e]/.test(e.text)) continue;
    const family = e.fontFamily ?? EXCALIFONT;
    chars.set(family, (chars.get(family) || "") + e.text);
  }
  const loads = [];
  for (const [family, text] of chars) {
    const name = FAMILY_NAME[family];
    if (name) loads.push(document.fonts.load(`16px "${name}"`, text));
    if (family === EXCALIFONT) loads.push(document.fonts.load(`16px Xiaolai`, text));
  }
  await Promise.all(loads);
};

// prepare runs Excalidraw's restore() the way the editor loads a file, re-measuring every text
// with the loaded fonts, and lays bound text out where the editor would put it.
const prepare = async (doc) => {
  if (!doc || typeof doc !== "object" || !Array.isArray(doc.elements)) {
    throw new SceneError("invalid", "the scene has no elements array");
  }
  const input = doc.elements.filter((e) => e && typeof e === "object" && !e.isDeleted);
  if (input.length === 0) throw new SceneError("empty", "the scene has no elements to draw");
  await loadTextFonts(input);
  let restored;
  try {
    restored = restore({ elements: input, appState: doc.appState || {}, files: doc.files || {} }, null, null, {
      repairBindings: true,
      refreshDimensions: true,
    });
  } catch (err) {
    throw new SceneError("invalid", `Excalidraw cannot load the scene: ${err.message}`);
  }
  const elements = restored.elements.filter((e) => !e.isDeleted);
  if (elements.length === 0) {
    throw new SceneError("empty", `none of the scene's ${input.length} elements can be drawn (unknown types or zero size)`);
  }
  layoutBoundText(elements, input);
  return { input, elements, appState: restored.appState, files: restored.files || doc.files || {} };
};

// Exporters draw text at its stored x/y; only the editor lays bound text out, and only after its
// fonts load. These are Excalidraw's formulas (textElement.ts, BOUND_TEXT_PADDING = 5;
// the padding sits inside the container on every side). Arrow labels keep their centre.
const PAD = 5;
const layoutBoundText = (elements, input) => {
  const byId = new Map(elements.map((e) => [e.id, e]));
  const before = new Map(input.map((e) => [e.id, e]));
  for (const t of elements) {
    if (t.type !== "text" || !t.containerId) continue;
    const c = byId.get(t.containerId);
    if (!c) continue;
    if (c.type === "arrow" || c.type === "line") {
      const old = before.get(t.id);
      if (old && Number.isFinite(old.width) && Number.isFinite(old.height)) {
        t.x = old.x + old.width / 2 - t.width / 2;
        t.y = old.y + old.height / 2 - t.height / 2;
      }
      continue;
    }
    let ox = PAD, oy = PAD, maxW = c.width - 2 * PAD, maxH = c.height - 2 * PAD;
    if (c.type === "ellipse") {
      ox += (c.width / 2) * (1 - Math.SQRT2 / 2);
      oy += (c.height / 2) * (1 - Math.SQRT2 / 2);
      maxW = Math.round((c.width / 2) * Math.SQRT2) - 2 * PAD;
      maxH = Math.round((c.height / 2) * Math.SQRT2) - 2 * PAD;
    } else if (c.type === "diamond") {
      ox += c.width / 4;
      oy += c.height / 4;
      maxW = Math.round(c.width / 2) - 2 * PAD;
      maxH = Math.round(c.height / 2) - 2 * PAD;
    }
    if (t.height > maxH) {
      // The container grows to fit its text (computeContainerDimensionForBoundText).
      const d = Math.ceil(t.height) + 2 * PAD;
      c.height = c.type === "ellipse" ? Math.round((d / Math.SQRT2) * 2) : c.type === "diamond" ? 2 * d : d;
      if (c.type === "ellipse") {
        oy = PAD + (c.height / 2) * (1 - Math.SQRT2 / 2);
        maxH = Math.round((c.height / 2) * Math.SQRT2) - 2 * PAD;
      } else if (c.type === "diamond") {
        oy = PAD + c.height / 4;
        maxH = Math.round(c.height / 2) - 2 * PAD;
      } else {
        maxH = c.height - 2 * PAD;
      }
    }
    const x0 = c.x + ox, y0 = c.y + oy;
    t.x = t.textAlign === "left" ? x0 : t.textAlign === "right" ? x0 + maxW - t.width : x0 + (maxW - t.width) / 2;
    t.y = t.verticalAlign === "top" ? y0 : t.verticalAlign === "bottom" ? y0 + maxH - t.height : y0 + (maxH - t.height) / 2;
    t.angle = c.angle || 0;
  }
};

// frameFor returns the frame to export, or null for "the whole drawing with padding". A viewport
// becomes a frame; so does a drawing too thin for chat, widened on its short side to maxAspect.
const frameFor = (elements, opts) => {
  let box;
  if (opts.viewport) {
    const v = opts.viewport;
    box = { x: v.x, y: v.y, w: v.width, h: v.height };
  } else {
    const [x1, y1, x2, y2] = getCommonBounds(elements);
    const p = opts.padding;
    box = { x: x1 - p, y: y1 - p, w: x2 - x1 + 2 * p, h: y2 - y1 + 2 * p };
  }
  const max = opts.maxAspect;
  let grew = false;
  if (box.w < 1) box = { ...box, x: box.x - (1 - box.w) / 2, w: 1 };
  if (box.h < 1) box = { ...box, y: box.y - (1 - box.h) / 2, h: 1 };
  if (max > 0 && box.w / box.h > max) {
    const h = box.w / max;
    box = { ...box, y: box.y - (h - box.h) / 2, h };
    grew = true;
  } else if (max > 0 && box.h / box.w > max) {
    const w = box.h / max;
    box = { ...box, x: box.x - (w - box.w) / 2, w };
    grew = true;
  }
  if (!opts.viewport && !grew) return null;
  return {
    id: "excalibot-export-frame",
    type: "frame",
    name: null,
    x: box.x,
    y: box.y,
    width: box.w,
    height: box.h,
    angle: 0,
    isDeleted: false,
    groupIds: [],
    frameId: null,
    boundElements: null,
    locked: false,
  };
};

const exportAppState = (scene, opts) => ({
  ...scene.appState,
  exportBackground: opts.background,
  viewBackgroundColor: opts.backgroundColor || scene.appState.viewBackgroundColor || "#ffffff",
  exportWithDarkMode: opts.dark,
  exportEmbedScene: opts.embedScene,
});

const blobToBase64 = (blob) =>
  new Promise((resolve, reject) => {
    const r = new FileReader();
    r.onload = () => resolve(String(r.result).slice(String(r.result).indexOf(",") + 1));
    r.onerror = () => reject(r.error);
    r.readAsDataURL(blob);
  });

const guard = async (fn) => {
  try {
    await warmUp;
    return await fn();
  } catch (err) {
    if (err instanceof SceneError) return { error: { code: err.code, message: err.message } };
    return { error: { code: "export", message: String((err && err.message) || err) } };
  }
};

// The export canvas is kept between renders of a tab and handed back to Excalidraw when it asks
// for a new one. Allocating a canvas's pixels costs far more than drawing them on a VM: each fresh
// 4 KB page faults (about 15 µs here), so a 3040×600 canvas took 30-45 ms before the first stroke.
// Chromium keeps the pixels when a canvas is given the size it already has (it only clears them),
// so a render of the same size as the tab's last one - a restyle, a relabel, `theme`, `export` -
// skips that; any other size allocates as before. Only canvases up to KEEP_PIXELS are kept.
const KEEP_PIXELS = 4_000_000;
let kept = null; // the canvas to lend to the next export, or null
let lend = null; // armed for one export: the next createElement("canvas") returns it
let reuse = true; // turned off for good if anything but the export takes a lent canvas
const createElement = Document.prototype.createElement;
document.createElement = function (tagName, options) {
  if (lend && typeof tagName === "string" && tagName.toLowerCase() === "canvas") {
    const c = lend;
    lend = null;
    return c;
  }
  return createElement.call(this, tagName, options);
};
const keepCanvas = (canvas) => {
  if (reuse && canvas.width * canvas.height <= KEEP_PIXELS) {
    kept = canvas;
    return;
  }
  kept = null;
  canvas.width = canvas.height = 0; // give the pixels (16 MB at 4 Mpx) back now, not at the next GC
};
// borrowCanvas arms the lend for one export and returns a check to run on the canvas the export
// gave back, which says whether its pixels were reused; anything else taking the lent canvas turns
// reuse off for this tab.
const borrowCanvas = () => {
  const c = kept;
  kept = null;
  if (!c) return () => false;
  const [w, h] = [c.width, c.height];
  // Excalidraw sets the size of the canvas it gets, which clears it and resets the context's
  // state (dark mode's filter included) even when the size stays: TestCanvasReuse checks that.
  lend = c;
  return (got) => {
    lend = null;
    if (got === c) return got.width === w && got.height === h;
    if (got !== undefined) { // undefined: the export failed, and the canvas is dropped
      console.warn("render: the lent canvas was taken by something else; canvas reuse is off for this tab");
      reuse = false;
    }
    return false;
  };
};

const now = () => performance.now();
const round = (ms) => Math.round(ms * 10) / 10;

// exportPNG is exportToBlob taken apart, so that each stage is timed: prepare (restore, fonts,
// bound text), draw (exportToCanvas: the canvas is allocated and the elements drawn; Chrome
// rasterises part of it here and the rest when encoding) and encode (canvas.toBlob). It does not
// embed the scene: the Go side writes Excalidraw's tEXt chunk with the document it sent
// (scene.EmbedScene), so the PNG carries exactly the .excalidraw file the bot stores. In JS,
// encodePngMetadata copies the blob, splits the whole PNG into chunks, deflates the scene and
// checksums everything again (30 ms for a 30-element scene), and handing serializeAsJSON's text
// back beside the picture cost 4-7 ms more per render.
const exportPNG = async (doc, opts) => {
  const stages = {};
  let t = now();
  const scene = await prepare(doc);
  stages.prepare = now() - t;
  const appState = exportAppState(scene, opts);
  // Room for the scene the Go side embeds: compressed, it is far smaller than its JSON text, so
  // reserving the text's length keeps the finished PNG within maxBytes (Go checks the final size).
  const reserve = opts.reserve || 0;
  const frame = frameFor(scene.elements, opts);
  let scale = opts.scale;
  let dims, blob, reused;
  stages.draw = stages.encode = 0;
  for (let attempt = 0; ; attempt++) {
    t = now();
    const lent = borrowCanvas();
    let canvas;
    try {
      canvas = await exportToCanvas({
        elements: scene.elements,
        appState,
        files: scene.files,
        exportPadding: opts.padding,
        exportingFrame: frame,
        // exportToCanvas ignores appState.exportScale without maxWidthOrHeight; getDimensions is
        // where the scale takes effect, and where the picture is capped for chat.
        getDimensions: (w, h) => {
          let s = Math.min(scale, opts.maxSideSum > 0 ? opts.maxSideSum / (w + h) : Infinity);
          if (opts.maxPixels > 0) s = Math.min(s, Math.sqrt(opts.maxPixels / (w * h)));
          dims = { width: Math.max(1, Math.floor(w * s)), height: Math.max(1, Math.floor(h * s)), scale: s };
          return dims;
        },
      });
    } finally {
      reused = lent(canvas);
    }
    stages.draw += now() - t;
    t = now();
    blob = await new Promise((resolve, reject) =>
      canvas.toBlob((b) => (b ? resolve(b) : reject(new Error("the canvas could not be encoded as PNG"))), "image/png"),
    );
    stages.encode += now() - t;
    t = now();
    keepCanvas(canvas);
    stages.free = (stages.free || 0) + now() - t;
    if (opts.maxBytes > 0 && blob.size + reserve > opts.maxBytes && attempt < 4) {
      const budget = Math.max(opts.maxBytes - reserve, opts.maxBytes / 4);
      scale = dims.scale * Math.sqrt(budget / blob.size) * 0.95;
      continue;
    }
    break;
  }
  for (const k of Object.keys(stages)) stages[k] = round(stages[k]);
  const ms = stages.prepare + stages.draw + stages.encode;
  return {
    meta: {
      width: dims.width,
      height: dims.height,
      scale: dims.scale,
      bytes: blob.size,
      ms: round(ms),
      stages,
      canvas: reused ? "reused" : "new",
    },
    blob,
  };
};

// png answers with the picture in base64, no scene embedded. The Go side uses job() instead;
// png() stays for probes and tests that build their own expression.
const png = (doc, opts) =>
  guard(async () => {
    const r = await exportPNG(doc, opts);
    return { ...r.meta, png: await blobToBase64(r.blob) };
  });

const exportSVG = async (doc, opts) => {
  const t0 = now();
  const scene = await prepare(doc);
  const el = await exportToSvg({
    elements: scene.elements,
    appState: { ...exportAppState(scene, opts), exportScale: 1 },
    files: scene.files,
    exportPadding: opts.padding,
    exportingFrame: opts.viewport ? frameFor(scene.elements, { ...opts, maxAspect: 0 }) : null,
  });
  const svg = el.outerHTML;
  return { meta: { ms: round(now() - t0) }, body: svg, svg };
};

const svg = (doc, opts) =>
  guard(async () => {
    const r = await exportSVG(doc, opts);
    return { svg: r.svg, ms: r.meta.ms };
  });

// gunzip turns base64 of gzipped bytes into text. The bytes go straight into the stream: a Blob's
// stream() reads the blob back through the browser process, which took 5.7-6.3 ms for a
// 290-element job against 2.3-2.4 ms this way (measured).
const gunzip = async (b64) => {
  const ds = new DecompressionStream("gzip");
  const w = ds.writable.getWriter();
  // Corrupt input rejects these too; the readable side reports it, so they need no handler.
  w.write(Uint8Array.fromBase64(b64)).catch(() => {});
  w.close().catch(() => {});
  return new Response(ds.readable).text();
};

// job runs one render handed over by the Go side: it takes {fn, doc, opts} from the call when the
// job is small (input: JSON text, or {gzip: base64} of it) or fetches it from /job/<id> on the
// page's own server, and posts the picture back there. Only the small answer crosses CDP: a CDP
// message costs about 1 ms up to 16 KB and 5-10 ms at 64 KB, a loopback request 5-9 ms at any
// size (measured; the Go side picks the way, see jobArg).
const job = (id, input) =>
  guard(async () => {
    const url = `/job/${encodeURIComponent(id)}`;
    const start = now();
    let t = start;
    let fn, doc, opts, transport;
    if (typeof input === "string") {
      transport = "inline";
      // A small job comes with the call: a loopback fetch costs more than the bytes.
      ({ fn, doc, opts } = JSON.parse(input));
    } else if (input && typeof input.gzip === "string") {
      // A larger one comes gzipped in base64, while that is shorter than a fetch is slow.
      transport = "gzip";
      ({ fn, doc, opts } = JSON.parse(await gunzip(input.gzip)));
    } else {
      transport = "fetch";
      const res = await fetch(url, { cache: "no-store" });
      if (!res.ok) throw new Error(`fetch render job: HTTP ${res.status}`);
      ({ fn, doc, opts } = await res.json());
    }
    const fetched = now() - t;
    let meta, body;
    if (fn === "png") {
      ({ meta, blob: body } = await exportPNG(doc, opts));
    } else if (fn === "svg") {
      ({ meta, body } = await exportSVG(doc, opts));
    } else {
      throw new Error(`unknown render job ${JSON.stringify(fn)}`);
    }
    t = now();
    const put = await fetch(url, { method: "POST", body, cache: "no-store" });
    if (!put.ok) throw new Error(`hand the picture back: HTTP ${put.status}`);
    const end = now();
    meta.stages = { ...meta.stages, fetch: round(fetched), upload: round(end - t), job: round(end - start) };
    meta.transport = transport;
    return meta;
  });

// practice renders a built-in diagram `rounds` times through the same code as a real PNG export
// (restore, exportToCanvas on the lent canvas, toBlob), without the upload. V8 optimises
// Excalidraw's drawing code only after it has run a while: a tab's first ten or so renders of a
// 30-element scene took 2-6x as long as later ones (measured: the page's job 60-214 ms, then
// 28-35 ms from about the twelfth). The pool practises each tab before lending it, so the first
// chat picture after a start is as fast as the hundredth. Small pictures keep it cheap.
const practiceSkeleton = [
  { type: "rectangle", id: "p-browser", x: 0, y: 0, width: 160, height: 70, backgroundColor: "#a5d8ff",
    roundness: { type: 3 }, label: { text: "Browser" } },
  { type: "ellipse", id: "p-api", x: 240, y: 0, width: 160, height: 70, backgroundColor: "#b2f2bb",
    label: { text: "API" } },
  { type: "diamond", id: "p-cache", x: 480, y: -10, width: 170, height: 90, fillStyle: "hachure",
    backgroundColor: "#ffec99", label: { text: "Cached?" } },
  { type: "arrow", x: 165, y: 35, width: 70, height: 0, start: { id: "p-browser" }, end: { id: "p-api" },
    label: { text: "HTTPS" } },
  { type: "arrow", x: 405, y: 35, width: 70, height: 0, start: { id: "p-api" }, end: { id: "p-cache" },
    strokeStyle: "dashed" },
  { type: "line", x: 0, y: 130, points: [[0, 0], [200, 24], [400, 0]] },
  { type: "text", x: 0, y: 160, text: "Practice: Сервер · Διακομιστής" },
];
let practiced = 0;
const practice = (rounds) =>
  guard(async () => {
    const doc = { elements: convertToExcalidrawElements(practiceSkeleton), appState: {}, files: {} };
    const t0 = now();
    for (let i = 0; i < rounds; i++) {
      // Dark on odd rounds, light last, so both paths are hot and no dark canvas is left kept.
      const dark = i % 2 === 1 && i !== rounds - 1;
      await exportPNG(doc, { scale: 1, padding: 10, dark, background: true, maxSideSum: 0, maxAspect: 0, maxBytes: 0 });
      practiced++;
    }
    return { rounds, practiced, ms: round(now() - t0) };
  });

// canvas draws the scene onto a canvas element without encoding it. Only the one-shot baseline of
// the benchmarks uses it: `chromium --screenshot` needs the picture in the DOM, and toBlob's
// off-thread encoding would let headless virtual time run out before the picture is there.
const canvas = async (doc, opts) => {
  await warmUp;
  const scene = await prepare(doc);
  return exportToCanvas({
    elements: scene.elements,
    appState: exportAppState(scene, opts),
    files: scene.files,
    exportPadding: opts.padding,
    getDimensions: (w, h) => {
      const s = Math.min(opts.scale, opts.maxPixels > 0 ? Math.sqrt(opts.maxPixels / (w * h)) : Infinity);
      return { width: Math.round(w * s), height: Math.round(h * s), scale: s };
    },
  });
};

// check reports what loading the scene in Excalidraw would change: elements it drops, bindings it
// repairs, and how far re-measured, re-laid-out text moves or grows.
const check = (doc) =>
  guard(async () => {
    const scene = await prepare(doc).catch((err) => {
      // An empty result is a finding of check, not a failure of it.
      if (err instanceof SceneError && err.code === "empty" && Array.isArray(doc?.elements) && doc.elements.length) {
        return null;
      }
      throw err;
    });
    const input = scene ? scene.input : doc.elements.filter((e) => e && !e.isDeleted);
    const out = new Map((scene ? scene.elements : []).map((e) => [e.id, e]));
    const report = { elements: input.length, dropped: [], bindings: [], text: [], maxTextDelta: 0 };
    const seen = new Set();
    const refs = (e) =>
      (e.boundElements || []).map((b) => `${b.type}:${b.id}`).sort().join(",");
    for (const a of input) {
      const b = out.get(a.id);
      if (!b || seen.has(a.id)) {
        report.dropped.push({ id: String(a.id), type: String(a.type) });
        continue;
      }
      seen.add(a.id);
      const fields = {
        containerId: [a.containerId ?? null, b.containerId ?? null],
        frameId: [a.frameId ?? null, b.frameId ?? null],
        startBinding: [a.startBinding?.elementId ?? null, b.startBinding?.elementId ?? null],
        endBinding: [a.endBinding?.elementId ?? null, b.endBinding?.elementId ?? null],
        boundElements: [refs(a), refs(b)],
      };
      for (const [field, [was, now]] of Object.entries(fields)) {
        if (was !== now) report.bindings.push({ id: a.id, field, before: String(was), after: String(now) });
      }
      if (a.type === "text") {
        const d = {
          dx: (b.x ?? 0) - (a.x ?? 0),
          dy: (b.y ?? 0) - (a.y ?? 0),
          dw: (b.width ?? 0) - (a.width ?? 0),
          dh: (b.height ?? 0) - (a.height ?? 0),
        };
        const delta = Math.max(...Object.values(d).map(Math.abs));
        if (!Number.isFinite(delta) || delta > 0.5) report.text.push({ id: a.id, text: String(a.text).slice(0, 40), ...d });
        report.maxTextDelta = Math.max(report.maxTextDelta, Number.isFinite(delta) ? delta : 1e9);
      }
    }
    return report;
  });

const fontsStatus = async () => {
  await document.fonts.ready;
  return [...document.fonts].map((f) => `${f.family}:${f.status}`);
};

window.ExcalidrawRender = {
  version: "excalidraw@0.18.1",
  whenReady: () => warmUp.then(() => true),
  job,
  png,
  svg,
  check,
  canvas,
  practice,
  practiced: () => practiced,
  fontsStatus,
};
