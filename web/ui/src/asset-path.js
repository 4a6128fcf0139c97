// Every font but the CJK fallback (Xiaolai) is inlined in the editor script; Excalidraw fetches
// Xiaolai chunks from EXCALIDRAW_ASSET_PATH, which the Go side serves under /assets/fonts/. It is a
// script of its own, loaded before the editor, so the path is set before any Excalidraw code runs
// whatever order the bundle evaluates its modules in (inline scripts are not allowed by the CSP).
window.EXCALIDRAW_ASSET_PATH = location.origin + "/assets/";
