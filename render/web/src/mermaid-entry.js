// The Mermaid page's script: @excalidraw/mermaid-to-excalidraw (which runs Mermaid itself, laying the
// diagram out in this page's DOM) and Excalidraw's convertToExcalidrawElements, behind a JSON-in/
// JSON-out API the Go side calls with Runtime.evaluate. Bundled by ../build.mjs into dist/mermaid.js,
// apart from render.js so the render page stays small and loads fast.
//
// window.ExcalidrawMermaid:
//   whenReady()   resolves once Excalifont is loaded (labels are measured with it) and a first
//                 diagram was converted
//   convert(src)  {elements, files, type, image, fixes, fenced, source, ms}
//                 | {error: {code: "syntax"|"empty"|"convert", message, line, source, fixes}}
//
// A diagram Mermaid cannot parse comes back as {error} (the tab stays usable); a thrown exception
// means the tab is broken and the Go side replaces it.
import { parseMermaidToExcalidraw } from "@excalidraw/mermaid-to-excalidraw";
import mermaid from "mermaid";
import { convertToExcalidrawElements, exportToCanvas, FONT_FAMILY } from "@excalidraw/excalidraw";

window.EXCALIDRAW_ASSET_PATH = location.origin + "/";

// Mermaid lays nodes out around labels measured in its own font; measuring them in Excalifont too
// makes the boxes fit the labels Excalidraw draws. The same setting Excalidraw's dialog leaves at
// Mermaid's default, which makes long labels wrap inside their boxes.
const MERMAID_CONFIG = {
  securityLevel: "strict",
  suppressErrorRendering: true, // no "Syntax error" bomb SVG left in the DOM
  themeVariables: { fontFamily: "Excalifont, sans-serif" },
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

// ---- input clean-up: always safe, reported as fixes when they change something -----------------

// extract returns the diagram of a chat message or a model's argument: the content of the first
// ```mermaid fence (or of a bare ``` fence), else the whole text; and how many lines precede it in
// the input, so error lines can be given in the user's own numbering.
const extract = (src) => {
  let text = String(src).replace(/^\uFEFF/, "").replace(/\r\n?/g, "\n");
  const fixes = [];
  let offset = 0;
  let fenced = false;
  const lines = text.split("\n");
  const open = lines.findIndex((l, i) => {
    const m = /^[ \t]*(`{3,}|~{3,})[ \t]*([\w-]*)/.exec(l);
    // A fence labelled mermaid anywhere, or an unlabelled one opening the message.
    return m && (m[2].toLowerCase() === "mermaid" || (m[2] === "" && lines.slice(0, i).every((p) => !p.trim())));
  });
  // Slack's code blocks start right after the backticks and end on the last line:
  // "```flowchart TD\n  A --> B```".
  const inline = lines.findIndex((l) => {
    const m = /^[ \t]*(?:`{3,}|~{3,})[ \t]*([A-Za-z][\w-]*)/.exec(l);
    return m && KEYWORDS.some((k) => k.toLowerCase() === m[1].toLowerCase());
  });
  if (open < 0 && inline >= 0) {
    const mark = /^[ \t]*(`{3,}|~{3,})/.exec(lines[inline])[1];
    const body = [lines[inline].replace(/^[ \t]*(`{3,}|~{3,})[ \t]*/, ""), ...lines.slice(inline + 1)];
    let close = body.findIndex((l, i) => i > 0 && l.includes(mark));
    if (close < 0) close = body.length - 1;
    body[close] = body[close].slice(0, body[close].lastIndexOf(mark) >= 0 ? body[close].lastIndexOf(mark) : undefined);
    offset = inline;
    text = body.slice(0, close + 1).join("\n");
    fenced = true;
  } else if (open >= 0) {
    const mark = /^[ \t]*(`{3,}|~{3,})/.exec(lines[open])[1];
    let close = lines.findIndex((l, i) => i > open && l.trim() === mark);
    if (close < 0) close = lines.length;
    offset = open + 1;
    text = lines.slice(open + 1, close).join("\n");
    fenced = true;
  }
  // Leading blank lines shift every line number; count them into the offset instead.
  const lead = /^(?:[ \t]*\n)+/.exec(text);
  if (lead) {
    offset += lead[0].split("\n").length - 1;
    text = text.slice(lead[0].length);
  }
  text = text.replace(/[ \t]+$/gm, "").replace(/\n+$/, "");
  // Zero-width and no-break spaces pasted from chat apps break Mermaid's lexer.
  const cleaned = text.replace(/[\u200B-\u200D\u2060]/g, "").replace(/\u00A0/g, " ");
  if (cleaned !== text) fixes.push("removed invisible characters (zero-width or no-break spaces)");
  return { text: cleaned, offset, fixes, fenced };
};

// Diagram keywords as Mermaid's detectors spell them (they are case-sensitive).
const KEYWORDS = [
  "flowchart", "graph", "sequenceDiagram", "classDiagram", "stateDiagram-v2", "stateDiagram", "erDiagram",
  "journey", "gantt", "pie", "quadrantChart", "requirementDiagram", "gitGraph", "C4Context", "C4Container",
  "C4Component", "C4Dynamic", "C4Deployment", "mindmap", "timeline", "sankey-beta", "xychart-beta",
  "block-beta", "packet-beta", "architecture-beta", "kanban", "radar-beta", "treemap-beta",
];

// ---- repairs tried only when Mermaid refuses the text (after Excalidraw's text-to-diagram) -------

const lineOf = (message) => {
  const m = /line (\d+)/i.exec(message);
  return m ? Number(m[1]) : null;
};

const withLine = (lines, i, fn) => {
  if (i < 0 || i >= lines.length) return null;
  const next = fn(lines[i]);
  if (next === lines[i]) return null;
  const out = lines.slice();
  out[i] = next;
  return out.join("\n");
};

// A word or a stray , ; : after a node's closing bracket: `A[Start]x` or `B(Go);`.
const stripAfterShape = (line) =>
  line.replace(/^(.*(?:\[[^\]]*\]|\([^)]*\)|\{[^}]*\}|"[^"]*"))(?:[A-Za-z]+|[,;:])\s*$/, "$1");
// `-->|label|> B`: an arrowhead typed after the edge label.
const dropHeadAfterLabel = (s) => s.replace(/(\|[^|\n]+\|)\s*>\s*(?=[\w("[{'`])/g, "$1 ");
// `A[Call f(x)]`: brackets inside a label end the shape early unless the label is quoted.
const quoteLabels = (line) =>
  line.replace(/(\b[\w-]+)(\[|\(|\{)([^"\n]*?[()[\]{}][^"\n]*?)(\]|\)|\})(?=\s*(?:-|&|$|:::|;|\|))/g, (m, id, open, label, close) => {
    const pair = { "[": "]", "(": ")", "{": "}" }[open];
    if (pair !== close) return m;
    return `${id}${open}"${label.replace(/"/g, "'")}"${close}`;
  });
