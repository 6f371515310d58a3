package deploy

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/scheduler"
)

const fileTriggers = `Transform: AWS::Serverless-2016-10-31
Parameters:
  Folder: {Type: String}
  Pattern: {Type: String, Default: "*.csv"}
Resources:
  Net:
    Type: AWS::StepFunctions::StateMachine
    Properties:
      Definition: {StartAt: P, States: {P: {Type: Pass, End: true}}}
  Drops:
    Type: Stepwise::Trigger::FileArrival
    Properties:
      Folder: !Ref Folder
      Pattern: !Ref Pattern
      StateMachineArn: !Ref Net
      StableSeconds: "5"
  Flow:
    Type: AWS::Serverless::StateMachine
    Properties:
      Definition: {StartAt: P, States: {P: {Type: Pass, End: true}}}
      Events:
        Ledger: {Type: FileArrival, Properties: {Bucket: drops, Prefix: in/, PollSeconds: 30}}
Outputs:
  Drops: {Value: !Ref Drops}
`

// TestFileTriggersDeployed: a template's Stepwise::Trigger::FileArrival
// and a SAM state machine's FileArrival event are triggers made, updated
// and deleted with the stack; a folder trigger deployed to a server
// without --file-trigger-root fails saying so.
func TestFileTriggersDeployed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	root := t.TempDir()
	folder := filepath.Join(root, "in")
	params := map[string]string{"Folder": folder}
	objects := func(context.Context, string, string) ([]scheduler.Object, error) { return nil, nil }

	bare := newTestBedWith(t, scheduler.Config{Objects: objects})
	_, err := bare.deploy(t, fileTriggers, params)
	require.ErrorContains(t, err, "resource Drops (Stepwise::Trigger::FileArrival)")
	require.ErrorContains(t, err, "File trigger folder "+folder+" is refused: this server takes no local folder triggers; start it with --file-trigger-root DIR")

	b := newTestBedWith(t, scheduler.Config{FileTriggerRoots: []string{root}, Objects: objects})
	sched := b.d.Scheduler
	r, err := b.deploy(t, fileTriggers, params)
	require.NoError(t, err)
	require.Equal(t, []string{"Flow created", "FlowLedger created", "Net created", "Drops created"}, actions(r))
	require.Equal(t, "app-Drops", outputs(r)["Drops"])
	tr, err := sched.GetFileTrigger(ctx, "app-Drops")
	require.NoError(t, err)
	require.Equal(t, folder, tr.Folder)
	require.Equal(t, "*.csv", tr.Pattern)
	require.Equal(t, 5, tr.StableSeconds, "a number given as a string")
	require.Equal(t, "arn:aws:states:us-east-1:123456789012:stateMachine:app-Net", tr.StateMachineArn)
	tr, err = sched.GetFileTrigger(ctx, "app-FlowLedger")
	require.NoError(t, err)
	require.Equal(t, "drops", tr.Bucket)
	require.Equal(t, "in/", tr.Prefix)
	require.Equal(t, 30, tr.PollSeconds)
	require.Equal(t, "arn:aws:states:us-east-1:123456789012:stateMachine:app-Flow", tr.StateMachineArn)

	r, err = b.deploy(t, fileTriggers, params)
	require.NoError(t, err)
	require.Equal(t, []string{"Flow unchanged", "FlowLedger unchanged", "Net unchanged", "Drops unchanged"}, actions(r))
	r, err = b.deploy(t, fileTriggers, map[string]string{"Folder": folder, "Pattern": "*.txt"})
	require.NoError(t, err)
	require.Equal(t, []string{"Flow unchanged", "FlowLedger unchanged", "Net unchanged", "Drops updated"}, actions(r))
	tr, err = sched.GetFileTrigger(ctx, "app-Drops")
	require.NoError(t, err)
	require.Equal(t, "*.txt", tr.Pattern)

	// The event gone: its trigger goes.
	r, err = b.deploy(t, strings.Replace(fileTriggers, "      Events:\n        Ledger: {Type: FileArrival, Properties: {Bucket: drops, Prefix: in/, PollSeconds: 30}}\n", "", 1), params)
	require.NoError(t, err)
	require.Contains(t, actions(r), "FlowLedger deleted")
	_, err = sched.GetFileTrigger(ctx, "app-FlowLedger")
	require.True(t, isSchedulerCode(err, "ResourceNotFoundException"), err)

	r, err = b.d.Delete(ctx, "app")
	require.NoError(t, err)
	require.Contains(t, actions(r), "Drops deleted")
	list, err := sched.ListFileTriggers(ctx)
	require.NoError(t, err)
	require.Empty(t, list)
}
