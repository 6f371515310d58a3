package service_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/engine/start"
	"stepwise/interp"
	"stepwise/service"
	"stepwise/service/servicetest"
	"stepwise/sfnapi"
	"stepwise/store"
	"stepwise/store/sqlitestore"
)

const (
	passDefinition = `{"Comment": "BASE_PASS_RESULT", "StartAt": "State_1", "States": {"State_1": {"Type": "Pass", "Result": {"Arg1": "argument1"}, "End": true}}}`
	roleArn        = "arn:aws:iam::123456789012:role/StepwiseRole"
	smPrefix       = "arn:aws:states:us-east-1:123456789012:stateMachine:"
)

type testBundle struct {
	ctx    context.Context
	svc    *service.Service
	drv    store.Driver
	engine *servicetest.Engine
	clock  *fakeClock
}

// fakeClock moves forward one millisecond every time it is read, so that
// rows created one after the other have distinct, ordered times.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(time.Millisecond)
	return c.now
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	ctx := context.Background()
	drv, err := sqlitestore.Open(ctx, sqlitestore.Memory, sqlitestore.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { drv.Close() })
	clock := &fakeClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	eng := servicetest.StoreEngine(drv, clock.Now)
	ids := 0
	var idsMu sync.Mutex
	svc, err := service.New(drv, eng, service.Config{
		Now: clock.Now,
		NewID: func() string {
			idsMu.Lock()
			defer idsMu.Unlock()
			ids++
			return fmt.Sprintf("id-%04d", ids)
		},
	})
	require.NoError(t, err)
	return &testBundle{ctx: ctx, svc: svc, drv: drv, engine: eng, clock: clock}
}

func requireAPIError(t *testing.T, err error, code, message string) {
	t.Helper()
	var apiErr *sfnapi.Error
	require.True(t, errors.As(err, &apiErr), "want an API error, got %v", err)
	require.Equal(t, code, apiErr.Code, apiErr.Message)
	if message != "" {
		require.Equal(t, message, apiErr.Message)
	}
}

func (b *testBundle) create(t *testing.T, name, definition string, mod ...func(*service.CreateStateMachineInput)) string {
	t.Helper()
	in := &service.CreateStateMachineInput{Name: name, Definition: definition, RoleArn: roleArn}
	for _, m := range mod {
		m(in)
	}
	out, err := b.svc.CreateStateMachine(b.ctx, in)
	require.NoError(t, err)
	return out.StateMachineArn
}

func (b *testBundle) start(t *testing.T, smArn, name, input string) string {
	t.Helper()
	out, err := b.svc.StartExecution(b.ctx, &service.StartExecutionInput{StateMachineArn: smArn, Name: &name, Input: &input})
	require.NoError(t, err)
	return out.ExecutionArn
}

func toJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func ptr[T any](v T) *T { return &v }

func TestNew(t *testing.T) {
	t.Parallel()

	_, err := service.New(nil, nil, service.Config{})
	require.Error(t, err)
}

