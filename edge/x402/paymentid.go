package x402

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"strings"
)

// PaymentID identifies a payment by what it moves on chain, whatever
// envelope carries it: the same transaction sent as v1 X-PAYMENT or v2
// PAYMENT-SIGNATURE, with members added to its payload, in another base64
// alphabet or with other spacing is one payment, so it buys one scan.
//
//   - SVM exact (payload.transaction, base64 of either alphabet, padded or
//     not): the transaction's message when it is a Solana wire transaction
//     (SolanaMessage), else its decoded bytes. Not the signatures: the fee
//     payer's slot is empty in a client-signed transaction and is only
//     filled when the facilitator settles, while the message is what every
//     signature signs.
//   - EVM exact (payload.authorization, EIP-3009): the payer and the nonce
//     (lower-cased, without 0x or leading zeros) with the asset, since a
//     token contract spends each (from, nonce) once.
//   - Anything else: the payload as canonical JSON (members sorted, no
//     spacing).
//
// Each is taken with the network in CAIP-2 form (v1 names mapped) and never
// with the x402 version. asset is the asset the payment is made in (the
// requirement's: a v1 payload does not name it). The result is a hex SHA-256.
func PaymentID(p Payload, asset string) string {
	network := p.Network
	if p.Accepted != nil {
		network = p.Accepted.Network
	}
	network = CAIP2(strings.TrimSpace(network))

	var members map[string]json.RawMessage
	_ = json.Unmarshal(p.Payload, &members)
	var tx string
	if raw, ok := members["transaction"]; ok && json.Unmarshal(raw, &tx) == nil {
		b := decodeBase64(strings.TrimSpace(tx))
		if b == nil { // not base64: no facilitator reads it, but it is still one payment
			return digest("svm-text", network, strings.TrimSpace(tx))
		}
		if msg, ok := SolanaMessage(b); ok {
			return digest("svm-message", network, string(msg))
		}
		return digest("svm-transaction", network, string(b))
	}
	var auth struct {
		From  string `json:"from"`
		Nonce string `json:"nonce"`
	}
	if raw, ok := members["authorization"]; ok && json.Unmarshal(raw, &auth) == nil {
		from, nonce := evmHex(auth.From), evmHex(auth.Nonce)
		if from != "" && nonce != "" {
			return digest("evm-eip3009", network, evmHex(asset), from, nonce)
		}
	}
	return digest("payload", network, string(canonicalJSON(p.Payload)))
}

// CAIP2 is a network's CAIP-2 id: v1 names are mapped, anything else is
// returned as it is.
func CAIP2(network string) string {
	switch network {
	case SolanaV1Network:
		return SolanaMainnet
	case SolanaDevnetV1:
		return SolanaDevnet
	case "base":
		return "eip155:8453"
	case "base-sepolia":
		return "eip155:84532"
	}
	return network
}

// digest hashes the fields, each length-prefixed so no two field lists
// share an encoding.
func digest(fields ...string) string {
	h := sha256.New()
	var n [8]byte
	for _, f := range fields {
		binary.BigEndian.PutUint64(n[:], uint64(len(f)))
		h.Write(n[:])
		h.Write([]byte(f))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// decodeBase64 reads standard or URL-safe base64, padded or not (line
// breaks are ignored, as in every decoder), or returns nil. A string that
// more than one of them read decodes to the same bytes in each.
func decodeBase64(s string) []byte {
	if s == "" {
		return nil
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b
		}
	}
	return nil
}

// evmHex normalises a hex quantity the way an EVM contract reads it:
// case-insensitive, 0x optional, leading zeros not significant.
func evmHex(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	s = strings.TrimPrefix(s, "0x")
	if t := strings.TrimLeft(s, "0"); t != "" || s == "" {
		return t
	}
	return "0"
}

// canonicalJSON re-encodes JSON with object members sorted and no spacing
// (numbers keep their spelling); what is not JSON is returned unchanged.
func canonicalJSON(b []byte) []byte {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return b
	}
	out, err := json.Marshal(v) // maps marshal with sorted keys
	if err != nil {
		return b
	}
	return out
}

