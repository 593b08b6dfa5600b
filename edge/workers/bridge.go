//go:build js && wasm

package workers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"
	"syscall/js"

	"github.com/agentready/agentready/edge"
)

// The bridge is the object the entry module (index.mjs) puts on globalThis
// before it starts the Go program: the Worker's env, and the host functions
// that do I/O on Go's behalf. Go adds two functions to it, serve and settle,
// and they live as long as the isolate: no js.Func is made per request or
// per call, so a long-lived instance does not accumulate them.
var bridge = js.Global().Get("__agentreadyEdge")

var uint8Array = js.Global().Get("Uint8Array")

// Serve starts the edge in this isolate and never returns. build runs once,
// with the Worker's environment; when it fails every request is answered
// with a 500 naming the setting at fault, and the cause goes to the log once.
func Serve(build func(getenv func(string) string) (http.Handler, error)) {
	env := bridge.Get("env")
	getenv := func(name string) string {
		if v := env.Get(name); v.Type() == js.TypeString {
			return v.String()
		}
		return ""
	}
	h, err := build(getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "edge configuration error:", err)
		var ce *edge.ConfigError
		setting := ""
		if errors.As(err, &ce) {
			setting = ce.Setting
		}
		h = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { edge.Misconfigured(w, setting) })
	}
	bridge.Set("maxBody", edge.MaxBody+1)
	bridge.Set("settle", js.FuncOf(settle))
	bridge.Set("serve", js.FuncOf(func(_ js.Value, args []js.Value) any {
		id, head, body := args[0].Int(), args[1].String(), bytesOf(args[2])
		go serveOne(h, id, head, body)
		return nil
	}))
	<-make(chan struct{}) // requests arrive as calls to serve
}

// requestID is the context key of the entry module's number for a request;
// the platform passes it back with I/O that belongs to the request.
type requestID struct{}

func idOf(ctx context.Context) int {
	id, _ := ctx.Value(requestID{}).(int)
	return id
}

// serveOne runs the handler for one request and hands the answer back. A
// panic costs this request a 500, not the isolate its Go instance.
func serveOne(h http.Handler, id int, head string, body []byte) {
	w := &responseWriter{header: http.Header{}}
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(os.Stderr, "edge: panic while handling a request: %v\n", p)
			w = &responseWriter{header: http.Header{}}
			edge.InternalError(w)
		}
		w.send(id)
	}()
	r, err := parseRequest(head, body)
	if err != nil {
		edge.BadRequest(w)
		return
	}
	h.ServeHTTP(w, r.WithContext(context.WithValue(context.Background(), requestID{}, id)))
}

// responseWriter buffers the handler's answer; the only streamed answers,
// the origin's through Forward, hand their ReadableStream over whole, so the
// bytes never pass through Go.
type responseWriter struct {
	header http.Header
	status int
	body   bytes.Buffer
	stream js.Value // the origin's body, when set
}

func (w *responseWriter) Header() http.Header { return w.header }

func (w *responseWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *responseWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(b)
}

// Flush is a no-op: the answer goes out when the handler returns.
func (w *responseWriter) Flush() {}

// streamFrom makes the answer's body the ReadableStream s.
func (w *responseWriter) streamFrom(s js.Value) {
	w.WriteHeader(http.StatusOK)
	w.stream = s
}

func (w *responseWriter) send(id int) {
	w.WriteHeader(http.StatusOK)
	body := js.Null()
	switch {
	case w.stream.Truthy():
		body = w.stream
	case w.body.Len() > 0:
		body = toJSBytes(w.body.Bytes())
	}
	bridge.Call("respond", id, w.status, formatHeader(w.header), body)
}

func toJSBytes(b []byte) js.Value {
	u := uint8Array.New(len(b))
	js.CopyBytesToJS(u, b)
	return u
}

func bytesOf(v js.Value) []byte {
	if v.IsNull() || v.IsUndefined() {
		return nil
	}
	b := make([]byte, v.Length())
	js.CopyBytesToGo(b, v)
	return b
}

// Waiting for the host: a host function starts its work and later calls
// settle(token, value, error) once. Each call gets a fresh token and a
// channel of its own, so a request only ever receives its own results.
type settled struct {
	v   js.Value
	err error
}

var (
	waitMu    sync.Mutex
	waits     = map[int]chan settled{}
	nextToken int
)

func settle(_ js.Value, args []js.Value) any {
	tok := args[0].Int()
	waitMu.Lock()
	ch := waits[tok]
	delete(waits, tok)
	waitMu.Unlock()
	if ch == nil {
		return nil
	}
	s := settled{v: args[1]}
	if e := args[2]; e.Type() == js.TypeString {
		s.err = errors.New(e.String())
	}
	ch <- s // buffered: never blocks the callback
	return nil
}

// call runs the host function fn with a token and the arguments, and waits
// for its result.
func call(fn string, args ...any) (js.Value, error) {
	ch := make(chan settled, 1)
	waitMu.Lock()
	nextToken++
	tok := nextToken
	waits[tok] = ch
	waitMu.Unlock()
	bridge.Call(fn, append([]any{tok}, args...)...)
	s := <-ch
	return s.v, s.err
}
