// The render page's script: Excalidraw's own export code behind a small JSON-in/JSON-out API that
// the Go side calls with Runtime.evaluate. Bundled by ../build.mjs into dist/render.js.
//
// window.ExcalidrawRender:
//   whenReady()          resolves once every font family is loaded (see warmUp)
//   png(doc, opts)       {png: base64, width, height, scale, bytes, ms} | {error: {code, message}}
//   svg(doc, opts)       {svg, ms} | {error}
//   check(doc)           what Excalidraw's restore() changes in the scene | {error}
//   canvas(doc, opts)    an HTMLCanvasElement with the picture (benchmarks only)
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
// ../shared/reference/excalidraw.md §4). Arrow labels keep their centre.
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

const png = (doc, opts) =>
  guard(async () => {
    const t0 = performance.now();
    const scene = await prepare(doc);
    const frame = frameFor(scene.elements, opts);
    let scale = opts.scale;
    let dims;
    for (let attempt = 0; ; attempt++) {
      const blob = await exportToBlob({
        elements: scene.elements,
        appState: exportAppState(scene, opts),
        files: scene.files,
        mimeType: "image/png",
        exportPadding: opts.padding,
        exportingFrame: frame,
        // exportToBlob ignores appState.exportScale without maxWidthOrHeight; getDimensions is
        // where the scale takes effect, and where width + height is capped for chat.
        getDimensions: (w, h) => {
          const s = Math.min(scale, opts.maxSideSum > 0 ? opts.maxSideSum / (w + h) : Infinity);
          dims = { width: Math.max(1, Math.floor(w * s)), height: Math.max(1, Math.floor(h * s)), scale: s };
          return dims;
        },
      });
      if (opts.maxBytes > 0 && blob.size > opts.maxBytes && attempt < 4) {
        scale = dims.scale * Math.sqrt(opts.maxBytes / blob.size) * 0.95;
        continue;
      }
      const b64 = await blobToBase64(blob);
      return { png: b64, width: dims.width, height: dims.height, scale: dims.scale, bytes: blob.size, ms: performance.now() - t0 };
    }
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
    getDimensions: (w, h) => ({ width: Math.round(w * opts.scale), height: Math.round(h * opts.scale), scale: opts.scale }),
  });
};

const svg = (doc, opts) =>
  guard(async () => {
    const t0 = performance.now();
    const scene = await prepare(doc);
    const el = await exportToSvg({
      elements: scene.elements,
      appState: { ...exportAppState(scene, opts), exportScale: 1 },
      files: scene.files,
      exportPadding: opts.padding,
      exportingFrame: opts.viewport ? frameFor(scene.elements, { ...opts, maxAspect: 0 }) : null,
    });
    return { svg: el.outerHTML, ms: performance.now() - t0 };
  });

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
  png,
  svg,
  check,
  canvas,
  fontsStatus,
};
