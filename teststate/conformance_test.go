package teststate_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/internal/testkit/conformance"
	"stepwise/jsonvalue"
	"stepwise/service"
	"stepwise/service/teststate"
	"stepwise/sfnapi"
)

// tsRequest is the request of a test_state case, or of an api_error case
// of the TestState operation, as the corpus gives it: JSON text
// parameters parsed, or as "<name>_string" when they are not valid JSON.
type tsRequest struct {
	DefinitionString   *string                         `json:"definition_string"`
	Input              json.RawMessage                 `json:"input"`
	InputString        *string                         `json:"input_string"`
	InspectionLevel    string                          `json:"inspectionLevel"`
	StateName          *string                         `json:"stateName"`
	RoleArn            *string                         `json:"roleArn"`
	Mock               *service.MockInput              `json:"mock"`
	Variables          json.RawMessage                 `json:"variables"`
	VariablesString    *string                         `json:"variables_string"`
	Context            json.RawMessage                 `json:"context"`
	ContextString      *string                         `json:"context_string"`
	StateConfiguration *service.TestStateConfiguration `json:"stateConfiguration"`
	RevealSecrets      bool                            `json:"revealSecrets"`
}

// jsonText is a parameter given parsed (raw) or as text (str); nil when
// the request does not have it.
func jsonText(raw json.RawMessage, str *string) (*string, error) {
	if str != nil {
		return str, nil
	}
	if len(raw) == 0 {
		return nil, nil
	}
	v, err := jsonvalue.Parse(raw)
	if err != nil {
		return nil, err
	}
	s := jsonvalue.String(v)
	return &s, nil
}

// testRoleArn is the role a test_state case is sent with.
var testRoleArn = "arn:aws:iam::123456789012:role/stepwise"

// testStateInput builds the TestState request of a case.
func testStateInput(c *conformance.Case) (*service.TestStateInput, error) {
	var r tsRequest
	if err := json.Unmarshal(c.Request, &r); err != nil {
		return nil, fmt.Errorf("decode request: %w", err)
	}
	in := &service.TestStateInput{
		Definition:         c.DefinitionText(),
		RoleArn:            r.RoleArn,
		InspectionLevel:    r.InspectionLevel,
		RevealSecrets:      r.RevealSecrets,
		StateName:          r.StateName,
		Mock:               r.Mock,
		StateConfiguration: r.StateConfiguration,
	}
	if r.DefinitionString != nil {
		in.Definition = *r.DefinitionString
	}
	if in.RoleArn == nil && c.Kind == "test_state" {
		// The recordings leave the role out; it was sent, as the context
		// objects they show ($$.Execution.RoleArn) have it.
		in.RoleArn = &testRoleArn
	}
	var err error
	if in.Input, err = jsonText(r.Input, r.InputString); err != nil {
		return nil, fmt.Errorf("input: %w", err)
	}
	if in.Variables, err = jsonText(r.Variables, r.VariablesString); err != nil {
		return nil, fmt.Errorf("variables: %w", err)
	}
	if in.Context, err = jsonText(r.Context, r.ContextString); err != nil {
		return nil, fmt.Errorf("context: %w", err)
	}
	return in, nil
}

// jsonTextMembers are the response members that hold JSON text. The
// recordings store object texts parsed and other texts re-serialised, so
// both sides are compared parsed.
var jsonTextMembers = []string{
	"input", "afterArguments", "afterInputPath", "afterParameters", "result",
	"afterResultSelector", "afterResultPath", "variables", "afterItemsPath",
	"afterItemSelector", "afterItemBatcher", "afterItemsPointer",
}

func parseText(v any) any {
	if s, ok := v.(string); ok {
		if p, err := jsonvalue.ParseString(s); err == nil {
			return p
		}
	}
	return v
}

func normalizeResponse(v any) any {
	obj, ok := v.(*jsonvalue.Object)
	if !ok {
		return v
	}
	obj = obj.Clone()
	if out, ok := obj.Get("output"); ok {
		obj.Set("output", parseText(out))
	}
	if v, _ := obj.Get("inspectionData"); v != nil {
		id := v.(*jsonvalue.Object).Clone()
		for _, k := range jsonTextMembers {
			if f, ok := id.Get(k); ok {
				id.Set(k, parseText(f))
			}
		}
		obj.Set("inspectionData", id)
	}
	return obj
}

