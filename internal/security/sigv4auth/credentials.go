package sigv4auth

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"stepwise/internal/boundedfile"
)

// Credentials are the access keys a server accepts: secret access keys by
// access key id, and the profile each came from.
type Credentials struct {
	secrets  map[string]string
	profiles map[string]string
}

// Secret returns the secret access key of an access key id.
func (c *Credentials) Secret(accessKeyID string) (string, bool) {
	if c == nil {
		return "", false
	}
	s, ok := c.secrets[accessKeyID]
	return s, ok
}

// Profile returns the profile an access key id came from.
func (c *Credentials) Profile(accessKeyID string) string {
	if c == nil {
		return ""
	}
	return c.profiles[accessKeyID]
}

// Len is the number of access keys.
func (c *Credentials) Len() int {
	if c == nil {
		return 0
	}
	return len(c.secrets)
}

// AccessKeyIDs returns the access key ids, sorted.
func (c *Credentials) AccessKeyIDs() []string {
	if c == nil {
		return nil
	}
	ids := make([]string, 0, len(c.secrets))
	for id := range c.secrets {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// NewCredentials returns credentials of secrets by access key id (tests).
func NewCredentials(secrets map[string]string) *Credentials {
	c := &Credentials{secrets: map[string]string{}, profiles: map[string]string{}}
	for id, s := range secrets {
		c.secrets[id] = s
		c.profiles[id] = id
	}
	return c
}

// MaxCredentialsFile is the largest shared-credentials file read.
const MaxCredentialsFile = 1 << 20

// LoadCredentials reads a shared-credentials file (see ParseCredentials):
// a regular file of at most MaxCredentialsFile bytes.
func LoadCredentials(path string) (*Credentials, error) {
	b, err := boundedfile.Read(context.Background(), path, MaxCredentialsFile)
	if err != nil {
		return nil, fmt.Errorf("credentials: %w", err)
	}
	c, err := ParseCredentials(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("credentials %s: %w", path, err)
	}
	return c, nil
}

// ParseCredentials reads the AWS shared-credentials format: [profile]
// sections (also "[profile name]", as in a config file) of key = value
// lines, "#" and ";" starting comment lines. Every profile with an
// aws_access_key_id must have an aws_secret_access_key, and the other way
// round; other keys (aws_session_token, region, ...) are ignored. Every
// profile's key is accepted. An access key id given twice with two
// secrets is an error, as is a file without any key.
func ParseCredentials(r io.Reader) (*Credentials, error) {
	type pair struct{ id, secret string }
	var (
		order    []string
		profiles = map[string]*pair{}
		current  *pair
		line     int
	)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if line == 1 {
			text = strings.TrimPrefix(text, "\ufeff")
		}
		if text == "" || text[0] == '#' || text[0] == ';' {
			continue
		}
		if text[0] == '[' {
			if !strings.HasSuffix(text, "]") {
				return nil, fmt.Errorf("line %d: a section header must end with ']'", line)
			}
			name := strings.TrimSpace(text[1 : len(text)-1])
			if rest, ok := strings.CutPrefix(name, "profile "); ok {
				name = strings.TrimSpace(rest)
			}
			if name == "" {
				return nil, fmt.Errorf("line %d: empty profile name", line)
			}
			current = profiles[name]
			if current == nil {
				current = &pair{}
				profiles[name] = current
				order = append(order, name)
			}
			continue
		}
		k, v, ok := strings.Cut(text, "=")
		if !ok {
			return nil, fmt.Errorf("line %d: expected key = value", line)
		}
		if current == nil {
			return nil, fmt.Errorf("line %d: %s outside of a [profile] section", line, strings.TrimSpace(k))
		}
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "aws_access_key_id":
			current.id = strings.TrimSpace(v)
		case "aws_secret_access_key":
			current.secret = strings.TrimSpace(v)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	c := &Credentials{secrets: map[string]string{}, profiles: map[string]string{}}
	for _, name := range order {
		p := profiles[name]
		switch {
		case p.id == "" && p.secret == "":
			continue // a profile of other settings
		case p.id == "":
			return nil, fmt.Errorf("profile %s: aws_secret_access_key without aws_access_key_id", name)
		case p.secret == "":
			return nil, fmt.Errorf("profile %s: aws_access_key_id without aws_secret_access_key", name)
		case strings.ContainsAny(p.id, "/ ,="):
			return nil, fmt.Errorf("profile %s: access key id %q: must not contain '/', ',', '=' or spaces", name, p.id)
		}
		if prev, ok := c.secrets[p.id]; ok && prev != p.secret {
			return nil, fmt.Errorf("profile %s: access key id %s is also in profile %s, with another secret", name, p.id, c.profiles[p.id])
		}
		if _, ok := c.secrets[p.id]; !ok {
			c.secrets[p.id] = p.secret
			c.profiles[p.id] = name
		}
	}
	if len(c.secrets) == 0 {
		return nil, fmt.Errorf("no access keys: add a [profile] with aws_access_key_id and aws_secret_access_key")
	}
	return c, nil
}
