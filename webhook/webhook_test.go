package webhook_test

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/agentready/agentready/webhook"
)

// The Standard Webhooks project's own test vector (libraries/go
// webhook_test.go, TestWebhookSign); the X-Scanner-Signature value was
// computed apart from this code, with
// printf '%s' '1614265330.{"test": 2432232314}' | openssl dgst -sha256 -hmac 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' -hex
const (
	vecSecret  = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vecID      = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vecTime    = 1614265330
	vecBody    = `{"test": 2432232314}`
	vecStd     = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
	vecScanner = "t=1614265330,v1=2e37df5d4a028c51a7f3133d64ae1e300d2c2c900f1b1d49d4369ad2530f8964"
)

func TestSignKnownAnswer(t *testing.T) {
	h, err := webhook.Sign(vecSecret, vecID, time.Unix(vecTime, 0), []byte(vecBody))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		webhook.HeaderSignature:    vecScanner,
		webhook.HeaderStdSignature: vecStd,
		webhook.HeaderID:           vecID,
		webhook.HeaderDelivery:     vecID,
		webhook.HeaderTimestamp:    "1614265330",
	}
	for name, v := range want {
		if got := h.Get(name); got != v {
			t.Errorf("%s = %q, want %q", name, got, v)
		}
	}
	if len(h) != len(want) {
		t.Errorf("Sign returned %d headers, want %d: %v", len(h), len(want), h)
	}
	if err := webhook.Verify(vecSecret, h, []byte(vecBody), time.Unix(vecTime, 0)); err != nil {
		t.Errorf("the vector does not verify: %v", err)
	}
}

const (
	secret = "whsec_" + "c2VjcmV0LWtleS1mb3ItdGVzdHMtb25seS0zMmJ5dGVz" // 33 bytes
	other  = "whsec_" + "b3RoZXItc2VjcmV0LWZvci1yb3RhdGlvbi10ZXN0cw==" // 31 bytes
)

var (
	t0   = time.Unix(1778490004, 0)
	body = []byte(`{"id":"evt_abc","type":"scan.completed","data":{"url":"https://example.com/","score":72}}`)
)

// scannerHex is X-Scanner-Signature's v1 computed here from the definition,
// not by the package, for headers the tests assemble by hand.
func scannerHex(secret string, ts int64, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(strconv.FormatInt(ts, 10) + "." + string(body)))
	return hex.EncodeToString(m.Sum(nil))
}

func stdB64(t *testing.T, secret, id string, ts int64, body []byte) string {
	t.Helper()
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		t.Fatal(err)
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + strconv.FormatInt(ts, 10) + "." + string(body)))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

func signed(t *testing.T, at time.Time) http.Header {
	t.Helper()
	h, err := webhook.Sign(secret, "evt_abc", at, body)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// only keeps one scheme's headers, so each path is tested on its own.
func only(h http.Header, scanner bool) http.Header {
	h = h.Clone()
	if scanner {
		h.Del(webhook.HeaderStdSignature)
	} else {
		h.Del(webhook.HeaderSignature)
	}
	return h
}

func with(h http.Header, kv ...string) http.Header {
	h = h.Clone()
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == "\x00" {
			h.Del(kv[i])
		} else {
			h.Set(kv[i], kv[i+1])
		}
	}
	return h
}

