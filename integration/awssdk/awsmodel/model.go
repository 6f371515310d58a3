package awsmodel

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// Model is a service's API model in botocore's format, reduced to what
// calls and shape checks need. It encodes (json.Marshal) to the same
// format, leaving out what is empty.
type Model struct {
	Metadata   Metadata              `json:"metadata"`
	Operations map[string]*Operation `json:"operations"`
	Shapes     map[string]*Shape     `json:"shapes"`
}

// Metadata describes the service: how to reach it and how it speaks.
type Metadata struct {
	APIVersion         string    `json:"apiVersion,omitempty"`
	EndpointPrefix     string    `json:"endpointPrefix,omitempty"`
	GlobalEndpoint     string    `json:"globalEndpoint,omitempty"`
	JSONVersion        string    `json:"jsonVersion,omitempty"`
	Protocol           string    `json:"protocol,omitempty"`
	Protocols          []string  `json:"protocols,omitempty"`
	ServiceID          string    `json:"serviceId,omitempty"`
	SigningName        string    `json:"signingName,omitempty"`
	TargetPrefix       string    `json:"targetPrefix,omitempty"`
	XMLNamespace       string    `json:"xmlNamespace,omitempty"`
	AWSQueryCompatible *struct{} `json:"awsQueryCompatible,omitempty"`
}

// Operation is one API action.
type Operation struct {
	Name string `json:"name,omitempty"`
	HTTP struct {
		Method       string `json:"method,omitempty"`
		RequestURI   string `json:"requestUri,omitempty"`
		ResponseCode int    `json:"responseCode,omitempty"`
	} `json:"http,omitzero"`
	Input    *Ref  `json:"input,omitempty"`
	Output   *Ref  `json:"output,omitempty"`
	Errors   []Ref `json:"errors,omitempty"`
	Endpoint *struct {
		HostPrefix string `json:"hostPrefix,omitempty"`
	} `json:"endpoint,omitempty"`
	HTTPChecksum *struct {
		RequestAlgorithmMember  string `json:"requestAlgorithmMember,omitempty"`
		RequestChecksumRequired bool   `json:"requestChecksumRequired,omitempty"`
	} `json:"httpChecksum,omitempty"`
	HTTPChecksumRequired bool `json:"httpChecksumRequired,omitempty"`
}

// Ref is a reference to a shape: an operation's input or output, a
// structure member, a list member, a map key or value. It carries how
// the value is placed on the wire.
type Ref struct {
	ShapeName        string        `json:"shape"`
	Location         string        `json:"location,omitempty"`
	LocationName     string        `json:"locationName,omitempty"`
	QueryName        string        `json:"queryName,omitempty"`
	Flattened        bool          `json:"flattened,omitempty"`
	XMLAttribute     bool          `json:"xmlAttribute,omitempty"`
	XMLNamespace     *XMLNamespace `json:"xmlNamespace,omitempty"`
	JSONValue        bool          `json:"jsonvalue,omitempty"`
	IdempotencyToken bool          `json:"idempotencyToken,omitempty"`
	HostLabel        bool          `json:"hostLabel,omitempty"`
	ResultWrapper    string        `json:"resultWrapper,omitempty"`
	TimestampFormat  string        `json:"timestampFormat,omitempty"`

	Shape *Shape `json:"-"`
}

// XMLNamespace is an xmlns attribute of an element.
type XMLNamespace struct {
	Prefix string `json:"prefix,omitempty"`
	URI    string `json:"uri,omitempty"`
}

// Shape is a type of the API. Enum, Min and Max are the constraints of
// a value (a string's values, a length, a number's range).
type Shape struct {
	Type            string        `json:"type"`
	Members         Members       `json:"members,omitempty"`
	Required        []string      `json:"required,omitempty"`
	Payload         string        `json:"payload,omitempty"`
	Member          *Ref          `json:"member,omitempty"`
	Key             *Ref          `json:"key,omitempty"`
	Value           *Ref          `json:"value,omitempty"`
	Flattened       bool          `json:"flattened,omitempty"`
	LocationName    string        `json:"locationName,omitempty"`
	TimestampFormat string        `json:"timestampFormat,omitempty"`
	Exception       bool          `json:"exception,omitempty"`
	Document        bool          `json:"document,omitempty"`
	XMLNamespace    *XMLNamespace `json:"xmlNamespace,omitempty"`
	Error           *struct {
		Code string `json:"code,omitempty"`
	} `json:"error,omitempty"`
	Enum []string `json:"enum,omitempty"`
	Min  *float64 `json:"min,omitempty"`
	Max  *float64 `json:"max,omitempty"`
}

// Member is a structure member.
type Member struct {
	Name string
	*Ref
}

// Members are a structure's members in the model's order, which XML
// bodies keep.
type Members []Member

// UnmarshalJSON decodes the members object keeping its order.
func (ms *Members) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil {
		return err
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		name, _ := t.(string)
		ref := new(Ref)
		if err := dec.Decode(ref); err != nil {
			return err
		}
		*ms = append(*ms, Member{Name: name, Ref: ref})
	}
	return nil
}

// MarshalJSON encodes the members as an object in their order.
func (ms Members) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		name, err := json.Marshal(m.Name)
		if err != nil {
			return nil, err
		}
		ref, err := json.Marshal(m.Ref)
		if err != nil {
			return nil, err
		}
		b.Write(name)
		b.WriteByte(':')
		b.Write(ref)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Find returns the member whose Step Functions name (PascalCase) is name.
