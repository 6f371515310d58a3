package lambda

import (
	"os"
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
//     tasks call, and fixed local credentials (integration's
//     LocalAccessKeyID), which emulators accept: the server's own keys
//     are never handed on. Without an endpoint a function gets no
//     credentials, as a function without a role;
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

// baseEnv is what every function's process starts from: passedVars of
// environ, and the endpoints (with local credentials) calls to AWS go to.
func baseEnv(environ []string, endpoint string, endpoints map[string]string) []string {
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
		env = append(env, "AWS_ENDPOINT_URL_"+name+"="+endpoints[s])
	}
	if endpoint != "" || len(endpoints) > 0 {
		env = append(env, "AWS_ACCESS_KEY_ID="+integration.LocalAccessKeyID,
			"AWS_SECRET_ACCESS_KEY="+integration.LocalSecretAccessKey)
	}
	return env
}

// setEndpoints makes functions' AWS SDKs call these endpoints (the
// server's --aws-endpoint and --endpoint values), with local
// credentials; see baseEnv. It is called before the first invoke.
func (l *Local) setEndpoints(endpoint string, endpoints map[string]string) {
	l.env = baseEnv(os.Environ(), endpoint, endpoints)
}
