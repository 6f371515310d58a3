package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/internal/testkit/conformance"
)

// TestAPIConformanceThroughWire replays the recorded test_state cases and
// the api_error cases of TestState and CreateStateMachine, JSONPath and
// JSONata alike, against the real server, sending each request as the AWS
// JSON 1.0 wire carries it; each group must pass at minPassRate.
func TestAPIConformanceThroughWire(t *testing.T) {
	t.Parallel()
	dir, ok := conformance.Dir()
	if !ok {
		t.Skip("conformance corpus not found: expected ../shared/conformance beside the repository (or set " + conformance.EnvDir + ")")
	}
	all, err := conformance.Load(dir, "")
	require.NoError(t, err)
	s := startServer(t, filepath.Join(t.TempDir(), "api.db"))

	type tally struct {
		total, passed int
		fails         []string
	}
	results := map[string]*tally{}
	for i, cs := range all {
		var key string
		switch {
		case cs.Kind == "test_state":
			key = "test_state"
		case cs.Kind == "api_error" && (cs.Operation == "TestState" || cs.Operation == "CreateStateMachine"):
			key = "api_error " + cs.Operation
		default:
			continue
		}
		if cs.HasFeature("jsonata") {
			key += " (JSONata)"
		}
		body, err := wireRequest(cs, i)
		require.NoError(t, err, cs.Name)
		status, resp, err := post(s, cs.Operation, body)
		require.NoError(t, err, cs.Name)
		var diff string
		if cs.Kind == "test_state" {
			if status != http.StatusOK {
				diff = fmt.Sprintf("HTTP %d: %s", status, resp)
			} else {
				diff = cs.CheckResponse(resp)
			}
		} else {
			var e struct {
				Type    string `json:"__type"`
				Message string `json:"message"`
			}
			if status == http.StatusOK || json.Unmarshal(resp, &e) != nil {
				diff = fmt.Sprintf("expected an error, got HTTP %d: %s", status, resp)
			} else {
				diff = cs.CheckAPIError(e.Type[strings.LastIndexByte(e.Type, '#')+1:], e.Message)
			}
		}
		r := results[key]
		if r == nil {
			r = &tally{}
			results[key] = r
		}
		r.total++
		if diff == "" {
			r.passed++
		} else {
			r.fails = append(r.fails, cs.Name+"\n    "+strings.ReplaceAll(diff, "\n", "\n    "))
		}
	}
	keys := make([]string, 0, len(results))
	for k := range results {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		r := results[k]
		rate := float64(r.passed) * 100 / float64(r.total)
		t.Logf("through the wire, %s: %d/%d passed (%.1f%%)", k, r.passed, r.total, rate)
		for _, f := range r.fails {
			t.Logf("FAIL %s", f)
		}
		require.GreaterOrEqual(t, rate, minPassRate, k)
	}
}

// wireRequest turns a case's request into the JSON body a client sends:
// definition_string becomes definition, <name>_string members are sent as
// they are, and the JSON text members given parsed (input, variables,
// context, mock.result) are sent as text again.
func wireRequest(cs *conformance.Case, i int) ([]byte, error) {
	var req map[string]any
	if err := json.Unmarshal(cs.Request, &req); err != nil {
		return nil, err
	}
	out := map[string]any{}
	for k, v := range req {
		switch {
		case k == "definition_string":
			out["definition"] = v
		case strings.HasSuffix(k, "_string"):
			out[strings.TrimSuffix(k, "_string")] = v
		case k == "input" || k == "variables" || k == "context":
			if _, isString := v.(string); isString {
				out[k] = v
				continue
			}
			b, err := json.Marshal(v)
			if err != nil {
				return nil, err
			}
			out[k] = string(b)
		case k == "mock":
			m, _ := v.(map[string]any)
			mock := map[string]any{}
			for mk, mv := range m {
				if mk == "result" {
					if _, isString := mv.(string); !isString {
						b, _ := json.Marshal(mv)
						mv = string(b)
					}
				}
				mock[strings.TrimSuffix(mk, "_string")] = mv
			}
			out["mock"] = mock
		default:
			out[k] = v
		}
	}
	switch {
	case cs.Operation == "CreateStateMachine":
		out["name"] = fmt.Sprintf("api%d", i)
		out["roleArn"] = roleArn
	case cs.Kind == "test_state" && out["roleArn"] == nil:
		// The recordings leave the role out; it was sent, as the context
		// objects they show ($$.Execution.RoleArn) have it.
		out["roleArn"] = roleArn
	}
	return json.Marshal(out)
}

// post sends one AWS JSON 1.0 request and returns the status and body.
func post(s *server, op string, body []byte) (int, []byte, error) {
	req, err := http.NewRequest(http.MethodPost, s.url()+"/", strings.NewReader(string(body)))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "AWSStepFunctions."+op)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}
