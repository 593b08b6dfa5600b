// Package jsonerr turns encoding/json's errors into plain sentences a site
// owner can act on ("line 3, column 7: trailing comma before `}`"), so no
// library's raw text reaches a message, recommendation or detail.
package jsonerr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Describe explains err, returned by decoding body, in plain words. Errors it
// does not recognise become a generic sentence rather than their raw text.
func Describe(body []byte, err error) string {
	if err == nil {
		return ""
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			return fmt.Sprintf("the document is %s, not %s", article(typ.Value), kind(typ.Type.Kind().String()))
		}
		return fmt.Sprintf("`%s` is %s where %s is expected", field, article(typ.Value), kind(typ.Type.Kind().String()))
	case len(bytes.TrimSpace(body)) == 0:
		return "the document is empty"
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &syn) && strings.Contains(syn.Error(), "end of JSON input"):
		// json.Unmarshal reports a cut document as a SyntaxError, a
		// json.Decoder as io.ErrUnexpectedEOF.
		line, col := Position(body, int64(len(body)))
		return fmt.Sprintf("line %d, column %d: the document ends before its last value is closed", line, col)
	case errors.As(err, &syn):
		line, col := Position(body, syn.Offset)
		return fmt.Sprintf("line %d, column %d: %s", line, col, syntaxCause(body, syn))
	}
	return "the document is not valid JSON"
}

// Position converts a byte offset into a 1-based line and column.
func Position(body []byte, offset int64) (line, col int) {
	if offset > int64(len(body)) {
		offset = int64(len(body))
	}
	if offset < 0 {
		offset = 0
	}
	before := body[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(offset) - (bytes.LastIndexByte(before, '\n') + 1)
	if col < 1 {
		col = 1
	}
	return line, col
}

// syntaxCause names the usual mistakes by what a person typed.
func syntaxCause(body []byte, syn *json.SyntaxError) string {
	off := int(syn.Offset) - 1
	if off < 0 || off >= len(body) {
		return "unexpected end of the document"
	}
	c := body[off]
	prev := lastSignificant(body[:off])
	switch {
	case (c == '}' || c == ']') && prev == ',':
		return fmt.Sprintf("trailing comma before `%c`", c)
	case c == '\'':
		return "strings must use double quotes, not single quotes"
	case c == '/' || c == '#':
		return "comments are not allowed in JSON"
	case prev == '"' || prev == '}' || prev == ']' || isDigit(prev):
		if c == '"' || c == '{' || c == '[' {
			return "a comma is missing between two values"
		}
	}
	if c < 0x20 || c >= 0x7f {
		return fmt.Sprintf("unexpected byte 0x%02x", c)
	}
	return fmt.Sprintf("unexpected `%c`", c)
}

func lastSignificant(b []byte) byte {
	for i := len(b) - 1; i >= 0; i-- {
		switch b[i] {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return b[i]
	}
	return 0
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func article(v string) string {
	switch v {
	case "array", "object":
		return "an " + v
	case "":
		return "a value"
	}
	return "a " + v
}

func kind(k string) string {
	switch k {
	case "struct", "map":
		return "an object"
	case "slice", "array":
		return "an array"
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "int", "int64", "int32", "uint", "uint64", "float64", "float32":
		return "a number"
	}
	return "another type"
}
