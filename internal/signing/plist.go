package signing

import (
	"bytes"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// decodePlist reads an XML property list (Apple's DTD PropertyList-1.0) and
// returns its one value as Go values: map[string]any for <dict>, []any for
// <array>, string, int64 (uint64 above the int64 range), float64, bool,
// time.Time for <date> and []byte for <data>. The root may be wrapped in
// <plist> or not. Binary and OpenStep plists are refused: entitlements files
// and `codesign --xml` output are XML.
//
// encoding/xml cannot unmarshal a plist <dict> into a struct, because its
// keys and values are sibling elements paired by position, so the token
// stream is walked instead.
func decodePlist(data []byte) (any, error) {
	if bytes.HasPrefix(data, []byte("bplist")) {
		return nil, errors.New("binary property list: convert it to XML first (plutil -convert xml1 FILE)")
	}
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = true
	start, err := nextStart(d)
	if err != nil {
		return nil, fmt.Errorf("no property list: %w", err)
	}
	if start.Name.Local == "plist" {
		if start, err = nextStart(d); err != nil {
			return nil, fmt.Errorf("<plist> holds no value: %w", err)
		}
	}
	v, err := decodeValue(d, start)
	if err != nil {
		return nil, err
	}
	// Anything but the closing </plist>, whitespace, comments and processing
	// instructions after the value means a malformed or truncated file.
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return v, nil
		}
		if err != nil {
			return nil, fmt.Errorf("after the root value: %w", err)
		}
		switch t := tok.(type) {
		case xml.EndElement:
			if t.Name.Local != "plist" {
				return nil, fmt.Errorf("unexpected </%s> after the root value", t.Name.Local)
			}
		case xml.StartElement:
			return nil, fmt.Errorf("a second root value <%s>: a property list holds one", t.Name.Local)
		case xml.CharData:
			if len(bytes.TrimSpace(t)) > 0 {
				return nil, fmt.Errorf("text %q after the root value", truncate(string(t)))
			}
		}
	}
}

// nextStart skips the prolog (XML declaration, DOCTYPE, comments,
// whitespace) up to the next start element.
func nextStart(d *xml.Decoder) (xml.StartElement, error) {
	for {
		tok, err := d.Token()
		if err != nil {
			return xml.StartElement{}, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			return t, nil
		case xml.EndElement:
			return xml.StartElement{}, fmt.Errorf("unexpected </%s>", t.Name.Local)
		case xml.CharData:
			if len(bytes.TrimSpace(t)) > 0 {
				return xml.StartElement{}, fmt.Errorf("unexpected text %q", truncate(string(t)))
			}
		}
	}
}

// decodeValue decodes the element that start opened, through its end.
func decodeValue(d *xml.Decoder, start xml.StartElement) (any, error) {
	switch name := start.Name.Local; name {
	case "dict":
		return decodeDict(d)
	case "array":
		return decodeArray(d)
	case "true", "false":
		text, err := elementText(d, name)
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(text) != "" {
			return nil, fmt.Errorf("<%s> holds text %q; it must be empty", name, truncate(text))
		}
		return name == "true", nil
	case "string":
		return elementText(d, name)
	case "integer":
		text, err := elementText(d, name)
		if err != nil {
			return nil, err
		}
		s := strings.TrimSpace(text)
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i, nil
		}
		if u, err := strconv.ParseUint(s, 10, 64); err == nil {
			return u, nil
		}
		return nil, fmt.Errorf("<integer>%s</integer> is not a decimal integer", truncate(s))
	case "real":
		text, err := elementText(d, name)
		if err != nil {
			return nil, err
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
		if err != nil {
			return nil, fmt.Errorf("<real>%s</real> is not a number", truncate(text))
		}
		return f, nil
	case "date":
		text, err := elementText(d, name)
		if err != nil {
			return nil, err
		}
		t, err := time.Parse(time.RFC3339, strings.TrimSpace(text))
		if err != nil {
			return nil, fmt.Errorf("<date>%s</date> is not an ISO 8601 UTC time", truncate(text))
		}
		return t, nil
	case "data":
		text, err := elementText(d, name)
		if err != nil {
			return nil, err
		}
		// Base64 in plists is wrapped and indented freely.
		b, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(text), ""))
		if err != nil {
			return nil, fmt.Errorf("<data> is not base64: %w", err)
		}
		return b, nil
	default:
		return nil, fmt.Errorf("<%s> is not a property list element", name)
	}
}

func decodeDict(d *xml.Decoder) (map[string]any, error) {
	m := map[string]any{}
	for {
		start, end, err := nextChild(d, "dict")
		if err != nil {
			return nil, err
		}
		if end {
			return m, nil
		}
		if start.Name.Local != "key" {
			return nil, fmt.Errorf("<dict> has <%s> where a <key> belongs", start.Name.Local)
		}
		key, err := elementText(d, "key")
		if err != nil {
			return nil, err
		}
		vstart, end, err := nextChild(d, "dict")
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", key, err)
		}
		if end {
			return nil, fmt.Errorf("key %q has no value", key)
		}
		if vstart.Name.Local == "key" {
			return nil, fmt.Errorf("key %q has no value (another <key> follows it)", key)
		}
		v, err := decodeValue(d, vstart)
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", key, err)
		}
		if _, dup := m[key]; dup {
			// Which of the two wins differs between Apple's parsers, so a
			// duplicate is an error rather than a guess.
			return nil, fmt.Errorf("key %q appears twice in one <dict>", key)
		}
		m[key] = v
	}
}

func decodeArray(d *xml.Decoder) ([]any, error) {
	a := []any{}
	for {
		start, end, err := nextChild(d, "array")
		if err != nil {
			return nil, err
		}
		if end {
			return a, nil
		}
		v, err := decodeValue(d, start)
		if err != nil {
			return nil, fmt.Errorf("array item %d: %w", len(a), err)
		}
		a = append(a, v)
	}
}

// nextChild returns the next child element of parent, or end=true at
// parent's end tag. Text between children must be whitespace.
func nextChild(d *xml.Decoder, parent string) (start xml.StartElement, end bool, err error) {
	for {
		tok, err := d.Token()
		if err != nil {
			return xml.StartElement{}, false, fmt.Errorf("inside <%s>: %w", parent, eofIsUnexpected(err))
		}
		switch t := tok.(type) {
		case xml.StartElement:
			return t, false, nil
		case xml.EndElement:
			// The strict decoder has already matched the end tag to its start.
			return xml.StartElement{}, true, nil
		case xml.CharData:
			if len(bytes.TrimSpace(t)) > 0 {
				return xml.StartElement{}, false, fmt.Errorf("text %q directly inside <%s>", truncate(string(t)), parent)
			}
		}
	}
}

// elementText returns the text of an element that holds only text, through
// its end tag.
func elementText(d *xml.Decoder, name string) (string, error) {
	var sb strings.Builder
	for {
		tok, err := d.Token()
		if err != nil {
			return "", fmt.Errorf("inside <%s>: %w", name, eofIsUnexpected(err))
		}
		switch t := tok.(type) {
		case xml.CharData:
			sb.Write(t)
		case xml.StartElement:
			return "", fmt.Errorf("<%s> inside <%s>, which holds only text", t.Name.Local, name)
		case xml.EndElement:
			return sb.String(), nil
		}
	}
}

func eofIsUnexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// truncate keeps error messages about bad input to one readable line.
func truncate(s string) string {
	const limit = 40
	s = strings.TrimSpace(s)
	if len(s) > limit {
		return s[:limit] + "..."
	}
	return s
}
