package http

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"

	"stepwise/failure"
	"stepwise/internal/boundedfile"
)

// The authorization types of a connection, as EventBridge names them.
const (
	authAPIKey = "API_KEY"
	authBasic  = "BASIC"
	authOAuth  = "OAUTH_CLIENT_CREDENTIALS"
)

// connection is one entry of the connections file: an EventBridge
// connection's authorization and invocation parameters, secrets included
// (what EventBridge keeps in the connection's Secrets Manager secret).
type connection struct {
	AuthorizationType string

	APIKeyName  string `json:"ApiKeyName"`
	APIKeyValue string `json:"ApiKeyValue"`

	Username string
	Password string

	AuthorizationEndpoint string
	HTTPMethod            string `json:"HttpMethod"`
	ClientID              string `json:"ClientId"`
	ClientSecret          string
	OAuthHTTPParameters   *httpParameters `json:"OAuthHttpParameters"`

	InvocationHTTPParameters *httpParameters `json:"InvocationHttpParameters"`

	// token caches an OAuth connection's access token.
	token tokenCache
}

// httpParameters are EventBridge's ConnectionHttpParameters: parameters
// added to every request made with the connection.
type httpParameters struct {
	HeaderParameters      []parameter
	QueryStringParameters []parameter
	BodyParameters        []parameter
}

// parameter is a ConnectionHeaderParameter, ConnectionQueryStringParameter
// or ConnectionBodyParameter.
type parameter struct {
	Key           string
	Value         string
	IsValueSecret bool
}

// connections are the connections of the file by key: a connection ARN,
// or a connection name that stands for every ARN with that name.
type connections map[string]*connection

var (
	connectionArnRE  = regexp.MustCompile(`^arn:aws[a-z-]*:events:[a-z0-9-]+:\d{12}:connection/([.\-_A-Za-z0-9]{1,64})(/[A-Za-z0-9-]+)?$`)
	connectionNameRE = regexp.MustCompile(`^[.\-_A-Za-z0-9]{1,64}$`)
)

// maxConnectionsFile bounds a connections file: only a regular file is
// read, at most this much.
const maxConnectionsFile = 1 << 20

// loadConnections reads and checks a connections file; "" is none.
func loadConnections(path string) (connections, error) {
	if path == "" {
		return connections{}, nil
	}
	data, err := boundedfile.Read(context.Background(), path, maxConnectionsFile)
	if err != nil {
		return nil, fmt.Errorf("connections file: %w", err)
	}
	conns, err := parseConnections(data)
	if err != nil {
		return nil, fmt.Errorf("connections file %s: %w", path, err)
	}
	return conns, nil
}

// parseConnections decodes the connections and reports every bad one.
func parseConnections(data []byte) (connections, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("not a JSON object of connections: %w", err)
	}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	conns := make(connections, len(raw))
	var errs []error
	for _, key := range keys {
		c, err := parseConnection(key, raw[key])
		if err != nil {
			errs = append(errs, fmt.Errorf("connection %q: %w", key, err))
			continue
		}
		conns[key] = c
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return conns, nil
}

