package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// Tolerance is how far a delivery's timestamp may be from the receiver's
// clock, in either direction, and still verify.
const Tolerance = 5 * time.Minute

// Header names. http.Header canonicalizes them (Webhook-Id); HTTP header
// names are case-insensitive, so receivers may read either spelling.
const (
	// HeaderSignature is t=<unix seconds>,v1=<hex HMAC-SHA256(key = the
	// secret string's bytes as-is, "whsec_" included; msg = "<t>.<raw body>")>.
	// During a secret rotation it may carry several v1= entries.
	HeaderSignature = "X-Scanner-Signature"
	// HeaderEvent is the event type (EventScanCompleted, EventScoreChanged).
	HeaderEvent = "X-Scanner-Event"
	// HeaderDelivery repeats webhook-id for receivers that key on X-Scanner-*.
	HeaderDelivery = "X-Scanner-Delivery"
	// HeaderID is Standard Webhooks' webhook-id: the event's id, the same on
	// every retry and redelivery, the key to deduplicate on.
	HeaderID = "webhook-id"
	// HeaderTimestamp is the Unix time in seconds of this attempt.
	HeaderTimestamp = "webhook-timestamp"
	// HeaderStdSignature is "v1,<base64 HMAC-SHA256(key = base64-decode of
	// the secret after "whsec_", msg = "<id>.<t>.<raw body>")>", possibly
	// several, separated by spaces.
	HeaderStdSignature = "webhook-signature"
)

// Event types.
const (
	EventScanCompleted = "scan.completed"
	EventScoreChanged  = "score.changed"
)

// Event is the JSON body of every delivery.
type Event struct {
	ID        string    `json:"id"` // evt_…, equal to the webhook-id header, stable across retries and redeliveries
	Type      string    `json:"type"`
	CreatedAt time.Time `json:"created_at"`
	MonitorID string    `json:"monitor_id"`
	Test      bool      `json:"test,omitempty"` // a sample sent by POST /api/monitors/{id}/test
	Data      Data      `json:"data"`
}

// Data is what the scan found.
type Data struct {
	URL          string    `json:"url"`
	Score        int       `json:"score"`
	Grade        string    `json:"grade"`
	Level        int       `json:"level"`
	LevelName    string    `json:"level_name"`
	Previous     *Previous `json:"previous"`      // null on the first scan of a monitor (the baseline)
	ReportURL    string    `json:"report_url"`    // the full report this event describes (kept past the last retry: 29 h by default)
	ScheduledFor time.Time `json:"scheduled_for"` // the scheduled run this event comes from
}

// Previous is the monitor's scan before this one, and what changed since:
// the checks that pass now and did not (NewlyPassing), that fail now and
// did not (NewlyFailing), and every other check whose status or message
// changed (Changed), each in catalog order. The lists are empty when
// nothing changed, and null when the previous scan's checks are not known
// (a monitor's first run after agentready learned to compare them).
type Previous struct {
	Score        int       `json:"score"`
	Level        int       `json:"level"`
	Timestamp    time.Time `json:"timestamp"` // when the previous scan ran
	Grade        string    `json:"grade"`
	LevelName    string    `json:"level_name"`
	NewlyPassing []Change  `json:"newly_passing"`
	NewlyFailing []Change  `json:"newly_failing"`
	Changed      []Change  `json:"changed"`
}

// Change is one check whose verdict or message differs from the previous
// scan's: its status then and now (pass, partial, fail or na), and its
// message now.
type Change struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	From    string `json:"from"`
	To      string `json:"to"`
	Message string `json:"message"`
}

