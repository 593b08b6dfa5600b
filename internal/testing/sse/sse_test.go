package sse

import (
	"io"
	"strings"
	"testing"
)

func TestParsing(t *testing.T) {
	stream := "retry: 3000\r\n\r\n: comment\nid: 1\nevent: a\ndata: one\ndata:  two\n\nid: 2\rdata: three\r\rdata: no id change\n\nevent: dropped\n\n"
	r := NewReader(strings.NewReader(stream))
	want := []Event{
		{ID: "1", Name: "a", Data: "one\n two", Retry: 3000},
		{ID: "2", Name: "message", Data: "three", Retry: 3000},
		{ID: "2", Name: "message", Data: "no id change", Retry: 3000},
	}
	for i, w := range want {
		got, err := r.Next()
		if err != nil || got != w {
			t.Fatalf("event %d: %+v %v, want %+v", i, got, err, w)
		}
	}
	if _, err := r.Next(); err != io.EOF {
		t.Errorf("an event without data is not dispatched; got %v", err)
	}
}
