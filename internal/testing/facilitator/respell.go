package facilitator

import (
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/agentready/agentready/edge/x402"
)

// Spelling is one way a client might send a payment: the header it goes in
// and the header's value (base64 JSON). Same says whether the gateway must
// take it as the very payment the canonical spelling is (the same
// transaction, identified alike, forwarded alike); otherwise it must be
// refused as malformed before anything is asked of a facilitator.
type Spelling struct {
	Name   string
	Header string // x402.HeaderSignature or x402.HeaderPaymentV1
	Value  string
	Same   bool
}

// JSON is the spelling's decoded JSON (what the MCP transport carries in
// _meta["x402/payment"]).
func (s Spelling) JSON() []byte {
	b, _ := base64.StdEncoding.DecodeString(s.Value)
	return b
}

// Respellings are the envelopes an attacker tries to make one spent
// transaction (tx, standard base64) look like a new payment to the
// gateway while a facilitator still reads the spent one: members a
// version does not define, names in other letter cases or given twice,
// lenient base64 in the header or the transaction. junk is another
// transaction's base64, put where a lenient reader might take it instead.
// The spellings that must count as the same payment come first.
func Respellings(req x402.PaymentRequired, tx, junk string) []Spelling {
	acc := req.Accepts[0]
	v1Net := x402.V1Name(acc.Network)
	accJSON, _ := json.Marshal(acc)
	resJSON, _ := json.Marshal(req.Resource)
	std := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	v2 := func(payload string, more ...string) string {
		return `{"x402Version":2,"resource":` + string(resJSON) + `,"accepted":` + string(accJSON) + `,"payload":` + payload + strings.Join(more, "") + `}`
	}
	v1 := func(payload string, more ...string) string {
		return `{"x402Version":1,"scheme":"exact","network":` + q(v1Net) + `,"payload":` + payload + strings.Join(more, "") + `}`
	}
	pl := func(t string) string { return `{"transaction":` + q(t) + `}` }
	raw, _ := base64.StdEncoding.DecodeString(tx)
	sig, pay := x402.HeaderSignature, x402.HeaderPaymentV1
	out := []Spelling{
		{"v2 as the official client sends it", sig, std(v2(pl(tx))), true},
		{"v1 as the official client sends it", pay, std(v1(pl(tx))), true},
		{"v2 spaced, members reordered", sig, std("\n {\t\"payload\" : " + pl(tx) + ", \"accepted\":" + string(accJSON) + ",\"resource\":" + string(resJSON) + ",\"x402Version\":2 }\r\n"), true},
		{"v1 spaced", pay, std(" { \"network\" : " + q(v1Net) + " , \"payload\" : " + pl(tx) + " , \"scheme\" : \"exact\" , \"x402Version\" : 1 } "), true},
		{"v2 with extensions", sig, std(v2(pl(tx), `,"extensions":{"bazaar":{"n":1}}`)), true},
		{"v2 whose resource has only its url", sig, std(`{"x402Version":2,"resource":{"url":` + q(req.Resource.URL) + `},"accepted":` + string(accJSON) + `,"payload":` + pl(tx) + `}`), true},
		{"the transaction with JSON escapes", sig, std(v2(`{"transaction":"` + strings.NewReplacer("/", `\/`, "+", `\u002b`).Replace(tx) + `"}`)), true},

		{"v1 with an accepted member naming another network", pay, std(v1(pl(tx), `,"accepted":{"network":"solana-devnet"}`)), false},
		{"v1 with an accepted member naming any network", pay, std(v1(pl(tx), `,"accepted":{"network":"respelled-1"}`)), false},
		{"v1 with an accepted requirement", pay, std(v1(pl(tx), `,"accepted":`+string(accJSON))), false},
		{"v1 with a resource", pay, std(v1(pl(tx), `,"resource":`+string(resJSON))), false},
		{"v2 with v1's scheme and network", sig, std(v2(pl(tx), `,"scheme":"exact","network":`+q(v1Net))), false},
		{"an envelope member of its own", sig, std(v2(pl(tx), `,"nonce":"n-1"`)), false},
		{"a payload member of its own", sig, std(v2(`{"transaction":` + q(tx) + `,"n":1}`)), false},
		{"v1 with a memo in its payload", pay, std(v1(`{"transaction":` + q(tx) + `,"memo":"again"}`)), false},
		{"a signature beside the transaction", sig, std(v2(`{"transaction":` + q(tx) + `,"signature":"0x1"}`)), false},
		{"payload and PAYLOAD", sig, std(v2(pl(tx), `,"PAYLOAD":`+pl(junk))), false},
		{"PAYLOAD and payload", sig, std(`{"x402Version":2,"resource":` + string(resJSON) + `,"accepted":` + string(accJSON) + `,"PAYLOAD":` + pl(junk) + `,"payload":` + pl(tx) + `}`), false},
		{"v1 payload and Payload", pay, std(v1(pl(tx), `,"Payload":`+pl(junk))), false},
		{"Payload alone", sig, std(`{"x402Version":2,"resource":` + string(resJSON) + `,"accepted":` + string(accJSON) + `,"Payload":` + pl(tx) + `}`), false},
		{"transaction and Transaction", sig, std(v2(`{"transaction":` + q(tx) + `,"Transaction":` + q(junk) + `}`)), false},
		{"TRANSACTION and transaction", pay, std(v1(`{"TRANSACTION":` + q(junk) + `,"transaction":` + q(tx) + `}`)), false},
		{"TRANSACTION alone", sig, std(v2(`{"TRANSACTION":` + q(tx) + `}`)), false},
		{"x402Version twice in two cases", sig, std(v2(pl(tx), `,"X402VERSION":2`)), false},
		{"a name with a long s (folds to s in Go)", pay, std(`{"x402Version":1,"\u017fcheme":"exact","network":` + q(v1Net) + `,"payload":` + pl(tx) + `}`), false},
		{"accepted and Accepted", sig, std(v2(pl(tx), `,"Accepted":`+string(accJSON))), false},
		{"amount and Amount in accepted", sig, std(`{"x402Version":2,"resource":` + string(resJSON) + `,"accepted":` + strings.Replace(string(accJSON), `"amount":`, `"Amount":"1","amount":`, 1) + `,"payload":` + pl(tx) + `}`), false},
		{"payload given twice, the spent one last", sig, std(v2(pl(junk), `,"payload":`+pl(tx))), false},
		{"transaction given twice, the spent one last", pay, std(v1(`{"transaction":` + q(junk) + `,"transaction":` + q(tx) + `}`)), false},
		{"the transaction with a leading space", sig, std(v2(pl(" " + tx))), false},
		{"the transaction with a trailing newline", sig, std(v2(pl(tx + "\n"))), false},
		{"the transaction with CRLF inside", pay, std(v1(pl(tx[:len(tx)/2] + "\r\n" + tx[len(tx)/2:]))), false},
		{"the transaction with a tab inside", sig, std(v2(pl(tx[:4] + "\t" + tx[4:]))), false},
		{"the transaction with a space inside", sig, std(v2(pl(tx[:4] + " " + tx[4:]))), false},
		{"the transaction with extra padding", sig, std(v2(pl(tx + "=="))), false},
		{"the transaction with a trailing =", pay, std(v1(pl(strings.TrimRight(tx, "=") + "===="))), false},
		{"the transaction unpadded or re-padded", sig, std(v2(pl(unpadOrPad(tx)))), false},
		{"the transaction in base64url", sig, std(v2(pl(base64.URLEncoding.EncodeToString(append([]byte{0xfb, 0xff, 0xbf}, raw...))))), false},
		{"the transaction as a number", sig, std(v2(`{"transaction":1}`)), false},
		{"the payload as an array", sig, std(v2(`[` + pl(tx) + `]`)), false},
		{"x402Version as a string", sig, std(`{"x402Version":"2","resource":` + string(resJSON) + `,"accepted":` + string(accJSON) + `,"payload":` + pl(tx) + `}`), false},
		{"a second JSON value after the payment", sig, std(v2(pl(tx)) + v2(pl(junk))), false},
		{"a byte-order mark before the JSON", sig, std("\ufeff" + v2(pl(tx))), false},
		{"the header in base64url without padding", sig, base64.RawURLEncoding.EncodeToString([]byte(needsPadding(v2(pl(tx))))), false},
		{"the header with a line break", sig, lineBreak(std(v2(pl(tx)))), false},
		{"the header with extra padding", pay, std(v1(pl(tx))) + "==", false},
		{"a v2 payment in X-PAYMENT", pay, std(v2(pl(tx))), false},
	}
	return out
}

// unpadOrPad spells a padded base64 string without its padding, or an
// unpadded one with a wrong one.
func unpadOrPad(s string) string {
	if strings.HasSuffix(s, "=") {
		return strings.TrimRight(s, "=")
	}
	return s + "="
}

// needsPadding adds spaces to JSON until its base64 needs padding.
func needsPadding(j string) string {
	for len(j)%3 == 0 {
		j += " "
	}
	return j
}

// lineBreak puts a line break (which Go's decoder skips) into s.
func lineBreak(s string) string {
	return s[:len(s)/2] + "\n" + s[len(s)/2:]
}
