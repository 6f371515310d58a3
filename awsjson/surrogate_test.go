package awsjson_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/awsjson"
)

func TestHandlerUnpairedSurrogateNames(t *testing.T) {
	t.Parallel()
	b := setup(t)

	// raw sends body as it is: json.Marshal cannot write a lone surrogate.
	raw := func(t *testing.T, op, body string) *response {
		t.Helper()
		return b.do(t, newRequest(awsjson.TargetPrefix+op, []byte(body)))
	}
	const def = `"{\"StartAt\": \"P\", \"States\": {\"P\": {\"Type\": \"Pass\", \"End\": true}}}"`
	const express = `arn:aws:states:us-east-1:123456789012:stateMachine:express`
	b.mustCall(t, "CreateStateMachine", map[string]any{"name": "sm", "definition": passDefinition, "roleArn": roleArn})
	b.mustCall(t, "CreateStateMachine", map[string]any{"name": "express", "type": "EXPRESS", "definition": passDefinition, "roleArn": roleArn})
	smArn := `arn:aws:states:us-east-1:123456789012:stateMachine:sm`

	t.Run("Refused", func(t *testing.T) {
		for _, tt := range []struct {
			op, body, name string
		}{
			{"CreateStateMachine", `{"name": "a\ud800", "definition": ` + def + `, "roleArn": "` + roleArn + `"}`, `a\ud800`},
			{"CreateStateMachine", `{"name": "\uDFFFz", "definition": ` + def + `, "roleArn": "` + roleArn + `"}`, `\udfffz`},
			{"CreateStateMachine", `{"Name": "\ud800\ud800", "definition": ` + def + `, "roleArn": "` + roleArn + `"}`, `\ud800\ud800`},
			{"StartExecution", `{"stateMachineArn": "` + smArn + `", "name": "x\udc00y"}`, `x\udc00y`},
			{"StartSyncExecution", `{"stateMachineArn": "` + express + `", "name": "\ude00\ud83d"}`, `\ude00\ud83d`},
			{"CreateActivity", `{"name": "act\udbff"}`, `act\udbff`},
			// The last member of a name counts, as for every member.
			{"CreateActivity", `{"name": "fine", "name": "act\ud800"}`, `act\ud800`},
		} {
			res := raw(t, tt.op, tt.body)
			require.Equal(t, http.StatusBadRequest, res.status, string(res.body))
			typ, _ := res.errorType(t)
			require.Equal(t, "com.amazonaws.swf.service.v2.model#InvalidName", typ, tt.body)
			// The message holds the name as it was sent, escape and all.
			require.Contains(t, string(res.body), `"message":"Invalid Name: '`+tt.name+`'"`, tt.body)
		}
	})

	t.Run("Accepted", func(t *testing.T) {
		// A pair of escapes is one character.
		res := raw(t, "CreateActivity", `{"name": "smile\ud83d\ude00"}`)
		require.Equal(t, http.StatusOK, res.status, string(res.body))
		require.Contains(t, string(res.body), `"activityArn":"arn:aws:states:us-east-1:123456789012:activity:smile😀"`)
		res = raw(t, "CreateActivity", `{"name": "act\ud800", "name": "fine"}`)
		require.Equal(t, http.StatusOK, res.status, string(res.body))

		// An escape inside the input's JSON text is the input's own: it is
		// kept as sent.
		res = raw(t, "StartExecution", `{"stateMachineArn": "`+smArn+`", "name": "in", "input": "{\"a\": \"\\ud800\"}"}`)
		require.Equal(t, http.StatusOK, res.status, string(res.body))
		d := b.mustCall(t, "DescribeExecution", map[string]any{"executionArn": "arn:aws:states:us-east-1:123456789012:execution:sm:in"})
		require.Equal(t, `{"a": "\ud800"}`, d["input"])
	})
}