func TestVerify(t *testing.T) {
	base := signed(t, t0)
	sc := only(base, true)
	std := only(base, false)
	ts := t0.Unix()
	good := scannerHex(secret, ts, body)
	old := scannerHex(other, ts, body)
	goodStd := stdB64(t, secret, "evt_abc", ts, body)
	oldStd := stdB64(t, other, "evt_abc", ts, body)
	tsS := strconv.FormatInt(ts, 10)
	v1 := func(entries ...string) string { return "t=" + tsS + "," + strings.Join(entries, ",") }

	cases := []struct {
		name   string
		secret string
		h      http.Header
		body   []byte
		now    time.Time
		want   error // nil: verifies
		msg    string
	}{
		{"both schemes", secret, base, body, t0, nil, ""},
		{"X-Scanner-Signature alone", secret, sc, body, t0, nil, ""},
		{"Standard Webhooks alone", secret, std, body, t0, nil, ""},
		{"lowercase header names (a map not built by net/http)", secret, http.Header{
			"webhook-id": {"evt_abc"}, "webhook-timestamp": {tsS}, "webhook-signature": {"v1," + goodStd},
		}, body, t0, nil, ""},

		{"tampered body, X-Scanner", secret, sc, append([]byte(" "), body...), t0, webhook.ErrMismatch, "raw bytes, not re-encoded JSON"},
		{"tampered body, Standard", secret, std, bytes.Replace(body, []byte("72"), []byte("99"), 1), t0, webhook.ErrMismatch, "raw bytes"},
		{"wrong secret, X-Scanner", other, sc, body, t0, webhook.ErrMismatch, "whsec_ included"},
		{"wrong secret, Standard", other, std, body, t0, webhook.ErrMismatch, "base64-decoded part after whsec_"},
		{"id changed, Standard", secret, with(std, webhook.HeaderID, "evt_abd"), body, t0, webhook.ErrMismatch, ""},
		{"X-Scanner present and wrong: no fallback to a valid Standard signature", secret,
			with(base, webhook.HeaderSignature, v1("v1="+old)), body, t0, webhook.ErrMismatch, ""},

		{"rotated secret: second v1 matches", secret, with(sc, webhook.HeaderSignature, v1("v1="+old, "v1="+good)), body, t0, nil, ""},
		{"rotated secret: first v1 matches", secret, with(sc, webhook.HeaderSignature, v1("v1="+good, "v1="+old)), body, t0, nil, ""},
		{"two v1, neither matches", secret, with(sc, webhook.HeaderSignature, v1("v1="+old, "v1="+old)), body, t0, webhook.ErrMismatch, "none of the 2 v1= signatures"},
		{"unknown scheme v0 ignored", secret, with(sc, webhook.HeaderSignature, v1("v0=zz-not-hex", "v1="+good)), body, t0, nil, ""},
		{"spaces after commas", secret, with(sc, webhook.HeaderSignature, "t="+tsS+", v1="+good), body, t0, nil, ""},
		{"header split over two lines", secret, func() http.Header {
			h := only(base, true)
			h.Del(webhook.HeaderSignature)
			h.Add(webhook.HeaderSignature, "t="+tsS)
			h.Add(webhook.HeaderSignature, "v1="+good)
			return h
		}(), body, t0, nil, ""},
		{"several webhook-signature entries, the last matches", secret,
			with(std, webhook.HeaderStdSignature, "v1a,bm90LWNoZWNrZWQ= v1,"+oldStd+"  v1,"+goodStd), body, t0, nil, ""},
		{"several webhook-signature entries, none matches", secret,
			with(std, webhook.HeaderStdSignature, "v1,"+oldStd+" v1,"+oldStd), body, t0, webhook.ErrMismatch, "none of the 2 v1 signatures"},

		{"6 min old, X-Scanner", secret, sc, body, t0.Add(6 * time.Minute), webhook.ErrExpired, "signed 6m0s before now"},
		{"6 min old, Standard", secret, std, body, t0.Add(6 * time.Minute), webhook.ErrExpired, "6m0s before now"},
		{"6 min in the future, X-Scanner", secret, sc, body, t0.Add(-6 * time.Minute), webhook.ErrExpired, "signed 6m0s after now"},
		{"6 min in the future, Standard", secret, std, body, t0.Add(-6 * time.Minute), webhook.ErrExpired, "6m0s after now"},
		{"4 min old", secret, base, body, t0.Add(4 * time.Minute), nil, ""},
		{"4 min in the future", secret, base, body, t0.Add(-4 * time.Minute), nil, ""},
		{"exactly 5 min old", secret, base, body, t0.Add(webhook.Tolerance), nil, ""},
		{"5 min and 1 s old", secret, std, body, t0.Add(webhook.Tolerance + time.Second), webhook.ErrExpired, ""},
		{"year 30000", secret, with(sc, webhook.HeaderSignature, "t=884541340800,v1="+scannerHex(secret, 884541340800, body)), body, t0, webhook.ErrExpired, "after now"},
		{"18-digit t", secret, with(sc, webhook.HeaderSignature, "t=999999999999999999,v1="+scannerHex(secret, 999999999999999999, body)), body, t0, webhook.ErrExpired, "2562047h47m16"},
		{"t=0", secret, with(sc, webhook.HeaderSignature, "t=0,v1="+scannerHex(secret, 0, body)), body, t0, webhook.ErrExpired, "before now"},

		{"no signature header", secret, http.Header{"Content-Type": {"application/json"}}, body, t0, webhook.ErrNoSignature, "neither X-Scanner-Signature nor webhook-signature"},
		{"no headers at all", secret, nil, body, t0, webhook.ErrNoSignature, ""},
		{"no t=", secret, with(sc, webhook.HeaderSignature, "v1="+good), body, t0, webhook.ErrMalformed, "no t= timestamp"},
		{"non-numeric t", secret, with(sc, webhook.HeaderSignature, "t=yesterday,v1="+good), body, t0, webhook.ErrMalformed, "not a Unix time"},
		{"negative t", secret, with(sc, webhook.HeaderSignature, "t=-5,v1="+good), body, t0, webhook.ErrMalformed, "not a Unix time"},
		{"t with a sign", secret, with(sc, webhook.HeaderSignature, "t=+"+tsS+",v1="+good), body, t0, webhook.ErrMalformed, "not a Unix time"},
		{"t of 19 digits", secret, with(sc, webhook.HeaderSignature, "t=9999999999999999999,v1="+good), body, t0, webhook.ErrMalformed, "not a Unix time"},
		{"two t=", secret, with(sc, webhook.HeaderSignature, v1("t="+tsS, "v1="+good)), body, t0, webhook.ErrMalformed, "two t="},
		{"odd hex", secret, with(sc, webhook.HeaderSignature, v1("v1="+good[:63])), body, t0, webhook.ErrMalformed, "not 64 hex digits"},
		{"hex of 31 bytes", secret, with(sc, webhook.HeaderSignature, v1("v1="+good[:62])), body, t0, webhook.ErrMalformed, "not 64 hex digits"},
		{"not hex", secret, with(sc, webhook.HeaderSignature, v1("v1="+strings.Repeat("zz", 32))), body, t0, webhook.ErrMalformed, "not 64 hex digits"},
		{"no v1=", secret, with(sc, webhook.HeaderSignature, "t="+tsS), body, t0, webhook.ErrMalformed, "no v1= signature"},
		{"only v0=", secret, with(sc, webhook.HeaderSignature, v1("v0="+good)), body, t0, webhook.ErrMalformed, "no v1= signature"},
		{"empty X-Scanner-Signature", secret, with(sc, webhook.HeaderSignature, ""), body, t0, webhook.ErrMalformed, "is empty"},
		{"blank X-Scanner-Signature", secret, with(sc, webhook.HeaderSignature, "   "), body, t0, webhook.ErrMalformed, "is empty"},
		{"entry without =", secret, with(sc, webhook.HeaderSignature, v1("v1", "v1="+good)), body, t0, webhook.ErrMalformed, "without '='"},
		{"trailing comma", secret, with(sc, webhook.HeaderSignature, v1("v1="+good)+","), body, t0, webhook.ErrMalformed, "without '='"},
		{"huge X-Scanner-Signature", secret, with(sc, webhook.HeaderSignature, v1(strings.Repeat("v1="+good+",", 70)+"v1="+good)), body, t0, webhook.ErrMalformed, "longer than 4096 bytes"},

		{"webhook-id missing", secret, with(std, webhook.HeaderID, "\x00"), body, t0, webhook.ErrMalformed, "without webhook-id"},
		{"webhook-timestamp missing", secret, with(std, webhook.HeaderTimestamp, "\x00"), body, t0, webhook.ErrMalformed, "without webhook-timestamp"},
		{"webhook-timestamp not a number", secret, with(std, webhook.HeaderTimestamp, "1.5e9"), body, t0, webhook.ErrMalformed, "not a Unix time"},
		{"webhook-id twice", secret, func() http.Header { h := std.Clone(); h.Add(webhook.HeaderID, "evt_x"); return h }(), body, t0, webhook.ErrMalformed, "more than once"},
		{"empty webhook-signature", secret, with(std, webhook.HeaderStdSignature, " "), body, t0, webhook.ErrMalformed, "is empty"},
		{"webhook-signature entry without version", secret, with(std, webhook.HeaderStdSignature, goodStd), body, t0, webhook.ErrMalformed, "without a version"},
		{"webhook-signature v1 not base64", secret, with(std, webhook.HeaderStdSignature, "v1,!!!!"), body, t0, webhook.ErrMalformed, "not the base64 of 32 bytes"},
		{"webhook-signature only v1a", secret, with(std, webhook.HeaderStdSignature, "v1a,"+goodStd), body, t0, webhook.ErrMalformed, "no v1 entry"},

		{"empty secret, X-Scanner", "", sc, body, t0, webhook.ErrSecret, "empty"},
		{"empty secret, Standard", "", std, body, t0, webhook.ErrSecret, "empty"},
		{"secret with a newline", secret + "\n", sc, body, t0, webhook.ErrSecret, "whitespace"},
		{"Standard needs whsec_", strings.TrimPrefix(secret, "whsec_"), std, body, t0, webhook.ErrSecret, "must start with whsec_"},
		{"Standard needs base64 after whsec_", "whsec_not base64!", std, body, t0, webhook.ErrSecret, "standard base64 of 24 to 64 bytes"},
		{"Standard needs 24 bytes at least", "whsec_" + base64.StdEncoding.EncodeToString(make([]byte, 16)), std, body, t0, webhook.ErrSecret, "24 to 64 bytes"},
	}
	sentinels := []error{webhook.ErrNoSignature, webhook.ErrMalformed, webhook.ErrExpired, webhook.ErrMismatch, webhook.ErrSecret}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := webhook.Verify(c.secret, c.h, c.body, c.now)
			if c.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
			for _, s := range sentinels {
				if s != c.want && errors.Is(err, s) {
					t.Errorf("err also matches %v", s)
				}
			}
			msg := err.Error()
			if !strings.Contains(msg, c.msg) {
				t.Errorf("message %q does not say %q", msg, c.msg)
			}
			// Never echo what came in or what the receiver holds.
			for _, leak := range []string{secret, strings.TrimPrefix(secret, "whsec_"), other, good, goodStd, old, oldStd, "yesterday", "not base64", "zzzz", "bm90LWNoZWNrZWQ", "1.5e9"} {
				if strings.Contains(msg, leak) {
					t.Errorf("message repeats %q: %s", leak, msg)
				}
			}
		})
	}
}

