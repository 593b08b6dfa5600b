// Runs before any script of the page (Page.addScriptToEvaluateOnNewDocument)
// and reports every WebMCP tool the page registers to the Go side through a
// CDP binding (Runtime.addBinding). The binding's name replaces __BINDING__.
// The page keeps working as before: a native modelContext, where the browser
// has one, still receives every call.
(() => {
  "use strict";
  const name = "__BINDING__";
  const send = globalThis[name];
  if (typeof send !== "function") return;
  // Out of the page's reach: what was reported cannot be taken back or
  // forged through the binding afterwards (registerTool itself stays open,
  // as it is to any agent).
  try { delete globalThis[name]; } catch (e) {}
  if (globalThis.top !== globalThis) return; // tools of the top document only

  const MAX_TOOLS = 200;
  let count = 0;
  const str = (v, max) => {
    try { return v === undefined || v === null ? "" : String(v).slice(0, max); } catch (e) { return ""; }
  };
  const report = (api, tool) => {
    if (count >= MAX_TOOLS) return;
    count++;
    try {
      let schema = null;
      try {
        const s = JSON.stringify(tool.inputSchema);
        if (typeof s === "string" && s.length <= 65536) schema = s;
      } catch (e) {}
      send(JSON.stringify({
        api: api,
        name: str(tool && tool.name, 256),
        description: str(tool && tool.description, 4096),
        inputSchema: schema,
      }));
    } catch (e) {}
  };

  const install = (host, where) => {
    let mc;
    try { mc = host.modelContext; } catch (e) {}
    if (!mc || (typeof mc !== "object" && typeof mc !== "function")) {
      mc = {};
      try {
        Object.defineProperty(host, "modelContext", { value: mc, configurable: true, enumerable: true });
      } catch (e) { return; }
    }
    const native = (m) => (typeof mc[m] === "function" ? mc[m].bind(mc) : null);
    const register = native("registerTool");
    const unregister = native("unregisterTool");
    const provide = native("provideContext");
    const clear = native("clearContext");
    const define = (m, fn) => {
      try { Object.defineProperty(mc, m, { value: fn, configurable: true, writable: true }); } catch (e) {}
    };
    define("registerTool", function registerTool(tool, options) {
      report(where + ".registerTool", tool);
      return register ? register(tool, options) : undefined;
    });
    define("unregisterTool", function unregisterTool(n) {
      return unregister ? unregister(n) : undefined;
    });
    // Removed from the draft in 2026 but still shipped by some pages.
    define("provideContext", function provideContext(ctx) {
      try {
        const tools = ctx && ctx.tools;
        if (tools && typeof tools.length === "number") {
          for (let i = 0; i < tools.length && i < MAX_TOOLS; i++) report(where + ".provideContext", tools[i]);
        }
      } catch (e) {}
      return provide ? provide(ctx) : undefined;
    });
    define("clearContext", function clearContext() {
      return clear ? clear() : undefined;
    });
  };
  install(globalThis.navigator, "navigator.modelContext");
  install(globalThis.document, "document.modelContext");
})();
