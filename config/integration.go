package config

import (
	"fmt"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strings"

	"stepwise/internal/security/egress"
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
	// Functions maps a Lambda function's name to the shell command line
	// that runs it locally instead (--function NAME=COMMAND).
	Functions map[string]string
	// ConnectionsFile is the JSON file of the EventBridge connections
	// HTTP Tasks authorize with (--connections FILE); see package
	// integration/http for its format.
	ConnectionsFile string
	// HTTPTaskAllow lists the hosts (NAME[:PORT]), addresses
	// (ADDRESS, ADDRESS:PORT, [IPV6]:PORT) and networks (CIDR) HTTP
	// Tasks may call although they are not public, and over plain
	// http:// too (--http-task-allow, comma-separated, repeatable).
	// Without an entry, HTTP Tasks call public HTTPS endpoints only, as
	// on AWS; see package internal/security/egress.
	HTTPTaskAllow []string
	// Runtimes maps a Python or Node.js Lambda runtime (python3.12,
	// nodejs20.x) to the interpreter that runs its functions
	// (--runtime python3.12=/usr/bin/python3.12); without one a
	// function runs on python3 or node from PATH.
	Runtimes map[string]string
	// BuildCache is the folder the dependencies of local functions
	// (requirements.txt, package.json, the AWS SDK for JavaScript) are
	// installed into (--build-cache); empty means stepwise/builds under
	// the user's cache folder.
	BuildCache string
}

// ParseFunctions reads --function values, NAME=COMMAND each, into a map;
// the command is everything after the first "=".
func ParseFunctions(specs []string) (map[string]string, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	fns := make(map[string]string, len(specs))
	for _, spec := range specs {
		name, cmd, ok := strings.Cut(spec, "=")
		if !ok {
			return nil, fmt.Errorf("function %q: give it as NAME=COMMAND", spec)
		}
		if _, dup := fns[name]; dup {
			return nil, fmt.Errorf("function %s: given twice", name)
		}
		fns[name] = cmd
	}
	return fns, nil
}

var functionNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

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
	if _, err := egress.ParseAllow(i.HTTPTaskAllow...); err != nil {
		return fmt.Errorf("http-task-allow: %w", err)
	}
	names := make([]string, 0, len(i.Functions))
	for name := range i.Functions {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !functionNameRE.MatchString(name) {
			return fmt.Errorf("function %s: not a Lambda function name (letters, digits, '-' and '_', at most 64)", name)
		}
		if strings.TrimSpace(i.Functions[name]) == "" {
			return fmt.Errorf("function %s: no command", name)
		}
	}
	runtimes := make([]string, 0, len(i.Runtimes))
	for rt := range i.Runtimes {
		runtimes = append(runtimes, rt)
	}
	sort.Strings(runtimes)
	for _, rt := range runtimes {
		if err := checkInterpreter(rt, i.Runtimes[rt]); err != nil {
			return fmt.Errorf("runtime %s=%s: %w", rt, i.Runtimes[rt], err)
		}
	}
	if i.BuildCache != "" {
		if st, err := os.Stat(i.BuildCache); err == nil && !st.IsDir() {
			return fmt.Errorf("build-cache %s: not a folder", i.BuildCache)
		} else if err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("build-cache %s: %w", i.BuildCache, err)
		}
	}
	return nil
}

var interpretedRE = regexp.MustCompile(`^(python3\.\d+|nodejs\d+\.x)$`)

// checkInterpreter checks a --runtime value: a Python or Node.js runtime
// and an executable file.
func checkInterpreter(rt, path string) error {
	if !interpretedRE.MatchString(rt) {
		return fmt.Errorf("the runtime is python3.N or nodejsN.x (e.g. python3.12, nodejs20.x)")
	}
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("not an executable file")
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