// A secret that is not whsec_<base64> still works for X-Scanner-Signature,
// whose key is the string as it is; Sign refuses it, since the Standard
// Webhooks half needs the decoded key.
func TestVerifyScannerAnySecret(t *testing.T) {
	const plain = "a-secret-from-elsewhere"
	h := http.Header{webhook.HeaderSignature: {"t=" + strconv.FormatInt(t0.Unix(), 10) + ",v1=" + scannerHex(plain, t0.Unix(), body)}}
	if err := webhook.Verify(plain, h, body, t0); err != nil {
		t.Fatal(err)
	}
	if _, err := webhook.Sign(plain, "evt_abc", t0, body); !errors.Is(err, webhook.ErrSecret) {
		t.Errorf("Sign with a non-whsec secret: %v, want ErrSecret", err)
	}
}

func TestSignRefuses(t *testing.T) {
	for _, c := range []struct {
		name, secret, id string
		at               time.Time
		secretErr        bool
	}{
		{"no whsec_", "c2VjcmV0LWtleS1mb3ItdGVzdHMtb25seS0zMmJ5dGVz", "evt_a", t0, true},
		{"not base64", "whsec_%%%%", "evt_a", t0, true},
		{"unpadded base64", "whsec_" + base64.RawStdEncoding.EncodeToString(make([]byte, 32)), "evt_a", t0, true},
		{"23-byte key", "whsec_" + base64.StdEncoding.EncodeToString(make([]byte, 23)), "evt_a", t0, true},
		{"65-byte key", "whsec_" + base64.StdEncoding.EncodeToString(make([]byte, 65)), "evt_a", t0, true},
		{"trailing newline", secret + "\n", "evt_a", t0, true},
		{"empty id", secret, "", t0, false},
		{"id with a dot", secret, "evt.1", t0, false},
		{"id with a space", secret, "evt 1", t0, false},
		{"id too long", secret, strings.Repeat("a", 257), t0, false},
		{"zero time", secret, "evt_a", time.Time{}, false},
	} {
		h, err := webhook.Sign(c.secret, c.id, c.at, body)
		if err == nil || h != nil {
			t.Errorf("%s: Sign = %v, %v; want an error", c.name, h, err)
			continue
		}
		if errors.Is(err, webhook.ErrSecret) != c.secretErr {
			t.Errorf("%s: %v: ErrSecret = %v, want %v", c.name, err, !c.secretErr, c.secretErr)
		}
		if c.secret != "" && strings.Contains(err.Error(), strings.TrimPrefix(strings.TrimSpace(c.secret), "whsec_")) {
			t.Errorf("%s: the error repeats the secret: %v", c.name, err)
		}
	}
	// The bounds themselves are accepted.
	for _, n := range []int{24, 64} {
		s := "whsec_" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, n))
		if _, err := webhook.Sign(s, "evt_a", t0, body); err != nil {
			t.Errorf("%d-byte key refused: %v", n, err)
		}
	}
}