// A keyword in the wrong case (`sequencediagram`, `Flowchart TD`) on the first line.
const keywordCase = (text) =>
  text.replace(/^(\s*(?:%%[^\n]*\n\s*)*)([A-Za-z][\w-]*)/, (m, pre, word) => {
    const k = KEYWORDS.find((k) => k.toLowerCase() === word.toLowerCase());
    return k && k !== word ? pre + k : m;
  });
// Blocks opened and never closed with `end`.
const appendEnds = (text) => {
  const open = (text.match(/^\s*(?:subgraph|loop|alt|opt|par|critical|break|rect|box)\b/gm) || []).length;
  const closed = (text.match(/^\s*end\s*$/gm) || []).length;
  return open > closed ? text + "\n" + Array(open - closed).fill("end").join("\n") : null;
};
// `class Shape <<interface>>`: newer Mermaid takes the annotation on the class line; 11.12 wants it
// on a line of its own.
const annotationLine = (text) =>
  text.replace(/^(\s*)class\s+([\w-]+)\s*(<<[^>\n]+>>)\s*$/gm, "$1class $2\n$1$3 $2");
const smartQuotes = (text) => text.replace(/[\u201C\u201D\u201E\u00AB\u00BB]/g, '"').replace(/[\u2018\u2019\u201A]/g, "'");
// Mermaid refuses to deactivate a participant that is not active: drop the last such line.
const dropDeactivate = (text, who) => {
  const lines = text.split("\n");
  const re = new RegExp(`^\\s*deactivate\\s+${who.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\s*$`);
  for (let i = lines.length - 1; i >= 0; i--) {
    if (re.test(lines[i])) return lines.filter((_, j) => j !== i).join("\n");
  }
  return null;
};

