package config

import (
	"fmt"
	"net/url"
	"regexp"
	"sort"
)

// Integrations configures the service integrations of Task states
// (arn:aws:states:::sqs:sendMessage, ...): where their calls go.
type Integrations struct {
	// AWSEndpoint, when set, is the URL every AWS service call goes to,
	// e.g. a local emulator (moto, LocalStack), unless Endpoints names one
	// for the service. Empty means AWS's own endpoints for Region.
	AWSEndpoint string
	// Endpoints maps a service name (sqs, sns, ...) to the URL its calls
	// go to.
	Endpoints map[string]string
}

var serviceNameRE = regexp.MustCompile(`^[a-z0-9-]+$`)

// validate names the first bad setting.
func (i *Integrations) validate() error {
	if i.AWSEndpoint != "" {
		if err := checkEndpoint(i.AWSEndpoint); err != nil {
			return fmt.Errorf("aws-endpoint %q: %w", i.AWSEndpoint, err)
		}
	}
	services := make([]string, 0, len(i.Endpoints))
	for s := range i.Endpoints {
		services = append(services, s)
	}
	sort.Strings(services)
	for _, s := range services {
		if !serviceNameRE.MatchString(s) {
			return fmt.Errorf("endpoint %s=%s: not a service name such as sqs", s, i.Endpoints[s])
		}
		if err := checkEndpoint(i.Endpoints[s]); err != nil {
			return fmt.Errorf("endpoint %s=%s: %w", s, i.Endpoints[s], err)
		}
	}
	return nil
}

func checkEndpoint(text string) error {
	u, err := url.Parse(text)
	if err != nil {
		return err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("must be an http:// or https:// URL")
	}
	return nil
}
