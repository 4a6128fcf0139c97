// The editable link's page: the thread's diagram in a real Excalidraw editor. Edits are saved back
// as the thread's next revision with the revision they started from (If-Match), so a save never
// overwrites what the bot drew or someone else saved meanwhile: the server answers 409 and the page
// offers to reload, keeping the person's own version downloadable.
//
//   GET /d/{token}/scene  -> {rev, canEdit, scene}
//   PUT /d/{token}/scene  (If-Match: rev) -> 200 {rev} | 409 {rev, error} | 403/413/400 {error}
// window.EXCALIDRAW_ASSET_PATH is set by asset-path.js, a script of its own that the page loads
// before this one (see there why).
import React, { useCallback, useEffect, useRef, useState } from "react";
import { createRoot } from "react-dom/client";
import { Excalidraw, MainMenu, restore, serializeAsJSON } from "@excalidraw/excalidraw";

const AUTOSAVE_MS = 1000;
const RETRY_MS = 5000;

const token = decodeURIComponent(location.pathname.split("/")[2] || "");
const base = "/d/" + encodeURIComponent(token);

// readError returns the server's explanation: JSON {error, rev} from the scene API, plain text
// from the rest (404, 429, timeouts).
async function readError(res) {
  const text = await res.text().catch(() => "");
  try {
    const j = JSON.parse(text);
    if (j && typeof j.error === "string") return j;
  } catch {}
  return { error: text.trim() || `the server answered ${res.status} ${res.statusText}` };
}

// signature changes whenever something a save would carry changes: every edit bumps an element's
// version (deletions too), images add files, and the background is part of the file.
function signature(elements, appState, files) {
  let versions = 0;
  for (const e of elements) versions += e.version;
  return `${elements.length}:${versions}:${Object.keys(files || {}).length}:${appState.viewBackgroundColor}`;
}

function download(name, text) {
  const a = document.createElement("a");
  a.href = URL.createObjectURL(new Blob([text], { type: "application/vnd.excalidraw+json" }));
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
}

const LABEL = {
  saved: "Saved",
  unsaved: "Unsaved changes",
  saving: "Saving…",
  error: "Not saved",
  conflict: "Not saved: changed elsewhere",
  readonly: "View only",
};

