package fetch

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"
)

// hopServer answers /b after release is closed (when gate is set), counts
// requests per path and Accept, and redirects per redirects.
type hopServer struct {
	*httptest.Server
	mu      sync.Mutex
	hits    map[string]int
	seen    chan string // each path as it arrives
	release chan struct{}
}

func newHopServer(t *testing.T, redirects map[string]string, gated string) *hopServer {
	t.Helper()
	s := &hopServer{hits: map[string]int{}, seen: make(chan string, 100), release: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.Path+" "+r.Header.Get("Accept")]++
		s.mu.Unlock()
		s.seen <- r.URL.Path
		if to, ok := redirects[r.URL.Path]; ok {
			http.Redirect(w, r, to, http.StatusFound)
			return
		}
		if r.URL.Path == gated {
			select {
			case <-s.release:
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("body of " + r.URL.Path))
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *hopServer) count(path, accept string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path+" "+accept]
}

// waitFor reads s.seen until path arrives.
func (s *hopServer) waitFor(t *testing.T, ctx context.Context, path string) {
	t.Helper()
	for {
		select {
		case p := <-s.seen:
			if p == path {
				return
			}
		case <-ctx.Done():
			t.Fatalf("the server never saw %s", path)
		}
	}
}

// A redirects to B while B, requested directly, is still being fetched:
// A waits for B's answer instead of fetching B again.
func TestSharedHopWhileInFlight(t *testing.T) {
	srv := newHopServer(t, map[string]string{"/a": "/b"}, "/b")
	sess := devClient(Config{}).NewSession()
	defer sess.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var b *Response
	done := make(chan struct{})
	go func() {
		b = sess.Do(ctx, Request{URL: srv.URL + "/b", Accept: "text/html"})
		close(done)
	}()
	srv.waitFor(t, ctx, "/b")
	waiting := waitHook(t)
	aDone := make(chan *Response)
	go func() { aDone <- sess.Do(ctx, Request{URL: srv.URL + "/a", Accept: "text/html", Round: 3}) }()
	waiting.on(t, ctx, srv.URL+"/b") // A waits on B's request, still held by the server
	close(srv.release)
	var a *Response
	select {
	case a = <-aDone:
	case <-ctx.Done():
		t.Fatal("A never finished")
	}
	<-done
	if n := srv.count("/b", "text/html"); n != 1 {
		t.Errorf("the server saw /b %d times, want once", n)
	}
	if a.Err != nil || a.Status != 200 || string(a.Body) != "body of /b" || a.RequestURL != srv.URL+"/a" || a.FinalURL != srv.URL+"/b" || a.Round != 3 {
		t.Errorf("A: err %v status %d body %q request %s final %s round %d", a.Err, a.Status, a.Body, a.RequestURL, a.FinalURL, a.Round)
	}
	if !slices.Equal(a.Redirects, []string{srv.URL + "/b"}) {
		t.Errorf("A's redirects %v, want [B]", a.Redirects)
	}
	if b.RequestURL != srv.URL+"/b" || len(b.Redirects) != 0 {
		t.Errorf("B changed by sharing: request %s redirects %v", b.RequestURL, b.Redirects)
	}
	// Only A's own hop is recorded for A; /b once.
	var paths []string
	for _, r := range sess.Records() {
		paths = append(paths, r.URL)
	}
	slices.Sort(paths)
	if !slices.Equal(paths, []string{srv.URL + "/a", srv.URL + "/b"}) {
		t.Errorf("records %v", paths)
	}
}

// B fetched earlier, A redirecting to it later: B's answer is reused, and
// B's own redirects follow A's.
func TestSharedHopAfterDone(t *testing.T) {
	srv := newHopServer(t, map[string]string{"/a": "/b", "/b": "/c"}, "")
	sess := devClient(Config{}).NewSession()
	defer sess.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b := sess.Do(ctx, Request{URL: srv.URL + "/b"})
	a := sess.Do(ctx, Request{URL: srv.URL + "/a"})
	if srv.count("/b", "*/*") != 1 || srv.count("/c", "*/*") != 1 {
		t.Errorf("/b seen %d times, /c %d, want once each", srv.count("/b", "*/*"), srv.count("/c", "*/*"))
	}
	if string(a.Body) != "body of /c" || !slices.Equal(a.Redirects, []string{srv.URL + "/b", srv.URL + "/c"}) || a.FinalURL != srv.URL+"/c" {
		t.Errorf("A: body %q redirects %v final %s", a.Body, a.Redirects, a.FinalURL)
	}
	if !slices.Equal(b.Redirects, []string{srv.URL + "/c"}) {
		t.Errorf("B's redirects changed: %v", b.Redirects)
	}
}

