// Package idjson reads and writes the forms that objectid and uuidv7 both use
// for an id: a JSON string, or MongoDB's extended JSON shorthand, an object
// with one key such as "$oid" or "$uuid", and the hex digits in the text. What
// the text must say is the caller's: it parses what Text returns, and wraps
// Text's errors in its own sentinel.
package idjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Text returns the id's text from b, the JSON of an id whose text is width
// bytes, or null true for a JSON null (the id stays unchanged, as encoding/json
// does for other types). key is the extended JSON key ("$oid"), and shape what
// its value looks like in a message ("<hex>").
func Text(b []byte, width int, key, shape string) (text []byte, null bool, err error) {
	b = bytes.TrimSpace(b)
	switch {
	case string(b) == "null":
		return nil, true, nil
	case len(b) == width+2 && b[0] == '"' && b[len(b)-1] == '"':
		// The usual form; an escape here could only shorten the string below
		// width characters, so reading it raw gives the right verdict.
		return b[1 : len(b)-1], false, nil
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, false, err
		}
		return []byte(s), false, nil
	case len(b) > 0 && b[0] == '{':
		var ext map[string]string
		if err := json.Unmarshal(b, &ext); err != nil {
			return nil, false, fmt.Errorf("extended JSON: %w", err)
		}
		s, ok := ext[key]
		if !ok || len(ext) != 1 {
			return nil, false, fmt.Errorf("extended JSON: want exactly one key, %q", key)
		}
		return []byte(s), false, nil
	}
	return nil, false, errors.New(`want a JSON string or {"` + key + `": "` + shape + `"}`)
}

// Quote returns the JSON string of an id whose text, which needs no escapes,
// appendText appends in width bytes.
func Quote(width int, appendText func([]byte) []byte) []byte {
	b := make([]byte, 0, width+2)
	b = append(b, '"')
	b = appendText(b)
	return append(b, '"')
}

// Unmarshal decodes b as Text does and hands the text to unmarshalText; Text's
// errors are wrapped in sentinel, and a JSON null leaves the id unchanged.
func Unmarshal(b []byte, width int, key, shape string, sentinel error, unmarshalText func([]byte) error) error {
	text, null, err := Text(b, width, key, shape)
	if err != nil {
		return fmt.Errorf("%w: %w", sentinel, err)
	}
	if null {
		return nil
	}
	return unmarshalText(text)
}

// HexValue maps a byte to its value as a hex digit, either case, or 0xff if it
// is not one.
var HexValue = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for i, c := range "0123456789abcdef" {
		t[c] = byte(i)
	}
	for i, c := range "ABCDEF" {
		t[c] = byte(10 + i)
	}
	return t
}()
