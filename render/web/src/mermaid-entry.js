// The Mermaid page's script: @excalidraw/mermaid-to-excalidraw (which runs Mermaid itself, laying the
// diagram out in this page's DOM) and Excalidraw's convertToExcalidrawElements, behind a JSON-in/
// JSON-out API the Go side calls with Runtime.evaluate. Bundled by ../build.mjs into dist/mermaid.js,
// apart from render.js so the render page stays small and loads fast.
//
// window.ExcalidrawMermaid:
//   whenReady()   resolves once Excalifont is loaded (labels are measured with it) and a first
//                 diagram was converted
//   convert(src)  {elements, files, type, image, fixes, fenced, source, routes, ms}
//                 | {error: {code: "syntax"|"empty"|"convert", message, line, source, fixes}}
//
// A diagram Mermaid cannot parse comes back as {error} (the tab stays usable); a thrown exception
// means the tab is broken and the Go side replaces it.
import { parseMermaidToExcalidraw } from "@excalidraw/mermaid-to-excalidraw";
import mermaid from "mermaid";
import { convertToExcalidrawElements, exportToCanvas, FONT_FAMILY, restoreElements } from "@excalidraw/excalidraw";
import { extract, parseError, repair } from "./mermaid-repair.js";
import { cleanSkeleton, fitLabels, flowchartArrows, mount, placeTexts, sequenceParts, stateRoutes, takeSvg, uniqueIds } from "./mermaid-layout.js";

window.EXCALIDRAW_ASSET_PATH = location.origin + "/";

// Mermaid lays the diagram out around labels measured in Excalifont at the size Excalidraw draws
// them (20 px), so shapes and the room left for edge labels fit what Excalidraw shows. This is
// the configuration mermaid-to-excalidraw merges its own defaults into, written out whole: the
// page initialises Mermaid with it too (to parse), and with anything less the two would disagree
// on the font size and the curve from the second diagram on. Edges keep Mermaid's own curve.
const FONT_SIZE = 20;
const MERMAID_CONFIG = {
  startOnLoad: false,
  securityLevel: "strict",
  suppressErrorRendering: true, // no "Syntax error" bomb SVG left in the DOM
  maxEdges: 500,
  maxTextSize: 50000,
  flowchart: { curve: "basis", subGraphTitleMargin: { top: 0, bottom: 10 } },
  fontSize: `${FONT_SIZE}px`,
  themeVariables: { fontFamily: "Excalifont, Xiaolai, sans-serif", fontSize: `${FONT_SIZE}px` },
};

// Excalidraw registers its FontFaces lazily inside the exporters; exporting one text registers and
// loads Excalifont (the labels' font) before the first diagram is measured.
const warmUp = (async () => {
  const elements = convertToExcalidrawElements([
    { type: "text", x: 0, y: 0, text: "Warm up ABC abc 0123 .,;:", fontFamily: FONT_FAMILY.Excalifont },
  ]);
  await exportToCanvas({ elements, files: {}, getDimensions: () => ({ width: 1, height: 1, scale: 0.01 }) });
  await document.fonts.load('20px "Excalifont"', "ABC abc");
  await document.fonts.ready;
})();

// loadFonts loads the font files the diagram's characters need before anything is measured:
// Excalifont's Cyrillic and Greek parts and the CJK chunks of Xiaolai, its fallback, load only
// when a text asks for them (the warm-up covered Latin). Mermaid measures with them too.
const loadFonts = async (text) => {
  if (!/[^\x00-\x7e]/.test(text)) return;
  await Promise.all([document.fonts.load(`${FONT_SIZE}px "Excalifont"`, text), document.fonts.load(`${FONT_SIZE}px Xiaolai`, text)]);
};

// routesOf reads the routes of the arrows from Mermaid's SVG (flowcharts get their arrows rebuilt
// from Mermaid's edges on the way).
// For sequence diagrams it moves the labels of self-messages beside their loops and adds the
// autonumber badges (texts: where their texts go after conversion).
const routesOf = async (skeleton, text, type, svg) => {
  if (!svg || !/^(flowchart|graph|state|sequence)/i.test(type)) return { routes: {}, texts: {} };
  const { root, remove } = mount(svg);
  try {
    if (!root) return { routes: {}, texts: {} };
    if (type === "sequence") return { routes: {}, texts: sequenceParts(skeleton, root) };
    const routes = /^state/i.test(type) ? await stateRoutes(skeleton, text, root) : await flowchartArrows(skeleton, text, root, FONT_SIZE);
    return { routes, texts: {} };
  } finally {
    remove();
  }
};

const convert = async (src) => {
  const t0 = performance.now();
  await warmUp;
  const input = extract(src);
  const fixes = [...input.fixes];
  let text = input.text;
  if (!text.trim()) return { error: { code: "empty", message: "the Mermaid diagram is empty", source: text, fixes } };
  await loadFonts(text);
  mermaid.initialize(structuredClone(MERMAID_CONFIG));
  const err = await parseError(text);
  if (err) {
    const r = await repair(text, err);
    if (r.err) {
      return {
        error: {
          code: "syntax",
          message: r.err.message,
          line: r.err.line == null ? null : r.err.line + input.offset,
          // The text as the user gave it, so the Go side can quote the failing line.
          source: input.text,
          offset: input.offset,
          fixes,
        },
      };
    }
    text = r.text;
    fixes.push(...r.fixes);
  }
  const type = (await mermaid.parse(text)).diagramType;
  let out;
  try {
    out = await parseMermaidToExcalidraw(text, structuredClone(MERMAID_CONFIG));
  } catch (e) {
    return { error: { code: "convert", message: String((e && e.message) || e), source: text, fixes } };
  }
  const files = out.files || {};
  const svg = takeSvg();
  let elements;
  let routes;
  try {
    cleanSkeleton(out.elements);
    const read = await routesOf(out.elements, text, type, svg);
    routes = read.routes;
    uniqueIds(out.elements);
    fitLabels(out.elements);
    // Mermaid's node ids (A, B, …) are kept: they are the names the model and the user know.
    elements = convertToExcalidrawElements(out.elements, { regenerateIds: false });
    // Loaded the way the editor loads a file, so labels are wrapped as it wraps them (an arrow's
    // to 70% of its width: Mermaid may give a message less).
    elements = restoreElements(elements, null, { refreshDimensions: true, repairBindings: true });
    placeTexts(elements, read.texts);
  } catch (e) {
    return { error: { code: "convert", message: String((e && e.message) || e), source: text, fixes } };
  }
  const image = elements.length > 0 && elements.every((e) => e.type === "image") && Object.keys(files).length > 0;
  return { elements, files, type, image, fixes, fenced: input.fenced, source: text, routes, ms: performance.now() - t0 };
};

const guard = async (src) => {
  try {
    return await convert(src);
  } catch (e) {
    // Mermaid throws for its own reasons (a diagram it can parse but not lay out): the tab is fine.
    return { error: { code: "convert", message: String((e && e.message) || e), source: String(src), fixes: [] } };
  }
};

// The first conversion of a page sets Mermaid up (its config, the flowchart parser, dagre) and
// takes several times longer than the next: pay it while the tab opens, not in the first request.
let ready = null;
const whenReady = () =>
  (ready ||= warmUp.then(() => guard("flowchart LR\n  a[Warm] --> b{Up}")).then(() => true));

window.ExcalidrawMermaid = {
  version: "mermaid-to-excalidraw@2.2.2",
  whenReady,
  convert: guard,
};
