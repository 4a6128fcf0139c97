// Reading the text people send: the diagram taken out of a chat message, Mermaid's errors put in
// the user's own line numbers, and the repairs tried when Mermaid refuses the text (after
// Excalidraw's text-to-diagram, which retries with its mermaidAutoFix).
import mermaid from "mermaid";

// Diagram keywords as Mermaid's detectors spell them (they are case-sensitive).
export const KEYWORDS = [
  "flowchart", "graph", "sequenceDiagram", "classDiagram", "stateDiagram-v2", "stateDiagram", "erDiagram",
  "journey", "gantt", "pie", "quadrantChart", "requirementDiagram", "gitGraph", "C4Context", "C4Container",
  "C4Component", "C4Dynamic", "C4Deployment", "mindmap", "timeline", "sankey-beta", "xychart-beta",
  "block-beta", "packet-beta", "architecture-beta", "kanban", "radar-beta", "treemap-beta",
];

// ---- input clean-up: always safe, reported as fixes when they change something -----------------

// extract returns the diagram of a chat message or a model's argument: the content of the first
// ```mermaid fence (or of a bare ``` fence), else the whole text; and how many lines precede it in
// the input, so error lines can be given in the user's own numbering.
export const extract = (src) => {
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

// ---- Mermaid's line numbers in the text as written ------------------------------------------------

// Mermaid parses the text after taking out its front matter, %%{directives}%% and %% comment lines
// (preprocessDiagram in mermaid/src/preprocess.ts), so its "line 5" is the fifth line of what is
// left. sourceLines repeats those steps on the text, keeping for each character the line it came
// from, and returns for each line Mermaid sees the (0-based) line of text it is.
const FRONT_MATTER = /^-{3}\s*[\n\r](.*?)[\n\r]-{3}\s*[\n\r]+/s;
const DIRECTIVE = /%{2}{\s*(?:(\w+)\s*:|(\w+))\s*(?:(\w+)|((?:(?!}%{2}).|\r?\n)*))?\s*(?:}%{2})?/gi;
const COMMENT = /^\s*%%(?!{)[^\n]+\n?/gm;

const dropSpans = (s, spans) => {
  let text = "";
  let lines = [];
  let last = 0;
  for (const [from, to] of spans) {
    text += s.text.slice(last, from);
    lines = lines.concat(s.lines.slice(last, from));
    last = to;
  }
  return { text: text + s.text.slice(last), lines: lines.concat(s.lines.slice(last)) };
};
const spansOf = (text, re) => [...text.matchAll(re)].map((m) => [m.index, m.index + m[0].length]);

export const sourceLines = (text) => {
  const lines = new Array(text.length);
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    lines[i] = n;
    if (text[i] === "\n") n++;
  }
  let s = { text, lines };
  const fm = FRONT_MATTER.exec(s.text);
  if (fm) s = dropSpans(s, [[0, fm[0].length]]);
  s = dropSpans(s, spansOf(s.text, DIRECTIVE));
  s = dropSpans(s, spansOf(s.text, COMMENT));
  const lead = /^\s+/.exec(s.text);
  if (lead) s = dropSpans(s, [[0, lead[0].length]]);
  const out = [];
  let start = 0;
  for (const l of s.text.split("\n")) {
    out.push(start < s.lines.length ? s.lines[start] : n);
    start += l.length + 1;
  }
  return out;
};

// ---- repairs tried only when Mermaid refuses the text ---------------------------------------------

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