func TestCreateStateMachine(t *testing.T) {
	t.Parallel()

	t.Run("CreatesAndDescribes", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		out, err := b.svc.CreateStateMachine(b.ctx, &service.CreateStateMachineInput{Name: "hello", Definition: passDefinition, RoleArn: roleArn})
		require.NoError(t, err)
		require.Equal(t, smPrefix+"hello", out.StateMachineArn)

		d, err := b.svc.DescribeStateMachine(b.ctx, &service.DescribeStateMachineInput{StateMachineArn: out.StateMachineArn})
		require.NoError(t, err)
		require.JSONEq(t, `{
			"stateMachineArn": "`+smPrefix+`hello", "name": "hello", "status": "ACTIVE",
			"definition": `+jsonString(passDefinition)+`, "roleArn": "`+roleArn+`", "type": "STANDARD",
			"creationDate": `+toJSON(t, out.CreationDate)+`,
			"loggingConfiguration": {"level": "OFF", "includeExecutionData": false},
			"tracingConfiguration": {"enabled": false},
			"encryptionConfiguration": {"type": "AWS_OWNED_KEY"}
		}`, toJSON(t, d))
	})

	t.Run("IdempotentWhenIdentical", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		first, err := b.svc.CreateStateMachine(b.ctx, &service.CreateStateMachineInput{Name: "dup", Definition: passDefinition, RoleArn: roleArn})
		require.NoError(t, err)
		// A different role is ignored, as on AWS.
		again, err := b.svc.CreateStateMachine(b.ctx, &service.CreateStateMachineInput{Name: "dup", Definition: passDefinition, RoleArn: roleArn + "2"})
		require.NoError(t, err)
		require.Equal(t, first, again)
	})

	t.Run("AlreadyExistsWhenDifferent", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		arn := b.create(t, "dup", passDefinition)
		// The same definition written differently is a different one.
		_, err := b.svc.CreateStateMachine(b.ctx, &service.CreateStateMachineInput{Name: "dup", Definition: strings.ReplaceAll(passDefinition, ", ", ","), RoleArn: roleArn})
		requireAPIError(t, err, "StateMachineAlreadyExists", "State Machine Already Exists: '"+arn+"'")
		_, err = b.svc.CreateStateMachine(b.ctx, &service.CreateStateMachineInput{Name: "dup", Definition: passDefinition, RoleArn: roleArn, Type: "EXPRESS"})
		requireAPIError(t, err, "StateMachineAlreadyExists", "")
	})

	t.Run("Errors", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		for _, tt := range []struct {
			name    string
			in      service.CreateStateMachineInput
			code    string
			message string
		}{
			{"MissingName", service.CreateStateMachineInput{Definition: passDefinition, RoleArn: roleArn}, "ValidationException",
				"1 validation error detected: Value null at 'name' failed to satisfy constraint: Member must not be null"},
			{"LongName", service.CreateStateMachineInput{Name: strings.Repeat("a", 81), Definition: passDefinition, RoleArn: roleArn}, "ValidationException",
				"1 validation error detected: Value '" + strings.Repeat("a", 81) + "' at 'name' failed to satisfy constraint: Member must have length less than or equal to 80"},
			{"TwoErrors", service.CreateStateMachineInput{Name: "x", Type: "FAST"}, "ValidationException",
				"3 validation errors detected: Value null at 'definition' failed to satisfy constraint: Member must not be null; " +
					"Value null at 'roleArn' failed to satisfy constraint: Member must not be null; " +
					"Value 'FAST' at 'type' failed to satisfy constraint: Member must satisfy enum value set: [STANDARD, EXPRESS]"},
			{"Whitespace", service.CreateStateMachineInput{Name: "a b", Definition: passDefinition, RoleArn: roleArn}, "InvalidName", "Invalid Name: 'a b'"},
			{"Bracket", service.CreateStateMachineInput{Name: "a<b", Definition: passDefinition, RoleArn: roleArn}, "InvalidName", "Invalid Name: 'a<b'"},
			{"Control", service.CreateStateMachineInput{Name: "a\u0085b", Definition: passDefinition, RoleArn: roleArn}, "InvalidName", ""},
			{"Colon", service.CreateStateMachineInput{Name: "a:b", Definition: passDefinition, RoleArn: roleArn}, "InvalidName", ""},
			// The transport keeps an unpaired surrogate in a name in WTF-8 form.
			{"UnpairedSurrogate", service.CreateStateMachineInput{Name: "a\xed\xa0\x80", Definition: passDefinition, RoleArn: roleArn}, "InvalidName",
				"Invalid Name: 'a\xed\xa0\x80'"},
			{"RoleNotArn", service.CreateStateMachineInput{Name: "r", Definition: passDefinition, RoleArn: "role"}, "InvalidArn", "Invalid Arn: 'Invalid ARN prefix: role'"},
			{"Definition", service.CreateStateMachineInput{Name: "d", Definition: `{"StartAt": "A"}`, RoleArn: roleArn}, "InvalidDefinition",
				"Invalid State Machine Definition: 'SCHEMA_VALIDATION_FAILED: These fields are required: [States] at /'"},
			{"Logging", service.CreateStateMachineInput{Name: "l", Definition: passDefinition, RoleArn: roleArn,
				LoggingConfiguration: &service.LoggingConfiguration{Level: ptr("ALL")}}, "InvalidLoggingConfiguration",
				"Invalid Logging Configuration: Must specify exactly one Log Destination."},
			{"LoggingNoGroup", service.CreateStateMachineInput{Name: "l", Definition: passDefinition, RoleArn: roleArn,
				LoggingConfiguration: &service.LoggingConfiguration{Level: ptr("ALL"), Destinations: []service.LogDestination{{}}}},
				"InvalidLoggingConfiguration", "Invalid Logging Configuration: Must set valid CloudWatch Log Group ARN."},
			{"LoggingNotLogGroup", service.CreateStateMachineInput{Name: "l", Definition: passDefinition, RoleArn: roleArn,
				LoggingConfiguration: logTo("ERROR", "arn:aws:sqs:us-east-1:123456789012:queue")},
				"InvalidLoggingConfiguration", "Invalid Logging Configuration: Provided ARN is not CloudWatch Logs Log Group ARN."},
			{"LoggingNoQualifier", service.CreateStateMachineInput{Name: "l", Definition: passDefinition, RoleArn: roleArn,
				LoggingConfiguration: logTo("FATAL", "arn:aws:logs:us-east-1:123456789012:log-group:/aws/vendedlogs/states/l")},
				"InvalidLoggingConfiguration", "Invalid Logging Configuration: Log Group ARN must be provided with '*' qualifier."},
			{"LoggingTwoGroups", service.CreateStateMachineInput{Name: "l", Definition: passDefinition, RoleArn: roleArn,
				LoggingConfiguration: &service.LoggingConfiguration{Level: ptr("ALL"), Destinations: append(logTo("ALL", logGroupArn).Destinations, logTo("ALL", logGroupArn).Destinations...)}},
				"InvalidLoggingConfiguration", "Invalid Logging Configuration: Must specify exactly one Log Destination."},
			{"VersionDescription", service.CreateStateMachineInput{Name: "v", Definition: passDefinition, RoleArn: roleArn, VersionDescription: "x"},
				"ValidationException", "Version description can only be set when publish is true"},
			{"KMS", service.CreateStateMachineInput{Name: "k", Definition: passDefinition, RoleArn: roleArn,
				EncryptionConfiguration: &service.EncryptionConfiguration{Type: "CUSTOMER_MANAGED_KMS_KEY"}}, "InvalidEncryptionConfiguration", ""},
			{"TooManyTags", service.CreateStateMachineInput{Name: "t", Definition: passDefinition, RoleArn: roleArn, Tags: manyTags(51)}, "TooManyTags", ""},
			{"EmptyTagKey", service.CreateStateMachineInput{Name: "t", Definition: passDefinition, RoleArn: roleArn, Tags: []service.Tag{{Key: ptr("")}}},
				"ValidationException", "1 validation error detected: Value null at 'tags.1.member.key' failed to satisfy constraint: Member must not be null"},
		} {
			_, err := b.svc.CreateStateMachine(b.ctx, &tt.in)
			requireAPIError(t, err, tt.code, tt.message)
		}
	})

	t.Run("ExpressRejectsCallbacks", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		def := `{"StartAt": "P", "States": {"P": {"Type": "Task", "Resource": "arn:aws:states:::sns:publish.waitForTaskToken", "Parameters": {"TaskToken.$": "$$.Task.Token"}, "End": true}}}`
		_, err := b.svc.CreateStateMachine(b.ctx, &service.CreateStateMachineInput{Name: "e", Definition: def, RoleArn: roleArn, Type: "EXPRESS"})
		requireAPIError(t, err, "InvalidDefinition", "Invalid State Machine Definition: 'SCHEMA_VALIDATION_FAILED: Express state machine does not support '.waitForTaskToken' service integration  at /States/P/Resource'")
	})

	t.Run("TagsAndConfigurations", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		arn := b.create(t, "cfg", passDefinition, func(in *service.CreateStateMachineInput) {
			in.Tags = []service.Tag{{Key: ptr("k"), Value: ptr("v")}}
			in.LoggingConfiguration = &service.LoggingConfiguration{Destinations: []service.LogDestination{}}
			in.TracingConfiguration = &service.TracingConfiguration{Enabled: ptr(true)}
		})
		tags, err := b.svc.ListTagsForResource(b.ctx, &service.ListTagsForResourceInput{ResourceArn: arn})
		require.NoError(t, err)
		require.JSONEq(t, `{"tags": [{"key": "k", "value": "v"}]}`, toJSON(t, tags))
		d, err := b.svc.DescribeStateMachine(b.ctx, &service.DescribeStateMachineInput{StateMachineArn: arn})
		require.NoError(t, err)
		require.JSONEq(t, `{"level": "OFF", "includeExecutionData": false, "destinations": []}`, toJSON(t, d.LoggingConfiguration))
		require.JSONEq(t, `{"enabled": true}`, toJSON(t, d.TracingConfiguration))
	})
}

