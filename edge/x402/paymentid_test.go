package x402

import (
	"bytes"
	"crypto/ed25519"
	"encoding/binary"
	"strings"
	"testing"
)

// solanaTransfer builds a Solana v0 transaction shaped like the one an x402
// client signs for the exact scheme: a compute-unit limit and price, then a
// TransferChecked of amount from the payer's token account to the payee's,
// with the facilitator as fee payer. The fee payer's signature slot is left
// empty (the facilitator fills it when it settles); the payer's is a real
// Ed25519 signature of the message. legacy builds the pre-v0 message format.
func solanaTransfer(t testing.TB, blockhashSeed byte, amount uint64, legacy bool) (tx, message []byte) {
	t.Helper()
	key := func(b byte) []byte { return bytes.Repeat([]byte{b}, 32) }
	pub, priv, err := ed25519.GenerateKey(bytes.NewReader(bytes.Repeat([]byte{7}, 64)))
	if err != nil {
		t.Fatal(err)
	}
	var m []byte
	if !legacy {
		m = append(m, 0x80) // v0
	}
	// Keys: the fee payer (writable signer), the payer (read-only signer),
	// the two token accounts (writable), the mint, the token program and the
	// compute budget program (read-only).
	m = append(m, 2, 1, 3, 7)
	for _, k := range [][]byte{key(0xfe), pub, key(0x11), key(0x22), key(0x33), key(0x44), key(0x55)} {
		m = append(m, k...)
	}
	m = append(m, key(blockhashSeed)...)
	limit := binary.LittleEndian.AppendUint32([]byte{2}, 20000)
	price := binary.LittleEndian.AppendUint64([]byte{3}, 1)
	transfer := append(binary.LittleEndian.AppendUint64([]byte{12}, amount), 6)
	m = append(m, 3)
	m = append(m, 6, 0, byte(len(limit)))
	m = append(m, limit...)
	m = append(m, 6, 0, byte(len(price)))
	m = append(m, price...)
	m = append(m, 5, 4, 2, 4, 3, 1, byte(len(transfer)))
	m = append(m, transfer...)
	if !legacy {
		m = append(m, 0) // no address table lookups
	}
	tx = append([]byte{2}, make([]byte, 64)...)
	tx = append(tx, ed25519.Sign(priv, m)...)
	return append(tx, m...), m
}

func TestSolanaMessage(t *testing.T) {
	v0, msg := solanaTransfer(t, 0x99, 100000, false)
	legacy, legacyMsg := solanaTransfer(t, 0x99, 100000, true)
	if !ed25519.Verify(msg[1+3+1+32:1+3+1+64], msg, v0[1+64:1+128]) {
		t.Fatal("the test transaction's payer signature does not verify")
	}
	edit := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), v0...)) }
	// The data length of the transfer, the last instruction: 10, one byte
	// before the data and the (empty) lookup table count.
	dataLen := len(v0) - 12
	// Spellings of one transaction a lenient decoder might accept: each
	// yields the message as it was signed.
	for _, c := range []struct {
		name string
		tx   []byte
		want []byte
	}{
		{"v0", v0, msg},
		{"legacy", legacy, legacyMsg},
		{"the fee payer's signature filled in", edit(func(b []byte) []byte { copy(b[1:65], bytes.Repeat([]byte{0xab}, 64)); return b }), msg},
		{"bytes after the message", append(append([]byte(nil), v0...), 0, 1, 2), msg},
		{"the signature count in two bytes", append([]byte{0x82, 0x00}, v0[1:]...), msg},
		{"a data length in two bytes", append(append(append([]byte(nil), v0[:dataLen]...), 0x8a, 0x00), v0[dataLen+1:]...), msg},
	} {
		if got, ok := SolanaMessage(c.tx); !ok || !bytes.Equal(got, c.want) {
			t.Errorf("%s: ok=%v, the message differs from the one signed", c.name, ok)
		}
	}
	for _, c := range []struct {
		name string
		tx   []byte
	}{
		{"empty", nil},
		{"truncated", v0[:len(v0)-1]},
		{"no signatures", edit(func(b []byte) []byte { b[0] = 0; return b })},
		{"a signature count that disagrees with the header", edit(func(b []byte) []byte { b[0] = 1; return b })},
		{"a compact-u16 over 0xffff", append([]byte{0x82, 0x80, 0x04}, v0[1:]...)},
		{"message version 1", edit(func(b []byte) []byte { b[129] = 0x81; return b })},
		{"read-only fee payer", edit(func(b []byte) []byte { b[131] = 2; return b })},
		{"an instruction longer than the message", edit(func(b []byte) []byte { b[dataLen] = 200; return b })},
		{"a test token", []byte("test-tx|Payer|100000|Payee|n1")},
	} {
		if _, ok := SolanaMessage(c.tx); ok {
			t.Errorf("%s: read as a Solana transaction", c.name)
		}
	}
}

