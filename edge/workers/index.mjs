// Entry module of the Worker: `make worker` copies it to build/worker/index.mjs,
// beside Go's own wasm_exec.js and app.wasm (cmd/edgeworker, GOOS=js).
//
// One Go instance per isolate. The isolate's first request instantiates the
// module and runs Go's start-up, which reads the settings once; the program
// then waits, and every request is a call into it (serve), answered when Go
// calls respond. A Go program that exits (a panic outside a handler) fails
// the requests it held with a 500, and the next request starts a new one.
//
// Per request, never shared: the body, the answer, the sockets (Workers refuse
// a socket opened by another request), the cache writes, ctx.waitUntil. Go
// starts a request's I/O from that request's goroutine, which the runtime
// only resumes from that request's own promises, so each I/O object is made
// in, and used by, the request it belongs to. A request's sockets that Go left
// open are closed when it answers.
//
// Public, cacheable GETs (badges, discovery documents) are answered from the
// Cache API here, before Go is called; Go's public 200s are stored for the
// next caller without per-caller headers.
import "./wasm_exec.js";
import { connect } from "cloudflare:sockets";
import program from "./app.wasm";

const CACHEABLE = /^\/(api\/badge$|\.well-known\/|llms\.txt$|llms-full\.txt$|robots\.txt$|sitemap\.xml$|openapi\.json$|skills\/)/;
// Per-caller headers never go into a shared cache entry.
const PER_CALLER = ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset", "ratelimit", "ratelimit-policy", "retry-after", "set-cookie"];
const NULL_BODY = new Set([101, 204, 205, 304]);
const ORIGIN_BODY_CAP = 8 << 20; // a buffered origin answer (badge scores, openapi.json) is far smaller
const SOCKET_TIMEOUT_MS = 5000; // Redis answers in milliseconds; a silent one must not hold the request

// The answer when there is no Go program to ask: edge.InternalError's envelope
// (TestWorkerdWithoutGo holds the two together).
const FAILURE = JSON.stringify({
  error: "Internal error",
  code: "internal_error",
  message: "The edge failed while handling this request; retry. If it keeps failing, report it with the time of the request.",
  docs: "https://github.com/agentready/agentready/blob/main/docs/api.md#error-codes",
}) + "\n";

function failure() {
  return new Response(FAILURE, { status: 500, headers: { "Content-Type": "application/json", "Cache-Control": "no-store" } });
}

let edge = null; // the running program: { go, bridge }
let started = 0; // Go programs this isolate has started (the log says which one runs)
let lastId = 0;
const inflight = new Map(); // request id → { answer, sockets }

function headersOf(head) {
  const h = new Headers();
  for (const line of head.split("\n")) {
    const i = line.indexOf(": ");
    if (i > 0) h.append(line.slice(0, i), line.slice(i + 2));
  }
  return h;
}

function headOf(headers) {
  let s = "";
  for (const [k, v] of headers) s += k + ": " + v + "\n";
  return s;
}

// readCapped reads a stream whole, but no more than cap bytes.
async function readCapped(stream, cap) {
  const reader = stream.getReader();
  const chunks = [];
  let n = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    n += value.byteLength;
    if (n >= cap) {
      reader.cancel().catch(() => {});
      break;
    }
  }
  const out = new Uint8Array(Math.min(n, cap));
  let at = 0;
  for (const c of chunks) {
    const part = c.subarray(0, out.length - at);
    out.set(part, at);
    at += part.length;
  }
  return out;
}

function within(promise, ms) {
  if (!ms) return promise;
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error("timed out after " + ms + " ms")), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

// current is the request whose event the runtime is delivering to Go: Go
// resumes only from serve and settle, and runs only the goroutines that
// event woke, which belong to that request. Every host call and answer is
// checked against it, so a request whose code ran on another's behalf is
// reported in the log ("crossed requests") instead of passing unnoticed.
let current = 0;
const owners = new Map(); // token → the request that started the host call

function crossed(what) {
  console.error(`edge: crossed requests: ${what} while request ${current} was running`);
}