const logGroupArn = "arn:aws:logs:us-east-1:123456789012:log-group:/aws/vendedlogs/states/sm:*"

// logTo is a logging configuration of level to one log group.
func logTo(level, groupArn string) *service.LoggingConfiguration {
	return &service.LoggingConfiguration{Level: ptr(level), Destinations: []service.LogDestination{
		{CloudWatchLogsLogGroup: &service.CloudWatchLogsLogGroup{LogGroupArn: ptr(groupArn)}},
	}}
}

func manyTags(n int) []service.Tag {
	tags := make([]service.Tag, n)
	for i := range tags {
		tags[i] = service.Tag{Key: ptr(fmt.Sprintf("k%d", i)), Value: ptr("v")}
	}
	return tags
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestDescribeStateMachine(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.create(t, "sm", passDefinition)

	for _, tt := range []struct {
		arn     string
		code    string
		message string
	}{
		{"not_a_valid_arn", "InvalidArn", "Invalid Arn: 'Invalid ARN prefix: not_a_valid_arn'"},
		{"arn:aws:states:us-east-1:123456789012:execution:sm:x", "InvalidArn", "Invalid Arn: 'Resource type not valid in this context: execution'"},
		{"arn:aws:states:us-east-1:123456789012:activity:a", "InvalidArn", "Invalid Arn: 'Resource type not valid in this context: activity'"},
		{"arn:aws:sqs:us-east-1:123456789012:stateMachine:sm", "InvalidArn", ""},
		{"arn:aws:states:us-east-1:123456789012:stateMachine:missing", "StateMachineDoesNotExist",
			"State Machine Does Not Exist: 'arn:aws:states:us-east-1:123456789012:stateMachine:missing'"},
		{"arn:aws:states:eu-west-1:123456789012:stateMachine:sm", "StateMachineDoesNotExist", ""},
		{"arn:aws:states:us-east-1:210987654321:stateMachine:sm", "StateMachineDoesNotExist", ""},
		{"arn:aws:states:us-east-1:123456789012:stateMachine:sm:1", "StateMachineDoesNotExist", ""},
		{"", "ValidationException", "1 validation error detected: Value null at 'stateMachineArn' failed to satisfy constraint: Member must not be null"},
	} {
		_, err := b.svc.DescribeStateMachine(b.ctx, &service.DescribeStateMachineInput{StateMachineArn: tt.arn})
		requireAPIError(t, err, tt.code, tt.message)
	}

	d, err := b.svc.DescribeStateMachine(b.ctx, &service.DescribeStateMachineInput{StateMachineArn: smPrefix + "sm", IncludedData: "METADATA_ONLY"})
	require.NoError(t, err)
	require.Empty(t, d.Definition)
}

func TestUpdateStateMachine(t *testing.T) {
	t.Parallel()

	t.Run("Revisions", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		arn := b.create(t, "sm", passDefinition)
		def2 := strings.Replace(passDefinition, "argument1", "AfterUpdate1", 1)
		up, err := b.svc.UpdateStateMachine(b.ctx, &service.UpdateStateMachineInput{StateMachineArn: arn, Definition: &def2})
		require.NoError(t, err)
		require.NotEmpty(t, up.RevisionID)

		d, err := b.svc.DescribeStateMachine(b.ctx, &service.DescribeStateMachineInput{StateMachineArn: arn})
		require.NoError(t, err)
		require.Equal(t, def2, d.Definition)
		require.Equal(t, up.RevisionID, d.RevisionID)

		// The same parameters again keep the revision.
		again, err := b.svc.UpdateStateMachine(b.ctx, &service.UpdateStateMachineInput{StateMachineArn: arn, Definition: &def2, RoleArn: ptr(roleArn)})
		require.NoError(t, err)
		require.Equal(t, up.RevisionID, again.RevisionID)

		// A configuration alone changes no revision either.
		cfg, err := b.svc.UpdateStateMachine(b.ctx, &service.UpdateStateMachineInput{StateMachineArn: arn, TracingConfiguration: &service.TracingConfiguration{Enabled: ptr(true)}})
		require.NoError(t, err)
		require.Equal(t, up.RevisionID, cfg.RevisionID)

		role, err := b.svc.UpdateStateMachine(b.ctx, &service.UpdateStateMachineInput{StateMachineArn: arn, RoleArn: ptr(roleArn + "2")})
		require.NoError(t, err)
		require.NotEqual(t, up.RevisionID, role.RevisionID)

		// A new logging configuration is a new revision (AWS's recording of
		// test_update_logging_configuration); the same one again is not.
		logged, err := b.svc.UpdateStateMachine(b.ctx, &service.UpdateStateMachineInput{StateMachineArn: arn, LoggingConfiguration: logTo("ALL", logGroupArn)})
		require.NoError(t, err)
		require.NotEqual(t, role.RevisionID, logged.RevisionID)
		same, err := b.svc.UpdateStateMachine(b.ctx, &service.UpdateStateMachineInput{StateMachineArn: arn, LoggingConfiguration: logTo("ALL", logGroupArn)})
		require.NoError(t, err)
		require.Equal(t, logged.RevisionID, same.RevisionID)
		d, err = b.svc.DescribeStateMachine(b.ctx, &service.DescribeStateMachineInput{StateMachineArn: arn})
		require.NoError(t, err)
		require.Equal(t, logged.RevisionID, d.RevisionID)
		require.JSONEq(t, `{"level": "ALL", "includeExecutionData": false, "destinations": [{"cloudWatchLogsLogGroup": {"logGroupArn": "`+logGroupArn+`"}}]}`,
			toJSON(t, d.LoggingConfiguration))
	})

	t.Run("Errors", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		arn := b.create(t, "sm", passDefinition)
		_, err := b.svc.UpdateStateMachine(b.ctx, &service.UpdateStateMachineInput{StateMachineArn: arn})
		requireAPIError(t, err, "MissingRequiredParameter", "Either the definition, the role ARN, the LoggingConfiguration, or the TracingConfiguration must be specified")
		_, err = b.svc.UpdateStateMachine(b.ctx, &service.UpdateStateMachineInput{StateMachineArn: smPrefix + "missing", Definition: ptr(passDefinition)})
		requireAPIError(t, err, "StateMachineDoesNotExist", "")
		_, err = b.svc.UpdateStateMachine(b.ctx, &service.UpdateStateMachineInput{StateMachineArn: arn, Definition: ptr(`{}`)})
		requireAPIError(t, err, "InvalidDefinition", "Invalid State Machine Definition: 'SCHEMA_VALIDATION_FAILED: These fields are required: [States, StartAt] at /'")
		_, err = b.svc.UpdateStateMachine(b.ctx, &service.UpdateStateMachineInput{StateMachineArn: arn, LoggingConfiguration: &service.LoggingConfiguration{Level: ptr("ERROR")}})
		requireAPIError(t, err, "InvalidLoggingConfiguration", "")
	})
}

