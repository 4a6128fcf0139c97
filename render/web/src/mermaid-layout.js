// What the Mermaid page adds to mermaid-to-excalidraw's skeleton: labels as plain text, the arrows
// of flowcharts rebuilt from Mermaid's own edges (self-loops and all, invisible links left out),
// and for every arrow the route Mermaid drew, read from its SVG, for the Go side to follow
// (diagram/mermaid: Reroute).
import mermaid from "mermaid";
import { getText } from "@excalidraw/mermaid-to-excalidraw/dist/converter/helpers.js";
import { encodeEntities, entityCodesToText } from "@excalidraw/mermaid-to-excalidraw/dist/utils.js";

// ---- labels as text --------------------------------------------------------------------------------

// Inline HTML Mermaid renders in labels; anything else in angle brackets (`List<int>`, `<<interface>>`)
// is text.
const INLINE = "a|abbr|b|big|cite|code|del|em|font|i|img|ins|kbd|mark|q|s|small|span|strike|strong|sub|sup|tt|u|var|wbr";
const BLOCK = "p|div|li|ul|ol|h[1-6]|tr|table|center|blockquote|pre|hr";
const RE_BR = /<br\s*\/?>/gi;
const RE_LINK = /<a\b([^>]*)>([\s\S]*?)<\/a\s*>/gi;
const RE_HREF = /\bhref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/i;
const RE_BLOCK = new RegExp(`</?(?:${BLOCK})\\b[^>]*>`, "gi");
const RE_INLINE = new RegExp(`</?(?:${INLINE})\\b[^>]*>`, "gi");
const decoder = document.createElement("textarea");

