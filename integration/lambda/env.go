package lambda

import (
	"os"
	"slices"
	"sort"
	"strings"

	"stepwise/integration"
)

// A function's environment
//
// A local function's process (a handler's, a provided runtime's
// bootstrap, a --function command) does not inherit the server's
// environment: on Lambda a function sees its own Environment, the
// runtime's variables and its role's credentials, nothing of whoever
// runs the service, and the server's environment holds its own secrets
// (AWS keys, PGPASSWORD, webhook secrets). It gets:
//
//   - of the server's variables, only passedVars: where programs are
//     (PATH), the user's home (HOME) and the locale and time zone
//     (LANG, LC_ALL, LC_CTYPE, TZ), and where temporary files go
//     (TMPDIR);
//   - when calls to AWS go to an endpoint (--aws-endpoint, --endpoint
//     SERVICE=URL): AWS_ENDPOINT_URL (and AWS_ENDPOINT_URL_<SERVICE>),
//     so an AWS SDK in the function calls the services the server's
//     tasks call;
//   - once the server listens (SetServer): AWS_ENDPOINT_URL_SFN, the
//     server itself, so that a function's SendTaskSuccess or
//     StartExecution reaches the server that invoked it, and
//     AWS_ENDPOINT_URL_EVENTS and AWS_ENDPOINT_URL_EVENTBRIDGE, its
//     local bus of the deployed rules (unless --endpoint events=URL);
//   - with an endpoint or the server's URL, credentials: the server's
//     own access key when it takes signed requests only (--credentials:
//     its default profile's, else its first), else fixed local
//     credentials (integration's LocalAccessKeyID), which emulators
//     accept. The keys the server itself calls AWS with are never
//     handed on. Without either a function gets no credentials, as a
//     function without a role;
//   - always, noCredentials: an AWS SDK in the function reads no shared
//     credentials or config file (AWS_SHARED_CREDENTIALS_FILE and
//     AWS_CONFIG_FILE are /dev/null: HOME is passed on, and
//     ~/.aws/credentials holds the operator's keys, ~/.aws/config their
//     profiles and SSO sessions) and never asks an instance metadata
//     service (AWS_EC2_METADATA_DISABLED: on EC2 it would hand on the
//     instance role's credentials). A function's own Environment may
//     still name a file or a profile: it is set by whoever deploys the
//     function, on purpose;
//   - Lambda's variables (AWS_LAMBDA_FUNCTION_NAME, AWS_REGION,
//     _HANDLER, ... see Function.env), the trace of its invoke
//     (_X_AMZN_TRACE_ID, TRACEPARENT), and its own Environment, which
//     comes last and so wins — but for the run's token (runVar, see
//     groups_linux.go), appended when the process starts.

// passedVars are the variables of the server's environment a function
// gets.
var passedVars = []string{"PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR"}

// noCredentials keeps an AWS SDK in a function off the credentials of the
// server's user and machine.
var noCredentials = []string{"AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_CONFIG_FILE=/dev/null",
	"AWS_EC2_METADATA_DISABLED=true"}

// calls is where a function's calls to AWS go, and with what key.
type calls struct {
	endpoint  string
	endpoints map[string]string
	// self is the server's own URL (AWS_ENDPOINT_URL_SFN), and keyID
	// and secret the key it takes ("": local credentials).
	self, keyID, secret string
}

// baseEnv is what every function's process starts from: passedVars of
// environ, and where calls to AWS go, with their credentials.
func baseEnv(environ []string, c calls) []string {
	endpoint, endpoints := c.endpoint, c.endpoints
	var env []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		for _, pass := range passedVars {
			if name == pass {
				env = append(env, kv)
			}
		}
	}
	env = append(env, noCredentials...)
	if endpoint != "" {
		env = append(env, "AWS_ENDPOINT_URL="+endpoint)
	}
	services := make([]string, 0, len(endpoints))
	for s := range endpoints {
		services = append(services, s)
	}
	sort.Strings(services)
	for _, s := range services {
		name := strings.ToUpper(strings.NewReplacer("-", "_", " ", "_").Replace(s))
		if name == "SFN" && c.self != "" {
			continue
		}
		env = append(env, "AWS_ENDPOINT_URL_"+name+"="+endpoints[s])
	}
	if c.self != "" {
		env = append(env, "AWS_ENDPOINT_URL_SFN="+c.self)
		// The server's local bus takes PutEvents (its rules run there),
		// unless the user sent the events elsewhere.
		if _, given := endpoints["events"]; !given {
			env = append(env, "AWS_ENDPOINT_URL_EVENTS="+c.self, "AWS_ENDPOINT_URL_EVENTBRIDGE="+c.self)
		}
	}
	switch {
	case c.keyID != "":
		env = append(env, "AWS_ACCESS_KEY_ID="+c.keyID, "AWS_SECRET_ACCESS_KEY="+c.secret)
	case endpoint != "" || len(endpoints) > 0 || c.self != "":
		env = append(env, "AWS_ACCESS_KEY_ID="+integration.LocalAccessKeyID,
			"AWS_SECRET_ACCESS_KEY="+integration.LocalSecretAccessKey)
	}
	return env
}

// setEndpoints makes functions' AWS SDKs call these endpoints (the
// server's --aws-endpoint and --endpoint values); see baseEnv. It is
// called before the first invoke.
func (l *Local) setEndpoints(endpoint string, endpoints map[string]string) {
	l.envMu.Lock()
	defer l.envMu.Unlock()
	l.calls.endpoint, l.calls.endpoints = endpoint, endpoints
	env := baseEnv(os.Environ(), l.calls)
	l.env.Store(&env)
}

// SetServer makes functions' calls to Step Functions go to the server
// at url (AWS_ENDPOINT_URL_SFN), signed with the access key keyID and
// its secret (keyID "": local credentials, for a server that takes any
// request). The processes started after it see it.
func (l *Local) SetServer(url, keyID, secret string) {
	l.envMu.Lock()
	defer l.envMu.Unlock()
	l.calls.self, l.calls.keyID, l.calls.secret = url, keyID, secret
	env := baseEnv(os.Environ(), l.calls)
	l.env.Store(&env)
}

// baseEnviron is what a function's environment starts from.
func (l *Local) baseEnviron() []string { return slices.Clip(*l.env.Load()) }
