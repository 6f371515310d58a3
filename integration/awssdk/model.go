package awssdk

import (
	"bytes"
	"compress/gzip"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode"
)

//go:generate python3 models/generate.py

//go:embed models/*.json.gz
var embedded embed.FS

// Model is a service's API model in botocore's format, reduced to what
// calls need.
type Model struct {
	Metadata   Metadata              `json:"metadata"`
	Operations map[string]*Operation `json:"operations"`
	Shapes     map[string]*Shape     `json:"shapes"`
}

// Metadata describes the service: how to reach it and how it speaks.
type Metadata struct {
	APIVersion         string    `json:"apiVersion"`
	EndpointPrefix     string    `json:"endpointPrefix"`
	GlobalEndpoint     string    `json:"globalEndpoint"`
	JSONVersion        string    `json:"jsonVersion"`
	Protocol           string    `json:"protocol"`
	Protocols          []string  `json:"protocols"`
	ServiceID          string    `json:"serviceId"`
	SigningName        string    `json:"signingName"`
	TargetPrefix       string    `json:"targetPrefix"`
	XMLNamespace       string    `json:"xmlNamespace"`
	AWSQueryCompatible *struct{} `json:"awsQueryCompatible"`
}

// Operation is one API action.
type Operation struct {
	Name string `json:"name"`
	HTTP struct {
		Method       string `json:"method"`
		RequestURI   string `json:"requestUri"`
		ResponseCode int    `json:"responseCode"`
	} `json:"http"`
	Input    *Ref  `json:"input"`
	Output   *Ref  `json:"output"`
	Errors   []Ref `json:"errors"`
	Endpoint *struct {
		HostPrefix string `json:"hostPrefix"`
	} `json:"endpoint"`
	HTTPChecksum *struct {
		RequestAlgorithmMember  string `json:"requestAlgorithmMember"`
		RequestChecksumRequired bool   `json:"requestChecksumRequired"`
	} `json:"httpChecksum"`
	HTTPChecksumRequired bool `json:"httpChecksumRequired"`
}

// Ref is a reference to a shape: an operation's input or output, a
// structure member, a list member, a map key or value. It carries how
// the value is placed on the wire.
type Ref struct {
	ShapeName        string        `json:"shape"`
	Location         string        `json:"location"`
	LocationName     string        `json:"locationName"`
	QueryName        string        `json:"queryName"`
	Flattened        bool          `json:"flattened"`
	XMLAttribute     bool          `json:"xmlAttribute"`
	XMLNamespace     *XMLNamespace `json:"xmlNamespace"`
	JSONValue        bool          `json:"jsonvalue"`
	IdempotencyToken bool          `json:"idempotencyToken"`
	HostLabel        bool          `json:"hostLabel"`
	ResultWrapper    string        `json:"resultWrapper"`
	TimestampFormat  string        `json:"timestampFormat"`

	Shape *Shape `json:"-"`
}

// XMLNamespace is an xmlns attribute of an element.
type XMLNamespace struct {
	Prefix string `json:"prefix"`
	URI    string `json:"uri"`
}