// Flowchart shapes by their opening brackets, longest first, with the brackets that close them.
const SHAPES = [
  ["(((", [")))"]], ["((", ["))"]], ["([", ["])"]], ["[(", [")]"]], ["[[", ["]]"]], ["{{", ["}}"]],
  ["[/", ["/]", "\\]"]], ["[\\", ["\\]", "/]"]], ["[", ["]"]], ["(", [")"]], ["{", ["}"]], [">", ["]"]],
];
// What may follow a node on its line: an edge, '&', ':::class', ';', '@{', or the end.
const AFTER_NODE = /^\s*(?:$|[-=.~<&;|]|:::|@\{|o--|x--)/;
const ARROW_IN = /-->|---|==>|-\.->|~~~/;

// quoteLabels puts in double quotes the labels Mermaid reads as something else: brackets inside
// a label (`A[Call f(x)]`, `A[List[int]]`) end the shape early, and a label starting with / or \
// (`A[/login]`) opens a parallelogram that is never closed. The shape's own brackets stay:
// `B[(Users [db])]` becomes `B[("Users [db]")]`. A label already quoted is left alone.
export const quoteLabels = (line) => {
  let out = "";
  let i = 0;
  while (i < line.length) {
    const id = /^[\p{L}\p{N}_][\p{L}\p{N}_-]*/u.exec(line.slice(i));
    const before = i === 0 ? "" : line[i - 1];
    if (!id || /[\p{L}\p{N}_"'-]/u.test(before)) {
      out += line[i++];
      continue;
    }
    const at = i + id[0].length;
    const node = quoteNode(line, at);
    if (!node) {
      out += line.slice(i, at);
      i = at;
      continue;
    }
    out += id[0] + node.text;
    i = node.end;
  }
  return out;
};

// pairedBrackets reports whether every bracket of s is closed by its own kind, in order.
const pairedBrackets = (s) => {
  const stack = [];
  for (const ch of s) {
    if ("([{".includes(ch)) stack.push(ch);
    else if (")]}".includes(ch) && stack.pop() !== "([{"[")]}".indexOf(ch)]) return false;
  }
  return stack.length === 0;
};

// quoteNode reads the shape starting at line[at] and returns it with its label quoted when that
// is needed, and where it ends; null when there is no shape there or nothing to change.
const quoteNode = (line, at) => {
  for (const [open, closes] of SHAPES) {
    if (!line.startsWith(open, at)) continue;
    const from = at + open.length;
    for (let end = from; end < line.length; end++) {
      const close = closes.find((c) => line.startsWith(c, end));
      if (!close) continue;
      const label = line.slice(from, end);
      if (ARROW_IN.test(label)) break; // past the node: the shape is not closed as it opened
      if (!AFTER_NODE.test(line.slice(end + close.length))) continue;
      if (/^\s*".*"\s*$/.test(label)) return null;
      if (!/[()[\]{}]/.test(label) && !/^[/\\]/.test(label) && !label.includes('"')) return null;
      // `C[[Sub]]]`: a bracket left over is a typo, not text; which one is not for us to guess.
      if (!pairedBrackets(label)) return null;
      return { text: `${open}"${label.replace(/"/g, "#quot;")}"${close}`, end: end + close.length };
    }
    // A label starting with / or \ that no / or \ closes: the bracket is a plain one.
    if ((open === "[/" || open === "[\\") && line.indexOf("]", from) > 0) {
      const end = line.indexOf("]", from);
      if (!ARROW_IN.test(line.slice(from, end)) && AFTER_NODE.test(line.slice(end + 1))) {
        return { text: `["${line.slice(at + 1, end).replace(/"/g, "#quot;")}"]`, end: end + 1 };
      }
    }
    return null;
  }
  return null;
};

// `-->|ownerRef (root only)|`: brackets in an edge label between pipes end it early unless it is
// quoted.
const quoteEdgeLabels = (line) =>
  line.replace(/\|([^|"\n]*[()[\]{}][^|"\n]*)\|/g, (m, label) => (pairedBrackets(label) ? `|"${label}"|` : m));
// `A->>B: check; then retry`: a ';' ends a sequence diagram's statement, so the rest of the
// message is read as a statement of its own. Mermaid writes a semicolon in text as #59;.
const SEQ_TEXT = /^(\s*(?:[^:\n]*?(?:->>|-->>|->|-->|-x|--x|-\)|--\)|<<->>|<<-->>)[^:\n]*|note\s[^:\n]*):)(.*)$/i;
const semicolonsInMessages = (text) =>
  text
    .split("\n")
    .map((l) => {
      const m = SEQ_TEXT.exec(l);
      return m && m[2].includes(";") ? m[1] + m[2].replace(/;/g, "#59;") : l;
    })
    .join("\n");

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

