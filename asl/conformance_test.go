package asl_test

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/asl"
	"stepwise/jsonvalue"
)

// The conformance corpus recorded against AWS lives next to the repository,
// in ../shared/conformance. Every definition AWS ran is valid; the
// validation cases say exactly what AWS reported.

type conformanceCase struct {
	file string
	name string
	kind string
	doc  *jsonvalue.Object
}

func corpusDir(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("conformance corpus: repository root (go.mod) not found")
		}
		dir = parent
	}
	cases := filepath.Join(dir, "..", "shared", "conformance", "cases")
	if _, err := os.Stat(cases); err != nil {
		t.Skipf("conformance corpus not found at %s (it is kept outside the repository, in ../shared/conformance): %v", cases, err)
	}
	return cases
}

func loadCorpus(t *testing.T) []conformanceCase {
	t.Helper()
	dir := corpusDir(t)
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "no cases in %s", dir)
	sort.Strings(files)
	out := make([]conformanceCase, 0, len(files))
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		v, err := jsonvalue.Parse(data)
		require.NoError(t, err, f)
		doc := v.(*jsonvalue.Object)
		out = append(out, conformanceCase{
			file: filepath.Base(f),
			name: getString(doc, "name"),
			kind: getString(doc, "kind"),
			doc:  doc,
		})
	}
	return out
}

func get(v any, keys ...string) any {
	for _, k := range keys {
		o, ok := v.(*jsonvalue.Object)
		if !ok {
			return nil
		}
		v, _ = o.Get(k)
	}
	return v
}

func getString(v any, keys ...string) string {
	s, _ := get(v, keys...).(string)
	return s
}

// definitionText is the definition a case creates its state machine from.
func definitionText(c conformanceCase) string {
	if s := getString(c.doc, "definition_string"); s != "" {
		return s
	}
	if s := getString(c.doc, "request", "create_state_machine", "definition_string"); s != "" {
		return s
	}
	return jsonvalue.String(get(c.doc, "definition"))
}

func TestConformance_validDefinitions(t *testing.T) {
	t.Parallel()

	cases := loadCorpus(t)
	var total, passed int
	var failures []string
	for _, c := range cases {
		switch c.kind {
		case "execution", "express_sync", "describe_state_machine":
		default:
			continue
		}
		typ := getString(c.doc, "state_machine_type")
		if c.kind == "express_sync" {
			typ = asl.TypeExpress
		}
		if s := getString(c.doc, "request", "create_state_machine", "type"); s != "" {
			typ = s
		}
		total++
		sm, diags := asl.ParseWith([]byte(definitionText(c)), asl.Options{Type: typ})
		if asl.HasErrors(diags) {
			failures = append(failures, c.file+": "+diagList(diags))
			continue
		}
		checkMachine(t, sm)
		passed++
	}
	t.Logf("valid definitions: %d/%d parse without ERROR", passed, total)
	require.Empty(t, failures, "definitions AWS accepted but Parse rejected")
}

func TestConformance_validateDefinition(t *testing.T) {
	t.Parallel()

	cases := loadCorpus(t)
	var total, passed int
	for _, c := range cases {
		if c.kind != "validate_definition" {
			continue
		}
		total++
		def := getString(c.doc, "request", "definition_string")
		typ := getString(c.doc, "request", "type")
		got := asl.Validate([]byte(def), asl.Options{Type: typ})
		want := recordedDiagnostics(get(c.doc, "expected", "response", "diagnostics"))
		if slices.Equal(want, got) {
			passed++
		}
		t.Run(c.file, func(t *testing.T) {
			t.Parallel()

			require.Equal(t, want, got)
		})
	}
	t.Logf("validate_definition: %d/%d match the recorded diagnostics", passed, total)
}

func TestConformance_createStateMachineErrors(t *testing.T) {
	t.Parallel()

	cases := loadCorpus(t)
	var total, passed int
	for _, c := range cases {
		if c.kind != "api_error" || getString(c.doc, "operation") != "CreateStateMachine" ||
			getString(c.doc, "expected", "error") != "InvalidDefinition" {
			continue
		}
		total++
		def := getString(c.doc, "request", "definition_string")
		typ := getString(c.doc, "request", "type")
		want := getString(c.doc, "expected", "message")
		sm, diags := asl.ParseWith([]byte(def), asl.Options{Type: typ})
		got := asl.InvalidDefinitionMessage(diags)
		if sm == nil && got == want {
			passed++
		}
		t.Run(c.file, func(t *testing.T) {
			t.Parallel()

			require.Nil(t, sm)
			require.Equal(t, want, got)
		})
	}
	t.Logf("CreateStateMachine InvalidDefinition: %d/%d messages match", passed, total)
}

func recordedDiagnostics(v any) []asl.Diagnostic {
	arr, _ := v.([]any)
	if len(arr) == 0 {
		return nil
	}
	out := make([]asl.Diagnostic, 0, len(arr))
	for _, e := range arr {
		out = append(out, asl.Diagnostic{
			Severity: asl.Severity(getString(e, "severity")),
			Code:     getString(e, "code"),
			Message:  getString(e, "message"),
			Location: getString(e, "location"),
		})
	}
	return out
}

func diagList(diags []asl.Diagnostic) string {
	parts := make([]string, len(diags))
	for i, d := range diags {
		parts[i] = d.String()
	}
	return strings.Join(parts, "; ")
}
