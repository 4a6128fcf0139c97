// The chat page: threads of this browser, a message box, the run's live progress (Server-Sent
// Events) and the bot's replies with the picture, the summary and the links. The browser is known
// by a random session id kept in localStorage; the server keeps the conversation.
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

  let threads = []; // [{id, title, working, status}]
  let current = localStorage.getItem(THREAD_KEY) || randomId(12);
  let shown = new Set(); // message ids on screen for the current thread

  async function api(path, opts = {}) {
    const res = await fetch("/chat/api" + path, {
      ...opts,
      headers: { "X-Excalibot-Session": session, ...(opts.body ? { "Content-Type": "application/json" } : {}) },
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

  function link(href, text) {
    return el("a", { href, target: "_blank", rel: "noopener noreferrer" }, text);
  }

  function addMessage(m) {
    if (shown.has(m.id)) return;
    shown.add(m.id);
    hintEl.hidden = true;
    const box = el("div", { class: `msg ${m.from}${m.error ? " error" : ""}`, dataset: { id: m.id, from: m.from } }, m.text || "");
    if (m.image) box.append(el("img", { src: m.image, alt: "the diagram", loading: "lazy" }));
    const links = [];
    if (m.editURL) links.push(link(m.editURL, "Edit in the browser"));
    if (m.viewURL) links.push(link(m.viewURL, "View-only link"));
    for (const f of m.files || []) links.push(el("a", { href: f.url, download: f.name }, f.name));
    if (links.length) box.append(el("div", { class: "links" }, ...links));
    messagesEl.append(box);
    messagesEl.scrollTop = messagesEl.scrollHeight;
  }

  async function loadThreads() {
    const j = await api("/threads");
    threads = j.threads;
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
    try {
      const j = await api("/threads/" + encodeURIComponent(id));
      if (current !== id) return;
      for (const m of j.messages) addMessage(m);
    } catch (e) {
      // A thread this server has not seen yet (new, or the server restarted) simply starts empty.
    }
    textEl.focus();
  }

  function upsertThread(t) {
    const i = threads.findIndex((x) => x.id === t.id);
    if (i >= 0) threads[i] = { ...threads[i], ...t };
    else threads.unshift(t);
    renderThreads();
    renderStatus();
  }

  async function send(text) {
    $("send").disabled = true;
    try {
      const j = await api("/threads/" + encodeURIComponent(current) + "/messages", {
        method: "POST",
        body: JSON.stringify({ text }),
      });
      if (j.message) addMessage(j.message);
      textEl.value = "";
    } catch (e) {
      addMessage({ id: "local-" + Date.now(), from: "bot", error: true, text: "Not sent: " + e.message });
    } finally {
      $("send").disabled = false;
    }
  }

  $("composer").addEventListener("submit", (e) => {
    e.preventDefault();
    const text = textEl.value.trim();
    if (text) send(text);
  });
  textEl.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      $("composer").requestSubmit();
    }
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

  window.__chat = { session, get thread() { return current; } };
  loadThreads()
    .catch(() => {})
    .then(() => open(current));
})();
