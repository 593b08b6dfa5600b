package browser

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// Without Chromium every job fails at once with ErrUnavailable, whose message
// says how to install it, and Health says so too. Needs no browser.
func TestWithoutChromium(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv("CHROME_PATH", "")
	p := New(Config{Check: onlyFixture})
	defer p.Close()
	_, err := p.Screenshot(context.Background(), "http://127.0.0.1:1/", ScreenshotOptions{})
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
	for _, want := range []string{"apt-get install chromium", "CHROME_PATH"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q does not say %q", err, want)
		}
	}
	h := p.Health()
	if h.State != "unavailable" || h.Started || !strings.Contains(h.Message, "apt-get install chromium") {
		t.Errorf("health = %+v", h)
	}

	t.Setenv("CHROME_PATH", "/nonexistent/chromium")
	if _, err := p.Render(context.Background(), "http://127.0.0.1:1/"); !errors.Is(err, ErrUnavailable) || strings.Contains(err.Error(), "/nonexistent") {
		t.Errorf("bad CHROME_PATH: err = %v, want ErrUnavailable without the path", err)
	}
}

func TestInvalidURLs(t *testing.T) {
	p := New(Config{Check: onlyFixture})
	defer p.Close()
	for _, u := range []string{"file:///etc/passwd", "ftp://127.0.0.1/", "javascript:alert(1)", "data:text/html,x", "/relative", "http://", "chrome://settings", "http://user:pw@127.0.0.1/"} {
		if _, err := p.Render(context.Background(), u); !errors.Is(err, ErrInvalidURL) {
			t.Errorf("%s: err = %v, want ErrInvalidURL", u, err)
		}
	}
	for _, u := range []string{"http://127.0.0.2/", "http://2130706433/", "http://0x7f.1/", "http://169.254.169.254/"} {
		if _, err := p.Render(context.Background(), u); !errors.Is(err, ErrBlocked) {
			t.Errorf("%s: err = %v, want ErrBlocked", u, err)
		}
	}
}

// A binary that is not a working Chromium fails the job with ErrStart, at
// once, and the next job tries again.
func TestBrokenChromium(t *testing.T) {
	t.Setenv("CHROME_PATH", "/bin/false")
	p := New(Config{Check: onlyFixture, Logf: t.Logf})
	defer p.Close()
	for i := 0; i < 2; i++ {
		_, err := p.Render(context.Background(), "http://127.0.0.1:1/")
		if !errors.Is(err, ErrStart) {
			t.Fatalf("attempt %d: err = %v, want ErrStart", i+1, err)
		}
	}
	if h := p.Health(); h.Started || h.State != "idle" {
		t.Errorf("health = %+v", h)
	}
}