func TestDeleteStateMachine(t *testing.T) {
	t.Parallel()
	b := setup(t)
	arn := b.create(t, "sm", passDefinition)
	_, err := b.svc.TagResource(b.ctx, &service.TagResourceInput{ResourceArn: arn, Tags: []service.Tag{{Key: ptr("k"), Value: ptr("v")}}})
	require.NoError(t, err)

	_, err = b.svc.DeleteStateMachine(b.ctx, &service.DeleteStateMachineInput{StateMachineArn: arn})
	require.NoError(t, err)
	_, err = b.svc.DescribeStateMachine(b.ctx, &service.DescribeStateMachineInput{StateMachineArn: arn})
	requireAPIError(t, err, "StateMachineDoesNotExist", "")

	// Deleting what does not exist succeeds, as on AWS.
	_, err = b.svc.DeleteStateMachine(b.ctx, &service.DeleteStateMachineInput{StateMachineArn: arn})
	require.NoError(t, err)
	_, err = b.svc.DeleteStateMachine(b.ctx, &service.DeleteStateMachineInput{StateMachineArn: "nope"})
	requireAPIError(t, err, "InvalidArn", "")

	// The name can be used again, without the old tags.
	b.create(t, "sm", passDefinition)
	tags, err := b.svc.ListTagsForResource(b.ctx, &service.ListTagsForResourceInput{ResourceArn: arn})
	require.NoError(t, err)
	require.Empty(t, tags.Tags)
}

