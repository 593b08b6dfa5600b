package x402

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
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

// paymentHeader builds a PaymentPayload header value of either version, the way
// a client spells it; respell changes the JSON before it is encoded.
func paymentHeader(t *testing.T, version int, payload map[string]any, enc *base64.Encoding, respell func([]byte) []byte) (v2, v1 string) {
	t.Helper()
	req := Config{PayTo: "Payee", FeePayer: "FeePayer"}.Requirement()
	var env map[string]any
	if version == 2 {
		env = map[string]any{"x402Version": 2, "resource": Resource{URL: "https://scanner.example" + GatewayPath}, "accepted": req, "payload": payload}
	} else {
		env = map[string]any{"x402Version": 1, "scheme": "exact", "network": V1Name(req.Network), "payload": payload}
	}
	b, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	if respell != nil {
		b = respell(b)
	}
	if enc == nil {
		enc = base64.StdEncoding
	}
	if version == 2 {
		return enc.EncodeToString(b), ""
	}
	return "", enc.EncodeToString(b)
}

func idOf(t *testing.T, v2, v1 string) string {
	t.Helper()
	p, _, sent, err := DecodePayment(v2, v1)
	if err != nil || !sent {
		t.Fatalf("DecodePayment: sent=%v %v", sent, err)
	}
	return PaymentID(p, USDCMint)
}