// Each retry signs anew: same id, its own timestamp and signatures.
func TestSignRetry(t *testing.T) {
	a, b := signed(t, t0), signed(t, t0.Add(10*time.Second))
	if a.Get(webhook.HeaderID) != b.Get(webhook.HeaderID) {
		t.Error("the id changed between attempts")
	}
	for _, name := range []string{webhook.HeaderTimestamp, webhook.HeaderSignature, webhook.HeaderStdSignature} {
		if a.Get(name) == b.Get(name) {
			t.Errorf("%s is the same on two attempts 10 s apart", name)
		}
	}
	if err := webhook.Verify(secret, a, body, t0.Add(10*time.Second)); err != nil {
		t.Errorf("the first attempt, 10 s later: %v", err)
	}
}

func TestNewSecretAndID(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 50; i++ {
		s, err := webhook.NewSecret()
		if err != nil {
			t.Fatal(err)
		}
		key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, "whsec_"))
		if !strings.HasPrefix(s, "whsec_") || err != nil || len(key) != 32 {
			t.Fatalf("NewSecret = %q: want whsec_ + base64 of 32 bytes", s)
		}
		id, err := webhook.NewID("evt")
		if err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile(`^evt_[a-z2-7]{26}$`).MatchString(id) {
			t.Fatalf("NewID(evt) = %q", id)
		}
		if seen[s] || seen[id] {
			t.Fatalf("repeated value after %d draws", i)
		}
		seen[s], seen[id] = true, true
		// What NewSecret and NewID make, Sign accepts and the official library verifies.
		h, err := webhook.Sign(s, id, time.Now(), body)
		if err != nil {
			t.Fatal(err)
		}
		wh, err := standardwebhooks.NewWebhook(s)
		if err != nil {
			t.Fatal(err)
		}
		if err := wh.Verify(body, h); err != nil {
			t.Fatalf("official library: %v", err)
		}
	}
	if id, _ := webhook.NewID("mon"); !strings.HasPrefix(id, "mon_") {
		t.Errorf("NewID(mon) = %q", id)
	}
	for _, p := range []string{"", "ev_t", "évt", strings.Repeat("a", 33)} {
		if id, err := webhook.NewID(p); err == nil {
			t.Errorf("NewID(%q) = %q, want an error", p, id)
		}
	}
}