const candidates = (text, message) => {
  const out = [];
  const add = (fix, t) => {
    if (t && t !== text && !out.some((c) => c.text === t)) out.push({ fix, text: t });
  };
  add("wrote the diagram keyword in Mermaid's spelling", keywordCase(text));
  add("replaced typographic quotes with plain ones", smartQuotes(text));
  const inactive = /inactivate an inactive participant \(([^)]+)\)/.exec(message);
  if (inactive) add(`removed a deactivate of ${inactive[1]}, who was not active`, dropDeactivate(text, inactive[1]));
  const lines = text.split("\n");
  const line = lineOf(message);
  if (line != null) {
    for (const i of [line - 1, line - 2, line]) {
      add(`removed stray characters after a shape on line ${i + 1}`, withLine(lines, i, stripAfterShape));
      add(`quoted a label containing brackets on line ${i + 1}`, withLine(lines, i, quoteLabels));
    }
  }
  add("removed a '>' typed after an edge label", dropHeadAfterLabel(text));
  add("moved a class's <<annotation>> to a line of its own", annotationLine(text));
  add("added the missing 'end' of a block", appendEnds(text));
  // Excalidraw's dialog retries once with double quotes turned into single ones.
  add("replaced double quotes with single quotes", text.replace(/"/g, "'"));
  return out;
};

const parseError = async (text) => {
  try {
    const r = await mermaid.parse(text);
    return r ? null : { message: "Mermaid did not recognise the diagram" };
  } catch (err) {
    const message = String((err && err.message) || err);
    let line = lineOf(message);
    if (line == null && err && err.hash && err.hash.loc) line = err.hash.loc.first_line;
    return { message, line };
  }
};

// repair tries the candidates the way Excalidraw's dialog does: each is checked with Mermaid's
// parser and the first one it accepts is kept. A candidate that moves the error further down is
// kept too, so two different mistakes can both be fixed (three rounds at most).
const repair = async (text, first) => {
  let err = first;
  const fixes = [];
  for (let round = 0; round < 3 && err; round++) {
    let progress = null;
    for (const c of candidates(text, err.message)) {
      const e = await parseError(c.text);
      if (!e) return { text: c.text, err: null, fixes: [...fixes, c.fix] };
      if (!progress && err.line != null && e.line != null && e.line > err.line) progress = { c, e };
    }
    if (!progress) break;
    text = progress.c.text;
    err = progress.e;
    fixes.push(progress.c.fix);
  }
  // Nothing worked: report the mistake as the user wrote it, not one left in a half-repaired text.
  return { text, err: first, fixes: [] };
};

// ---- the skeleton Mermaid's layout produced, made fit for Excalidraw ------------------------------

// uniqueIds renames repeated ids: mermaid-to-excalidraw names an edge after its two ends, so two
// edges between the same nodes share an id, and convertToExcalidrawElements drops the second.
const uniqueIds = (skeleton) => {
  const seen = new Set();
  for (const e of skeleton) {
    if (!e.id) continue;
    let id = e.id;
    for (let n = 2; seen.has(id); n++) id = `${e.id}_${n}`;
    e.id = id;
    seen.add(id);
  }
};

const ctx2d = document.createElement("canvas").getContext("2d");
const wordWidth = (text, size) => {
  ctx2d.font = `${size}px Excalifont, Xiaolai, sans-serif`;
  let w = 0;
  for (const word of String(text).split(/\s+/)) w = Math.max(w, ctx2d.measureText(word).width);
  return w;
};

// Excalidraw wraps a label to the inner width of its shape (textElement.ts getMaxContainerWidth,
// BOUND_TEXT_PADDING = 5): the full width of a rectangle, about half of a diamond, width/√2 of an
// ellipse. Mermaid sizes its shapes for its own label layout, so a word can end up cut in two
// ("Choic|e"). fitLabels widens such shapes about their centre until the longest word fits, and
// moves the ends of the arrows bound to them onto the new border (scaling about the centre maps
// the border of a rectangle, diamond or ellipse onto the border of the wider one).
const fitLabels = (skeleton) => {
  const scaled = new Map();
  for (const e of skeleton) {
    if (!e.label || !e.label.text || !["rectangle", "diamond", "ellipse"].includes(e.type)) continue;
    const size = e.label.fontSize || 20;
    const need = Math.ceil(wordWidth(e.label.text, size)) + 2 * 5 + 2;
    const width =
      e.type === "diamond" ? 2 * need : e.type === "ellipse" ? Math.ceil(need * Math.SQRT2) : need;
    if (!(width > e.width)) continue;
    const cx = e.x + e.width / 2;
    scaled.set(e.id, { cx, cy: e.y + e.height / 2, sx: width / e.width });
    e.x = cx - width / 2;
    e.width = width;
  }
  for (const a of skeleton) {
    if (a.type !== "arrow" || !Array.isArray(a.points) || a.points.length < 2) continue;
    const abs = a.points.map(([px, py]) => [a.x + px, a.y + py]);
    const move = (i, id) => {
      const s = id && scaled.get(id);
      if (s) abs[i] = [s.cx + (abs[i][0] - s.cx) * s.sx, abs[i][1]];
    };
    move(0, a.start && a.start.id);
    move(abs.length - 1, a.end && a.end.id);
    [a.x, a.y] = abs[0];
    a.points = abs.map(([px, py]) => [px - a.x, py - a.y]);
  }
};

// centreArrowLabels puts each arrow's label on the arrow's middle, where the editor draws it
// (LinearElementEditor.getBoundTextElementPosition: the middle point of an odd number of points,
// else the middle of the middle segment). convertToExcalidrawElements leaves it near the start,
// and exports draw text where it is stored.
const centreArrowLabels = (elements) => {
  const byId = new Map(elements.map((e) => [e.id, e]));
  for (const t of elements) {
    const a = t.type === "text" && t.containerId && byId.get(t.containerId);
    if (!a || a.type !== "arrow" || !Array.isArray(a.points) || a.points.length < 2) continue;
    const n = a.points.length;
    let mx, my;
    if (n % 2 === 1) {
      [mx, my] = a.points[Math.floor(n / 2)];
    } else {
      const [p, q] = [a.points[n / 2 - 1], a.points[n / 2]];
      [mx, my] = [(p[0] + q[0]) / 2, (p[1] + q[1]) / 2];
    }
    t.x = a.x + mx - t.width / 2;
    t.y = a.y + my - t.height / 2;
  }
};

const convert = async (src) => {
  const t0 = performance.now();
  await warmUp;
  const input = extract(src);
  const fixes = [...input.fixes];
  let text = input.text;
  if (!text.trim()) return { error: { code: "empty", message: "the Mermaid diagram is empty", source: text, fixes } };
  mermaid.initialize({ startOnLoad: false, ...MERMAID_CONFIG });
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
    out = await parseMermaidToExcalidraw(text, MERMAID_CONFIG);
  } catch (e) {
    return { error: { code: "convert", message: String((e && e.message) || e), source: text, fixes } };
  }
  const files = out.files || {};
  uniqueIds(out.elements);
  fitLabels(out.elements);
  let elements;
  try {
    // Mermaid's node ids (A, B, …) are kept: they are the names the model and the user know.
    elements = convertToExcalidrawElements(out.elements, { regenerateIds: false });
    centreArrowLabels(elements);
  } catch (e) {
    return { error: { code: "convert", message: String((e && e.message) || e), source: text, fixes } };
  }
  const image = elements.length > 0 && elements.every((e) => e.type === "image") && Object.keys(files).length > 0;
  return { elements, files, type, image, fixes, fenced: input.fenced, source: text, ms: performance.now() - t0 };
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
