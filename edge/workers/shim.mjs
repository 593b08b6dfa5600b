// Entry module of the Worker (make worker copies it to build/worker/index.mjs).
//
// syumai/workers starts a new Go instance for every request (about 11 ms of
// CPU). Public, cacheable GETs — badges and discovery documents — are answered
// from the Cache API here, before Go starts; Go runs only on a miss, and its
// public 200s are stored for the next caller.
import worker from "./worker.mjs";

const CACHEABLE = /^\/(api\/badge$|\.well-known\/|llms\.txt$|llms-full\.txt$|robots\.txt$|sitemap\.xml$|openapi\.json$|skills\/)/;
// Per-caller headers never go into a shared cache entry.
const PER_CALLER = ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset", "ratelimit", "ratelimit-policy", "retry-after", "set-cookie"];

function cacheable(req) {
  if (req.method !== "GET" || req.headers.has("authorization") || req.headers.has("x-api-key")) return false;
  return CACHEABLE.test(new URL(req.url).pathname);
}

async function fetch(req, env, ctx) {
  if (!cacheable(req)) return worker.fetch(req, env, ctx);
  const cache = caches.default;
  const hit = await cache.match(req);
  if (hit) {
    const etag = hit.headers.get("etag");
    const inm = req.headers.get("if-none-match");
    if (etag && inm && inm.split(",").some((t) => t.trim() === etag || t.trim() === "*")) {
      const headers = new Headers({ ETag: etag, "X-Edge-Cache": "hit" });
      for (const h of ["cache-control", "vary", "access-control-allow-origin"]) {
        if (hit.headers.has(h)) headers.set(h, hit.headers.get(h));
      }
      return new Response(null, { status: 304, headers });
    }
    const resp = new Response(hit.body, hit);
    resp.headers.set("X-Edge-Cache", "hit");
    return resp;
  }
  const resp = await worker.fetch(req, env, ctx);
  const cc = resp.headers.get("cache-control") || "";
  const vary = resp.headers.get("vary") || "";
  // Responses that vary by Accept (markdown negotiation) stay uncached: the Cache API keys on the URL only.
  if (resp.status === 200 && /\bpublic\b/.test(cc) && !/accept(?!-encoding)/i.test(vary)) {
    const stored = new Response(resp.clone().body, resp);
    for (const h of PER_CALLER) stored.headers.delete(h);
    ctx.waitUntil(cache.put(req, stored));
  }
  return resp;
}

export default { ...worker, fetch };
