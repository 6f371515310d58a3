package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"
)

// envPrefix starts the name of a flag's environment variable.
const envPrefix = "STEPWISE_"

// envAnnotation marks a command whose flags are also read from their
// environment variables (envName).
const envAnnotation = "stepwise.env"

// envHelp is the line of a command's help that says its flags are read
// from the environment too, and how a repeatable flag's variable is
// written.
func envHelp(fs *pflag.FlagSet) string {
	var lists []string
	fs.VisitAll(func(f *pflag.Flag) {
		if !f.Hidden && envList(f) {
			lists = append(lists, "--"+f.Name)
		}
	})
	return "Every flag may also be given as the environment variable STEPWISE_<FLAG> (--wait-time-scale: STEPWISE_WAIT_TIME_SCALE), " +
		"the command line winning; a repeatable flag's variable holds one value a line, or a comma-separated list for " + strings.Join(lists, ", ") + "."
}

// envList says whether a flag's variable is a comma-separated list, as
// the flag's value is: a StringSlice, a StringToString (NAME=VALUE,...).
func envList(f *pflag.Flag) bool {
	t := f.Value.Type()
	return strings.HasSuffix(t, "Slice") || t == "stringToString" || t == "stringToInt" || t == "stringToInt64"
}

// envName is the environment variable of a flag: STEPWISE_ and the
// flag's name in upper case, each '-' a '_' (--wait-time-scale:
// STEPWISE_WAIT_TIME_SCALE).
func envName(flag string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// applyEnv gives every flag of fs the command line did not set the value
// of its environment variable (envName), when that variable is set and
// not empty: a command line flag wins over its variable. A flag that
// takes its values one at a time (a StringArray: --function, --template,
// --allowed-host, ...) takes one a line of its variable, empty lines
// skipped; the others take the whole value as the command line would
// (comma-separated for --endpoint, --http-task-allow, --calendar,
// --runtime). A value the flag refuses is a usage error naming the
// variable.
func applyEnv(fs *pflag.FlagSet, lookup func(string) (string, bool)) error {
	var err error
	fs.VisitAll(func(f *pflag.Flag) {
		if err != nil || f.Changed || f.Name == "help" {
			return
		}
		name := envName(f.Name)
		v, ok := lookup(name)
		if !ok || v == "" {
			return
		}
		values := []string{v}
		if _, repeatable := f.Value.(pflag.SliceValue); repeatable && !envList(f) {
			values = envLines(v)
		}
		for _, s := range values {
			if e := fs.Set(f.Name, s); e != nil {
				err = &UsageError{fmt.Sprintf("%s: %v", name, e)}
				return
			}
		}
	})
	return err
}

// envLines are the lines of a variable that are not empty, without
// their surrounding blanks (a "\r" included).
func envLines(v string) []string {
	var out []string
	for _, line := range strings.Split(v, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, line)
		}
	}
	return out
}

// sfnLocalVar is one of the environment variables Step Functions Local
// (the amazon/aws-stepfunctions-local image) is configured by, and the
// serve flag it stands for.
type sfnLocalVar struct {
	name string
	// flag is the serve flag it sets; "" when it sets none (why says
	// why).
	flag string
	// service, for --endpoint, is the service whose calls go to the URL.
	service string
	why     string
}

// sfnLocalVars are Step Functions Local's variables, in its
// documentation's order.
var sfnLocalVars = []sfnLocalVar{
	{name: "AWS_ACCOUNT_ID", flag: "account"},
	{name: "AWS_DEFAULT_REGION", flag: "region"},
	{name: "WAIT_TIME_SCALE", flag: "wait-time-scale"},
	{name: "LAMBDA_ENDPOINT", flag: "endpoint", service: "lambda"},
	{name: "BATCH_ENDPOINT", flag: "endpoint", service: "batch"},
	{name: "DYNAMODB_ENDPOINT", flag: "endpoint", service: "dynamodb"},
	{name: "ECS_ENDPOINT", flag: "endpoint", service: "ecs"},
	{name: "GLUE_ENDPOINT", flag: "endpoint", service: "glue"},
	{name: "SAGE_MAKER_ENDPOINT", flag: "endpoint", service: "sagemaker"},
	{name: "SQS_ENDPOINT", flag: "endpoint", service: "sqs"},
	{name: "SNS_ENDPOINT", flag: "endpoint", service: "sns"},
	// Step Functions Local sends its nested executions there (itself,
	// usually); here states:startExecution and aws-sdk:sfn always run on
	// this server, in process, whatever an endpoint says.
	{name: "STEP_FUNCTIONS_ENDPOINT", why: "nested executions run on this server"},
	{name: "SFN_MOCK_CONFIG", flag: "mock-config"},
}

// sfnLocalReport says what became of the Step Functions Local variables
// that are set: applied (each to its flag), overridden (its flag was
// given, or its STEPWISE_ variable) or ignored (why).
type sfnLocalReport struct {
	applied, overridden, ignored []string
}

// applySFNLocal gives the flags of fs Step Functions Local's variables
// (sfnLocalVars) that are set and not empty, where neither the command
// line nor a STEPWISE_ variable gave the flag (applyEnv runs first): an
// *_ENDPOINT variable is --endpoint SERVICE=URL unless --endpoint names
// that service, WAIT_TIME_SCALE is not taken with --time-skip. A value
// the flag refuses is a usage error naming the variable.
func applySFNLocal(fs *pflag.FlagSet, lookup func(string) (string, bool)) (*sfnLocalReport, error) {
	r := &sfnLocalReport{}
	for _, v := range sfnLocalVars {
		value, ok := lookup(v.name)
		if !ok || value == "" {
			continue
		}
		if v.flag == "" {
			r.ignored = append(r.ignored, v.name+" ("+v.why+")")
			continue
		}
		f := fs.Lookup(v.flag)
		given := f.Changed
		if v.service != "" {
			endpoints, _ := fs.GetStringToString(v.flag)
			_, given = endpoints[v.service]
			value = v.service + "=" + value
		}
		if v.flag == "wait-time-scale" {
			if skip := fs.Lookup("time-skip"); skip != nil && skip.Changed {
				given = true
			}
		}
		if given {
			r.overridden = append(r.overridden, v.name)
			continue
		}
		if err := fs.Set(v.flag, value); err != nil {
			return nil, &UsageError{fmt.Sprintf("%s: %v", v.name, err)}
		}
		r.applied = append(r.applied, v.name)
	}
	return r, nil
}

// attrs are the report as the attributes of a log line.
func (r *sfnLocalReport) attrs() []any {
	list := func(names []string) string {
		if len(names) == 0 {
			return "none"
		}
		return strings.Join(names, ", ")
	}
	return []any{"applied", list(r.applied), "overridden", list(r.overridden), "ignored", list(r.ignored)}
}
