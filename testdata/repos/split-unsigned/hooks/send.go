// Package hooks delivers events without any signature.
package hooks

import (
	"bytes"
	"net/http"

	"example.com/acme/format"
)

// Send posts one event to a subscriber's webhook URL, unsigned.
func Send(webhookURL string, event any) error {
	req, err := http.NewRequest(http.MethodPost, webhookURL, bytes.NewReader(format.Body(event)))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	_, err = http.DefaultClient.Do(req)
	return err
}
