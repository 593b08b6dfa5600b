package webhook_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/agentready/agentready/internal/testing/testenv"
	"github.com/agentready/agentready/webhook"
)

// post sends one delivery the way the service does: the signed headers and
// the raw body, over real HTTP.
func post(t *testing.T, url string, h http.Header, body []byte) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range h {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", "application/json")
	resp, b := testenv.Do(t, nil, req)
	return resp.StatusCode, string(b)
}

func eventBody(t *testing.T, id string) []byte {
	t.Helper()
	ev := event()
	ev.ID = id
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// What Sign produces, a receiver built on the official Go library accepts;
// what that library signs, Verify accepts.
func TestInteropOfficialGoLibrary(t *testing.T) {
	s, err := webhook.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		wh, err := standardwebhooks.NewWebhook(s)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		if err := wh.Verify(body, r.Header); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()

	id, _ := webhook.NewID("evt")
	b := eventBody(t, id)
	h, err := webhook.Sign(s, id, time.Now(), b)
	if err != nil {
		t.Fatal(err)
	}
	if code, msg := post(t, srv.URL, h, b); code != http.StatusNoContent {
		t.Fatalf("the official library refused Sign's output: %d %s", code, msg)
	}
	if code, msg := post(t, srv.URL, h, append(b, ' ')); code != http.StatusBadRequest || !strings.Contains(msg, "no matching signature") {
		t.Errorf("tampered body: %d %s", code, msg)
	}
	stale, _ := webhook.Sign(s, id, time.Now().Add(-6*time.Minute), b)
	if code, msg := post(t, srv.URL, stale, b); code != http.StatusBadRequest || !strings.Contains(msg, "too old") {
		t.Errorf("6-minute-old delivery: %d %s", code, msg)
	}

	// The other way round.
	wh, _ := standardwebhooks.NewWebhook(s)
	now := time.Now()
	sig, err := wh.Sign(id, now, b)
	if err != nil {
		t.Fatal(err)
	}
	lib := http.Header{}
	lib.Set(standardwebhooks.HeaderWebhookID, id)
	lib.Set(standardwebhooks.HeaderWebhookTimestamp, strconv.FormatInt(now.Unix(), 10))
	lib.Set(standardwebhooks.HeaderWebhookSignature, sig)
	if err := webhook.Verify(s, lib, b, now); err != nil {
		t.Errorf("Verify refused the official library's signature: %v", err)
	}
	if err := webhook.Verify(s, lib, b[1:], now); err == nil {
		t.Error("Verify accepted the official library's signature over another body")
	}
}

// docsFile is docs/webhooks.md, whose code blocks these tests run.
func docsFile(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "docs", "webhooks.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func fenced(doc, lang string) []string {
	var out []string
	for _, m := range regexp.MustCompile("(?s)```"+regexp.QuoteMeta(lang)+"\n(.*?)```\n").FindAllStringSubmatch(doc, -1) {
		out = append(out, m[1])
	}
	return out
}

// The Node receiver in docs/webhooks.md, run as tests/node/verifywebhook.mjs
// under node with the standardwebhooks npm package: it must accept what Sign
// produces and refuse the rest, by each scheme.
func TestInteropNode(t *testing.T) {
	mjs := filepath.Join(testenv.NodeDir(), "verifywebhook.mjs")
	src, err := os.ReadFile(mjs)
	if err != nil {
		t.Fatal(err)
	}
	blocks := fenced(docsFile(t), "js")
	if len(blocks) != 2 {
		t.Fatalf("docs/webhooks.md has %d js blocks, want 2 (verifyScannerSignature, the receiver)", len(blocks))
	}
	for i, b := range blocks {
		if !strings.Contains(string(src), b) {
			t.Errorf("js block %d of docs/webhooks.md is not in tests/node/verifywebhook.mjs verbatim: copy it there, so the test runs what the docs say", i+1)
		}
	}
	node := testenv.Node(t, "standardwebhooks")

	s, _ := webhook.NewSecret()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, node, mjs)
	cmd.Dir = testenv.NodeDir()
	cmd.Env = append(os.Environ(), "AGENTREADY_WEBHOOK_SECRET="+s, "PORT=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); cmd.Wait() }()
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	next := func(what string) string {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok {
				cmd.Wait()
				t.Fatalf("node exited before %s: %s", what, stderr.String())
			}
			return l
		case <-time.After(20 * time.Second):
			t.Fatalf("no %s from node within 20 s: %s", what, stderr.String())
		}
		return ""
	}
	port, ok := strings.CutPrefix(next("listening line"), "listening ")
	if !ok {
		t.Fatal("node did not report its port")
	}
	url := "http://127.0.0.1:" + port + "/hook"

	id, _ := webhook.NewID("evt")
	b := eventBody(t, id)
	h, err := webhook.Sign(s, id, time.Now(), b)
	if err != nil {
		t.Fatal(err)
	}
	if code, msg := post(t, url, h, b); code != http.StatusNoContent {
		t.Fatalf("node refused Sign's output: %d %s", code, msg)
	}
	if l := next("handled line"); l != "handled score.changed "+id {
		t.Errorf("node handled %q", l)
	}

	// Rotation: two v1= entries, the second with this secret.
	other, _ := webhook.NewSecret()
	ho, _ := webhook.Sign(other, id, time.Now(), b)
	rot := h.Clone()
	rot.Set(webhook.HeaderSignature, ho.Get(webhook.HeaderSignature)+","+strings.SplitN(h.Get(webhook.HeaderSignature), ",", 2)[1])
	if code, msg := post(t, url, rot, b); code != http.StatusNoContent {
		t.Errorf("two v1= entries, the second matching: %d %s", code, msg)
	} else if l := next("handled line"); !strings.HasSuffix(l, id) {
		t.Errorf("node handled %q", l)
	}

	for _, c := range []struct {
		name string
		h    http.Header
		body []byte
		want string
	}{
		{"tampered body", h, bytes.Replace(b, []byte(`"score":72`), []byte(`"score":99`), 1), "webhook-signature: No matching signature"},
		{"6 minutes old", func() http.Header { h, _ := webhook.Sign(s, id, time.Now().Add(-6*time.Minute), b); return h }(), b, "too old"},
		{"6 minutes ahead", func() http.Header { h, _ := webhook.Sign(s, id, time.Now().Add(6*time.Minute), b); return h }(), b, "too new"},
		// Standard Webhooks valid, X-Scanner-Signature from another secret:
		// only the node:crypto check can catch it.
		{"X-Scanner-Signature of another secret", with(h, webhook.HeaderSignature, ho.Get(webhook.HeaderSignature)), b, "X-Scanner-Signature does not verify"},
		{"X-Scanner-Signature without t=", with(h, webhook.HeaderSignature, strings.SplitN(h.Get(webhook.HeaderSignature), ",", 2)[1]), b, "X-Scanner-Signature does not verify"},
		{"X-Scanner-Signature missing", with(h, webhook.HeaderSignature, "\x00"), b, "X-Scanner-Signature does not verify"},
	} {
		if code, msg := post(t, url, c.h, c.body); code != http.StatusBadRequest || !strings.Contains(msg, c.want) {
			t.Errorf("%s: node answered %d %q, want 400 %q", c.name, code, msg, c.want)
		}
	}
}