func TestListStateMachines(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, name := range []string{"c", "a", "e", "b", "d"} {
		b.create(t, name, passDefinition)
	}
	var names []string
	var token *string
	pages := 0
	for {
		out, err := b.svc.ListStateMachines(b.ctx, &service.ListStateMachinesInput{MaxResults: ptr(2), NextToken: token})
		require.NoError(t, err)
		pages++
		for _, sm := range out.StateMachines {
			names = append(names, sm.Name)
			require.Equal(t, "STANDARD", sm.Type)
		}
		if out.NextToken == "" {
			break
		}
		token = &out.NextToken
	}
	require.Equal(t, []string{"a", "b", "c", "d", "e"}, names)
	require.Equal(t, 3, pages)

	all, err := b.svc.ListStateMachines(b.ctx, &service.ListStateMachinesInput{})
	require.NoError(t, err)
	require.Len(t, all.StateMachines, 5)
	require.Empty(t, all.NextToken)

	_, err = b.svc.ListStateMachines(b.ctx, &service.ListStateMachinesInput{MaxResults: ptr(1001)})
	requireAPIError(t, err, "ValidationException", "1 validation error detected: Value '1001' at 'maxResults' failed to satisfy constraint: Member must have value less than or equal to 1000")
	_, err = b.svc.ListStateMachines(b.ctx, &service.ListStateMachinesInput{NextToken: ptr("garbage!")})
	requireAPIError(t, err, "InvalidToken", "Invalid Token: 'Invalid token'")
	_, err = b.svc.ListStateMachines(b.ctx, &service.ListStateMachinesInput{NextToken: ptr(strings.Repeat("x", 1025))})
	requireAPIError(t, err, "ValidationException", "")
}