func event() webhook.Event {
	return webhook.Event{
		ID: "evt_abc", Type: webhook.EventScoreChanged, CreatedAt: t0, MonitorID: "mon_xyz",
		Data: webhook.Data{
			URL: "https://example.com/", Score: 72, Grade: "C", Level: 2, LevelName: "Usable",
			Previous: &webhook.Previous{Score: 64, Level: 1, Timestamp: t0.Add(-24 * time.Hour), Grade: "D", LevelName: "Discoverable",
				NewlyPassing: []webhook.Change{{ID: "2.3", Name: "OpenAPI operations", From: "partial", To: "pass", Message: "Every operation has a summary."}},
				NewlyFailing: []webhook.Change{}, Changed: []webhook.Change{}},
			ReportURL: "https://agentready.example/r", ScheduledFor: t0.Add(-4 * time.Second),
		},
	}
}

func TestEventJSON(t *testing.T) {
	ev := event()
	ev.Data.Previous = nil
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if _, ok := m["test"]; ok {
		t.Error(`"test" is present on a scheduled delivery`)
	}
	data := m["data"].(map[string]any)
	if p, ok := data["previous"]; !ok || p != nil {
		t.Errorf(`"previous" = %v (present %v), want null on the baseline`, p, ok)
	}
	for _, k := range []string{"id", "type", "created_at", "monitor_id", "data"} {
		if _, ok := m[k]; !ok {
			t.Errorf("no %q in %s", k, b)
		}
	}
	for _, k := range []string{"url", "score", "grade", "level", "level_name", "report_url", "scheduled_for"} {
		if _, ok := data[k]; !ok {
			t.Errorf("no data.%q in %s", k, b)
		}
	}
	// After the baseline: the previous scan and what changed since, every
	// list present (empty, not absent, when nothing moved that way).
	b, _ = json.Marshal(event())
	m = nil
	json.Unmarshal(b, &m)
	prev := m["data"].(map[string]any)["previous"].(map[string]any)
	for _, k := range []string{"score", "level", "timestamp", "grade", "level_name", "newly_passing", "newly_failing", "changed"} {
		if v, ok := prev[k]; !ok || v == nil {
			t.Errorf("no data.previous.%s in %s", k, b)
		}
	}
	if c := prev["newly_passing"].([]any)[0].(map[string]any); c["id"] != "2.3" || c["from"] != "partial" || c["to"] != "pass" || c["name"] == "" || c["message"] == "" {
		t.Errorf("a change: %v", c)
	}
	ev.Test = true
	b, _ = json.Marshal(ev)
	if !bytes.Contains(b, []byte(`"test":true`)) {
		t.Errorf("a sample lacks \"test\":true: %s", b)
	}
}

