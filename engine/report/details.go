package report

import (
	"bytes"
	"encoding/json"
)

// Details is a check's or a signal's evidence: a JSON object, `{}` when
// there is none. It is an object in every transport (the API, MCP's
// structuredContent, stored history), never a JSON document inside a
// string.
type Details json.RawMessage

// ObjectDetails encodes v as Details: an object stays an object; anything
// else (a list, a string, a number) is wrapped as {"value": v} so details
// are always an object. nil gives empty Details.
func ObjectDetails(v any) Details {
	if v == nil {
		return nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil
	}
	return objectOf(bytes.TrimSpace(buf.Bytes()))
}

// objectOf makes a JSON value an object (see ObjectDetails).
func objectOf(raw []byte) Details {
	switch {
	case len(raw) == 0, bytes.Equal(raw, []byte("null")):
		return nil
	case raw[0] == '{':
		if bytes.Equal(raw, []byte("{}")) {
			return nil
		}
		return Details(raw)
	}
	b, _ := json.Marshal(map[string]json.RawMessage{"value": raw})
	return Details(b)
}

// MarshalJSON writes the object, `{}` when empty.
func (d Details) MarshalJSON() ([]byte, error) {
	if len(d) == 0 {
		return []byte("{}"), nil
	}
	return d, nil
}

// UnmarshalJSON reads an object, and also what reports stored before
// details became an object hold: the object's JSON inside a string, or
// plain text (kept as {"note": text}).
func (d *Details) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		switch {
		case s == "":
			*d = nil
		case json.Valid([]byte(s)):
			*d = objectOf([]byte(s))
		default:
			*d = ObjectDetails(map[string]string{"note": s})
		}
		return nil
	}
	if !json.Valid(b) {
		return &json.SyntaxError{}
	}
	*d = objectOf(append([]byte(nil), b...))
	return nil
}

// Empty reports no evidence.
func (d Details) Empty() bool { return len(d) == 0 }

// String is the compact JSON ("" when empty), for plain-text formats.
func (d Details) String() string { return string(d) }
