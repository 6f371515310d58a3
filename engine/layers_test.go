package engine

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The engine sits below the service and the wire: it declares the types it
// exchanges, and the service adapts to them (docs/design.md, its opening
// paragraph).
func TestEngineDependsOnNothingAbove(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", "stepwise/engine").Output()
	require.NoError(t, err)
	for _, pkg := range strings.Fields(string(out)) {
		for _, above := range []string{"stepwise/service", "stepwise/awsjson", "stepwise/cli", "stepwise/integration", "stepwise/teststate"} {
			require.False(t, pkg == above || strings.HasPrefix(pkg, above+"/"), "engine depends on %s", pkg)
		}
	}
}