func TestParse(t *testing.T) {
	ev := event()
	b, _ := json.Marshal(ev)
	h, err := webhook.Sign(secret, ev.ID, t0, b)
	if err != nil {
		t.Fatal(err)
	}
	h.Set(webhook.HeaderEvent, ev.Type)
	got, err := webhook.Parse(secret, h, b, t0)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != ev.ID || got.Type != ev.Type || got.Data.Score != 72 || got.Data.Previous == nil || got.Data.Previous.Score != 64 || !got.CreatedAt.Equal(t0) {
		t.Errorf("Parse = %+v", got)
	}
	if _, err := webhook.Parse(other, h, b, t0); !errors.Is(err, webhook.ErrMismatch) {
		t.Errorf("wrong secret: %v", err)
	}
	// Signed but not an event: the signature alone does not make it one.
	for name, body := range map[string]string{"not JSON": "hello", "no id": `{"type":"scan.completed"}`, "score a string": `{"id":"evt_abc","type":"x","data":{"score":"high"}}`} {
		h, _ := webhook.Sign(secret, "evt_abc", t0, []byte(body))
		_, err := webhook.Parse(secret, h, []byte(body), t0)
		if !errors.Is(err, webhook.ErrMalformed) || strings.Contains(err.Error(), "high") || strings.Contains(err.Error(), "hello") {
			t.Errorf("%s: %v", name, err)
		}
	}
	// The headers receivers route and deduplicate on must agree with the signed body.
	for _, c := range []struct{ header, value string }{
		{webhook.HeaderEvent, webhook.EventScanCompleted},
		{webhook.HeaderDelivery, "evt_other"},
	} {
		bad := with(h, c.header, c.value)
		if _, err := webhook.Parse(secret, bad, b, t0); !errors.Is(err, webhook.ErrMalformed) || !strings.Contains(err.Error(), c.header) {
			t.Errorf("%s differs from the body: %v", c.header, err)
		}
	}
	// webhook-id is signed by the Standard scheme; with X-Scanner-Signature a
	// changed webhook-id still verifies, so Parse must compare it.
	bad := with(h, webhook.HeaderID, "evt_other")
	if _, err := webhook.Parse(secret, bad, b, t0); !errors.Is(err, webhook.ErrMalformed) {
		t.Errorf("webhook-id differs from the body: %v", err)
	}
}

