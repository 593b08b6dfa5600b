// Checks a 402 answer with the official x402 TypeScript package's schemas.
// stdin: {"header": "<PAYMENT-REQUIRED value>", "body": <the JSON body>}
// stdout: {"v2": {ok, error, value}, "v1": {ok, error, value}}
import { readFileSync } from "node:fs";
import { PaymentRequiredV1Schema, PaymentRequiredV2Schema } from "@x402/core/schemas";
import { decodePaymentRequiredHeader } from "@x402/core/http";

const input = JSON.parse(readFileSync(0, "utf8"));
const result = (parsed) => ({ ok: parsed.success, error: parsed.success ? null : String(parsed.error), value: parsed.success ? parsed.data : null });
let v2;
try {
  v2 = result(PaymentRequiredV2Schema.safeParse(decodePaymentRequiredHeader(input.header)));
} catch (e) {
  v2 = { ok: false, error: "decode: " + e.message, value: null };
}
const v1 = result(PaymentRequiredV1Schema.safeParse(input.body));
process.stdout.write(JSON.stringify({ v2, v1 }));