// checkTestState runs a test_state case and returns why it failed, or "".
func checkTestState(r *teststate.Runner, c *conformance.Case) string {
	in, err := testStateInput(c)
	if err != nil {
		return err.Error()
	}
	out, err := r.TestState(context.Background(), in)
	if err != nil {
		return "TestState: " + err.Error()
	}
	data, err := json.Marshal(out)
	if err != nil {
		return "marshal: " + err.Error()
	}
	got, err := jsonvalue.Parse(data)
	if err != nil {
		return "response: " + err.Error()
	}
	want, err := jsonvalue.Parse(c.Expected.Response)
	if err != nil {
		return "recorded response: " + err.Error()
	}
	if d := c.NewMatcher().Match(normalizeResponse(want), normalizeResponse(got)); d != "" {
		return d + "\n  response: " + string(data)
	}
	return ""
}

// checkAPIError runs an api_error case of TestState and returns why it
// failed, or "".
func checkAPIError(r *teststate.Runner, c *conformance.Case) string {
	in, err := testStateInput(c)
	if err != nil {
		return err.Error()
	}
	out, err := r.TestState(context.Background(), in)
	if err == nil {
		data, _ := json.Marshal(out)
		return "no error; response: " + string(data)
	}
	var apiErr *sfnapi.Error
	if !errors.As(err, &apiErr) {
		return "not an API error: " + err.Error()
	}
	return c.CheckAPIError(apiErr.Code, apiErr.Message)
}

// TestConformance runs the recorded TestState cases: every test_state
// case and every api_error case of the TestState operation. The JSONPath
// and api_error cases must all pass; the JSONata test_state cases must pass
// at minPassRate, and those that fail are listed.
func TestConformance(t *testing.T) {
	t.Parallel()
	dir, ok := conformance.Dir()
	if !ok {
		t.Skip("conformance corpus not found (../shared/conformance; set " + conformance.EnvDir + ")")
	}
	cases, err := conformance.Load(dir, "")
	require.NoError(t, err)

	r := teststate.New(teststate.Config{Now: func() time.Time { return time.Date(2025, 1, 15, 10, 30, 0, 0, time.UTC) }})
	type tally struct {
		name        string
		run, passed int
		failures    []string
		minPassRate float64 // 1 when every case must pass
		checkFn     func(*teststate.Runner, *conformance.Case) string
	}
	tallies := []*tally{
		{name: "test_state (JSONPath)", minPassRate: 1, checkFn: checkTestState},
		{name: "api_error TestState", minPassRate: 1, checkFn: checkAPIError},
		{name: "test_state (JSONata)", minPassRate: 0.97, checkFn: checkTestState},
	}
	for _, c := range cases {
		var tl *tally
		switch {
		case c.Kind == "test_state" && c.HasFeature("jsonata"):
			tl = tallies[2]
		case c.Kind == "test_state":
			tl = tallies[0]
		case c.Kind == "api_error" && c.Operation == "TestState":
			tl = tallies[1]
		default:
			continue
		}
		tl.run++
		if why := tl.checkFn(r, c); why != "" {
			tl.failures = append(tl.failures, c.Name+" ("+c.File+"):\n  "+why)
			continue
		}
		tl.passed++
	}
	for _, tl := range tallies {
		t.Logf("%s: %d/%d passed", tl.name, tl.passed, tl.run)
		if tl.minPassRate == 1 {
			for _, f := range tl.failures {
				t.Errorf("%s", f)
			}
			continue
		}
		for _, f := range tl.failures {
			t.Logf("%s: failed: %s", tl.name, f)
		}
		require.GreaterOrEqual(t, float64(tl.passed), tl.minPassRate*float64(tl.run),
			"%s: %d/%d passed, below %.0f%%", tl.name, tl.passed, tl.run, tl.minPassRate*100)
	}
}