// webhook may import only the standard library and the official Standard
// Webhooks library: receivers import it, and it must stay cheap to.
func TestDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "github.com/agentready/agentready/webhook").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var seen []string
	for _, p := range strings.Fields(string(out)) {
		seen = append(seen, p)
		if p != "github.com/agentready/agentready/webhook" && p != "github.com/standard-webhooks/standard-webhooks/libraries/go" {
			t.Errorf("webhook depends on %s", p)
		}
	}
	if len(seen) != 2 {
		t.Errorf("dependencies outside the standard library: %v", seen)
	}
}

func hmacHex(key, msg string) string {
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte(msg))
	return hex.EncodeToString(m.Sum(nil))
}

const captureSecret = "whsec_dGVzdGRhdGEtb25seTogbm90LWEtcmVhbC1zZWNyZXQtMzI="

// A delivery as a receiver's server read it off the wire (testdata/README.md):
// it must keep verifying, or deliveries already in flight stop verifying.
func TestCapturedDelivery(t *testing.T) {
	raw, err := os.ReadFile("testdata/delivery.http")
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(raw)))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(req.Body)
	if err != nil {
		t.Fatal(err)
	}
	alone, _ := os.ReadFile("testdata/delivery.json")
	if !bytes.Equal(b, alone) {
		t.Fatal("delivery.json is not the body of delivery.http")
	}
	at := time.Date(2026, 5, 11, 9, 0, 34, 0, time.UTC)
	ev, err := webhook.Parse(captureSecret, req.Header, b, at)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Type != webhook.EventScoreChanged || ev.Data.Score != 72 || ev.Data.Previous == nil || ev.Data.Previous.Score != 64 {
		t.Errorf("Parse = %+v", ev)
	}
	std := req.Header.Clone()
	std.Del(webhook.HeaderSignature)
	if err := webhook.Verify(captureSecret, std, b, at); err != nil {
		t.Errorf("webhook-signature alone: %v", err)
	}
	if err := webhook.Verify(captureSecret, req.Header, b, at.Add(5*time.Minute)); !errors.Is(err, webhook.ErrExpired) {
		t.Errorf("5 min 30 s after signing: %v", err)
	}
}

func TestCheckSecret(t *testing.T) {
	if err := webhook.CheckSecret(secret); err != nil {
		t.Errorf("a valid secret: %v", err)
	}
	for _, s := range []string{"", "whsec_", "whsec_short", secret + " ", "c2VjcmV0LWtleS1mb3ItdGVzdHMtb25seS0zMmJ5dGVz"} {
		if err := webhook.CheckSecret(s); !errors.Is(err, webhook.ErrSecret) {
			t.Errorf("CheckSecret(%q) = %v, want ErrSecret", s, err)
		}
	}
}
