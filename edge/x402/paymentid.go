package x402

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
)

// PaymentID identifies a payment by what it moves on chain: the same
// transaction sent as v1 X-PAYMENT or v2 PAYMENT-SIGNATURE is one payment,
// so it buys one scan. DecodePayment has read the envelope strictly and
// Forward sends the facilitator exactly the transaction read here, so no
// spelling the gateway accepts can be one payment to the facilitator and
// another to the id.
//
// The transaction counts by its message when it is a Solana wire
// transaction (SolanaMessage), else by its bytes. Not the signatures: the
// fee payer's slot is empty in a client-signed transaction and is only
// filled when the facilitator settles, while the message is what every
// signature signs. network is the network the payment is taken on (the
// requirement's, which Check compared the payment's with), in CAIP-2 form;
// the x402 version is not part of it. The result is a hex SHA-256.
func PaymentID(p Payment, network string) string {
	network = CAIP2(network)
	if msg, ok := SolanaMessage(p.Transaction); ok {
		return digest("svm-message", network, string(msg))
	}
	return digest("svm-transaction", network, string(p.Transaction))
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
