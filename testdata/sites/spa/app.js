// A client-rendered single-page app: the server sends an empty #root and
// this script builds the page, JSON-LD included.
(function () {
  var root = document.getElementById("root");
  root.innerHTML =
    '<header><nav><a href="/">Home</a> <a href="/pricing">Pricing</a> <a href="/docs/getting-started">Docs</a></nav></header>' +
    '<main>' +
    '<h1>Acme Widgets for busy teams</h1>' +
    '<p>Acme builds configurable widgets that ship in minutes. Order online, track every delivery, and integrate with your inventory through our API.</p>' +
    '<h2>Why teams choose Acme</h2>' +
    '<p>Transparent pricing, same-day dispatch, and a support desk that answers within the hour.</p>' +
    '<p><a href="/contact">Contact sales</a> or read the <a href="/docs/api">API reference</a>.</p>' +
    '</main>';
  var ld = document.createElement("script");
  ld.type = "application/ld+json";
  ld.textContent = JSON.stringify({
    "@context": "https://schema.org",
    "@type": "Organization",
    "name": "Acme Widgets",
    "url": location.origin + "/"
  });
  document.head.appendChild(ld);
})();