// One payment is one ID however it is spelled; another payment, network or
// asset is another.
func TestPaymentID(t *testing.T) {
	tx, _ := solanaTransfer(t, 0x99, 100000, false)
	otherTx, _ := solanaTransfer(t, 0x98, 100000, false) // another blockhash: another transaction
	settled := append([]byte(nil), tx...)
	copy(settled[1:65], bytes.Repeat([]byte{0xab}, 64)) // the fee payer's signature filled in
	token := []byte("test-tx|Payer|100000|Payee|n1")
	std := base64.StdEncoding.EncodeToString
	svm := func(tx string, extra ...any) map[string]any {
		m := map[string]any{"transaction": tx}
		for i := 0; i+1 < len(extra); i += 2 {
			m[extra[i].(string)] = extra[i+1]
		}
		return m
	}
	evm := func(from, nonce string) map[string]any {
		return map[string]any{"signature": "0xsig", "authorization": map[string]any{"from": from, "to": "0xPayee", "value": "100000",
			"validAfter": "0", "validBefore": "9999999999", "nonce": nonce}}
	}
	indent := func(b []byte) []byte {
		var out bytes.Buffer
		_ = json.Indent(&out, b, " \n", "\t  ")
		return append([]byte("\r\n  "), out.Bytes()...)
	}
	type spelling struct {
		name    string
		version int
		payload map[string]any
		enc     *base64.Encoding
		respell func([]byte) []byte
	}
	for _, g := range []struct {
		name      string
		spellings []spelling // all one payment
		others    []spelling // each another payment
	}{
		{"a Solana transaction", []spelling{
			{"v2", 2, svm(std(tx)), nil, nil},
			{"v1 X-PAYMENT", 1, svm(std(tx)), nil, nil},
			{"an extra payload member", 2, svm(std(tx), "n", 1), nil, nil},
			{"v1 with an extra member", 1, svm(std(tx), "memo", "again"), nil, nil},
			{"the transaction in base64url", 2, svm(base64.URLEncoding.EncodeToString(tx)), nil, nil},
			{"the transaction in unpadded base64", 2, svm(base64.RawStdEncoding.EncodeToString(tx)), nil, nil},
			{"the transaction in unpadded base64url", 1, svm(base64.RawURLEncoding.EncodeToString(tx)), nil, nil},
			{"the transaction with spaces around it", 2, svm(" " + std(tx) + "\n"), nil, nil},
			{"the fee payer's signature filled in", 2, svm(std(settled)), nil, nil},
			{"the header in unpadded base64url", 2, svm(std(tx)), base64.RawURLEncoding, nil},
			{"spacing in the JSON", 2, svm(std(tx)), nil, indent},
			{"spacing in the v1 JSON", 1, svm(std(tx)), nil, indent},
		}, []spelling{
			{"another transaction", 2, svm(std(otherTx)), nil, nil},
			{"the same transaction on devnet", 1, svm(std(tx)), nil, func(b []byte) []byte {
				return bytes.Replace(b, []byte(`"network":"solana"`), []byte(`"network":"solana-devnet"`), 1)
			}},
		}},
		{"a transaction that is not a Solana one (the test facilitator's token)", []spelling{
			{"v2", 2, svm(std(token)), nil, nil},
			{"v1", 1, svm(std(token)), nil, nil},
			{"base64url, unpadded", 2, svm(base64.RawURLEncoding.EncodeToString(token)), nil, nil},
			{"an extra member", 1, svm(std(token), "n", 1), nil, nil},
		}, []spelling{
			{"another token", 2, svm(std([]byte("test-tx|Payer|100000|Payee|n2"))), nil, nil},
			{"the token's base64 text as bytes", 2, svm(string(token)), nil, nil},
		}},
		{"an EIP-3009 authorization", []spelling{
			{"v2", 2, evm("0xAbCdEf0000000000000000000000000000000001", "0x00FF"), nil, nil},
			{"v1, lower-cased", 1, evm("0xabcdef0000000000000000000000000000000001", "0xff"), nil, nil},
			{"another signature spelling", 2, func() map[string]any {
				m := evm("0xABCDEF0000000000000000000000000000000001", "ff")
				m["signature"] = "0xSIG"
				return m
			}(), nil, nil},
		}, []spelling{
			{"another nonce", 2, evm("0xabcdef0000000000000000000000000000000001", "0x0100"), nil, nil},
			{"another payer", 2, evm("0xabcdef0000000000000000000000000000000002", "0xff"), nil, nil},
		}},
		{"any other payload", []spelling{
			{"v2", 2, map[string]any{"proof": "p1", "k": []any{1, "two"}}, nil, nil},
			{"v1 with spacing", 1, map[string]any{"proof": "p1", "k": []any{1, "two"}}, nil, indent},
		}, []spelling{
			{"an extra member", 2, map[string]any{"proof": "p1", "k": []any{1, "two"}, "n": 1}, nil, nil},
		}},
	} {
		var first string
		seen := map[string]string{}
		for _, s := range g.spellings {
			v2, v1 := paymentHeader(t, s.version, s.payload, s.enc, s.respell)
			id := idOf(t, v2, v1)
			if len(id) != 64 {
				t.Fatalf("%s, %s: id %q is not a hex SHA-256", g.name, s.name, id)
			}
			if first == "" {
				first = id
			} else if id != first {
				t.Errorf("%s: %q is another payment than %q", g.name, s.name, g.spellings[0].name)
			}
		}
		seen[first] = g.spellings[0].name
		for _, s := range g.others {
			v2, v1 := paymentHeader(t, s.version, s.payload, s.enc, s.respell)
			id := idOf(t, v2, v1)
			if prev, dup := seen[id]; dup {
				t.Errorf("%s: %q is the same payment as %q", g.name, s.name, prev)
			}
			seen[id] = s.name
		}
	}

	// The asset is part of an EVM payment's identity (each token contract
	// has its own nonces), not of a Solana one (the transaction names it).
	p, _, _, _ := DecodePayment(paymentHeader(t, 2, evm("0x01", "0x02"), nil, nil))
	if PaymentID(p, "0xUSDC") == PaymentID(p, "0xEURC") || PaymentID(p, "0xUSDC") != PaymentID(p, "0xusdc") {
		t.Error("an EVM payment's id does not follow its asset, case-insensitively")
	}
	p, _, _, _ = DecodePayment(paymentHeader(t, 2, svm(std(tx)), nil, nil))
	if PaymentID(p, USDCMint) != PaymentID(p, USDCMintDevnet) {
		t.Error("a Solana payment's id depends on the asset argument")
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

// FuzzPaymentID: any payload gets an id, never a panic; the id does not
// depend on the x402 version, the spacing of the JSON, or (for a payload
// that names a transaction or an authorization) on members added beside it.
func FuzzPaymentID(f *testing.F) {
	tx, _ := solanaTransfer(f, 0x99, 100000, false)
	f.Add([]byte(`{"transaction":"`+base64.StdEncoding.EncodeToString(tx)+`"}`), SolanaMainnet)
	f.Add([]byte(`{"transaction":"dGVzdC10eHxQfDEwMDAwMHxQYXllZXxuMQ"}`), SolanaDevnet)
	f.Add([]byte(`{"signature":"0x1","authorization":{"from":"0xAB","nonce":"0x00ff"}}`), "eip155:8453")
	f.Add([]byte(`{"a":[1,2.50,{"b":null}],"c":"\u00e9"}`), "solana")
	f.Fuzz(func(t *testing.T, payload []byte, network string) {
		if !json.Valid(payload) {
			return // DecodePayment only passes on JSON
		}
		v2 := Payload{X402Version: 2, Accepted: &Requirement{Network: network}, Payload: payload}
		v1 := Payload{X402Version: 1, Network: V1Name(network), Payload: payload}
		id := PaymentID(v2, USDCMint)
		if len(id) != 64 || strings.Trim(id, "0123456789abcdef") != "" {
			t.Fatalf("id %q is not a hex SHA-256", id)
		}
		if PaymentID(v1, USDCMint) != id {
			t.Fatalf("v1 and v2 of one payment differ")
		}
		var spaced bytes.Buffer
		if json.Indent(&spaced, payload, "  ", "\t") == nil {
			if PaymentID(Payload{X402Version: 2, Accepted: v2.Accepted, Payload: spaced.Bytes()}, USDCMint) != id {
				t.Fatalf("spacing changed the id")
			}
		}
		var members map[string]json.RawMessage
		if json.Unmarshal(payload, &members) == nil && members != nil {
			_, hasTx := members["transaction"]
			_, hasAuth := members["authorization"]
			if _, taken := members["zz-extra"]; !taken && (hasTx || hasAuth) {
				members["zz-extra"] = json.RawMessage(`1`)
				more, _ := json.Marshal(members)
				if got := PaymentID(Payload{X402Version: 2, Accepted: v2.Accepted, Payload: more}, USDCMint); got != id && keyedOnWhatIsPaid(members) {
					t.Fatalf("an extra member changed the id of %s", payload)
				}
			}
		}
	})
}

// keyedOnWhatIsPaid: the payload names a string transaction, or an
// authorization with a payer and a nonce (else it is keyed as a whole).
func keyedOnWhatIsPaid(members map[string]json.RawMessage) bool {
	var tx string
	if raw, ok := members["transaction"]; ok {
		return json.Unmarshal(raw, &tx) == nil
	}
	var a struct{ From, Nonce string }
	return json.Unmarshal(members["authorization"], &a) == nil && evmHex(a.From) != "" && evmHex(a.Nonce) != ""
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
