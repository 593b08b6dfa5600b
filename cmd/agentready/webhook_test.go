package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentready/agentready/internal/testing/testenv"
	"github.com/agentready/agentready/webhook"
)

// The committed capture (webhook/testdata/README.md) and its test-only secret.
const (
	captureSecret = "whsec_dGVzdGRhdGEtb25seTogbm90LWEtcmVhbC1zZWNyZXQtMzI="
	captureValid  = "valid: score.changed evt_3xq7ltm5ybk2oc4fhr6wn2dpza for https://example.com/ (score 72, level 2)\n"
)

func capture(name string) string {
	return filepath.Join(testenv.RepoRoot(), "webhook", "testdata", name)
}

// runWebhook runs the CLI with body as standard input.
func runWebhook(t *testing.T, stdinBody []byte, args ...string) (int, string, string) {
	t.Helper()
	old := webhookStdin
	webhookStdin = bytes.NewReader(stdinBody)
	defer func() { webhookStdin = old }()
	return runCLI(append([]string{"webhook", "verify"}, args...)...)
}

func writeFile(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestWebhookVerifyCapture(t *testing.T) {
	t.Setenv("AGENTREADY_WEBHOOK_SECRET", captureSecret)
	hdrs, body := capture("delivery.http"), capture("delivery.json")

	// The request dump: its request line is skipped, and the body after the
	// blank line is not read as headers.
	for _, now := range []string{"2026-05-11T09:00:34Z", "1778490034", "2026-05-11T11:00:34+02:00"} {
		code, out, errs := runWebhook(t, nil, "--headers", hdrs, "--body", body, "--now", now)
		if code != exitOK || out != captureValid || errs != "" {
			t.Errorf("--now %s: exit %d, stdout %q, stderr %q", now, code, out, errs)
		}
	}

	// Without --now it is now long expired; the message says how to check it anyway.
	code, out, errs := runWebhook(t, nil, "--headers", hdrs, "--body", body)
	if code != exitInvalidDelivery || out != "" || !strings.Contains(errs, "timestamp outside the 5-minute window") || !strings.Contains(errs, "pass --now") {
		t.Errorf("without --now: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	// --now six minutes later: too old even so, and no --now hint this time.
	code, _, errs = runWebhook(t, nil, "--headers", hdrs, "--body", body, "--now", "2026-05-11T09:06:05Z")
	if code != exitInvalidDelivery || !strings.Contains(errs, "6m1s before now") || strings.Contains(errs, "pass --now") {
		t.Errorf("--now 6 min later: exit %d, stderr %q", code, errs)
	}

	// The body on standard input, with the newline an editor adds: refused,
	// with a hint about the newline.
	raw, _ := os.ReadFile(body)
	code, _, errs = runWebhook(t, append(raw, '\n'), "--headers", hdrs, "--now", "1778490034")
	if code != exitInvalidDelivery || !strings.Contains(errs, "signature does not match") || !strings.Contains(errs, "ends with a newline") {
		t.Errorf("body with a newline: exit %d, stderr %q", code, errs)
	}
	code, out, _ = runWebhook(t, raw, "--headers", hdrs, "--now", "1778490034", "--body", "-")
	if code != exitOK || out != captureValid {
		t.Errorf("body from stdin: exit %d, %q", code, out)
	}

	// --secret wins over the environment.
	code, _, errs = runWebhook(t, nil, "--headers", hdrs, "--body", body, "--now", "1778490034", "--secret", "whsec_"+strings.Repeat("A", 43)+"=")
	if code != exitInvalidDelivery || !strings.Contains(errs, "signature does not match") {
		t.Errorf("another --secret: exit %d, stderr %q", code, errs)
	}
	if strings.Contains(errs, captureSecret[6:]) {
		t.Errorf("stderr repeats the secret: %s", errs)
	}
}

// Fresh deliveries given with --header flags, one scheme at a time, and each
// scheme checked on its own.
func TestWebhookVerifyHeaders(t *testing.T) {
	secret, _ := webhook.NewSecret()
	other, _ := webhook.NewSecret()
	t.Setenv("AGENTREADY_WEBHOOK_SECRET", secret)
	id, _ := webhook.NewID("evt")
	ev := webhook.Event{ID: id, Type: webhook.EventScanCompleted, CreatedAt: time.Now(), MonitorID: "mon_x", Test: true,
		Data: webhook.Data{URL: "https://example.org/", Score: 55, Level: 1}}
	b, _ := json.Marshal(ev)
	h, err := webhook.Sign(secret, id, time.Now(), b)
	if err != nil {
		t.Fatal(err)
	}
	ho, _ := webhook.Sign(other, id, time.Now(), b)
	flags := func(names ...string) []string {
		var a []string
		for _, n := range names {
			a = append(a, "--header", n+": "+h.Get(n))
		}
		return a
	}
	want := "valid: scan.completed " + id + " for https://example.org/ (score 55, level 1)\n"
	for name, args := range map[string][]string{
		"X-Scanner-Signature":   flags(webhook.HeaderSignature),
		"Standard Webhooks":     flags(webhook.HeaderID, webhook.HeaderTimestamp, webhook.HeaderStdSignature),
		"all, names lowercased": {"--header", "x-scanner-signature:" + h.Get(webhook.HeaderSignature), "--header", "WEBHOOK-ID: " + id, "--header", "webhook-timestamp: " + h.Get(webhook.HeaderTimestamp), "--header", "webhook-signature: " + h.Get(webhook.HeaderStdSignature)},
	} {
		code, out, errs := runWebhook(t, b, args...)
		if code != exitOK || !strings.HasPrefix(out, want) || !strings.Contains(out, "a test delivery") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", name, code, out, errs)
		}
	}
	// X-Scanner-Signature valid, webhook-signature from another secret: the
	// library alone would have stopped at the first; the CLI names the second.
	args := append(flags(webhook.HeaderSignature, webhook.HeaderID, webhook.HeaderTimestamp), "--header", webhook.HeaderStdSignature+": "+ho.Get(webhook.HeaderStdSignature))
	code, out, errs := runWebhook(t, b, args...)
	if code != exitInvalidDelivery || out != "" || !strings.Contains(errs, "in webhook-signature") {
		t.Errorf("one scheme broken: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	// Headers from a file written by curl -D (a status line, CRLF, a folded line).
	file := "HTTP/1.1 200 OK\r\nX-Scanner-Signature: " + h.Get(webhook.HeaderSignature) + "\r\nX-Note: folded\r\n  continued\r\n\r\n"
	code, out, errs = runWebhook(t, b, "--headers", writeFile(t, "h.txt", []byte(file)))
	if code != exitOK || !strings.HasPrefix(out, want) {
		t.Errorf("curl -D file: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	// No signature at all.
	code, _, errs = runWebhook(t, b, "--header", "Content-Type: application/json")
	if code != exitInvalidDelivery || !strings.Contains(errs, "no signature") {
		t.Errorf("no signature: exit %d, stderr %q", code, errs)
	}
	if strings.Contains(errs, secret) || strings.Contains(errs, other) {
		t.Errorf("stderr repeats a secret: %s", errs)
	}
}

func TestWebhookUsageErrors(t *testing.T) {
	t.Setenv("AGENTREADY_WEBHOOK_SECRET", captureSecret)
	hdrs, body := capture("delivery.http"), capture("delivery.json")
	bad := writeFile(t, "bad.txt", []byte("POST / HTTP/1.1\nX-Scanner-Signature: t=1\nthis is not a header\n"))
	for _, c := range []struct {
		name string
		args []string
		env  string
		want string
	}{
		{"no verb", []string{"webhook"}, captureSecret, "name a verb (verify)"},
		{"unknown verb", []string{"webhook", "check"}, captureSecret, "unknown verb"},
		{"no secret", []string{"webhook", "verify", "--headers", hdrs, "--body", body}, "", "AGENTREADY_WEBHOOK_SECRET"},
		{"bad --now", []string{"webhook", "verify", "--headers", hdrs, "--body", body, "--now", "yesterday"}, captureSecret, "--now wants"},
		{"bad --header", []string{"webhook", "verify", "--header", "no colon", "--body", body}, captureSecret, "--header wants 'Name: value'"},
		{"no headers", []string{"webhook", "verify", "--body", body}, captureSecret, "no headers"},
		{"garbage in --headers", []string{"webhook", "verify", "--headers", bad, "--body", body}, captureSecret, "line 3 of the --headers file"},
		{"missing --headers file", []string{"webhook", "verify", "--headers", filepath.Join(t.TempDir(), "nope"), "--body", body}, captureSecret, "cannot read the --headers file"},
		{"missing --body file", []string{"webhook", "verify", "--headers", hdrs, "--body", filepath.Join(t.TempDir(), "nope")}, captureSecret, "cannot read the --body file"},
		{"an argument", []string{"webhook", "verify", "--headers", hdrs, body}, captureSecret, "takes no arguments"},
		{"secret not whsec_ base64", []string{"webhook", "verify", "--headers", hdrs, "--body", body, "--now", "1778490034"}, "whsec_short", "invalid secret"},
		{"unknown flag", []string{"webhook", "verify", "--sekret", "x"}, captureSecret, "flag provided but not defined"},
	} {
		t.Setenv("AGENTREADY_WEBHOOK_SECRET", c.env)
		old := webhookStdin
		webhookStdin = bytes.NewReader(nil)
		code, out, errs := runCLI(c.args...)
		webhookStdin = old
		if code != exitUsage || out != "" || !strings.Contains(errs, c.want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 saying %q", c.name, code, out, errs, c.want)
		}
	}
	// The body is capped rather than read whole.
	code, _, errs := runWebhook(t, bytes.Repeat([]byte("x"), maxWebhookBody+1), "--headers", hdrs)
	if code != exitUsage || !strings.Contains(errs, "larger than") {
		t.Errorf("an 10 MiB+1 body: exit %d, stderr %q", code, errs)
	}
	// --help is an answer, as for every command.
	if code, out, _ := runCLI("webhook", "verify", "--help"); code != exitOK || out != commandHelp("webhook") {
		t.Errorf("webhook verify --help: exit %d", code)
	}
}

// The help names every flag of webhook verify, as parsed from its flag set.
func TestWebhookHelpNamesEveryFlag(t *testing.T) {
	flags := flagNames(t, func(a []string, o, e *bytes.Buffer) int { return webhookVerifyCmd(a, o, e) })
	if len(flags) != 5 {
		t.Errorf("webhook verify defines %d flags: %v", len(flags), flags)
	}
	for _, f := range flags {
		if !regexp.MustCompile(`(^|[\s\[])--` + regexp.QuoteMeta(f) + `([^a-z0-9-]|$)`).MatchString(usage) {
			t.Errorf("agentready webhook verify --%s is missing from the help", f)
		}
	}
}