// Shape is a type of the API.
type Shape struct {
	Type            string        `json:"type"`
	Members         Members       `json:"members"`
	Required        []string      `json:"required"`
	Payload         string        `json:"payload"`
	Member          *Ref          `json:"member"`
	Key             *Ref          `json:"key"`
	Value           *Ref          `json:"value"`
	Flattened       bool          `json:"flattened"`
	LocationName    string        `json:"locationName"`
	TimestampFormat string        `json:"timestampFormat"`
	Exception       bool          `json:"exception"`
	Document        bool          `json:"document"`
	XMLNamespace    *XMLNamespace `json:"xmlNamespace"`
	Error           *struct {
		Code string `json:"code"`
	} `json:"error"`
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

// Find returns the member whose Step Functions name (PascalCase) is name.
func (ms Members) Find(name string) (Member, bool) {
	for _, m := range ms {
		if pascal(m.Name) == name {
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

// wireName is the name a member has on the wire.
func (m Member) wireName() string {
	if m.LocationName != "" {
		return m.LocationName
	}
	return m.Name
}

// ParseModel decodes a botocore service model and links its shapes.
func ParseModel(data []byte) (*Model, error) {
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
// SDK for Java v2 client name (DynamoDb, SecretsManager, Sfn, S3).
func (m *Model) ErrorPrefix() string {
	var b strings.Builder
	for _, word := range splitWords(m.Metadata.ServiceID) {
		rs := []rune(strings.ToLower(word))
		rs[0] = unicode.ToUpper(rs[0])
		b.WriteString(string(rs))
	}
	return b.String()
}

// splitWords splits a service id into words: at spaces and punctuation,
// before an upper-case letter that follows a lower-case one, and before
// the last of a run of capitals followed by a lower-case letter
// ("DynamoDB" → Dynamo DB, "SSMContacts" → SSM Contacts).
func splitWords(s string) []string {
	var words []string
	for _, chunk := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		rs := []rune(chunk)
		start := 0
		for i := 1; i < len(rs); i++ {
			lowerToUpper := unicode.IsLower(rs[i-1]) && unicode.IsUpper(rs[i])
			acronymEnd := unicode.IsUpper(rs[i-1]) && unicode.IsUpper(rs[i]) && i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if lowerToUpper || acronymEnd {
				words = append(words, string(rs[start:i]))
				start = i
			}
		}
		words = append(words, string(rs[start:]))
	}
	return words
}

// Operation returns the operation an action names (getItem → GetItem).
func (m *Model) Operation(action string) (*Operation, bool) {
	op, ok := m.Operations[pascal(action)]
	return op, ok
}

// errorShape returns the name of the modeled error a code stands for.
func (m *Model) errorShape(code string) (string, bool) {
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

// pascal is a model name as Step Functions spells it: first letter
// capitalised; "Equals" is EqualsValue, as the AWS SDK for Java names it.
func pascal(name string) string {
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

// modelNames maps the service names of Step Functions resources (the AWS
// SDK for Java v2 service ids, lower-cased) to botocore's where they
// differ.
var modelNames = map[string]string{
	"eventbridge":             "events",
	"sfn":                     "stepfunctions",
	"cloudwatchlogs":          "logs",
	"cognitoidentityprovider": "cognito-idp",
	"costexplorer":            "ce",
	"databasemigration":       "dms",
	"elasticloadbalancing":    "elb",
	"elasticloadbalancingv2":  "elbv2",
}

// KnowsAction reports whether the resource of an AWS SDK integration
// (the part after "aws-sdk:": "<service>:<action>") names an action its
// service's model has. A service with no model here is given the benefit
// of the doubt: AWS may know it.
func (ms *Models) KnowsAction(service, action string) bool {
	m, err := ms.Get(service)
	if err != nil {
		return true
	}
	_, ok := m.Operation(action)
	return ok
}

// ServiceNames lists the service names of the resources there are models
// for (the embedded ones and those in dir): botocore's names, and the
// Step Functions names that differ from them (eventbridge, sfn, ...).
func ServiceNames(dir string) []string {
	var names []string
	add := func(src fs.FS) {
		entries, _ := fs.ReadDir(src, ".")
		for _, e := range entries {
			name, ok := strings.CutSuffix(strings.TrimSuffix(e.Name(), ".gz"), ".json")
			if ok {
				names = append(names, name, strings.ReplaceAll(name, "-", ""))
			}
		}
	}
	sub, _ := fs.Sub(embedded, "models")
	add(sub)
	if dir != "" {
		add(os.DirFS(dir))
	}
	for sfnName, botocore := range modelNames {
		for _, n := range names {
			if n == botocore {
				names = append(names, sfnName)
				break
			}
		}
	}
	return names
}

// Models finds and caches service models: the embedded ones, and those
// in a directory (<service>.json or <service>.json.gz, botocore's format),
// which take precedence.
type Models struct {
	// Dir is the directory of extra models; "" means none.
	Dir string

	mu     sync.Mutex
	loaded map[string]*Model
}

// ErrUnknownService is returned for a service no model describes.
var ErrUnknownService = errors.New("no API model for the service")

// Get returns the model of a Step Functions service name (dynamodb,
// eventbridge, sfn, ...).
func (ms *Models) Get(service string) (*Model, error) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if m, ok := ms.loaded[service]; ok {
		return m, nil
	}
	data, err := ms.read(service)
	if err != nil {
		return nil, err
	}
	m, err := ParseModel(data)
	if err != nil {
		return nil, fmt.Errorf("model of %s: %w", service, err)
	}
	if ms.loaded == nil {
		ms.loaded = map[string]*Model{}
	}
	ms.loaded[service] = m
	return m, nil
}

// read returns the uncompressed model of a service.
func (ms *Models) read(service string) ([]byte, error) {
	names := []string{service}
	if n, ok := modelNames[service]; ok {
		names = []string{n, service}
	}
	var sources []fs.FS
	if ms.Dir != "" {
		sources = append(sources, os.DirFS(ms.Dir))
	}
	sub, _ := fs.Sub(embedded, "models")
	sources = append(sources, sub)
	for _, src := range sources {
		for _, name := range append(names, dashedNames(src, service)...) {
			for _, file := range []string{name + ".json.gz", name + ".json"} {
				data, err := fs.ReadFile(src, file)
				if errors.Is(err, fs.ErrNotExist) {
					continue
				}
				if err != nil {
					return nil, err
				}
				if filepath.Ext(file) == ".gz" {
					return gunzip(data)
				}
				return data, nil
			}
		}
	}
	return nil, fmt.Errorf("%w %q", ErrUnknownService, service)
}

// dashedNames are the models in src whose botocore name is the service
// name with dashes (acmpca → acm-pca, emrserverless → emr-serverless).
func dashedNames(src fs.FS, service string) []string {
	entries, _ := fs.ReadDir(src, ".")
	var names []string
	for _, e := range entries {
		base := strings.TrimSuffix(strings.TrimSuffix(e.Name(), ".gz"), ".json")
		if strings.Contains(base, "-") && strings.ReplaceAll(base, "-", "") == service {
			names = append(names, base)
		}
	}
	return names
}

func gunzip(data []byte) ([]byte, error) {
	r, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}
