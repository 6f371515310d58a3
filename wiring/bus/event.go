package bus

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Entry is one event of a PutEvents request.
type Entry struct {
	Source       string   `json:"Source,omitempty"`
	DetailType   string   `json:"DetailType,omitempty"`
	Detail       string   `json:"Detail,omitempty"`
	EventBusName string   `json:"EventBusName,omitempty"`
	Resources    []string `json:"Resources,omitempty"`
	// Time is the event's time (epoch seconds in PutEvents' JSON); zero:
	// now.
	Time time.Time `json:"-"`
}

// Limits of PutEvents.
const (
	MaxEntries   = 10
	MaxEventSize = 256 * 1024
)

// entrySize is an entry's size as EventBridge counts it.
func entrySize(e Entry) int {
	n := len(e.Source) + len(e.DetailType) + len(e.Detail)
	for _, r := range e.Resources {
		n += len(r)
	}
	if !e.Time.IsZero() {
		n += 14
	}
	return n
}

// entryError is why EventBridge fails an entry of PutEvents (ErrorCode,
// ErrorMessage), or "" for a good one.
func entryError(e Entry) (code, message string) {
	switch {
	case e.Source == "":
		return "InvalidArgument", "Parameter Source is not valid. Reason: Source is a required argument."
	case e.DetailType == "":
		return "InvalidArgument", "Parameter DetailType is not valid. Reason: DetailType is a required argument."
	case e.Detail == "":
		return "InvalidArgument", "Parameter Detail is not valid. Reason: Detail is a required argument."
	}
	if v, err := decodeJSON([]byte(e.Detail)); err != nil {
		return "MalformedDetail", "Detail is malformed."
	} else if _, ok := v.(map[string]any); !ok {
		return "MalformedDetail", "Detail is malformed."
	}
	if strings.HasPrefix(e.Source, "aws.") {
		return "NotAuthorizedForSourceException", "Not authorized for the source."
	}
	return "", ""
}

// busName is the name of the bus an EventBusName names (a name or an
// ARN); "" is the default bus.
func busName(s string) string {
	if i := strings.LastIndex(s, ":event-bus/"); i >= 0 {
		return s[i+len(":event-bus/"):]
	}
	if s == "" {
		return "default"
	}
	return s
}

// envelope is an event as EventBridge delivers it.
type envelope struct {
	Version    string          `json:"version"`
	ID         string          `json:"id"`
	DetailType string          `json:"detail-type"`
	Source     string          `json:"source"`
	Account    string          `json:"account"`
	Time       string          `json:"time"`
	Region     string          `json:"region"`
	Resources  []string        `json:"resources"`
	Detail     json.RawMessage `json:"detail"`
}

// newEvent puts an entry in EventBridge's envelope.
func newEvent(e Entry, account, region string, now time.Time) envelope {
	t := e.Time
	if t.IsZero() {
		t = now
	}
	res := e.Resources
	if res == nil {
		res = []string{}
	}
	return envelope{Version: "0", ID: newUUID(), DetailType: e.DetailType, Source: e.Source, Account: account,
		Time: t.UTC().Format("2006-01-02T15:04:05Z"), Region: region, Resources: res, Detail: json.RawMessage(e.Detail)}
}

func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