// The Python snippet of docs/webhooks.md (the ```python block, standard
// library only), run as it is against Sign's output.
func TestInteropPythonSnippet(t *testing.T) {
	blocks := fenced(docsFile(t), "python")
	if len(blocks) != 1 {
		t.Fatalf("docs/webhooks.md has %d python blocks, want 1 (verify_scanner_signature)", len(blocks))
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed: the Python snippet of docs/webhooks.md is not checked (not a CI requirement)")
	}
	id, _ := webhook.NewID("evt")
	b := eventBody(t, id)
	h, err := webhook.Sign(secret, id, t0, b)
	if err != nil {
		t.Fatal(err)
	}
	ho, _ := webhook.Sign(other, id, t0, b)
	sig := h.Get(webhook.HeaderSignature)
	type pcase struct {
		name   string
		secret string
		header string
		body   []byte
		now    time.Time
		want   bool
	}
	cases := []pcase{
		{"valid", secret, sig, b, t0, true},
		{"4 minutes later", secret, sig, b, t0.Add(4 * time.Minute), true},
		{"rotation, second v1 matches", secret, ho.Get(webhook.HeaderSignature) + "," + strings.SplitN(sig, ",", 2)[1], b, t0, true},
		{"tampered body", secret, sig, append([]byte(" "), b...), t0, false},
		{"wrong secret", other, sig, b, t0, false},
		{"decoded key instead of the string", string(mustDecode(t, secret)), sig, b, t0, false},
		{"6 minutes later", secret, sig, b, t0.Add(6 * time.Minute), false},
		{"6 minutes earlier", secret, sig, b, t0.Add(-6 * time.Minute), false},
		{"no t=", secret, strings.SplitN(sig, ",", 2)[1], b, t0, false},
		{"empty", secret, "", b, t0, false},
		{"non-numeric t", secret, "t=x" + sig[2:], b, t0, false},
	}
	type jcase struct {
		Secret string  `json:"secret"`
		Header string  `json:"header"`
		Body   string  `json:"body"`
		Now    float64 `json:"now"`
	}
	var in []jcase
	for _, c := range cases {
		// Cross-check: the Go side agrees with what Python must answer.
		hh := http.Header{webhook.HeaderSignature: {c.header}}
		if goOK := webhook.Verify(c.secret, hh, c.body, c.now) == nil; goOK != c.want {
			t.Errorf("%s: Go says %v, the case wants %v", c.name, goOK, c.want)
		}
		in = append(in, jcase{c.secret, c.header, base64.StdEncoding.EncodeToString(c.body), float64(c.now.Unix())})
	}
	input, _ := json.Marshal(in)
	script := blocks[0] + `
import base64, json, sys
cases = json.load(sys.stdin)
print(json.dumps([verify_scanner_signature(c["secret"], c["header"], base64.b64decode(c["body"]), c["now"]) for c in cases]))
`
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, "-c", script)
	cmd.Stdin = bytes.NewReader(input)
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("python3: %v: %s", err, stderr)
	}
	var got []bool
	if err := json.Unmarshal(out, &got); err != nil || len(got) != len(cases) {
		t.Fatalf("python printed %q", out)
	}
	for i, c := range cases {
		if got[i] != c.want {
			t.Errorf("%s: the Python snippet says %v, want %v", c.name, got[i], c.want)
		}
	}
}