function Editor({ doc }) {
  const apiRef = useRef(null);
  // s holds the save machinery; it changes without re-rendering.
  const s = useRef({ rev: doc.rev, loaded: false, baseline: null, saved: null, current: null, inflight: false, again: false, conflict: false, timer: 0, leaving: false });
  const [ui, setUi] = useState(doc.canEdit ? { state: "saved", message: `revision ${doc.rev}` } : { state: "readonly", message: "" });
  const [conflict, setConflict] = useState(null);
  // The files' name, as the chat and the downloads name them ("deploy-pipeline-r3"); a save moves
  // it to the new revision.
  const [name, setName] = useState(doc.name || `diagram-r${doc.rev}`);
  const nameRef = useRef(name);
  nameRef.current = name;

  const schedule = useCallback((ms) => {
    clearTimeout(s.current.timer);
    s.current.timer = setTimeout(() => saveRef.current(), ms);
  }, []);

  const save = useCallback(async () => {
    const st = s.current;
    const api = apiRef.current;
    if (!doc.canEdit || st.conflict || !api) return;
    if (st.inflight) {
      st.again = true;
      return;
    }
    clearTimeout(st.timer);
    const elements = api.getSceneElementsIncludingDeleted();
    const appState = api.getAppState();
    const files = api.getFiles();
    const sig = signature(elements, appState, files);
    const body = serializeAsJSON(elements, appState, files, "local");
    st.inflight = true;
    setUi({ state: "saving", message: "" });
    try {
      const res = await fetch(base + "/scene", {
        method: "PUT",
        headers: { "Content-Type": "application/json", "If-Match": String(st.rev) },
        body,
      });
      if (res.ok) {
        const j = await res.json();
        st.rev = j.rev;
        st.saved = sig;
        if (j.name && j.name !== nameRef.current) {
          // Excalidraw reads its name prop once; its own exports take the name from its state.
          setName(j.name);
          api.updateScene({ appState: { name: j.name } });
        }
        const dirty = st.current !== null && st.current !== sig;
        setUi({ state: dirty ? "unsaved" : "saved", message: dirty ? "" : `revision ${j.rev}` });
        if (dirty) schedule(AUTOSAVE_MS);
      } else if (res.status === 409) {
        const j = await readError(res);
        st.conflict = true;
        setConflict({ rev: j.rev, error: j.error, mine: body });
        setUi({ state: "conflict", message: j.error });
      } else {
        const j = await readError(res);
        setUi({ state: "error", message: j.error });
      }
    } catch (e) {
      // Offline or the server restarting: keep the edits and try again.
      setUi({ state: "error", message: `could not reach the server (${e.message}); retrying` });
      schedule(RETRY_MS);
    } finally {
      st.inflight = false;
      if (st.again) {
        st.again = false;
        if (!st.conflict && st.current !== st.saved) schedule(AUTOSAVE_MS);
      }
    }
  }, [doc.canEdit, schedule]);
  const saveRef = useRef(save);
  saveRef.current = save;

  const onChange = useCallback(
    (elements, appState, files) => {
      const st = s.current;
      st.loaded = true;
      if (!doc.canEdit) return;
      const sig = signature(elements, appState, files);
      if (st.baseline === null) {
        // The first call reports the scene as loaded (restore() may have bumped versions). A person
        // cannot edit before it; a script must wait for state().loaded, or its edit becomes the
        // baseline and is never saved.
        st.baseline = st.saved = st.current = sig;
        return;
      }
      if (sig === st.current) return; // selection, scrolling, zoom
      st.current = sig;
      if (st.conflict) return;
      if (sig === st.saved) {
        clearTimeout(st.timer);
        setUi({ state: "saved", message: "" });
        return;
      }
      setUi({ state: "unsaved", message: "" });
      schedule(AUTOSAVE_MS);
    },
    [doc.canEdit, schedule],
  );

  useEffect(() => {
    const st = s.current;
    const beforeUnload = (e) => {
      if (!st.leaving && doc.canEdit && st.current !== null && st.current !== st.saved) {
        e.preventDefault();
        e.returnValue = "";
      }
    };
    // Ctrl/Cmd+S saves to the thread instead of Excalidraw's "save to file".
    const keydown = (e) => {
      if ((e.ctrlKey || e.metaKey) && !e.shiftKey && e.key.toLowerCase() === "s" && doc.canEdit) {
        e.preventDefault();
        e.stopPropagation();
        saveRef.current();
      }
    };
    window.addEventListener("beforeunload", beforeUnload);
    window.addEventListener("keydown", keydown, true);
    // For tests and the curious: the API and the save state.
    window.__excalibot = {
      get api() {
        return apiRef.current;
      },
      state: () => ({ ...ui, rev: st.rev, dirty: st.current !== st.saved, loaded: !!st.loaded, name: nameRef.current }),
      save: () => saveRef.current(),
      restore, // Excalidraw's own reader, for checking downloads
    };
    return () => {
      window.removeEventListener("beforeunload", beforeUnload);
      window.removeEventListener("keydown", keydown, true);
    };
  }, [doc.canEdit, ui]);

  const reload = () => {
    s.current.leaving = true;
    location.reload();
  };

  const topRight = () => (
    <div className="xb-save">
      <span className="xb-state" data-state={ui.state} title={ui.message} data-testid="save-state">
        {LABEL[ui.state]}
        {ui.state === "saved" && ui.message ? ` (${ui.message})` : ""}
      </span>
      {doc.canEdit && (
        <button type="button" onClick={() => saveRef.current()} disabled={ui.state === "saving" || ui.state === "conflict"} data-testid="save">
          Save
        </button>
      )}
    </div>
  );

  return (
    <>
      <Excalidraw
        initialData={{ elements: doc.scene.elements || [], appState: doc.scene.appState || {}, files: doc.scene.files || {}, scrollToContent: true }}
        excalidrawAPI={(api) => {
          apiRef.current = api;
        }}
        onChange={onChange}
        viewModeEnabled={!doc.canEdit}
        name={name}
        UIOptions={{ canvasActions: { loadScene: false, clearCanvas: false, saveToActiveFile: false } }}
        renderTopRightUI={topRight}
      >
        <MainMenu>
          <MainMenu.DefaultItems.Export />
          <MainMenu.DefaultItems.SaveAsImage />
          <MainMenu.DefaultItems.ChangeCanvasBackground />
          <MainMenu.DefaultItems.ToggleTheme />
          <MainMenu.Separator />
          <MainMenu.ItemLink href={base + ".excalidraw"}>Download .excalidraw (saved version)</MainMenu.ItemLink>
          <MainMenu.ItemLink href={base + ".png"}>Download PNG (saved version)</MainMenu.ItemLink>
          <MainMenu.ItemLink href={base + ".svg"}>Download SVG (saved version)</MainMenu.ItemLink>
          <MainMenu.Separator />
          <MainMenu.DefaultItems.Help />
        </MainMenu>
      </Excalidraw>
      {ui.state === "error" && (
        <div className="xb-banner" role="alert" data-testid="error">
          <p>Your changes are not saved: {ui.message}</p>
          <button type="button" onClick={() => saveRef.current()}>Try again</button>
        </div>
      )}
      {conflict && (
        <div className="xb-banner" role="alert" data-testid="conflict">
          <p>
            This diagram changed since you opened it: the bot drew or someone else saved
            {conflict.rev ? ` (it is now at revision ${conflict.rev})` : ""}. Your changes here were not saved and
            nothing was overwritten.
          </p>
          <button type="button" onClick={reload} data-testid="reload">Reload the new version</button>
          <button type="button" onClick={() => download(`${name}-mine.excalidraw`, conflict.mine)}>
            Download my version
          </button>
        </div>
      )}
    </>
  );
}

function Failure({ text }) {
  return (
    <div className="xb-loading" role="alert" data-testid="load-error">
      <p>{text}</p>
    </div>
  );
}

async function main() {
  const root = createRoot(document.getElementById("root"));
  let res;
  try {
    res = await fetch(base + "/scene", { cache: "no-store" });
  } catch (e) {
    root.render(<Failure text={`Could not reach the server: ${e.message}. Reload the page to try again.`} />);
    return;
  }
  if (res.status === 404) {
    root.render(<Failure text="This link does not work: it may have expired or been reset. Ask in the chat thread for a new one." />);
    return;
  }
  if (!res.ok) {
    const j = await readError(res);
    root.render(<Failure text={`The diagram could not be opened: ${j.error}`} />);
    return;
  }
  const doc = await res.json();
  root.render(<Editor doc={doc} />);
}

main();