func parseConnection(key string, data []byte) (*connection, error) {
	if !connectionArnRE.MatchString(key) && !connectionNameRE.MatchString(key) {
		return nil, errors.New("the key must be a connection ARN (arn:aws:events:REGION:ACCOUNT:connection/NAME/ID) or a connection name")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	c := &connection{}
	if err := dec.Decode(c); err != nil {
		return nil, err
	}
	return c, c.validate()
}

// authField is a field that belongs to one authorization type.
type authField struct {
	name, value, authType string
}

func (c *connection) authFields() []authField {
	return []authField{
		{"ApiKeyName", c.APIKeyName, authAPIKey},
		{"ApiKeyValue", c.APIKeyValue, authAPIKey},
		{"Username", c.Username, authBasic},
		{"Password", c.Password, authBasic},
		{"AuthorizationEndpoint", c.AuthorizationEndpoint, authOAuth},
		{"HttpMethod", c.HTTPMethod, authOAuth},
		{"ClientId", c.ClientID, authOAuth},
		{"ClientSecret", c.ClientSecret, authOAuth},
	}
}

// validate checks that the connection has the fields of its
// authorization type and no others.
func (c *connection) validate() error {
	if !slices.Contains([]string{authAPIKey, authBasic, authOAuth}, c.AuthorizationType) {
		return fmt.Errorf("AuthorizationType must be %s, %s or %s, not %q", authAPIKey, authBasic, authOAuth, c.AuthorizationType)
	}
	for _, f := range c.authFields() {
		switch {
		case f.authType == c.AuthorizationType && f.value == "":
			return fmt.Errorf("AuthorizationType %s needs %s", c.AuthorizationType, f.name)
		case f.authType != c.AuthorizationType && f.value != "":
			return fmt.Errorf("%s is a field of %s connections, not %s", f.name, f.authType, c.AuthorizationType)
		}
	}
	if c.AuthorizationType == authAPIKey && (!validHeaderName(c.APIKeyName) || !validHeaderValue(c.APIKeyValue)) {
		return fmt.Errorf("ApiKeyName %q and ApiKeyValue must make a valid HTTP header", c.APIKeyName)
	}
	if c.AuthorizationType == authOAuth {
		if err := c.validateOAuth(); err != nil {
			return err
		}
	} else if c.OAuthHTTPParameters != nil {
		return fmt.Errorf("OAuthHttpParameters is a field of %s connections, not %s", authOAuth, c.AuthorizationType)
	}
	if err := c.OAuthHTTPParameters.validate("OAuthHttpParameters"); err != nil {
		return err
	}
	return c.InvocationHTTPParameters.validate("InvocationHttpParameters")
}

func (c *connection) validateOAuth() error {
	u, err := url.Parse(c.AuthorizationEndpoint)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("AuthorizationEndpoint %q must be an https:// or http:// URL", c.AuthorizationEndpoint)
	}
	if !slices.Contains([]string{"GET", "POST", "PUT"}, c.HTTPMethod) {
		return fmt.Errorf("HttpMethod must be GET, POST or PUT, not %q", c.HTTPMethod)
	}
	return nil
}

func (p *httpParameters) validate(field string) error {
	if p == nil {
		return nil
	}
	for _, list := range []struct {
		name   string
		params []parameter
	}{
		{"HeaderParameters", p.HeaderParameters},
		{"QueryStringParameters", p.QueryStringParameters},
		{"BodyParameters", p.BodyParameters},
	} {
		for i, param := range list.params {
			switch {
			case param.Key == "":
				return fmt.Errorf("%s.%s[%d] needs a Key", field, list.name, i)
			case list.name == "HeaderParameters" && !validHeaderName(param.Key):
				return fmt.Errorf("%s.%s[%d]: %q is not a valid HTTP header name", field, list.name, i, param.Key)
			case list.name == "HeaderParameters" && !validHeaderValue(param.Value):
				return fmt.Errorf("%s.%s[%d]: the value of %s has a line break or NUL", field, list.name, i, param.Key)
			}
		}
	}
	return nil
}

// resolve finds the connection an HTTP Task names: by its ARN, else by
// the name in the ARN. "" is no connection.
func (cs connections) resolve(arn string) (*connection, error) {
	if arn == "" {
		return nil, nil
	}
	if c, ok := cs[arn]; ok {
		return c, nil
	}
	m := connectionArnRE.FindStringSubmatch(arn)
	if m == nil {
		return nil, failure.Newf(failure.TaskFailed,
			"The field 'Authentication.ConnectionArn' is not a connection ARN: '%s'", arn)
	}
	if c, ok := cs[m[1]]; ok {
		return c, nil
	}
	return nil, failure.Newf(failure.TaskFailed,
		"The connection '%s' is not in the connections file (stepwise serve --connections)", arn)
}

// invocation returns the parameters a connection adds to every call
// (none for no connection).
func (c *connection) invocation() *httpParameters {
	if c == nil || c.InvocationHTTPParameters == nil {
		return &httpParameters{}
	}
	return c.InvocationHTTPParameters
}