// One transaction is one id, whichever version carries it and whether or
// not the fee payer has signed; another transaction or network is another.
func TestPaymentID(t *testing.T) {
	tx, _ := solanaTransfer(t, 0x99, 100000, false)
	otherTx, _ := solanaTransfer(t, 0x98, 100000, false) // another blockhash: another transaction
	settled := append([]byte(nil), tx...)
	copy(settled[1:65], bytes.Repeat([]byte{0xab}, 64)) // the fee payer's signature filled in
	token := []byte("test-tx|Payer|100000|Payee|n1")
	id := func(version int, tx []byte, network string) string {
		return PaymentID(Payment{X402Version: version, Transaction: tx}, network)
	}
	base := id(2, tx, SolanaMainnet)
	if len(base) != 64 || strings.Trim(base, "0123456789abcdef") != "" {
		t.Fatalf("id %q is not a hex SHA-256", base)
	}
	for _, c := range []struct {
		name string
		got  string
		same bool
	}{
		{"v1", id(1, tx, SolanaMainnet), true},
		{"the v1 network name", id(2, tx, SolanaV1Network), true},
		{"the fee payer's signature filled in", id(2, settled, SolanaMainnet), true},
		{"another transaction", id(2, otherTx, SolanaMainnet), false},
		{"devnet", id(2, tx, SolanaDevnet), false},
		{"a token that is not a Solana transaction", id(2, token, SolanaMainnet), false},
	} {
		if (c.got == base) != c.same {
			t.Errorf("%s: same payment = %v, want %v", c.name, c.got == base, c.same)
		}
	}
	if id(2, token, SolanaMainnet) != id(1, token, SolanaMainnet) || id(2, token, SolanaMainnet) == id(2, []byte("test-tx|Payer|100000|Payee|n2"), SolanaMainnet) {
		t.Error("a token is not identified by its bytes")
	}
}

func TestCAIP2(t *testing.T) {
	for v1, want := range map[string]string{"solana": SolanaMainnet, "solana-devnet": SolanaDevnet, SolanaMainnet: SolanaMainnet,
		"base-sepolia": "eip155:84532", "unknown": "unknown"} {
		if got := CAIP2(v1); got != want {
			t.Errorf("CAIP2(%q) = %q, want %q", v1, got, want)
		}
	}
	for _, n := range []string{SolanaMainnet, SolanaDevnet} {
		if CAIP2(V1Name(n)) != n {
			t.Errorf("%s does not survive V1Name and back", n)
		}
	}
}

// FuzzSolanaMessage: any bytes get an answer, never a panic; a message
// read is canonical (a transaction made of it reads back the same), and the
// signatures do not change it.
func FuzzSolanaMessage(f *testing.F) {
	for _, legacy := range []bool{false, true} {
		tx, _ := solanaTransfer(f, 1, 5, legacy)
		f.Add(tx)
	}
	f.Add([]byte{1})
	f.Add([]byte{0x80, 0x80, 0x04})
	f.Fuzz(func(t *testing.T, tx []byte) {
		msg, ok := SolanaMessage(tx)
		if !ok {
			return
		}
		if len(msg) == 0 || len(msg) > len(tx) {
			t.Fatalf("a message of %d bytes from a transaction of %d", len(msg), len(tx))
		}
		sigs := int(msg[0])
		if msg[0]&0x80 != 0 {
			sigs = int(msg[1])
		}
		canonical := binary.AppendUvarint(nil, uint64(sigs)) // a compact-u16 below 2^14 is a uvarint
		canonical = append(canonical, bytes.Repeat([]byte{0x5a}, sigs*64)...)
		canonical = append(canonical, msg...)
		if again, ok := SolanaMessage(canonical); !ok || !bytes.Equal(again, msg) {
			t.Fatalf("the message, signed again, reads back as another")
		}
	})
}
