// The chat page: threads of this browser, a message box that also takes a file (chosen, dropped
// or pasted), the run's live progress (Server-Sent Events) and the bot's replies with the
// picture, the summary and the links. The browser is known by a random session id kept in
// localStorage; the server keeps the conversation.
(() => {
  const SESSION_KEY = "excalibot.session";
  const THREAD_KEY = "excalibot.thread";

  function randomId(bytes) {
    const b = crypto.getRandomValues(new Uint8Array(bytes));
    return btoa(String.fromCharCode(...b)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  let session = localStorage.getItem(SESSION_KEY);
  if (!/^[A-Za-z0-9_-]{16,64}$/.test(session || "")) {
    session = randomId(18);
    localStorage.setItem(SESSION_KEY, session);
  }

  const $ = (id) => document.getElementById(id);
  const threadsEl = $("threads");
  const messagesEl = $("messages");
  const statusEl = $("status");
  const textEl = $("text");
  const hintEl = $("hint");
  const fileEl = $("file");
  const dropEl = $("drop");

  // The server's limits on a file (GET /threads says them); until then, the core's defaults.
  let limits = { importBytes: 20 << 20, pictureBytes: 20 << 20 };
  let attached = null; // the File to send with the next message

  let threads = []; // [{id, title, working, status}]
  let current = localStorage.getItem(THREAD_KEY) || randomId(12);
  let shown = new Set(); // message ids on screen for the current thread
  const known = new Set(); // thread ids the server has

  async function api(path, opts = {}) {
    const res = await fetch("/chat/api" + path, {
      ...opts,
      // A FormData body sets its own multipart type, with the boundary.
      headers: { "X-Excalibot-Session": session, ...(typeof opts.body === "string" ? { "Content-Type": "application/json" } : {}) },
    });
    if (!res.ok) {
      const text = (await res.text()).trim();
      throw new Error(text || `${res.status} ${res.statusText}`);
    }
    return res.json();
  }

  function el(tag, props = {}, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(props)) {
      if (k === "class") e.className = v;
      else if (k === "dataset") Object.assign(e.dataset, v);
      else e[k] = v;
    }
    for (const c of children) if (c != null) e.append(c);
    return e;
  }

  function renderThreads() {
    threadsEl.replaceChildren(
      ...threads.map((t) =>
        el(
          "li",
          { class: t.id === current ? "active" : "", title: t.title, dataset: { thread: t.id }, onclick: () => open(t.id) },
          t.title || "(new thread)",
          t.working ? el("div", { class: "working" }, t.status || "working…") : null,
        ),
      ),
    );
  }

  function renderStatus() {
    const t = threads.find((t) => t.id === current);
    statusEl.hidden = !(t && t.working);
    statusEl.textContent = t && t.working ? t.status || "working…" : "";
  }

  // byteSize writes a size as the server does (scene.ByteSize), so refusals read the same.
  function byteSize(n) {
    if (n >= 1 << 20) return (n / (1 << 20)).toFixed(1) + " MB";
    if (n >= 1 << 10) return Math.floor(n / (1 << 10)) + " KB";
    return n + " bytes";
  }

  // A picture is told from a document as the server tells them: by type or by name.
  function isPicture(f) {
    return /\.(png|jpe?g|webp)$/i.test(f.name) || (f.type || "").startsWith("image/");
  }

  // tooLarge is the server's refusal of a file over its limit, said before sending it.
  function tooLarge(f) {
    const pic = isPicture(f);
    const max = pic ? limits.pictureBytes : limits.importBytes;
    if (f.size <= max) return "";
    return `${f.name} is ${byteSize(f.size)}; ${pic ? "I take pictures" : "I import files"} up to ${byteSize(max)}.`;
  }

  function attach(f) {
    const refusal = tooLarge(f);
    if (refusal) {
      addMessage({ id: "local-" + Date.now(), from: "bot", error: true, text: "Not sent: " + refusal });
      return;
    }
    attached = f;
    $("attached-name").textContent = `${f.name} (${byteSize(f.size)})`;
    $("attached").hidden = false;
    textEl.focus();
  }

  function unattach() {
    attached = null;
    fileEl.value = "";
    $("attached").hidden = true;
  }

  function link(href, text) {
    return el("a", { href, target: "_blank", rel: "noopener noreferrer" }, text);
  }

  function addMessage(m) {
    if (shown.has(m.id)) return;
    shown.add(m.id);
    hintEl.hidden = true;
    const box = el("div", { class: `msg ${m.from}${m.error ? " error" : ""}`, dataset: { id: m.id, from: m.from } }, m.text || "");
    if (m.upload) box.append(el("span", { class: "upload" }, `Attached: ${m.upload.name} (${byteSize(m.upload.size)})`));
    if (m.image) box.append(el("img", { src: m.image, alt: m.alt || "the diagram", loading: "lazy" }));
    const links = [];
    if (m.editURL) links.push(link(m.editURL, "Edit in the browser"));
    if (m.viewURL) links.push(link(m.viewURL, "View-only link"));
    if (m.image && m.imageName) links.push(el("a", { href: m.image, download: m.imageName }, m.imageName));
    for (const f of m.files || []) links.push(el("a", { href: f.url, download: f.name }, f.name));
    if (links.length) box.append(el("div", { class: "links" }, ...links));
    messagesEl.append(box);
    messagesEl.scrollTop = messagesEl.scrollHeight;
  }

  async function loadThreads() {
    const j = await api("/threads");
    threads = j.threads;
    for (const t of threads) known.add(t.id);
    if (j.limits) limits = j.limits;
    if (!threads.some((t) => t.id === current)) threads.unshift({ id: current, title: "" });
    renderThreads();
    renderStatus();
  }

  async function open(id) {
    current = id;
    localStorage.setItem(THREAD_KEY, id);
    shown = new Set();
    messagesEl.replaceChildren(hintEl);
    hintEl.hidden = false;
    renderThreads();
    renderStatus();
    // A thread the server does not have (new, or from before a restart) starts empty; it is not
    // asked for, which would only log a 404.
    if (known.has(id)) {
      try {
        const j = await api("/threads/" + encodeURIComponent(id));
        if (current !== id) return;
        for (const m of j.messages) addMessage(m);
      } catch (e) {
        // Forgotten meanwhile (the session's oldest threads make room): it starts empty.
      }
    }
    textEl.focus();
  }

  function upsertThread(t) {
    known.add(t.id);
    const i = threads.findIndex((x) => x.id === t.id);
    if (i >= 0) threads[i] = { ...threads[i], ...t };
    else threads.unshift(t);
    renderThreads();
    renderStatus();
  }

  async function send(text, file) {
    $("send").disabled = true;
    try {
      let body = JSON.stringify({ text });
      if (file) {
        // The size goes first, so the server can refuse a file too large before reading it.
        body = new FormData();
        body.append("text", text);
        body.append("size", String(file.size));
        body.append("file", file, file.name);
      }
      const j = await api("/threads/" + encodeURIComponent(current) + "/messages", { method: "POST", body });
      if (j.message) addMessage(j.message);
      textEl.value = "";
      if (file && attached === file) unattach();
    } catch (e) {
      addMessage({ id: "local-" + Date.now(), from: "bot", error: true, text: "Not sent: " + e.message });
    } finally {
      $("send").disabled = false;
    }
  }

  $("composer").addEventListener("submit", (e) => {
    e.preventDefault();
    const text = textEl.value.trim();
    if (text || attached) send(text, attached);
  });
  textEl.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      $("composer").requestSubmit();
    }
  });
  $("attach").addEventListener("click", () => fileEl.click());
  fileEl.addEventListener("change", () => {
    if (fileEl.files.length) attach(fileEl.files[0]);
    fileEl.value = ""; // choosing the same file again is a change too
  });
  $("unattach").addEventListener("click", unattach);
  textEl.addEventListener("paste", (e) => {
    const f = e.clipboardData && e.clipboardData.files[0];
    if (f) {
      e.preventDefault();
      attach(f);
    }
  });
  // A file dragged anywhere over the page may be dropped; the first one is attached.
  const carriesFiles = (e) => e.dataTransfer && [...e.dataTransfer.types].includes("Files");
  let dragDepth = 0;
  document.addEventListener("dragenter", (e) => {
    if (!carriesFiles(e)) return;
    dragDepth++;
    dropEl.hidden = false;
  });
  document.addEventListener("dragleave", (e) => {
    if (carriesFiles(e) && --dragDepth <= 0) {
      dragDepth = 0;
      dropEl.hidden = true;
    }
  });
  document.addEventListener("dragover", (e) => {
    if (carriesFiles(e)) e.preventDefault(); // or the browser opens the file instead
  });
  document.addEventListener("drop", (e) => {
    if (!carriesFiles(e)) return;
    e.preventDefault();
    dragDepth = 0;
    dropEl.hidden = true;
    if (e.dataTransfer.files.length) attach(e.dataTransfer.files[0]);
  });
  $("new-thread").addEventListener("click", () => {
    const id = randomId(12);
    threads.unshift({ id, title: "" });
    open(id);
  });

  // One stream per tab carries every thread's events; after a reconnect the open thread is
  // reloaded so nothing said meanwhile is missed.
  let connected = false;
  const events = new EventSource("/chat/api/events?session=" + encodeURIComponent(session));
  events.addEventListener("open", () => {
    if (connected) loadThreads().then(() => open(current)).catch(() => {});
    connected = true;
  });
  events.addEventListener("thread", (e) => upsertThread(JSON.parse(e.data)));
  events.addEventListener("message", (e) => {
    const j = JSON.parse(e.data);
    if (j.thread === current) addMessage(j.message);
  });

  window.__chat = { session, get thread() { return current; }, get attached() { return attached && attached.name; } };
  loadThreads()
    .catch(() => {})
    .then(() => open(current));
})();