func TestValidateStateMachineDefinition(t *testing.T) {
	t.Parallel()
	b := setup(t)

	out, err := b.svc.ValidateStateMachineDefinition(b.ctx, &service.ValidateStateMachineDefinitionInput{Definition: passDefinition})
	require.NoError(t, err)
	require.JSONEq(t, `{"result": "OK", "diagnostics": [], "truncated": false}`, toJSON(t, out))

	out, err = b.svc.ValidateStateMachineDefinition(b.ctx, &service.ValidateStateMachineDefinitionInput{Definition: `{}`})
	require.NoError(t, err)
	require.JSONEq(t, `{"result": "FAIL", "truncated": false, "diagnostics": [
		{"severity": "ERROR", "code": "SCHEMA_VALIDATION_FAILED", "message": "These fields are required: [States, StartAt]", "location": "/"}]}`, toJSON(t, out))

	bad := `{"StartAt": "A", "States": {"A": {"Type": "Pass", "Next": "X"}, "B": {"Type": "Pass", "Next": "Y"}, "C": {"Type": "Pass", "Next": "Z"}}}`
	out, err = b.svc.ValidateStateMachineDefinition(b.ctx, &service.ValidateStateMachineDefinitionInput{Definition: bad, MaxResults: ptr(1)})
	require.NoError(t, err)
	require.Equal(t, "FAIL", out.Result)
	require.Len(t, out.Diagnostics, 1)
	require.True(t, out.Truncated)

	_, err = b.svc.ValidateStateMachineDefinition(b.ctx, &service.ValidateStateMachineDefinitionInput{Definition: passDefinition, MaxResults: ptr(101)})
	requireAPIError(t, err, "ValidationException", "")
}

