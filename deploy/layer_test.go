package deploy

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLayersReachTheirFunctions(t *testing.T) {
	b := newTestBed(t)
	base := codeFolder(t)
	require.NoError(t, os.MkdirAll(filepath.Join(base, "layer", "python"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(base, "layer", "python", "shared.py"), []byte("X = 1\n"), 0o644))
	tmpl := `
Transform: AWS::Serverless-2016-10-31
Globals:
  Function:
    Layers: [!Ref Shared]
Resources:
  Shared:
    Type: AWS::Serverless::LayerVersion
    Properties: {LayerName: shared, ContentUri: layer/, CompatibleRuntimes: [python3.12]}
  Fn:
    Type: AWS::Serverless::Function
    Properties: {CodeUri: src, Handler: app.handler, Runtime: python3.12}
  Other:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: src
      Handler: app.handler
      Runtime: python3.12
      Layers: [!Ref Shared, arn:aws:lambda:us-east-1:999999999999:layer:far:3]
Outputs:
  Layer: {Value: !Ref Shared}
`
	r, err := b.deployAt(t, tmpl, base, nil)
	require.NoError(t, err)
	require.Equal(t, "arn:aws:lambda:us-east-1:123456789012:layer:shared:1", outputs(r)["Layer"])
	layer := filepath.Join(base, "layer")
	require.Equal(t, []string{layer}, b.fns.fns["app-Fn"].Layers)
	require.Equal(t, []string{layer}, b.fns.fns["app-Other"].Layers)
	require.Equal(t, []string{"Other (AWS::Serverless::Function): layer arn:aws:lambda:us-east-1:999999999999:layer:far:3 is not available locally (only the template's layers are): the function runs without it"}, r.Warnings)

	// The layer's content changes: a new version, and its functions are
	// put again.
	require.NoError(t, os.WriteFile(filepath.Join(base, "layer", "python", "shared.py"), []byte("X = 2\n"), 0o644))
	r, err = b.deployAt(t, tmpl, base, nil)
	require.NoError(t, err)
	require.Equal(t, "arn:aws:lambda:us-east-1:123456789012:layer:shared:2", outputs(r)["Layer"])
	require.Contains(t, actions(r), "Fn updated")
	require.Contains(t, actions(r), "Other updated")
}
