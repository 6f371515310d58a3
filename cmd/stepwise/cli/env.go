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
