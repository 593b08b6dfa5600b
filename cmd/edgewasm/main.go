//go:build wasip1

// Command edgewasm is the edge compiled for GOOS=wasip1 as a reactor module
// (-buildmode=c-shared) that package wasm hosts with wazero. The host writes a
// request frame (edge/wasi/abi) into the buffer in_buf returns, calls
// handle, and reads the response frame at the returned pointer (high 32 bits)
// and length (low 32 bits). One instance serves one request at a time.
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o bin/edge.wasm ./cmd/edgewasm
package main

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"unsafe"

	"github.com/agentready/agentready/edge"
	"github.com/agentready/agentready/edge/wasi"
	"github.com/agentready/agentready/edge/wasi/abi"
)

var (
	in      []byte
	out     []byte
	handler http.Handler
	initErr error
)

func init() {
	cfg, err := edge.FromEnv(os.Getenv)
	if err != nil {
		initErr = err
		fmt.Fprintln(os.Stderr, "edge configuration error:", err)
		return
	}
	handler = edge.New(cfg, wasi.Platform{})
}

//go:wasmexport in_buf
func inBuf(size uint32) uint32 {
	if uint32(cap(in)) < size {
		in = make([]byte, size)
	}
	in = in[:size]
	return uint32(uintptr(unsafe.Pointer(&in[0])))
}

// recorder buffers one response. Its body buffer is the module's one,
// reused from request to request.
type recorder struct {
	h      http.Header
	status int
	body   *bytes.Buffer
}

var body bytes.Buffer

func (r *recorder) Header() http.Header { return r.h }
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = 200
	}
	return r.body.Write(b)
}
func (r *recorder) WriteHeader(s int) {
	if r.status == 0 {
		r.status = s
	}
}

//go:wasmexport handle
func handle(n uint32) uint64 {
	body.Reset()
	rec := &recorder{h: http.Header{}, body: &body}
	req, err := abi.ParseRequest(in[:n])
	switch {
	case initErr != nil:
		var ce *edge.ConfigError
		setting := ""
		if errors.As(initErr, &ce) {
			setting = ce.Setting
		}
		edge.Misconfigured(rec, setting) // the cause went to stderr (the host's log) at start
	case err != nil:
		edge.BadRequest(rec)
	default:
		handler.ServeHTTP(rec, req)
	}
	if fwd, ok := wasi.TakeForward(); ok {
		out = abi.AppendForward(out[:0], rec.h, fwd)
		return uint64(uintptr(unsafe.Pointer(&out[0])))<<32 | uint64(len(out))
	}
	if rec.status == 0 {
		rec.status = 200
	}
	if rec.h.Get("Content-Length") == "" || rec.body.Len() > 0 {
		rec.h.Set("Content-Length", strconv.Itoa(rec.body.Len()))
	}
	out = abi.AppendResponse(out[:0], rec.status, rec.h, rec.body.Bytes())
	return uint64(uintptr(unsafe.Pointer(&out[0])))<<32 | uint64(len(out))
}

func main() {}
