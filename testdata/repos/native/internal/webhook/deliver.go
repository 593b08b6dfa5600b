package webhook

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"time"
)

// Deliver posts an event to a subscriber, signed with its secret.
func Deliver(callbackURL string, secret, body []byte) error {
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(ts + "."))
	mac.Write(body)
	req, err := http.NewRequest(http.MethodPost, callbackURL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("X-Invoices-Signature", "t="+ts+",v1="+hex.EncodeToString(mac.Sum(nil)))
	req.Header.Set("X-Invoices-Timestamp", ts)
	_, err = http.DefaultClient.Do(req)
	return err
}
