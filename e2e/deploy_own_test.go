package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/require"

	"stepwise/integration/integrationtest"
)

// TestDeployKilledMidwayLeavesNoOrphan kills the server with SIGKILL the
// moment a queue of the deploy shows at moto (made, not yet recorded),
// restarts it on the same database, deploys again and deletes the stack:
// every queue is made once and none is left behind.
func TestDeployKilledMidwayLeavesNoOrphan(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	moto := integrationtest.Moto(t)
	sq := sqs.NewFromConfig(awsConfig(t), func(o *sqs.Options) { o.BaseEndpoint = aws.String(moto) })
	const n = 5
	for _, killAt := range []int{1, 3, 5} {
		prefix := fmt.Sprintf("k%d-", killAt)
		queues := func() []string {
			out, err := sq.ListQueues(ctx, &sqs.ListQueuesInput{QueueNamePrefix: aws.String(prefix)})
			require.NoError(t, err)
			return out.QueueUrls
		}
		var tmpl strings.Builder
		tmpl.WriteString("Resources:\n")
		for i := range n {
			dep := ""
			if i > 0 {
				dep = fmt.Sprintf(", DependsOn: Q%d", i-1)
			}
			fmt.Fprintf(&tmpl, "  Q%d: {Type: AWS::SQS::Queue%s, Properties: {QueueName: %s%d}}\n", i, dep, prefix, i)
		}
		template := filepath.Join(t.TempDir(), "queues.yaml")
		require.NoError(t, os.WriteFile(template, []byte(tmpl.String()), 0o644))
		db := filepath.Join(t.TempDir(), "stepwise.db")

		s := startServer(t, db, "--aws-endpoint", moto)
		deploying := exec.Command(binary, "deploy", template, "--endpoint", s.url())
		require.NoError(t, deploying.Start())
		deadline := time.Now().Add(time.Minute)
		for len(queues()) < killAt && time.Now().Before(deadline) {
		}
		s.kill()
		_ = deploying.Wait()
		require.NotEmpty(t, queues())

		s = startServer(t, db, "--aws-endpoint", moto)
		out, code := stepwiseCLI(t, "deploy", template, "--endpoint", s.url())
		require.Equal(t, 0, code, out)
		require.Len(t, queues(), n, "each queue made once")
		out, code = stepwiseCLI(t, "deploy", template, "--endpoint", s.url(), "--delete")
		require.Equal(t, 0, code, out)
		require.Empty(t, queues(), "no queue outlives the stack (killed at queue %d)", killAt)
		s.kill()
	}
}

// TestDeployRefusesAHandMadeActivity: a deploy naming an activity made by
// hand fails with AlreadyExists and --delete leaves it; --adopt takes it,
// and then --delete deletes it.
func TestDeployRefusesAHandMadeActivity(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := startServer(t, filepath.Join(t.TempDir(), "stepwise.db"))
	c := s.client(t)
	_, err := c.CreateActivity(ctx, &sfn.CreateActivityInput{Name: aws.String("approve")})
	require.NoError(t, err)
	template := filepath.Join(t.TempDir(), "app.yaml")
	require.NoError(t, os.WriteFile(template, []byte("Resources:\n  Approve: {Type: AWS::StepFunctions::Activity, Properties: {Name: approve}}\n"), 0o644))
	activities := func() int {
		out, err := c.ListActivities(ctx, &sfn.ListActivitiesInput{})
		require.NoError(t, err)
		return len(out.Activities)
	}

	out, code := stepwiseCLI(t, "deploy", template, "--endpoint", s.url())
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "resource Approve (AWS::StepFunctions::Activity): approve already exists (HandlerErrorCode: AlreadyExists); deploy with --adopt to take it over")
	out, code = stepwiseCLI(t, "deploy", template, "--endpoint", s.url(), "--delete")
	require.Equal(t, 1, code, out)
	require.Equal(t, 1, activities())

	out, code = stepwiseCLI(t, "deploy", template, "--endpoint", s.url(), "--adopt")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "adopted   Approve (AWS::StepFunctions::Activity)")
	out, code = stepwiseCLI(t, "deploy", template, "--endpoint", s.url(), "--delete")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "deleted   Approve")
	require.Zero(t, activities())
}