// The errors Verify and Parse return wrap one of these, so a receiver can
// answer each differently (errors.Is); the wrapping message says what to check.
var (
	// ErrNoSignature: neither X-Scanner-Signature nor webhook-signature came.
	ErrNoSignature = errors.New("no signature")
	// ErrMalformed: a signature header (or the signed body) is not in the
	// form agentready sends.
	ErrMalformed = errors.New("malformed delivery")
	// ErrExpired: the timestamp is more than Tolerance from now; an old
	// delivery replayed, or a clock that is off.
	ErrExpired = errors.New("timestamp outside the 5-minute window")
	// ErrMismatch: well formed, but no signature matches this secret and body.
	ErrMismatch = errors.New("signature does not match")
	// ErrSecret: the secret itself is unusable (empty, or not whsec_<base64>
	// where the scheme needs the decoded key).
	ErrSecret = errors.New("invalid secret")
)

const (
	secretPrefix = "whsec_"
	// Standard Webhooks allows keys of 24 to 64 bytes.
	minKey, maxKey = 24, 64
	// maxHeader bounds the parsing work a hostile request can cause; a real
	// header is under 100 bytes per signature, a few during a rotation.
	maxHeader = 4096
	maxID     = 256
	// 18 digits cannot overflow int64 nor time.Unix's internal arithmetic.
	maxDigits = 18
)

var idEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// NewSecret returns "whsec_" + standard base64 of 32 random bytes.
func NewSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("webhook: reading random bytes for a secret: %w", err)
	}
	return secretPrefix + base64.StdEncoding.EncodeToString(b), nil
}

// NewID returns prefix + "_" + 26 chars of lowercase base32 (no padding) of
// 16 random bytes, e.g. NewID("mon"), NewID("evt").
func NewID(prefix string) (string, error) {
	if prefix == "" || len(prefix) > 32 || !alnum(prefix) {
		return "", errors.New("webhook: an id prefix is 1 to 32 ASCII letters or digits")
	}
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("webhook: reading random bytes for an id: %w", err)
	}
	return prefix + "_" + strings.ToLower(idEncoding.EncodeToString(b)), nil
}

func alnum(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// Sign returns the signature headers for one attempt of a delivery:
// HeaderSignature, HeaderID, HeaderTimestamp, HeaderStdSignature,
// HeaderDelivery. at is the attempt's time (each retry signs anew with its own
// timestamp; id stays the same). The sender adds HeaderEvent itself.
func Sign(secret, id string, at time.Time, body []byte) (http.Header, error) {
	key, err := secretKey(secret)
	if err != nil {
		return nil, err
	}
	// The Standard Webhooks message is "<id>.<t>.<body>": an id with a dot
	// (or anything outside this set) could shift where one part ends.
	if id == "" || len(id) > maxID || !idChars(id) {
		return nil, fmt.Errorf("webhook: the delivery id must be 1 to %d letters, digits, '_' or '-' (as NewID makes)", maxID)
	}
	if at.Unix() <= 0 {
		return nil, errors.New("webhook: the attempt time must be after 1970 (a zero time.Time?)")
	}
	ts := strconv.FormatInt(at.Unix(), 10)
	// The official library signs the Standard Webhooks half, so the sender
	// agrees with what its Verify (and its ports to other languages) expects.
	wh, err := standardwebhooks.NewWebhookRaw(key)
	if err != nil {
		return nil, fmt.Errorf("%w: the key was refused by the Standard Webhooks library", ErrSecret)
	}
	std, err := wh.Sign(id, at, body)
	if err != nil {
		return nil, fmt.Errorf("webhook: Standard Webhooks signing failed: %w", err)
	}
	h := make(http.Header, 5)
	h.Set(HeaderSignature, "t="+ts+",v1="+hex.EncodeToString(scannerMAC(secret, ts, body)))
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, ts)
	h.Set(HeaderStdSignature, std)
	h.Set(HeaderDelivery, id)
	return h, nil
}

