// Package hooks delivers events; signing lives in package sign.
package hooks

import (
	"bytes"
	"net/http"
	"time"

	"example.com/acme/sign"
)

// Send posts one event to a subscriber's callback.
func Send(callbackURL string, secret, body []byte) error {
	req, err := http.NewRequest(http.MethodPost, callbackURL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	for k, v := range sign.Headers(secret, body, time.Now()) {
		req.Header[k] = v
	}
	_, err = http.DefaultClient.Do(req)
	return err
}