func (ms Members) Find(name string) (Member, bool) {
	for _, m := range ms {
		if Pascal(m.Name) == name {
			return m, true
		}
	}
	return Member{}, false
}

// Named returns the member named name in the model.
func (ms Members) Named(name string) (Member, bool) {
	for _, m := range ms {
		if m.Name == name {
			return m, true
		}
	}
	return Member{}, false
}

// WireName is the name a member has on the wire.
func (m Member) WireName() string {
	if m.LocationName != "" {
		return m.LocationName
	}
	return m.Name
}

// Parse decodes a botocore service model and links its shapes.
func Parse(data []byte) (*Model, error) {
	m := new(Model)
	if err := json.Unmarshal(data, m); err != nil {
		return nil, err
	}
	if len(m.Operations) == 0 || m.Metadata.EndpointPrefix == "" {
		return nil, errors.New("not a service model: no operations or endpointPrefix")
	}
	link := func(r *Ref) error {
		if r == nil {
			return nil
		}
		s, ok := m.Shapes[r.ShapeName]
		if !ok {
			return fmt.Errorf("unknown shape %q", r.ShapeName)
		}
		r.Shape = s
		return nil
	}
	for _, s := range m.Shapes {
		for _, ref := range []*Ref{s.Member, s.Key, s.Value} {
			if err := link(ref); err != nil {
				return nil, err
			}
		}
		for _, mem := range s.Members {
			if err := link(mem.Ref); err != nil {
				return nil, err
			}
		}
	}
	for _, op := range m.Operations {
		for _, ref := range []*Ref{op.Input, op.Output} {
			if err := link(ref); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}

// Protocol is the wire protocol calls use: the first of the model's
// protocols this package speaks.
func (m *Model) Protocol() string {
	for _, p := range append(m.Metadata.Protocols, m.Metadata.Protocol) {
		switch p {
		case "json", "rest-json", "rest-xml", "query", "ec2":
			return p
		}
	}
	return m.Metadata.Protocol
}

// SigningName is the service name requests are signed for.
func (m *Model) SigningName() string {
	if m.Metadata.SigningName != "" {
		return m.Metadata.SigningName
	}
	return m.Metadata.EndpointPrefix
}

// ErrorPrefix is the service's name in error names and causes: the AWS
// SDK for Java v2 client name (DynamoDb, SecretsManager, Sfn, S3), which
// drops a last word "Service" ("Config Service" → Config).
func (m *Model) ErrorPrefix() string {
	var b strings.Builder
	words := splitWords(m.Metadata.ServiceID)
	if n := len(words); n > 1 && words[n-1] == "Service" {
		words = words[:n-1]
	}
	for _, word := range words {
		rs := []rune(strings.ToLower(word))
		rs[0] = unicode.ToUpper(rs[0])
		b.WriteString(string(rs))
	}
	return b.String()
}

// splitWords splits a service id into words: at spaces and punctuation,
// before an upper-case letter that follows a lower-case one, and before
// the last of a run of capitals followed by a lower-case letter
// ("DynamoDB" → Dynamo DB, "SSMContacts" → SSM Contacts), and before a
// version that ends a run of capitals ("SESv2" → SES v2).
func splitWords(s string) []string {
	var words []string
	for _, chunk := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		rs := []rune(chunk)
		start := 0
		for i := 1; i < len(rs); i++ {
			lowerToUpper := unicode.IsLower(rs[i-1]) && unicode.IsUpper(rs[i])
			acronymEnd := unicode.IsUpper(rs[i-1]) && unicode.IsUpper(rs[i]) && i+1 < len(rs) && unicode.IsLower(rs[i+1]) && !isVersion(rs[i+1:])
			if lowerToUpper || acronymEnd || (unicode.IsUpper(rs[i-1]) && isVersion(rs[i:])) {
				words = append(words, string(rs[start:i]))
				start = i
			}
		}
		words = append(words, string(rs[start:]))
	}
	return words
}

// isVersion reports whether rs is a version: v and digits ("SESv2" →
// SES v2).
func isVersion(rs []rune) bool {
	if len(rs) < 2 || rs[0] != 'v' {
		return false
	}
	for _, r := range rs[1:] {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// Operation returns the operation an action names (getItem → GetItem).
func (m *Model) Operation(action string) (*Operation, bool) {
	op, ok := m.Operations[Pascal(action)]
	return op, ok
}

// ErrorShape returns the name of the modeled error a code stands for.
func (m *Model) ErrorShape(code string) (string, bool) {
	if s, ok := m.Shapes[code]; ok && s.Exception {
		return code, true
	}
	for name, s := range m.Shapes {
		if s.Exception && s.Error != nil && s.Error.Code == code {
			return name, true
		}
	}
	return "", false
}

// Pascal is a model name as Step Functions spells it: first letter
// capitalised; "Equals" is EqualsValue, as the AWS SDK for Java names it.
func Pascal(name string) string {
	if name == "" {
		return name
	}
	rs := []rune(name)
	rs[0] = unicode.ToUpper(rs[0])
	if s := string(rs); s != "Equals" {
		return s
	}
	return "EqualsValue"
}