func idChars(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// scannerMAC is X-Scanner-Signature's v1: Stripe's construction, keyed with
// the secret string exactly as shown to the user, so a receiver needs no
// decoding step.
func scannerMAC(secret, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// CheckSecret reports whether secret has the form NewSecret makes and Sign
// needs, whsec_ + base64 of 24 to 64 bytes, for checking configuration
// before the first delivery does. The error wraps ErrSecret.
func CheckSecret(secret string) error {
	_, err := secretKey(secret)
	return err
}

// secretKey is the Standard Webhooks key: the base64 after "whsec_".
func secretKey(secret string) ([]byte, error) {
	if err := secretUsable(secret); err != nil {
		return nil, err
	}
	rest, ok := strings.CutPrefix(secret, secretPrefix)
	if !ok {
		return nil, fmt.Errorf("%w: it must start with whsec_ and go on with the base64 of %d to %d bytes; use the secret exactly as POST /api/monitors returned it", ErrSecret, minKey, maxKey)
	}
	key, err := base64.StdEncoding.Strict().DecodeString(rest)
	if err != nil || len(key) < minKey || len(key) > maxKey {
		return nil, fmt.Errorf("%w: after whsec_ it must be the standard base64 of %d to %d bytes; use the secret exactly as POST /api/monitors returned it", ErrSecret, minKey, maxKey)
	}
	return key, nil
}

func secretUsable(secret string) error {
	if secret == "" {
		return fmt.Errorf("%w: the secret is empty; set it to the secret POST /api/monitors returned", ErrSecret)
	}
	if strings.TrimSpace(secret) != secret {
		return fmt.Errorf("%w: the secret has leading or trailing whitespace (a newline from a file or an environment variable?); trim it", ErrSecret)
	}
	return nil
}

// Verify checks a delivery: HeaderSignature when present (every v1= entry is
// tried, so a receiver may hold a rotated secret's deliveries; unknown
// schemes like v0 are ignored), else the Standard Webhooks headers. The
// comparison is constant-time, and a timestamp more than Tolerance from now,
// either way, is refused (ErrExpired): that is what rejects replays. body
// must be the raw request body. Errors wrap ErrNoSignature, ErrMalformed,
// ErrExpired, ErrMismatch or ErrSecret and never repeat the headers or secret.
func Verify(secret string, h http.Header, body []byte, now time.Time) error {
	if vs := values(h, HeaderSignature); len(vs) > 0 {
		return verifyScanner(secret, vs, body, now)
	}
	if vs := values(h, HeaderStdSignature); len(vs) > 0 {
		return verifyStandard(secret, h, vs, body, now)
	}
	return fmt.Errorf("%w: the request has neither %s nor %s; check that it comes from an agentready monitor and that any proxy in front of the receiver passes these headers through", ErrNoSignature, HeaderSignature, HeaderStdSignature)
}

// values reads a header however the map was built: net/http canonicalizes
// names, but a header copied from another server library may not be.
func values(h http.Header, name string) []string {
	if vs := h.Values(name); len(vs) > 0 {
		return vs
	}
	for k, vs := range h {
		if strings.EqualFold(k, name) && len(vs) > 0 {
			return vs
		}
	}
	return nil
}

const scannerForm = "it must read t=<unix seconds>,v1=<64 hex digits>"

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrMalformed}, args...)...)
}