// cleanText turns a Mermaid label into what Mermaid shows: <br> and a typed \n are line breaks,
// the text of an <a href> is kept and its address returned as the link, other markup is dropped,
// entities are decoded, and spaces around line breaks go.
export const cleanText = (raw) => {
  let link = null;
  let s = String(raw ?? "");
  // Mermaid's own entities (#quot;, #59;, #9829;), which mermaid-to-excalidraw decodes in
  // flowcharts only.
  if (/#\w+;|\uFB02\u00B0/.test(s)) s = entityCodesToText(s);
  s = s.replace(RE_BR, "\n").replace(/\\n/g, "\n");
  s = s.replace(RE_LINK, (m, attrs, inner) => {
    const h = RE_HREF.exec(attrs);
    if (h && link == null) link = (h[1] ?? h[2] ?? h[3]).trim();
    return inner;
  });
  s = s.replace(RE_BLOCK, "\n").replace(RE_INLINE, "");
  if (s.includes("&")) {
    decoder.innerHTML = s.replace(/</g, "&lt;");
    s = decoder.value;
  }
  s = s
    .split("\n")
    .map((l) => l.replace(/[ \t\u00a0]+/g, " ").trim())
    .join("\n")
    .replace(/^\n+|\n+$/g, "");
  return { text: s, link };
};

// cleanSkeleton cleans every text of a skeleton in place; a label's link goes to its element
// unless the element has one (Mermaid's `click X href`).
export const cleanSkeleton = (skeleton) => {
  for (const e of skeleton) {
    for (const holder of [e.label, e.type === "text" ? e : null]) {
      if (!holder || typeof holder.text !== "string") continue;
      const { text, link } = cleanText(holder.text);
      holder.text = text;
      if (link && !e.link) e.link = link;
    }
  }
};

// ---- Mermaid's SVG -----------------------------------------------------------------------------------

// Mermaid's last rendered SVG: mermaid-to-excalidraw renders into a container it removes again, so
// the markup is kept as mermaid.render returns it (the default export is a plain object whose
// render the converter looks up at call time).
let lastSvg = null;
const render = mermaid.render;
mermaid.render = async (...args) => {
  const out = await render(...args);
  lastSvg = out && out.svg;
  return out;
};
export const takeSvg = () => {
  const s = lastSvg;
  lastSvg = null;
  return s;
};

// mount puts the SVG off screen (transforms and path data need no layout) and returns its root.
export const mount = (svg) => {
  const box = document.createElement("div");
  box.setAttribute("style", "position: fixed; left: -99999px; top: -99999px; opacity: 0;");
  box.innerHTML = svg;
  document.body.appendChild(box);
  return { root: box.querySelector("svg"), remove: () => box.remove() };
};

// toRoot is the matrix from el's coordinates to the SVG's own (the coordinates the skeleton uses:
// mermaid-to-excalidraw adds up the translations of the groups around each node).
const toRoot = (el, root) => {
  let m = new DOMMatrix();
  for (let n = el; n && n !== root; n = n.parentElement) {
    const t = n.transform && n.transform.baseVal && n.transform.baseVal.consolidate();
    if (t) m = DOMMatrix.fromMatrix(t.matrix).multiply(m);
  }
  return m;
};
const matrixOf = (m) => [m.a, m.b, m.c, m.d, m.e, m.f].map((v) => Math.round(v * 1e4) / 1e4);

const byAttr = (root, sel, attr, value) =>
  Array.from(root.querySelectorAll(sel)).find((el) => el.getAttribute(attr) === value) || null;

// route is what the Go side needs to draw one edge as Mermaid drew it: the path data of its
// pieces (a self-loop is three), each with its matrix, and where Mermaid put its label.
const route = (root, pathIds, labelId) => {
  const paths = pathIds.map((id) => byAttr(root, "path[data-edge]", "data-id", id) || byAttr(root, "path", "id", id));
  if (paths.some((p) => !p || !p.getAttribute("d"))) return null;
  const out = { paths: paths.map((p) => ({ d: p.getAttribute("d"), m: matrixOf(toRoot(p, root)) })) };
  const lab = labelId && byAttr(root, ".edgeLabel > .label", "data-id", labelId);
  if (lab && lab.textContent.trim()) {
    const c = toRoot(lab.parentElement, root).transformPoint(new DOMPoint(0, 0));
    out.label = [c.x, c.y];
  }
  return out;
};

// polyline is the layout's own points of a route (data-points), for the skeleton's provisional
// arrow; the Go side replaces it with the drawn path.
const polyline = (root, pathIds) => {
  const pts = [];
  for (const id of pathIds) {
    const p = byAttr(root, "path[data-edge]", "data-id", id);
    if (!p) continue;
    const m = toRoot(p, root);
    let raw = [];
    try {
      raw = JSON.parse(atob(p.getAttribute("data-points") || "")) || [];
    } catch {
      raw = [];
    }
    for (const q of raw) {
      if (Number.isFinite(q?.x) && Number.isFinite(q?.y)) {
        const r = m.transformPoint(new DOMPoint(q.x, q.y));
        pts.push([r.x, r.y]);
      }
    }
  }
  return pts;
};

const loopPieces = (node) => [`${node}-cyclic-special-1`, `${node}-cyclic-special-mid`, `${node}-cyclic-special-2`];

const ARROWHEADS = {
  arrow_point: { startArrowhead: null, endArrowhead: "arrow" },
  arrow_open: { startArrowhead: null, endArrowhead: null },
  arrow_circle: { startArrowhead: null, endArrowhead: "circle" },
  arrow_cross: { startArrowhead: null, endArrowhead: "bar" },
  double_arrow_point: { startArrowhead: "arrow", endArrowhead: "arrow" },
  double_arrow_circle: { startArrowhead: "circle", endArrowhead: "circle" },
  double_arrow_cross: { startArrowhead: "bar", endArrowhead: "bar" },
};

// cssStyle reads `stroke:#f00,stroke-width:2px` lists (Mermaid keeps one declaration per entry).
const cssStyle = (list) => {
  const out = {};
  for (const entry of list || []) {
    for (const decl of String(entry).split(/[;,](?![^(]*\))/)) {
      const i = decl.indexOf(":");
      if (i > 0) out[decl.slice(0, i).trim().toLowerCase()] = decl.slice(i + 1).replace(/!important/i, "").trim();
    }
  }
  return out;
};

const uniqueId = (seen, base) => {
  let id = base;
  for (let n = 2; seen.has(id); n++) id = `${base}_${n}`;
  seen.add(id);
  return id;
};

// flowchartArrows replaces mermaid-to-excalidraw's arrows with one per Mermaid edge: `~~~` links
// only shaped the layout and get none, a self-loop gets one through Mermaid's loop, an edge's
// linkStyle gives its colour and width. Labels are cleaned like the rest. It returns the routes
// by arrow id.
export const flowchartArrows = async (skeleton, text, root, fontSize) => {
  const db = (await mermaid.mermaidAPI.getDiagramFromText(encodeEntities(text))).db;
  const edges = db.getEdges() || [];
  const subgraphs = new Set((db.getSubGraphs() || []).map((s) => s.id));
  const shapes = new Map(skeleton.filter((e) => e.id && e.type !== "arrow").map((e) => [e.id, e]));
  const parentOf = (id) => {
    const g = shapes.get(id)?.groupIds || [];
    return (subgraphs.has(id) ? g[1] : g[0]) || null;
  };
  const kept = skeleton.filter((e) => e.type !== "arrow");
  const seen = new Set(kept.map((e) => e.id).filter(Boolean));
  const routes = {};
  const defaults = edges.defaultStyle || [];
  for (const edge of edges) {
    if (edge.stroke === "invisible") continue;
    const from = shapes.get(edge.start);
    const to = shapes.get(edge.end);
    if (!from || !to) continue;
    const self = edge.start === edge.end;
    const pieces = self ? loopPieces(edge.start) : [edge.id];
    const r = route(root, pieces, self ? pieces[1] : edge.id);
    const pts = polyline(root, pieces);
    if (!r || pts.length < 2) continue;
    const style = cssStyle(edge.style && edge.style.length ? edge.style : defaults);
    const labelText = edge.text ? cleanText(entityCodesToText(getText({ ...edge, text: edge.text }))) : null;
    const parent = parentOf(edge.start);
    const groupIds = parent && parent === parentOf(edge.end) ? shapes.get(parent.replace(/^subgraph_group_/, ""))?.groupIds || [] : [];
    const id = uniqueId(seen, `${edge.start}_${edge.end}`);
    const [x0, y0] = pts[0];
    const arrow = {
      id,
      type: "arrow",
      x: x0,
      y: y0,
      points: pts.map(([x, y]) => [x - x0, y - y0]),
      groupIds,
      strokeWidth: style["stroke-width"] ? parseFloat(style["stroke-width"]) || 2 : edge.stroke === "thick" ? 4 : 2,
      strokeStyle: edge.stroke === "dotted" || style["stroke-dasharray"] ? "dashed" : "solid",
      roundness: { type: 2 },
      ...(ARROWHEADS[edge.type] || ARROWHEADS.arrow_point),
      start: { id: edge.start },
      end: { id: edge.end },
    };
    if (style.stroke) arrow.strokeColor = style.stroke;
    if (labelText && labelText.text) {
      arrow.label = { text: labelText.text, fontSize, groupIds, ...(style.color ? { strokeColor: style.color } : {}) };
      if (labelText.link) arrow.link = labelText.link;
    }
    kept.push(arrow);
    routes[id] = r;
  }
  labelColours(kept, db);
  for (const e of kept) {
    // mermaid-to-excalidraw shrinks a cylinder's font for the label's length with its <br>s
    // still in; Mermaid sized the shape for the lines at the full size.
    if (e.label && e.label.fontSize && e.label.fontSize < fontSize && shapes.has(e.id) && !subgraphs.has(e.id)) e.label.fontSize = fontSize;
  }
  // Subgraph titles one size smaller (Excalidraw's S): Mermaid leaves 25 px between nested
  // frames, which a 20 px title and its padding do not fit.
  const titleSize = 16;
  for (const e of kept) if (subgraphs.has(e.id) && e.label) e.label.fontSize = titleSize;
  clearTitles(kept, subgraphs, titleSize);
  skeleton.length = 0;
  skeleton.push(...kept);
  return routes;
};

// clearTitles moves the top of a subgraph down when the title of the subgraph around it would
// reach it (a title needs its line and Excalidraw's padding), never so far that its own title
// would reach what is inside it.
const clearTitles = (skeleton, subgraphs, fontSize) => {
  const room = Math.ceil(fontSize * 1.25) + 2 * 5;
  const frames = skeleton.filter((e) => subgraphs.has(e.id));
  const inFrame = (f) => skeleton.filter((e) => e !== f && (e.groupIds || []).includes(`subgraph_group_${f.id}`));
  // Outer frames first: a frame's parent is the frame named by its second group id.
  frames.sort((a, b) => (a.groupIds || []).length - (b.groupIds || []).length);
  for (const f of frames) {
    const parent = frames.find((p) => `subgraph_group_${p.id}` === (f.groupIds || [])[1]);
    if (!parent) continue;
    const need = parent.y + room - f.y;
    if (need <= 0) continue;
    const inner = inFrame(f);
    const top = inner.length ? Math.min(...inner.map((e) => e.y)) : f.y + f.height;
    const shift = Math.min(need, top - f.y - room);
    if (shift > 0) {
      f.y += shift;
      f.height -= shift;
    }
  }
};

// labelColours gives node labels Mermaid's text colour: the `color` of their classDef or style, or
// Excalidraw's default. Left alone, Excalidraw paints a label in its shape's stroke colour.
const labelColours = (skeleton, db) => {
  const classes = db.getClasses ? db.getClasses() : new Map();
  const vertices = db.getVertices ? db.getVertices() : new Map();
  const colourOf = (styles, classIds) => {
    let c = null;
    for (const cls of ["default", ...(classIds || [])]) {
      const def = classes instanceof Map ? classes.get(cls) : null;
      if (!def) continue;
      const s = cssStyle([...(def.styles || []), ...(def.textStyles || [])]);
      if (s.color) c = s.color;
    }
    const own = cssStyle(styles);
    return own.color || c;
  };
  const subgraphs = new Map((db.getSubGraphs() || []).map((s) => [s.id, s]));
  for (const e of skeleton) {
    if (!e.label || e.type === "arrow" || !e.id) continue;
    const v = vertices instanceof Map ? vertices.get(e.id) : null;
    const g = subgraphs.get(e.id);
    if (!v && !g) continue;
    const c = v ? colourOf(v.styles, v.classes) : colourOf(g.styles || [], g.classes);
    e.label.strokeColor = c || "#1e1e1e";
  }
};

// stateRoutes finds the route of every state transition mermaid-to-excalidraw drew and adds the
// self-transitions it leaves out (Mermaid draws them as three pieces around the state).
export const stateRoutes = async (skeleton, text, root) => {
  const db = (await mermaid.mermaidAPI.getDiagramFromText(encodeEntities(text))).db;
  const { edges } = db.getData();
  const arrows = new Map(skeleton.filter((e) => e.type === "arrow" && e.id).map((e) => [e.id, e]));
  const shapes = new Set(skeleton.filter((e) => e.id && e.type !== "arrow").map((e) => e.id));
  const seen = new Set(skeleton.map((e) => e.id).filter(Boolean));
  const routes = {};
  for (const edge of edges || []) {
    const self = edge.start === edge.end;
    const pieces = self ? loopPieces(edge.start) : [edge.id];
    const r = route(root, pieces, self ? pieces[1] : edge.id);
    if (!r) continue;
    let a = arrows.get(edge.id);
    if (!a && self && shapes.has(edge.start)) {
      const pts = polyline(root, pieces);
      if (pts.length < 2) continue;
      const [x0, y0] = pts[0];
      const label = cleanText(entityCodesToText(edge.label || "")).text;
      a = {
        id: uniqueId(seen, edge.id),
        type: "arrow",
        x: x0,
        y: y0,
        points: pts.map(([x, y]) => [x - x0, y - y0]),
        strokeColor: "#000",
        strokeWidth: 2,
        strokeStyle: "solid",
        endArrowhead: "triangle",
        roundness: { type: 2 },
        start: { id: edge.start },
        end: { id: edge.end },
        ...(label ? { label: { text: label, fontSize: 16 } } : {}),
      };
      skeleton.push(a);
    }
    if (a) routes[a.id] = r;
  }
  return routes;
};

// ---- sequence diagrams ------------------------------------------------------------------------

// boxOf is el's bounding box in the SVG's own coordinates.
const boxOf = (el, root) => {
  const b = el.getBBox();
  const m = toRoot(el, root);
  const p = m.transformPoint(new DOMPoint(b.x, b.y));
  const q = m.transformPoint(new DOMPoint(b.x + b.width, b.y + b.height));
  return { x0: Math.min(p.x, q.x), y0: Math.min(p.y, q.y), x1: Math.max(p.x, q.x), y1: Math.max(p.y, q.y) };
};

// wrapWords breaks text into lines no wider than maxW (a word longer than that keeps its line).
const wrapWords = (text, size, maxW) =>
  String(text)
    .split("\n")
    .map((para) => {
      const lines = [];
      let line = "";
      for (const word of para.split(/\s+/).filter(Boolean)) {
        const next = line ? `${line} ${word}` : word;
        if (line && textWidth(next, size) > maxW) {
          lines.push(line);
          line = word;
        } else line = next;
      }
      return [...lines, line].join("\n");
    })
    .join("\n");

export const SELF_GAP = 8; // between a self-message's loop and its text
const BADGE = 22; // the height of an autonumber badge
const BADGE_FONT = 14;

// sequenceParts reworks what mermaid-to-excalidraw makes of a sequence diagram's messages; it
// returns where the new texts go once Excalidraw has measured them (placeTexts).
//
// A message to its own lifeline has its label taken off and made a free text beside the loop, left
// of nothing: as an arrow's label Excalidraw centres it on the loop's far side, on the line, and
// Mermaid writes it over the lifeline above the loop. It is level with the loop's middle, within the
// rows Mermaid left for the text and the loop, and wrapped to stop short of the next lifeline when
// there is room for that. It is grouped with the loop so they move together.
//
// With autonumber, Mermaid draws each message's number in a circle at its start (text.sequenceNumber
// after the message's line); mermaid-to-excalidraw drops them. Each becomes a dark circle with the
// number in white, grouped with its message.
//
// mermaid-to-excalidraw's k-th arrow is the k-th message line of Mermaid's SVG.
export const sequenceParts = (skeleton, root) => {
  const lines = Array.from(root.querySelectorAll('[class*="messageLine"]'));
  const arrows = skeleton.filter((e) => e.type === "arrow");
  const place = {};
  if (lines.length !== arrows.length) return place;
  const lifelines = Array.from(root.querySelectorAll(".actor-line"))
    .map((l) => boxOf(l, root).x0)
    .sort((a, b) => a - b);
  arrows.forEach((a, k) => {
    const line = lines[k];
    const group = () => {
      if (!a.groupIds) a.groupIds = [`message-${k + 1}`];
      return a.groupIds;
    };
    // After the line Mermaid puts an empty line carrying the circle marker, then the number.
    let num = line.nextElementSibling;
    if (num && num.tagName.toLowerCase() === "line" && !/messageLine/.test(num.getAttribute("class") || "")) num = num.nextElementSibling;
    if (num && num.classList.contains("sequenceNumber") && num.textContent.trim()) {
      const n = num.textContent.trim();
      // Centred on the start of the arrow as converted (Mermaid centres it on its line's start).
      const c = boxOf(num, root);
      const p = (a.points && a.points[0]) || [0, 0];
      const [x, y] = Number.isFinite(a.x) && Number.isFinite(a.y) ? [a.x + p[0], a.y + p[1]] : [(c.x0 + c.x1) / 2, (c.y0 + c.y1) / 2];
      const w = Math.max(BADGE, Math.ceil(textWidth(n, BADGE_FONT)) + 10);
      const id = `message-number-${k + 1}`;
      skeleton.push({
        type: "ellipse", id, x: x - w / 2, y: y - BADGE / 2, width: w, height: BADGE, groupIds: group(),
        backgroundColor: "#343a40", strokeColor: "#343a40", fillStyle: "solid", strokeWidth: 1, roughness: 0,
      });
      skeleton.push({ type: "text", id: `${id}-text`, x: x - 4, y: y - 8, text: n, fontSize: BADGE_FONT, strokeColor: "#ffffff", textAlign: "center", groupIds: group() });
      place[`${id}-text`] = { cx: x, cy: y };
    }
    if (line.tagName.toLowerCase() !== "path" || !a.label || !a.label.text) return;
    // The message's text lines are the messageText elements just before its line.
    const texts = [];
    for (let n = line.previousElementSibling; n && n.classList.contains("messageText"); n = n.previousElementSibling) texts.push(n);
    if (!texts.length) return;
    // The loop as drawn: Mermaid's path and the arrow mermaid-to-excalidraw made of it (through
    // the curve's control points, so wider), plus the few pixels Excalidraw's curve bulges past them.
    const loop = boxOf(line, root);
    for (const [px, py] of a.points || []) {
      loop.x1 = Math.max(loop.x1, a.x + px + 4);
      loop.y0 = Math.min(loop.y0, a.y + py);
      loop.y1 = Math.max(loop.y1, a.y + py);
    }
    let top = Infinity;
    for (const t of texts) top = Math.min(top, boxOf(t, root).y0);
    if (!Number.isFinite(top) || !(loop.x1 > loop.x0)) return;
    const left = loop.x1 + SELF_GAP;
    const size = a.label.fontSize || 16;
    let text = a.label.text;
    const next = lifelines.find((x) => x > loop.x1 + 1);
    const room = next === undefined ? Infinity : next - SELF_GAP - left;
    if (textWidth(text, size) > room && room >= wordWidth(text, size)) text = wrapWords(text, size, room);
    const id = `message-text-${k + 1}`;
    skeleton.push({ type: "text", id, x: left, y: top, text, fontSize: size, textAlign: "left", groupIds: group() });
    place[id] = { left, cy: (loop.y0 + loop.y1) / 2, top, bottom: loop.y1 };
    delete a.label;
  });
  return place;
};

// placeTexts moves converted texts where place says, now that Excalidraw has measured them:
// {cx, cy} centres a text there; {left, cy, top, bottom} puts its left side at left and its middle
// at cy, kept within top..bottom when it fits there.
export const placeTexts = (elements, place) => {
  for (const e of elements) {
    const p = e.type === "text" && place[e.id];
    if (!p) continue;
    if (p.left === undefined) {
      e.x = p.cx - e.width / 2;
      e.y = p.cy - e.height / 2;
      continue;
    }
    e.x = p.left;
    e.y = p.cy - e.height / 2;
    if (p.bottom - p.top >= e.height) e.y = Math.min(Math.max(e.y, p.top), p.bottom - e.height);
  }
};

// ---- shapes that fit their labels --------------------------------------------------------------

const ctx2d = document.createElement("canvas").getContext("2d");
// textWidth is the width of text's widest line in Excalifont.
const textWidth = (text, size) => {
  ctx2d.font = `${size}px Excalifont, Xiaolai, sans-serif`;
  return Math.max(0, ...String(text).split("\n").map((l) => ctx2d.measureText(l).width));
};
const wordWidth = (text, size) => {
  ctx2d.font = `${size}px Excalifont, Xiaolai, sans-serif`;
  let w = 0;
  for (const word of String(text).split(/\s+/)) w = Math.max(w, ctx2d.measureText(word).width);
  return w;
};

// Excalidraw wraps a label to the inner width of its shape (textElement.ts getMaxContainerWidth,
// BOUND_TEXT_PADDING = 5): the full width of a rectangle, about half of a diamond, width/√2 of an
// ellipse. Mermaid sizes its shapes for its own label layout, so a word can end up cut in two
// ("Choic|e"). fitLabels widens such shapes about their centre. (The Go side puts the arrows'
// ends on the final borders.)
export const fitLabels = (skeleton) => {
  for (const e of skeleton) {
    if (!e.label || !e.label.text || !["rectangle", "diamond", "ellipse"].includes(e.type)) continue;
    const size = e.label.fontSize || 20;
    const need = Math.ceil(wordWidth(e.label.text, size)) + 2 * 5 + 2;
    const width = e.type === "diamond" ? 2 * need : e.type === "ellipse" ? Math.ceil(need * Math.SQRT2) : need;
    if (!(width > e.width)) continue;
    e.x = e.x + e.width / 2 - width / 2;
    e.width = width;
  }
};

// uniqueIds renames repeated ids: mermaid-to-excalidraw names an edge after its two ends, so two
// edges between the same nodes share an id, and convertToExcalidrawElements drops the second.
export const uniqueIds = (skeleton) => {
  const seen = new Set();
  for (const e of skeleton) {
    if (e.id) e.id = uniqueId(seen, e.id);
  }
};
