package fetch

import (
	"context"
	"testing"
	"time"
)

// A batch reserved before it is sent shares a redirect's target even when
// the redirect arrives before the target's own request was made: A is made
// first and redirects to B, which the batch holds but nobody has sent yet.
func TestReservedBatchSharesARedirectTarget(t *testing.T) {
	srv := newHopServer(t, map[string]string{"/a": "/b"}, "")
	sess := devClient(Config{}).NewSession()
	defer sess.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	a, b := Request{URL: srv.URL + "/a", Accept: "text/html"}, Request{URL: srv.URL + "/b", Accept: "text/html"}
	sess.Reserve([]Request{a, b})
	waiting := waitHook(t)
	aDone := make(chan *Response, 1)
	go func() { aDone <- sess.Do(ctx, a) }()
	// A waits on the reserved B, which nobody has sent yet; then B is made.
	waiting.on(t, ctx, b.URL)
	gotB := sess.Do(ctx, b)
	var gotA *Response
	select {
	case gotA = <-aDone:
	case <-ctx.Done():
		t.Fatal("A never finished")
	}
	if n := srv.count("/b", "text/html"); n != 1 {
		t.Errorf("the server saw /b %d times, want once", n)
	}
	if string(gotA.Body) != "body of /b" || string(gotB.Body) != "body of /b" || len(gotA.Redirects) != 1 {
		t.Errorf("A %q %v, B %q", gotA.Body, gotA.Redirects, gotB.Body)
	}
	// A reserved request answers only once it is made, and Responses lists
	// what was answered, in reservation order.
	if rs := sess.Responses(); len(rs) != 2 || rs[0].RequestURL != a.URL || rs[1].RequestURL != b.URL {
		t.Errorf("responses %d", len(rs))
	}
}
