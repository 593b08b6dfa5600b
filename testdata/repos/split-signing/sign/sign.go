// Package sign signs webhook deliveries; the sender in package hooks calls it.
package sign

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"time"
)

const (
	HeaderSignature = "X-Acme-Signature"
	HeaderTimestamp = "X-Acme-Timestamp"
)

// Headers returns the signature headers of one delivery.
func Headers(secret, body []byte, at time.Time) http.Header {
	ts := strconv.FormatInt(at.Unix(), 10)
	h := http.Header{}
	h.Set(HeaderSignature, "t="+ts+",v1="+hex.EncodeToString(mac(secret, ts, body)))
	h.Set(HeaderTimestamp, ts)
	return h
}

func mac(secret []byte, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(ts + "."))
	m.Write(body)
	return m.Sum(nil)
}
