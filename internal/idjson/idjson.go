// Package idjson reads the JSON forms that objectid and uuidv7 both accept for
// an id: a JSON string, or MongoDB's extended JSON shorthand, an object with
// one key such as "$oid" or "$uuid". What the text must say is the caller's:
// it parses what Text returns, and wraps Text's errors in its own sentinel.
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
