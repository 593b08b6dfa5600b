// Package browser is the origin's headless Chromium: screenshots of a site's
// homepage and pages rendered after their JavaScript ran (DOM, console errors,
// WebMCP tools registered at run time). It lives in the origin, not the
// engine, so the engine stays a library without a browser.
//
// Chromium is found through CHROME_PATH or the PATH and started on the first
// job. A job gets a fresh tab in a fresh browser context (its own cookies,
// storage, cache and service workers, disposed of afterwards); tabs are
// prepared ahead so a warm job pays only for loading and capturing. Jobs are
// bounded: Tabs at once, a bounded queue (ErrBusy beyond it), a deadline, a
// download cap per page, a memory budget for the browser's process tree
// (proportional set size, from /proc), and a watchdog that restarts a browser
// that crashed or stopped answering; the jobs it was running fail with
// ErrCrashed and later jobs run on the new browser. A Pool is one Chromium:
// Sibling makes another from the same Config, so that jobs of different
// callers (anonymous background captures, paid renders) never share a
// browser process, and one's page cannot hang or crash the other's. The
// engine's renderer (Pool.Renderer) tries a render that failed with
// ErrCrashed once more, on the fresh browser.
//
// Every request the browser makes leaves through an in-process HTTP proxy
// (absolute-form HTTP, CONNECT for HTTPS and WebSocket) whose dialer applies
// the scanner's address policy (engine/fetch) after DNS resolution, to every
// address it dials. Each job's browser context has a proxy endpoint of its
// own, so its bytes are counted against the page weight cap and its
// connections end with it; an endpoint forwards nothing until the job's
// navigation starts, and the browser-wide endpoint forwards nothing at all.
// Chromium sends loopback through the proxy too (<-loopback>), its own
// resolver answers "not found" for everything but the proxy, WebRTC may not
// send UDP outside the proxy (a profile preference), and QUIC, DNS prefetch
// and background networking are off. Subresources, iframes, redirects,
// fetch/XHR, WebSocket, EventSource, beacons, workers, service workers and
// prefetches therefore all meet the fetcher's guard; service workers stay on
// because their requests are proxied like the page's. Non-network schemes
// need no guard: jobs start only from http(s) URLs, a web page cannot open
// file: or chrome: URLs, and data: and blob: reach no host.
package browser
