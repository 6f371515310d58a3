package frontdoor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"unicode/utf8"
)

// Failure is an error as an API answers it.
type Failure struct {
	// Status is the HTTP status.
	Status int
	// Code is the error's name, as the SDKs match it
	// ("ValidationException", "StateMachineDoesNotExist").
	Code string
	// Message is the text the client reads.
	Message string
}

// Shape writes an API's failures in its protocol.
type Shape interface {
	WriteFailure(w http.ResponseWriter, f Failure) error
}

// Content types of the answers.
const (
	ContentTypeJSON10   = "application/x-amz-json-1.0"
	ContentTypeRESTJSON = "application/json"
)

// JSON10 is the error shape of AWS JSON 1.0:
//
//	Content-Type: application/x-amz-json-1.0
//	{"__type": "com.amazonaws.swf.service.v2.model#StateMachineDoesNotExist", "message": "..."}
type JSON10 struct {
	// TypeOf is the __type of a code: the code with the prefix of the
	// model it belongs to.
	TypeOf func(code string) string
}

type json10Body struct {
	Type    string `json:"__type"`
	Message Text   `json:"message"`
}

// Encode is the body of f.
func (s JSON10) Encode(f Failure) ([]byte, error) {
	return encode(json10Body{Type: s.TypeOf(f.Code), Message: Text(f.Message)})
}

// WriteFailure writes f.
func (s JSON10) WriteFailure(w http.ResponseWriter, f Failure) error {
	return WriteJSON(w, f.Status, ContentTypeJSON10, json10Body{Type: s.TypeOf(f.Code), Message: Text(f.Message)})
}

// RESTJSON is the error shape of REST-JSON:
//
//	Content-Type: application/json
//	x-amzn-ErrorType: ValidationException
//	{"Message": "..."}
type RESTJSON struct{}

// ErrorTypeHeader is the header of a REST-JSON error's code.
const ErrorTypeHeader = "X-Amzn-ErrorType"

type restJSONBody struct {
	Message Text `json:"Message"`
}

// WriteFailure writes f.
func (RESTJSON) WriteFailure(w http.ResponseWriter, f Failure) error {
	w.Header().Set(ErrorTypeHeader, f.Code)
	return WriteJSON(w, f.Status, ContentTypeRESTJSON, restJSONBody{Message: Text(f.Message)})
}

// WriteJSON writes v as the body of an answer of status. HTML characters
// are not escaped, so definitions and payloads come back as they were
// sent.
func WriteJSON(w http.ResponseWriter, status int, contentType string, v any) error {
	buf := buffers.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= maxPooledBuffer {
			buf.Reset()
			buffers.Put(buf)
		}
	}()
	var body []byte
	if a, ok := v.(JSONAppender); ok {
		body = a.AppendJSON(buf.AvailableBuffer())
		buf.Write(body) // keeps the grown buffer for the next answer
		body = buf.Bytes()
	} else {
		enc := json.NewEncoder(buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return fmt.Errorf("encode response: %w", err)
		}
		body = bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	}
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	_, _ = w.Write(body)
	return nil
}

// JSONAppender is an answer that writes itself out as encoding/json would
// (without escaping HTML), for WriteJSON: the answers of the hottest
// calls, spared reflection.
type JSONAppender interface {
	AppendJSON(dst []byte) []byte
}

// buffers hold answers being encoded; those that grew past
// maxPooledBuffer (a large history page) are left to the collector.
var buffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxPooledBuffer = 64 * 1024

func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// Text is text written to a client. Where it holds a surrogate in WTF-8
// form (a name as a client sent it, "\ud800" kept as the three bytes
// UTF-8 would give the code unit), the JSON has the \uXXXX escape the
// client sent, where encoding/json would write U+FFFD. Other invalid
// UTF-8 is written as encoding/json writes it.
type Text string

// MarshalJSON writes t as a JSON string, without escaping HTML
// characters.
func (t Text) MarshalJSON() ([]byte, error) {
	s := string(t)
	if utf8.ValidString(s) {
		return encode(s)
	}
	out := []byte{'"'}
	for s != "" {
		i := wtf8Surrogate(s)
		if i < 0 {
			i = len(s)
		}
		q, err := encode(s[:i])
		if err != nil {
			return nil, err
		}
		out = append(out, q[1:len(q)-1]...)
		if i == len(s) {
			break
		}
		r := rune(s[i]&0x0f)<<12 | rune(s[i+1]&0x3f)<<6 | rune(s[i+2]&0x3f)
		out = append(out, `\u`...)
		out = append(out, "0123456789abcdef"[r>>12], "0123456789abcdef"[r>>8&0xf], "0123456789abcdef"[r>>4&0xf], "0123456789abcdef"[r&0xf])
		s = s[i+3:]
	}
	return append(out, '"'), nil
}

// wtf8Surrogate is the index of the first surrogate in WTF-8 form in s, or
// -1.
func wtf8Surrogate(s string) int {
	for i := 0; i+2 < len(s); i++ {
		if s[i] == 0xed && s[i+1] >= 0xa0 && s[i+1] <= 0xbf && s[i+2] >= 0x80 && s[i+2] <= 0xbf {
			return i
		}
	}
	return -1
}