// start instantiates the module and runs Go until it waits for requests.
function start(env) {
  const go = new Go();
  const self = { go, bridge: null };
  // Host functions that work asynchronously take a token first and report
  // through settle(token, value, error), exactly once, in the runtime's
  // event for the request that made the call.
  const reply = (tok, work) => {
    if (current === 0) crossed("Go started I/O outside any request");
    owners.set(tok, current);
    const settle = (v, e) => {
      const prev = current;
      current = owners.get(tok);
      owners.delete(tok);
      try {
        if (!go.exited) self.bridge.settle(tok, v, e);
      } finally {
        current = prev;
      }
    };
    work.then((v) => settle(v ?? null, null), (e) => settle(null, String((e && e.message) || e)));
  };
  self.bridge = {
    env,
    fetch(tok, method, url, head, body, stream) {
      reply(tok, (async () => {
        const resp = await fetch(url, { method, headers: headersOf(head), body, redirect: "manual" });
        const out = { status: resp.status, head: headOf(resp.headers) };
        if (stream) out.stream = resp.body;
        else out.body = resp.body ? await readCapped(resp.body, ORIGIN_BODY_CAP) : new Uint8Array(0);
        return out;
      })());
    },
    cacheGet(tok, url) {
      reply(tok, caches.default.match(url).then((r) => (r ? r.arrayBuffer().then((b) => new Uint8Array(b)) : null)));
    },
    cachePut(tok, url, bytes, ttl) {
      reply(tok, caches.default.put(url, new Response(bytes, { headers: { "Cache-Control": "public, max-age=" + ttl } })));
    },
    connect(tok, id, addr, tls) {
      if (id !== current) crossed(`a socket of request ${id}`);
      reply(tok, (async () => {
        const socket = connect(addr, tls ? { secureTransport: "on" } : {});
        const call = inflight.get(id);
        const conn = {
          reader: socket.readable.getReader(),
          writer: socket.writable.getWriter(),
          close() {
            if (call) call.sockets.delete(conn);
            socket.close().catch(() => {});
          },
        };
        if (call) call.sockets.add(conn);
        // Settles once the node has accepted the connection (or refused it,
        // or not answered in time), so that Go can try the next seed node.
        try {
          await within(socket.opened, SOCKET_TIMEOUT_MS);
        } catch (e) {
          conn.close();
          throw new Error("cannot connect to " + addr + ": " + ((e && e.message) || e));
        }
        return conn;
      })());
    },
    write(tok, conn, bytes) {
      reply(tok, within(conn.writer.write(bytes), SOCKET_TIMEOUT_MS));
    },
    read(tok, conn) {
      reply(tok, within(conn.reader.read(), SOCKET_TIMEOUT_MS).then((r) => (r.done ? null : r.value)));
    },
    respond(id, status, head, body) {
      if (id !== current) crossed(`the answer of request ${id}`);
      const call = inflight.get(id);
      if (!call) return;
      inflight.delete(id);
      for (const conn of call.sockets) conn.close();
      call.answer({ status, head, body });
    },
  };
  go.exit = (code) => {
    console.error(`edge: Go program ${started} exited (code ${code}); the next request starts a new one`);
    if (edge === self) edge = null;
    for (const call of inflight.values()) {
      for (const conn of call.sockets) conn.close();
      call.answer(null);
    }
    inflight.clear();
  };
  globalThis.__agentreadyEdge = self.bridge;
  started++;
  // run's promise settles only when Go exits, which go.exit reports; it fails
  // when the module is not a Go program.
  go.run(new WebAssembly.Instance(program, go.importObject)).catch((e) => console.error("edge: the Go program failed: " + ((e && e.stack) || e)));
  if (go.exited || typeof self.bridge.serve !== "function") throw new Error("the Go program did not start serving");
  console.log(`edge: Go program ${started} started in this isolate`);
  return self;
}

function running(env) {
  if (!edge) edge = start(env);
  return edge;
}

async function serve(req, env) {
  let body = null;
  let id = 0;
  try {
    if (req.body && req.method !== "GET" && req.method !== "HEAD") {
      body = await readCapped(req.body, running(env).bridge.maxBody);
    }
    const { bridge } = running(env);
    id = ++lastId;
    const { promise, resolve } = Promise.withResolvers();
    inflight.set(id, { answer: resolve, sockets: new Set() });
    const head = req.method + " " + req.url + "\n" + headOf(req.headers);
    current = id;
    try {
      bridge.serve(id, head, body);
    } finally {
      current = 0;
    }
    const out = await promise;
    if (!out) return failure();
    return new Response(NULL_BODY.has(out.status) ? null : out.body, { status: out.status, headers: headersOf(out.head) });
  } catch (e) {
    inflight.delete(id);
    console.error("edge: " + ((e && e.stack) || e));
    return failure();
  }
}

function cacheable(req) {
  if (req.method !== "GET" || req.headers.has("authorization") || req.headers.has("x-api-key")) return false;
  return CACHEABLE.test(new URL(req.url).pathname);
}

export default {
  async fetch(req, env, ctx) {
    if (!cacheable(req)) return serve(req, env);
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
    const resp = await serve(req, env);
    const cc = resp.headers.get("cache-control") || "";
    const vary = resp.headers.get("vary") || "";
    // Responses that vary by Accept (markdown negotiation) stay uncached: the Cache API keys on the URL only.
    if (resp.status === 200 && /\bpublic\b/.test(cc) && !/accept(?!-encoding)/i.test(vary)) {
      const stored = new Response(resp.clone().body, resp);
      for (const h of PER_CALLER) stored.headers.delete(h);
      ctx.waitUntil(cache.put(req, stored));
    }
    return resp;
  },
};