// parseScanner reads t=<digits>,v1=<hex>[,v1=<hex>…]; entries of other
// schemes are skipped so the sender can add one without breaking receivers.
func parseScanner(vs []string) (ts string, t int64, sigs [][]byte, err error) {
	// Several header lines of one name mean the same as one comma-joined line.
	header := strings.Join(vs, ",")
	if len(header) > maxHeader {
		return "", 0, nil, malformed("%s is longer than %d bytes; %s", HeaderSignature, maxHeader, scannerForm)
	}
	if strings.TrimSpace(header) == "" {
		return "", 0, nil, malformed("%s is empty; %s", HeaderSignature, scannerForm)
	}
	seenT := false
	for _, item := range strings.Split(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok {
			return "", 0, nil, malformed("%s has an entry without '='; %s", HeaderSignature, scannerForm)
		}
		switch k {
		case "t":
			if seenT {
				return "", 0, nil, malformed("%s has two t= timestamps; %s", HeaderSignature, scannerForm)
			}
			seenT = true
			n, ok := unixSeconds(v)
			if !ok {
				return "", 0, nil, malformed("%s's t= is not a Unix time in seconds; %s", HeaderSignature, scannerForm)
			}
			ts, t = v, n
		case "v1":
			b, err := hex.DecodeString(v)
			if err != nil || len(b) != sha256.Size {
				return "", 0, nil, malformed("%s has a v1= that is not 64 hex digits; %s", HeaderSignature, scannerForm)
			}
			sigs = append(sigs, b)
		}
	}
	if !seenT {
		return "", 0, nil, malformed("%s has no t= timestamp; %s", HeaderSignature, scannerForm)
	}
	if len(sigs) == 0 {
		return "", 0, nil, malformed("%s has no v1= signature; %s", HeaderSignature, scannerForm)
	}
	return ts, t, sigs, nil
}

