package deploy

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/deploy/cfn"
)

// BenchmarkDeploy times deploying a template of 50 state machines, each
// with an activity it waits on, onto a server on SQLite: the first
// deploy (100 resources made) and a deploy of the same template again
// (each resource looked at, nothing written).
//
//	go test -run '^$' -bench Deploy -benchtime 20x ./deploy/
func BenchmarkDeploy(b *testing.B) {
	var t strings.Builder
	t.WriteString("Resources:\n")
	for i := range 50 {
		fmt.Fprintf(&t, "  Act%d: {Type: AWS::StepFunctions::Activity, Properties: {Name: act-%d}}\n", i, i)
		fmt.Fprintf(&t, "  Flow%d:\n    Type: AWS::StepFunctions::StateMachine\n    Properties:\n      DefinitionString: !Sub '{\"StartAt\": \"W\", \"States\": {\"W\": {\"Type\": \"Task\", \"Resource\": \"${Act%d}\", \"End\": true}}}'\n", i, i)
	}
	tmpl, err := cfn.Parse([]byte(t.String()))
	require.NoError(b, err)
	ctx := context.Background()
	b.Run("first", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			bed := newTestBed(b)
			b.StartTimer()
			_, err := bed.d.Deploy(ctx, tmpl, Options{StackName: "bench"})
			require.NoError(b, err)
		}
	})
	b.Run("unchanged", func(b *testing.B) {
		bed := newTestBed(b)
		_, err := bed.d.Deploy(ctx, tmpl, Options{StackName: "bench"})
		require.NoError(b, err)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			r, err := bed.d.Deploy(ctx, tmpl, Options{StackName: "bench"})
			require.NoError(b, err)
			if r.Changed() {
				b.Fatal("an unchanged template changed something")
			}
		}
	})
}
