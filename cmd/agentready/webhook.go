package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/agentready/agentready/webhook"
)

// exitInvalidDelivery: the capture is not a valid delivery for this secret.
const exitInvalidDelivery = 1

// webhookStdin is where --body is read from by default; tests replace it.
var webhookStdin io.Reader = os.Stdin

const (
	// A delivery is a few KB; the caps only keep a wrong file from being
	// read whole into memory.
	maxWebhookBody    = 10 << 20
	maxWebhookHeaders = 1 << 20
)

func webhookCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintf(stderr, "agentready webhook: name a verb (verify)\n%s", shortUsage("webhook"))
		return exitUsage
	}
	if args[0] == "verify" {
		return webhookVerifyCmd(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "agentready webhook: unknown verb %q (the verb is verify)\n%s", args[0], shortUsage("webhook"))
	return exitUsage
}

// headerFlags collects repeated --header 'Name: value'.
type headerFlags []string

func (h *headerFlags) String() string     { return strings.Join(*h, "\n") }
func (h *headerFlags) Set(v string) error { *h = append(*h, v); return nil }

// webhookVerifyCmd checks a captured delivery as a receiver would, and each
// signature scheme the capture carries on its own, so a receiver's author
// learns which one their code or a proxy breaks.
func webhookVerifyCmd(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("webhook", "webhook verify", stderr)
	var (
		secret, headersFile, bodyFile, nowArg string
		headers                               headerFlags
	)
	fs.StringVar(&secret, "secret", "", "")
	fs.Var(&headers, "header", "")
	fs.StringVar(&headersFile, "headers", "", "")
	fs.StringVar(&bodyFile, "body", "", "")
	fs.StringVar(&nowArg, "now", "", "")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "agentready webhook verify: "+format+"\n", a...)
		return exitUsage
	}
	if fs.NArg() > 0 {
		return fail("takes no arguments besides flags (got %d); the body comes from --body FILE or standard input", fs.NArg())
	}
	if secret == "" {
		secret = os.Getenv("AGENTREADY_WEBHOOK_SECRET")
	}
	if secret == "" {
		return fail("no secret: set AGENTREADY_WEBHOOK_SECRET (keeps it out of shell history) or pass --secret, with the secret POST /api/monitors returned")
	}
	// The service's secrets all have this form; saying so beats a mismatch.
	if err := webhook.CheckSecret(secret); err != nil {
		return fail("%v", err)
	}
	now := time.Now()
	if nowArg != "" {
		t, ok := parseNow(nowArg)
		if !ok {
			return fail("--now wants an RFC 3339 time (2026-05-11T09:00:30Z) or Unix seconds")
		}
		now = t
	}
	h := http.Header{}
	if headersFile != "" {
		if err := readHeaderFile(h, headersFile); err != nil {
			return fail("%v", err)
		}
	}
	for _, line := range headers {
		name, value, ok := strings.Cut(line, ":")
		if !ok || !headerToken.MatchString(strings.TrimSpace(name)) {
			return fail("--header wants 'Name: value'")
		}
		h.Add(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	if len(h) == 0 {
		return fail("no headers: give the delivery's headers with --headers FILE or --header 'Name: value'")
	}
	body, err := readBody(bodyFile)
	if err != nil {
		return fail("%v", err)
	}

	// Each scheme alone; a delivery from the service carries both, valid.
	type scheme struct {
		name string
		h    http.Header
	}
	var schemes []scheme
	if len(h.Values(webhook.HeaderSignature)) > 0 {
		hh := h.Clone()
		hh.Del(webhook.HeaderStdSignature)
		schemes = append(schemes, scheme{webhook.HeaderSignature, hh})
	}
	if len(h.Values(webhook.HeaderStdSignature)) > 0 {
		hh := h.Clone()
		hh.Del(webhook.HeaderSignature)
		schemes = append(schemes, scheme{webhook.HeaderStdSignature, hh})
	}
	if len(schemes) == 0 {
		schemes = append(schemes, scheme{"", h}) // Parse says what is missing
	}
	var ev webhook.Event
	for _, s := range schemes {
		ev, err = webhook.Parse(secret, s.h, body, now)
		if err == nil {
			continue
		}
		fmt.Fprintf(stderr, "agentready webhook verify: %v\n", err)
		switch {
		case errors.Is(err, webhook.ErrExpired) && nowArg == "":
			fmt.Fprintln(stderr, "  to check a capture older than the 5-minute window, pass --now with the time it was received (RFC 3339 or Unix seconds)")
		case errors.Is(err, webhook.ErrMismatch) && bytes.HasSuffix(body, []byte("\n")):
			fmt.Fprintln(stderr, "  the body ends with a newline: if the capture added it (an editor, echo), remove it")
		case errors.Is(err, webhook.ErrSecret):
			return exitUsage
		}
		return exitInvalidDelivery
	}
	fmt.Fprintf(stdout, "valid: %s %s for %s (score %d, level %d)\n", ev.Type, ev.ID, ev.Data.URL, ev.Data.Score, ev.Data.Level)
	if ev.Test {
		fmt.Fprintln(stdout, "a test delivery (POST /api/monitors/{id}/test): its numbers are a sample")
	}
	return exitOK
}

var (
	headerToken = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
	// A request line ("POST /hook HTTP/1.1") or a status line ("HTTP/1.1 200 OK").
	startLine = regexp.MustCompile(`^(HTTP/\d(\.\d)? |[A-Z]+ \S+ HTTP/\d(\.\d)?$)`)
)

func parseNow(s string) (time.Time, bool) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n > 0 && len(s) <= 12 {
		return time.Unix(n, 0), true
	}
	t, err := time.Parse(time.RFC3339, s)
	return t, err == nil
}