func unixSeconds(s string) (int64, bool) {
	if s == "" || len(s) > maxDigits {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

func verifyScanner(secret string, vs []string, body []byte, now time.Time) error {
	if err := secretUsable(secret); err != nil {
		return err
	}
	ts, t, sigs, err := parseScanner(vs)
	if err != nil {
		return err
	}
	// The timestamp signed is the string sent, so a receiver in any language
	// can rebuild "<t>.<body>" from the header without reformatting a number.
	want := scannerMAC(secret, ts, body)
	if !anyEqual(sigs, want) {
		return mismatch(HeaderSignature, "v1=", len(sigs), "the whole string, whsec_ included")
	}
	return inWindow(t, now)
}

// anyEqual compares against every candidate, without stopping at the first
// match, so the time taken does not say which entry matched.
func anyEqual(cands [][]byte, want []byte) bool {
	ok := 0
	for _, c := range cands {
		if hmac.Equal(c, want) {
			ok = 1
		}
	}
	return ok == 1
}

func mismatch(header, scheme string, n int, which string) error {
	none := "the " + scheme + " signature does not match"
	if n > 1 {
		none = fmt.Sprintf("none of the %d %s signatures matches", n, scheme)
	}
	return fmt.Errorf("%w: %s in %s: check that the secret is the one POST /api/monitors returned (%s) and that the body is the raw bytes, not re-encoded JSON", ErrMismatch, none, header, which)
}

func inWindow(t int64, now time.Time) error {
	d := now.Sub(time.Unix(t, 0))
	switch {
	case d > Tolerance:
		return fmt.Errorf("%w: the delivery was signed %s before now (at most %s is accepted); an old delivery replayed is refused this way; if the receiver's clock is behind, fix it (NTP)", ErrExpired, d.Round(time.Second), Tolerance)
	case d < -Tolerance:
		ahead := -d
		if ahead < 0 { // -minDuration overflows: a timestamp far in the future
			ahead = math.MaxInt64
		}
		return fmt.Errorf("%w: the delivery is signed %s after now (at most %s is accepted); check the receiver's clock (NTP)", ErrExpired, ahead.Round(time.Second), Tolerance)
	}
	return nil
}

// one is a header that must come exactly once.
func one(h http.Header, name string) (string, error) {
	vs := values(h, name)
	switch {
	case len(vs) == 0 || vs[0] == "":
		return "", malformed("%s came without %s; a Standard Webhooks delivery carries webhook-id, webhook-timestamp and webhook-signature", HeaderStdSignature, name)
	case len(vs) > 1:
		return "", malformed("%s came more than once", name)
	case len(vs[0]) > maxID:
		return "", malformed("%s is longer than %d bytes", name, maxID)
	}
	return vs[0], nil
}

const stdForm = "each entry must read v1,<base64 of 32 bytes>, entries separated by spaces"

func verifyStandard(secret string, h http.Header, vs []string, body []byte, now time.Time) error {
	key, err := secretKey(secret)
	if err != nil {
		return err
	}
	id, err := one(h, HeaderID)
	if err != nil {
		return err
	}
	tsv, err := one(h, HeaderTimestamp)
	if err != nil {
		return err
	}
	t, ok := unixSeconds(tsv)
	if !ok {
		return malformed("%s is not a Unix time in seconds", HeaderTimestamp)
	}
	header := strings.Join(vs, " ")
	if len(header) > maxHeader {
		return malformed("%s is longer than %d bytes; %s", HeaderStdSignature, maxHeader, stdForm)
	}
	var sigs [][]byte
	entries := strings.Fields(header)
	if len(entries) == 0 {
		return malformed("%s is empty; %s", HeaderStdSignature, stdForm)
	}
	for _, e := range entries {
		ver, sig, ok := strings.Cut(e, ",")
		if !ok {
			return malformed("%s has an entry without a version; %s", HeaderStdSignature, stdForm)
		}
		if ver != "v1" { // v1a (asymmetric) and later schemes: not what agentready signs with
			continue
		}
		b, err := base64.StdEncoding.Strict().DecodeString(sig)
		if err != nil || len(b) != sha256.Size {
			return malformed("%s has a v1 entry that is not the base64 of 32 bytes; %s", HeaderStdSignature, stdForm)
		}
		sigs = append(sigs, b)
	}
	if len(sigs) == 0 {
		return malformed("%s has no v1 entry (agentready signs with v1, HMAC-SHA256); %s", HeaderStdSignature, stdForm)
	}
	want, err := standardMAC(key, id, t, body)
	if err != nil {
		return err
	}
	if !anyEqual(sigs, want) {
		return mismatch(HeaderStdSignature, "v1", len(sigs), "this scheme's key is the base64-decoded part after whsec_")
	}
	return inWindow(t, now)
}

// standardMAC is the official library's signature, decoded back to bytes so
// the comparison is over the MAC rather than one of its spellings.
func standardMAC(key []byte, id string, t int64, body []byte) ([]byte, error) {
	wh, err := standardwebhooks.NewWebhookRaw(key)
	if err != nil {
		return nil, fmt.Errorf("%w: the key was refused by the Standard Webhooks library", ErrSecret)
	}
	s, err := wh.Sign(id, time.Unix(t, 0), body)
	if err != nil {
		return nil, fmt.Errorf("webhook: Standard Webhooks signing failed: %w", err)
	}
	_, b64, _ := strings.Cut(s, ",")
	mac, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, errors.New("webhook: the Standard Webhooks library returned a signature that is not base64")
	}
	return mac, nil
}

// Parse verifies the delivery, then decodes the body into an Event. It also
// refuses a body whose id or type disagrees with the webhook-id,
// X-Scanner-Delivery or X-Scanner-Event headers, since receivers route and
// deduplicate on those and X-Scanner-Signature does not cover them.
func Parse(secret string, h http.Header, body []byte, now time.Time) (Event, error) {
	if err := Verify(secret, h, body, now); err != nil {
		return Event{}, err
	}
	var ev Event
	if err := json.Unmarshal(body, &ev); err != nil {
		return Event{}, malformed("the signature is valid but the body is not a JSON event of the form docs/webhooks.md shows; pass the raw body as received")
	}
	if ev.ID == "" || ev.Type == "" {
		return Event{}, malformed("the signature is valid but the event has no id or no type")
	}
	for _, c := range []struct{ header, want, field string }{
		{HeaderID, ev.ID, "id"},
		{HeaderDelivery, ev.ID, "id"},
		{HeaderEvent, ev.Type, "type"},
	} {
		if vs := values(h, c.header); len(vs) > 0 && vs[0] != c.want {
			return Event{}, malformed("the event's %s differs from the %s header, which receivers route or deduplicate on; the delivery was altered on its way", c.field, c.header)
		}
	}
	return ev, nil
}