// erDiagram relations written in a classDiagram: `CUSTOMER ||--o{ ORDER : places` becomes the
// association `CUSTOMER "1" --> "0..*" ORDER : places`, the crow's feet as UML multiplicities
// (`..`, a non-identifying relation, as a dashed `..>`). Quoted names that a class could not
// take (`"Order item"`) are left for Mermaid to refuse.
const ER_CARD = { "||": "1", "|o": "0..1", "o|": "0..1", "}|": "1..*", "|{": "1..*", "}o": "0..*", "o{": "0..*" };
const ER_IN_CLASS = /^(\s*)"?([\w-]+)"?\s*(\|\||\|o|\}\||\}o)(--|\.\.)(\|\||o\||\|\{|o\{)\s*"?([\w-]+)"?\s*(?::\s*(.*))?$/;
export const erRelationsInClass = (text) => {
  if (!/^\s*classDiagram(?:-v2)?\b/m.test(text)) return { text: null, lines: [] };
  const lines = [];
  const out = text.split("\n").map((l, i) => {
    const m = ER_IN_CLASS.exec(l);
    if (!m) return l;
    lines.push(i + 1);
    const [, pad, a, left, link, right, b, label] = m;
    const arrow = link === "--" ? "-->" : "..>";
    const rest = label && label.trim() ? ` : ${label.trim().replace(/^"(.*)"$/, "$1")}` : "";
    return `${pad}${a} "${ER_CARD[left]}" ${arrow} "${ER_CARD[right]}" ${b}${rest}`;
  });
  return { text: lines.length ? out.join("\n") : null, lines };
};

const isFlowchart = (text) => /^\s*(?:flowchart|graph)\b/m.test(text.replace(/^\s*%%[^\n]*\n/gm, ""));

const candidates = (text, err) => {
  const out = [];
  const add = (fix, t) => {
    if (t && t !== text && !out.some((c) => c.text === t)) out.push({ fix, text: t });
  };
  add("wrote the diagram keyword in Mermaid's spelling", keywordCase(text));
  add("replaced typographic quotes with plain ones", smartQuotes(text));
  const inactive = /inactivate an inactive participant \(([^)]+)\)/.exec(err.message);
  if (inactive) add(`removed a deactivate of ${inactive[1]}, who was not active`, dropDeactivate(text, inactive[1]));
  const lines = text.split("\n");
  if (err.line != null) {
    for (const i of [err.line - 1, err.line - 2, err.line]) {
      add(`removed stray characters after a shape on line ${i + 1}`, withLine(lines, i, stripAfterShape));
      if (isFlowchart(text)) {
        add(`quoted a label on line ${i + 1}`, withLine(lines, i, quoteLabels));
        add(`quoted an edge label on line ${i + 1}`, withLine(lines, i, quoteEdgeLabels));
      }
    }
  }
  if (/^\s*sequenceDiagram\b/m.test(text)) add("wrote the ';' inside messages as #59;", semicolonsInMessages(text));
  const er = erRelationsInClass(text);
  if (er.text) {
    const where = er.lines.length === 1 ? `line ${er.lines[0]}` : `lines ${er.lines.join(", ")}`;
    add(`wrote the erDiagram relations on ${where} as class associations with their cardinalities (A "1" --> "0..*" B)`, er.text);
  }
  add("removed a '>' typed after an edge label", dropHeadAfterLabel(text));
  add("moved a class's <<annotation>> to a line of its own", annotationLine(text));
  add("added the missing 'end' of a block", appendEnds(text));
  // Excalidraw's dialog retries once with double quotes turned into single ones.
  add("replaced double quotes with single quotes", text.replace(/"/g, "'"));
  return out;
};

// parseError returns null when Mermaid accepts text, else its message and the failing line in
// text's own numbering (comment lines counted).
export const parseError = async (text) => {
  try {
    const r = await mermaid.parse(text);
    return r ? null : { message: "Mermaid did not recognise the diagram" };
  } catch (err) {
    const message = String((err && err.message) || err);
    let line = lineOf(message);
    if (line == null && err && err.hash && err.hash.loc) line = err.hash.loc.first_line;
    if (line != null) {
      const map = sourceLines(text);
      line = line - 1 < map.length ? map[line - 1] + 1 : line + (map.length ? map[map.length - 1] + 1 - map.length : 0);
    }
    return { message, line };
  }
};

// repair tries the candidates the way Excalidraw's dialog does: each is checked with Mermaid's
// parser and the first one it accepts is kept. A candidate that moves the error further down is
// kept too, so two different mistakes can both be fixed (three rounds at most).
export const repair = async (text, first) => {
  let err = first;
  const fixes = [];
  for (let round = 0; round < 3 && err; round++) {
    let progress = null;
    for (const c of candidates(text, err)) {
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