// A failure-policy tag must name a state of the definition that the
// policy applies to, at CreateStateMachine, TagResource and
// UpdateStateMachine (which may not drop a state a policy names).
func TestPolicyTagsNameStates(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const def = `{"StartAt": "Fan", "States": {
		"Fan": {"Type": "Parallel", "Next": "Each", "Branches": [{"StartAt": "Inner", "States": {"Inner": {"Type": "Pass", "End": true}}}]},
		"Each": {"Type": "Map", "End": true, "ItemProcessor": {"StartAt": "Deep", "States": {"Deep": {"Type": "Pass", "End": true}}}}}}`
	tag := func(k, v string) service.Tag { return service.Tag{Key: ptr("stepwise:policy/" + k), Value: ptr(v)} }
	create := func(name string, tags ...service.Tag) error {
		_, err := b.svc.CreateStateMachine(b.ctx, &service.CreateStateMachineInput{Name: name, Definition: def, RoleArn: roleArn, Tags: tags})
		return err
	}
	requireAPIError(t, create("a", tag("Nope", "finish-running")), "ValidationException",
		`Invalid failure policy: the tag "stepwise:policy/Nope" names the state "Nope", which the definition does not have`)
	requireAPIError(t, create("b", tag("Inner", "finish-running")), "ValidationException",
		`Invalid failure policy: the tag "stepwise:policy/Inner" sets finish-running on the state "Inner", a Pass state: it applies to Parallel and Map states`)
	requireAPIError(t, create("c", tag("Fan", "retry-failed-items")), "ValidationException",
		`Invalid failure policy: the tag "stepwise:policy/Fan" sets retry-failed-items on the state "Fan", a Parallel state: it applies to Map states`)
	require.NoError(t, create("d", tag("Fan", "finish-running"), tag("Each", "finish-running,retry-failed-items")))
	sm := smPrefix + "d"

	_, err := b.svc.TagResource(b.ctx, &service.TagResourceInput{ResourceArn: sm, Tags: []service.Tag{tag("Deep", "retry-failed-items")}})
	requireAPIError(t, err, "ValidationException",
		`Invalid failure policy: the tag "stepwise:policy/Deep" sets retry-failed-items on the state "Deep", a Pass state: it applies to Map states`)
	_, err = b.svc.TagResource(b.ctx, &service.TagResourceInput{ResourceArn: sm, Tags: []service.Tag{tag("Gone", "finish-running")}})
	requireAPIError(t, err, "ValidationException",
		`Invalid failure policy: the tag "stepwise:policy/Gone" names the state "Gone", which the definition does not have`)

	// An update that drops a state a policy names is refused until the
	// tag goes.
	smaller := `{"StartAt": "Fan", "States": {"Fan": {"Type": "Parallel", "End": true, "Branches": [{"StartAt": "Inner", "States": {"Inner": {"Type": "Pass", "End": true}}}]}}}`
	_, err = b.svc.UpdateStateMachine(b.ctx, &service.UpdateStateMachineInput{StateMachineArn: sm, Definition: &smaller})
	requireAPIError(t, err, "ValidationException",
		`Invalid failure policy: the tag "stepwise:policy/Each" names the state "Each", which the definition does not have`)
	_, err = b.svc.UntagResource(b.ctx, &service.UntagResourceInput{ResourceArn: sm, TagKeys: []string{"stepwise:policy/Each"}})
	require.NoError(t, err)
	_, err = b.svc.UpdateStateMachine(b.ctx, &service.UpdateStateMachineInput{StateMachineArn: sm, Definition: &smaller})
	require.NoError(t, err)
}

