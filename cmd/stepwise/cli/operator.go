package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"stepwise/awsjson"
)

// The operator verbs (hold, release, suspend, resume, skip, kill,
// actions) call the server's Stepwise operations (awsjson: X-Amz-Target
// Stepwise.<Op>), signed for "states" as the Step Functions API is when
// the environment names AWS credentials.

// operatorFlags are the flags every operator verb takes.
type operatorFlags struct {
	endpoint string
	timeout  time.Duration
}

func (f *operatorFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.endpoint, "endpoint", "http://127.0.0.1:8083", "the server's URL")
	cmd.Flags().DurationVar(&f.timeout, "timeout", time.Minute, "how long to wait for the server")
}

// operatorSigningName is the SigV4 service of the Step Functions API,
// which Stepwise's operations share.
const operatorSigningName = "states"

// maxOperatorAnswer bounds a Stepwise operation's answer read.
const maxOperatorAnswer = 16 << 20

// requireArn refuses an argument that is not an ARN of kind (execution,
// or stateMachine too when machines is set).
func requireArn(arn string, machines bool) error {
	parts := strings.SplitN(arn, ":", 7)
	if len(parts) < 7 || parts[0] != "arn" || parts[2] != "states" {
		if machines {
			return &UsageError{fmt.Sprintf("%q is not an ARN of a state machine or an execution (arn:aws:states:REGION:ACCOUNT:stateMachine:NAME or ...:execution:MACHINE:NAME)", arn)}
		}
		return &UsageError{fmt.Sprintf("%q is not an execution ARN (arn:aws:states:REGION:ACCOUNT:execution:MACHINE:NAME)", arn)}
	}
	switch parts[5] {
	case "execution":
		return nil
	case "stateMachine":
		if machines {
			return nil
		}
		return &UsageError{fmt.Sprintf("%q is a state machine's ARN: this verb takes an execution's", arn)}
	}
	return &UsageError{fmt.Sprintf("%q is the ARN of a resource of type %s, not of an execution", arn, parts[5])}
}

// requireState refuses an empty --state.
func requireState(state string) error {
	if strings.TrimSpace(state) == "" {
		return &UsageError{"--state NAME is required: the state's name, as in the definition"}
	}
	return nil
}

// callStepwise calls the server's Stepwise operation op with in and
// decodes its answer into out (nil: dropped). A refusal is the server's
// error: "<Code>: <message>".
func callStepwise(ctx context.Context, f *operatorFlags, op string, in, out any) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	url := strings.TrimSuffix(f.endpoint, "/") + "/"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return &UsageError{fmt.Sprintf("--endpoint %q: %v", f.endpoint, err)}
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", awsjson.StepwiseTargetPrefix+op)
	if os.Getenv("AWS_ACCESS_KEY_ID") != "" || os.Getenv("AWS_PROFILE") != "" {
		if err := signFor(ctx, operatorSigningName, req, body); err != nil {
			return err
		}
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("no server at %s (start one with `stepwise serve`): %w", f.endpoint, err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, maxOperatorAnswer))
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK {
		var e struct {
			Type    string `json:"__type"`
			Message string `json:"message"`
		}
		if json.Unmarshal(data, &e) != nil || e.Type == "" {
			return fmt.Errorf("%s answered %s: %s", url, res.Status, strings.TrimSpace(string(data)))
		}
		code := e.Type[strings.LastIndexByte(e.Type, '#')+1:]
		return fmt.Errorf("%s: %s", code, e.Message)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s answered %s: %w", url, op, err)
	}
	return nil
}