// Sizes in Solana's wire format: a signature is 64 bytes, a key or a
// blockhash 32.
const (
	solanaSignature = 64
	solanaKey       = 32
)

// SolanaMessage reads tx as a Solana wire transaction (a compact-u16
// signature count, the signatures, then a legacy or v0 message) and returns
// its message, re-encoded canonically, or false when tx is not one. Decoders
// differ in what they tolerate (a length spelled in more bytes than needed,
// bytes after the message), so the message is rebuilt with minimal lengths
// and without what follows it: every spelling a facilitator might accept
// for one transaction yields the same bytes, and a well-formed
// transaction's message is returned as it was signed.
func SolanaMessage(tx []byte) ([]byte, bool) {
	r := &wire{b: tx, ok: true}
	sigs := r.compactU16()
	if !r.ok || sigs == 0 || !r.skip(sigs*solanaSignature) {
		return nil, false
	}
	if r.at < len(tx) && tx[r.at]&0x80 != 0 {
		if tx[r.at]&0x7f != 0 {
			return nil, false // only v0 exists
		}
		r.copy(1)
		return r.message(sigs, true)
	}
	return r.message(sigs, false)
}

// message reads a message for sigs signatures from the reader's position.
func (r *wire) message(sigs int, versioned bool) ([]byte, bool) {
	// The header: signatures required, read-only signed and unsigned keys.
	if !r.copy(3) {
		return nil, false
	}
	header := r.out[len(r.out)-3:]
	required, readonlySigned, readonlyUnsigned := int(header[0]), int(header[1]), int(header[2])
	keys := r.copyLen()
	if !r.ok || required != sigs || readonlySigned >= required || keys < required || readonlyUnsigned > keys-required ||
		!r.copy(keys*solanaKey) || !r.copy(solanaKey) {
		return nil, false
	}
	for range r.copyLen() {
		r.copy(1) // the program's key index
		r.copy(r.copyLen())
		r.copy(r.copyLen())
		if !r.ok {
			return nil, false
		}
	}
	if versioned {
		for range r.copyLen() { // address table lookups
			r.copy(solanaKey)
			r.copy(r.copyLen())
			r.copy(r.copyLen())
			if !r.ok {
				return nil, false
			}
		}
	}
	return r.out, r.ok
}

// wire reads Solana's wire encoding and writes what it copies to out in
// canonical form; ok turns false at the first read past the end or the
// first malformed length, and every read after is a no-op.
type wire struct {
	b   []byte
	at  int
	ok  bool
	out []byte
}

func (w *wire) skip(n int) bool {
	if !w.ok || n < 0 || n > len(w.b)-w.at {
		w.ok = false
		return false
	}
	w.at += n
	return true
}

func (w *wire) copy(n int) bool {
	start := w.at
	if !w.skip(n) {
		return false
	}
	w.out = append(w.out, w.b[start:w.at]...)
	return true
}

// copyLen reads a compact-u16 and writes it in its shortest form.
func (w *wire) copyLen() int {
	v := w.compactU16()
	if w.ok {
		for x := v; ; x >>= 7 {
			if x < 0x80 {
				w.out = append(w.out, byte(x))
				break
			}
			w.out = append(w.out, byte(x&0x7f|0x80))
		}
	}
	return v
}

// compactU16 reads a compact-u16: 1 to 3 bytes, 7 bits each, low bits
// first, at most 0xffff.
func (w *wire) compactU16() int {
	v := 0
	for i := 0; i < 3; i++ {
		if !w.ok || w.at >= len(w.b) {
			w.ok = false
			return 0
		}
		c := w.b[w.at]
		w.at++
		if i == 2 && c > 0x03 {
			w.ok = false
			return 0
		}
		v |= int(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			return v
		}
	}
	w.ok = false
	return 0
}
