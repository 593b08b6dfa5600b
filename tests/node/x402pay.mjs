// Builds the payment for a 402 the way a paying agent does, with the official
// x402 TypeScript client (@x402/core): x402HTTPClient reads the 402, the
// x402Client picks a requirement (scheme and network registered, spend
// controls) and wraps what the scheme produced into a PaymentPayload, and
// the HTTP client encodes it into its request header.
//
// stdin:  {"status": 402, "headers": {"PAYMENT-REQUIRED": "..."}, "body": <the 402 body>, "transaction": "<test token>"}
// stdout: {"header": "PAYMENT-SIGNATURE" | "X-PAYMENT", "value": "<encoded>", "requirement": <the one chosen>, "payload": <the PaymentPayload>}
//
// A 402 without PAYMENT-REQUIRED among its headers is read as x402 v1 from
// its body, and paid with X-PAYMENT, as the client does for a v1-only server.
import { readFileSync } from "node:fs";
import { x402Client, x402HTTPClient } from "@x402/core/client";

// Why not the real Solana scheme (@x402/svm 2.27.0, ExactSvmScheme): its
// createPaymentPayload asks a Solana RPC for the mint account (decimals and
// token program, fetched on every run: the cache is per process) and, unless
// the 402 carries extra.recentBlockhash, for a recent blockhash, so it
// cannot build a payment offline; and the transaction it builds would be
// refused anyway by the local facilitator the tests run
// (internal/testing/facilitator), which settles readable test tokens instead of
// signed transactions, there being no chain to land them on. So this scheme
// client stands in for it, the rest of the client being the official one:
// it speaks the same SchemeNetworkClient interface, returns the same shapes
// (v2: {x402Version, payload: {transaction}}; v1: also scheme and network),
// and names the same default assets as @x402/svm's table (USDC, 6 decimals),
// so the client's default spend cap ($1 a payment) applies as it would.
const USDC = {
  "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp": "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
  "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1": "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU",
};
const V1_NETWORKS = { solana: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", "solana-devnet": "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1" };

const input = JSON.parse(readFileSync(0, "utf8"));
if (typeof input.transaction !== "string" || input.transaction === "") {
  console.error("x402pay.mjs: stdin needs a transaction (the test token the payment carries)");
  process.exit(2);
}

let chosen; // the requirement the client selected, as it handed it to the scheme
const testExactSvm = {
  scheme: "exact",
  findDefaultAsset(asset, network) {
    const mint = USDC[V1_NETWORKS[network] ?? network];
    return mint !== undefined && mint === asset ? { asset: mint, decimals: 6, symbol: "USDC" } : undefined;
  },
  async createPaymentPayload(x402Version, requirements) {
    chosen = requirements;
    const payload = { transaction: input.transaction };
    if (x402Version === 1) {
      return { x402Version, scheme: requirements.scheme, network: requirements.network, payload };
    }
    return { x402Version, payload };
  },
};

const client = new x402Client();
for (const network of Object.keys(USDC)) client.register(network, testExactSvm);
for (const network of Object.keys(V1_NETWORKS)) client.registerV1(network, testExactSvm);
const http = new x402HTTPClient(client);

const headers = Object.fromEntries(Object.entries(input.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
const getHeader = (name) => headers[name.toLowerCase()] ?? null;

try {
  if (input.status !== 402) {
    throw new Error(`the answer is ${input.status}, not 402: there is nothing to pay`);
  }
  const required = http.getPaymentRequiredResponse(getHeader, input.body);
  const payload = await http.createPaymentPayload(required);
  const encoded = http.encodePaymentSignatureHeader(payload);
  const [header] = Object.keys(encoded);
  process.stdout.write(JSON.stringify({ header, value: encoded[header], requirement: chosen, payload }));
} catch (e) {
  console.error("x402pay.mjs: " + (e && e.message ? e.message : String(e)));
  process.exit(1);
}
