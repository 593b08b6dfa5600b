// Checks x402 answers with the official x402 TypeScript package (@x402/core):
// a 402's requirements with its schemas, and a paid answer's settlement
// header the way its HTTP client reads it.
// stdin: {"header": "<PAYMENT-REQUIRED value>", "body": <the 402's JSON body>,
//         "paymentResponse": {"name": "PAYMENT-RESPONSE" | "X-PAYMENT-RESPONSE", "value": "...", "status": 200}}
//        (each part optional; only the parts given are checked)
// stdout: {"v2": {ok, error, value}, "v1": {ok, error, value},
//          "settle": {ok, error, value, paymentStatus}}
import { readFileSync } from "node:fs";
import { PaymentRequiredV1Schema, PaymentRequiredV2Schema, z } from "@x402/core/schemas";
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from "@x402/core/http";
import { x402Client, x402HTTPClient } from "@x402/core/client";

// The package checks a facilitator's settle answer with this schema but does
// not export it (settleResponseSchema in its HTTPFacilitatorClient, 2.27.0);
// copied here with the package's own zod, since the header is that answer as
// the resource server passes it on (SettleResponse).
const SettleResponseSchema = z.object({
  success: z.boolean(),
  errorReason: z.string().nullish(),
  errorMessage: z.string().nullish(),
  payer: z.string().nullish(),
  transaction: z.string(),
  network: z.custom((value) => typeof value === "string"),
  amount: z.string().nullish(),
  extensions: z.record(z.string(), z.unknown()).nullish(),
  extra: z.record(z.string(), z.unknown()).nullish(),
});

const input = JSON.parse(readFileSync(0, "utf8"));
const result = (parsed) => ({ ok: parsed.success, error: parsed.success ? null : String(parsed.error), value: parsed.success ? parsed.data : null });
const out = {};
if ("header" in input) {
  try {
    out.v2 = result(PaymentRequiredV2Schema.safeParse(decodePaymentRequiredHeader(input.header)));
  } catch (e) {
    out.v2 = { ok: false, error: "decode: " + e.message, value: null };
  }
}
if ("body" in input) {
  out.v1 = result(PaymentRequiredV1Schema.safeParse(input.body));
}
if (input.paymentResponse) {
  const { name = "PAYMENT-RESPONSE", value = "", status = 200 } = input.paymentResponse;
  try {
    out.settle = result(SettleResponseSchema.safeParse(decodePaymentResponseHeader(value)));
    // What a paying client concludes from the answer: "settled", or why not.
    const getHeader = (h) => (h.toLowerCase() === name.toLowerCase() ? value : null);
    out.settle.paymentStatus = new x402HTTPClient(new x402Client()).parsePaymentResult({ status, getHeader, body: null }).paymentStatus;
  } catch (e) {
    out.settle = { ok: false, error: "decode: " + e.message, value: null, paymentStatus: null };
  }
}
process.stdout.write(JSON.stringify(out));
