// verifywebhook.mjs: the Node receiver docs/webhooks.md shows, run by
// webhook/interop_test.go. Between the markers is the documentation's code,
// copied verbatim (the test compares them), so what Node users are told to
// write is what verifies the service's deliveries. Run with
// AGENTREADY_WEBHOOK_SECRET and PORT=0; it prints "listening <port>", then
// "handled <type> <id>" for each delivery it accepts.

// --- docs/webhooks.md ---
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";
import { Webhook } from "standardwebhooks";

// X-Scanner-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">,
// keyed with the secret string as it is, "whsec_" included.
export function verifyScannerSignature(secret, header, rawBody, nowSeconds = Date.now() / 1000) {
  let t;
  const signatures = [];
  for (const item of String(header ?? "").split(",")) {
    const [key, ...rest] = item.trim().split("=");
    if (rest.length === 0) return false;
    const value = rest.join("=");
    if (key === "t") {
      if (t !== undefined || !/^[0-9]+$/.test(value)) return false;
      t = value;
    } else if (key === "v1") {
      signatures.push(value);
    }
  }
  if (t === undefined || signatures.length === 0) return false;
  if (Math.abs(nowSeconds - Number(t)) > 300) return false;
  const expected = createHmac("sha256", secret).update(`${t}.`).update(rawBody).digest();
  return signatures.some((s) => /^[0-9a-f]{64}$/.test(s) && timingSafeEqual(Buffer.from(s, "hex"), expected));
}

const secret = process.env.AGENTREADY_WEBHOOK_SECRET;
const wh = new Webhook(secret); // webhook-id, webhook-timestamp, webhook-signature

const server = createServer((req, res) => {
  const chunks = [];
  let size = 0;
  req.on("data", (chunk) => {
    size += chunk.length;
    if (size > 1 << 20) req.destroy(); // deliveries are a few KB
    else chunks.push(chunk);
  });
  req.on("end", () => {
    const raw = Buffer.concat(chunks); // the raw bytes: verify before any JSON.parse
    let event;
    try {
      event = wh.verify(raw.toString("utf8"), req.headers);
    } catch (err) {
      res.writeHead(400).end(`webhook-signature: ${err.message}`);
      return;
    }
    if (!verifyScannerSignature(secret, req.headers["x-scanner-signature"], raw)) {
      res.writeHead(400).end("X-Scanner-Signature does not verify");
      return;
    }
    res.writeHead(204).end(); // answer first, then process; dedupe on event.id
    setImmediate(() => handle(event));
  });
});
server.listen(Number(process.env.PORT ?? 8000), "127.0.0.1");
// --- end of docs/webhooks.md ---

// The harness: what the documentation leaves to the reader.
function handle(event) {
  console.log(`handled ${event.type} ${event.id}`);
}
server.on("listening", () => console.log(`listening ${server.address().port}`));
