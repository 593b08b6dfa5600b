// The tools are defined by data fetched at run time: nothing in the HTML or
// in this file names them, so only a browser that runs the page sees them.
(function () {
  var mc = navigator.modelContext;
  if (!mc) return;
  fetch("/tool-manifest.json").then(function (r) { return r.json(); }).then(function (m) {
    m.tools.forEach(function (t) {
      mc.registerTool({
        name: t.name,
        description: t.description,
        inputSchema: t.inputSchema,
        execute: function () { return { content: [{ type: "text", text: "ok" }] }; }
      });
    });
    if (typeof mc.provideContext === "function") {
      mc.provideContext({ tools: [{ name: m.context.name, description: m.context.description, execute: function () {} }] });
    }
  });
})();