// A redirect onto a URL asked for with another Accept, or by a POST, is
// not shared: those are other representations.
func TestSharedHopNotAcrossRepresentations(t *testing.T) {
	srv := newHopServer(t, map[string]string{"/a": "/b", "/p": "/b"}, "")
	sess := devClient(Config{}).NewSession()
	defer sess.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sess.Do(ctx, Request{URL: srv.URL + "/b", Accept: "text/markdown"})
	a := sess.Do(ctx, Request{URL: srv.URL + "/a", Accept: "text/html"})
	if srv.count("/b", "text/markdown") != 1 || srv.count("/b", "text/html") != 1 {
		t.Errorf("/b as markdown %d, as html %d: want one each", srv.count("/b", "text/markdown"), srv.count("/b", "text/html"))
	}
	if a.Status != 200 || string(a.Body) != "body of /b" {
		t.Errorf("A: %d %q", a.Status, a.Body)
	}
	// A header the direct request did not send is another representation too.
	b2 := sess.Do(ctx, Request{URL: srv.URL + "/a", Accept: "text/markdown", Header: map[string]string{"X-Probe": "1"}})
	if srv.count("/b", "text/markdown") != 2 || b2.Status != 200 {
		t.Errorf("a request with another header shared /b (seen %d times as markdown)", srv.count("/b", "text/markdown"))
	}
	// A POST redirected with 302 keeps its method here (no 303), so it is not a GET to share.
	before := srv.count("/b", "*/*")
	sess.Do(ctx, Request{URL: srv.URL + "/b"})
	p := sess.Do(ctx, Request{URL: srv.URL + "/p", Method: http.MethodPost, Body: []byte("x")})
	if p.Err != nil || srv.count("/b", "*/*") != before+2 {
		t.Errorf("POST: err %v, /b seen %d more times, want 2 (the GET and the POST's own hop)", p.Err, srv.count("/b", "*/*")-before)
	}
}

// Requests that redirect to each other neither wait on each other forever
// nor end with the other's answer: each runs into the redirect limit.
func TestSharedHopLoopsDoNotDeadlock(t *testing.T) {
	for _, pair := range [][2]string{{"/x", "/y"}, {"/y", "/x"}} {
		srv := newHopServer(t, map[string]string{"/x": "/y", "/y": "/x", "/s": "/s"}, "")
		sess := devClient(Config{MaxRedirects: 4}).NewSession()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		var wg sync.WaitGroup
		got := make([]*Response, 3)
		for i, p := range []string{pair[0], pair[1], "/s"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got[i] = sess.Do(ctx, Request{URL: srv.URL + p})
			}()
		}
		finished := make(chan struct{})
		go func() { wg.Wait(); close(finished) }()
		select {
		case <-finished:
		case <-ctx.Done():
			t.Fatalf("%v: requests that redirect to each other deadlocked", pair)
		}
		if ctx.Err() != nil {
			t.Fatalf("%v: finished only at the deadline", pair)
		}
		for i, r := range got {
			var fe *Error
			if r.Err == nil || r.Status != 0 || len(r.Body) != 0 {
				t.Errorf("%v request %d: status %d body %q err %v, want the redirect limit", pair, i, r.Status, r.Body, r.Err)
			} else if ok := errors.As(r.Err, &fe); !ok || fe.Kind != KindRedirects {
				t.Errorf("%v request %d: err %v, want too many redirects", pair, i, r.Err)
			}
			if len(r.Redirects) == 0 {
				t.Errorf("%v request %d: no redirects recorded", pair, i)
			}
		}
		cancel()
		sess.Close()
	}
}

// waiter reports the targets sharedHop starts to wait for.
type waiter chan string

// waitHook installs testHookSharedWait for the test.
func waitHook(t *testing.T) waiter {
	w := make(waiter, 16)
	testHookSharedWait = func(target string) { w <- target }
	t.Cleanup(func() { testHookSharedWait = nil })
	return w
}

// on returns once a redirected request waits for target's answer.
func (w waiter) on(t *testing.T, ctx context.Context, target string) {
	t.Helper()
	for {
		select {
		case got := <-w:
			if got == target {
				return
			}
		case <-ctx.Done():
			t.Fatalf("no redirected request waited for %s's answer", target)
		}
	}
}