// A start reads its state machine's failure policies from its tags; the
// read is reused for a moment, but a tag change on this node is seen by
// the next start at once.
func TestStartSeesPolicyTagsAtOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const def = `{"StartAt": "Each", "States": {"Each": {"Type": "Map", "End": true,
		"ItemProcessor": {"StartAt": "P", "States": {"P": {"Type": "Pass", "End": true}}}}}}`
	_, err := b.svc.CreateStateMachine(b.ctx, &service.CreateStateMachineInput{Name: "pol", Definition: def, RoleArn: roleArn})
	require.NoError(t, err)
	sm := smPrefix + "pol"
	prev := b.engine.StartExecutionFunc
	var seen []interp.Policies
	b.engine.StartExecutionFunc = func(ctx context.Context, p *start.Params) (*store.Execution, error) {
		seen = append(seen, p.Policies)
		return prev(ctx, p)
	}
	run := func() {
		t.Helper()
		_, err := b.svc.StartExecution(b.ctx, &service.StartExecutionInput{StateMachineArn: sm})
		require.NoError(t, err)
	}
	run()
	_, err = b.svc.TagResource(b.ctx, &service.TagResourceInput{ResourceArn: sm,
		Tags: []service.Tag{{Key: ptr("stepwise:policy/Each"), Value: ptr("retry-failed-items")}}})
	require.NoError(t, err)
	run()
	run()
	_, err = b.svc.UntagResource(b.ctx, &service.UntagResourceInput{ResourceArn: sm, TagKeys: []string{"stepwise:policy/Each"}})
	require.NoError(t, err)
	run()
	require.Len(t, seen, 4)
	require.Empty(t, seen[0], "no tags yet")
	require.NotEmpty(t, seen[1], "the tag just put")
	require.Equal(t, seen[1], seen[2])
	require.Empty(t, seen[3], "the tag just taken off")
}

// A NextToken given out before the front door wrote the tokens,
// {"k":"sm","a":<name>} in base64, pages on, and the tokens given now
// have that very form.
func TestListTokenOfBefore(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, name := range []string{"a", "b", "c"} {
		b.create(t, name, passDefinition)
	}
	old := base64.RawURLEncoding.EncodeToString([]byte(`{"k":"sm","a":"a"}`))
	out, err := b.svc.ListStateMachines(b.ctx, &service.ListStateMachinesInput{NextToken: &old})
	require.NoError(t, err)
	require.Len(t, out.StateMachines, 2)
	require.Equal(t, "b", out.StateMachines[0].Name)

	first, err := b.svc.ListStateMachines(b.ctx, &service.ListStateMachinesInput{MaxResults: ptr(1)})
	require.NoError(t, err)
	require.Equal(t, old, first.NextToken)
}