// readHeaderFile reads "Name: value" lines as a request dump or curl -D
// writes them: start lines are skipped, a folded line continues the one
// before, and a blank line after the headers ends them (a body may follow).
func readHeaderFile(h http.Header, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("cannot read the --headers file: %w", reason(err))
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxWebhookHeaders+1))
	if err != nil {
		return fmt.Errorf("cannot read the --headers file: %w", reason(err))
	}
	if len(b) > maxWebhookHeaders {
		return fmt.Errorf("the --headers file is larger than %d bytes; give only the request's headers", maxWebhookHeaders)
	}
	var last string
	for n, line := range strings.Split(string(b), "\n") {
		line = strings.TrimRight(line, "\r")
		switch {
		case strings.TrimSpace(line) == "":
			if last != "" {
				return nil
			}
		case startLine.MatchString(line):
			last = ""
		case (line[0] == ' ' || line[0] == '\t') && last != "":
			vs := h[last]
			vs[len(vs)-1] += " " + strings.TrimSpace(line)
		default:
			name, value, ok := strings.Cut(line, ":")
			if !ok || !headerToken.MatchString(name) {
				return fmt.Errorf("line %d of the --headers file is not a 'Name: value' header line", n+1)
			}
			h.Add(name, strings.TrimSpace(value))
			last = http.CanonicalHeaderKey(name)
		}
	}
	return nil
}

// reason drops the path from a file error: the user named the file.
func reason(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func readBody(path string) ([]byte, error) {
	var r io.Reader
	if path == "" || path == "-" {
		if f, ok := webhookStdin.(*os.File); ok {
			if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
				return nil, errors.New("no body: give --body FILE, or pipe the raw body on standard input")
			}
		}
		r = webhookStdin
	} else {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("cannot read the --body file: %w", reason(err))
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, maxWebhookBody+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read the body: %w", err)
	}
	if len(b) > maxWebhookBody {
		return nil, fmt.Errorf("the body is larger than %d bytes: not a delivery (those are a few KB)", maxWebhookBody)
	}
	return b, nil
}