func mustDecode(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, "whsec_"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The payload docs/webhooks.md shows is a webhook.Event, member for member:
// every member it shows is one of the type's, and it shows every member a
// scheduled delivery after the baseline carries.
func TestDocsPayloadSample(t *testing.T) {
	blocks := fenced(docsFile(t), "json")
	if len(blocks) != 1 {
		t.Fatalf("docs/webhooks.md has %d json blocks, want 1 (the payload)", len(blocks))
	}
	dec := json.NewDecoder(strings.NewReader(blocks[0]))
	dec.DisallowUnknownFields()
	var ev webhook.Event
	if err := dec.Decode(&ev); err != nil {
		t.Fatalf("the sample payload is not a webhook.Event: %v", err)
	}
	var shown map[string]any
	json.Unmarshal([]byte(blocks[0]), &shown)
	b, _ := json.Marshal(ev)
	var sent map[string]any
	json.Unmarshal(b, &sent)
	var missing func(path string, sent, shown any)
	missing = func(path string, sent, shown any) {
		switch s := sent.(type) {
		case map[string]any:
			sh, _ := shown.(map[string]any)
			for k, v := range s {
				if _, ok := sh[k]; !ok {
					t.Errorf("the sample does not show %s%s", path, k)
					continue
				}
				missing(path+k+".", v, sh[k])
			}
		case []any:
			if sh, _ := shown.([]any); len(sh) > 0 && len(s) > 0 {
				missing(path, s[0], sh[0])
			}
		}
	}
	missing("", sent, shown)
	if p := ev.Data.Previous; p == nil || len(p.NewlyPassing) == 0 || p.NewlyFailing == nil || len(p.Changed) == 0 || p.Timestamp.IsZero() {
		t.Errorf("the sample's previous shows no change of each kind: %+v", p)
	}
}
