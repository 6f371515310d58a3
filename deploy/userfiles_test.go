package deploy

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/deploy/cfn"
)

// promptly runs f and fails the test if it has not returned within a few
// seconds (a read of a FIFO hangs, one of /dev/zero runs out of memory).
func promptly(t *testing.T, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("still reading after 10s")
		return nil
	}
}

func TestDefinitionFileIsReadOnlyIfRegularAndAtMost1MiB(t *testing.T) {
	b := newTestBed(t)
	dir := t.TempDir()
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "fifo.json"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "big.json"), []byte(`{"Comment":"`+strings.Repeat("x", 1<<20)+`"}`), 0o600))
	for _, tc := range []struct{ uri, want string }{
		{"/dev/zero", "resource M (AWS::Serverless::StateMachine): Properties.DefinitionUri: the definition file: /dev/zero is not a regular file (a device)"},
		{"fifo.json", "Properties.DefinitionUri: the definition file: " + filepath.Join(dir, "fifo.json") + " is not a regular file (a named pipe)"},
		{".", "Properties.DefinitionUri: the definition file: " + dir + " is not a regular file (a directory)"},
		{"big.json", "Properties.DefinitionUri: " + filepath.Join(dir, "big.json") + ": State Machine definition file cannot exceed 1MB."},
	} {
		tp, err := cfn.Parse([]byte("Transform: AWS::Serverless-2016-10-31\nResources:\n  M:\n    Type: AWS::Serverless::StateMachine\n    Properties: {DefinitionUri: " + tc.uri + "}\n"))
		require.NoError(t, err)
		err = promptly(t, func() error {
			_, err := b.d.Deploy(context.Background(), tp, Options{StackName: "app", BaseDir: dir})
			return err
		})
		require.ErrorContains(t, err, tc.want, tc.uri)
	}
}

func TestReadAssemblyReadsOnlyARegularManifest(t *testing.T) {
	t.Parallel()
	fifo := setupAssembly(t)
	require.NoError(t, syscall.Mkfifo(filepath.Join(fifo.dir, "manifest.json"), 0o600))
	zero := setupAssembly(t)
	require.NoError(t, os.Symlink("/dev/zero", filepath.Join(zero.dir, "manifest.json")))
	big := setupAssembly(t)
	big.write(t, "manifest.json", `{"version":"`+strings.Repeat("3", maxManifestFile)+`"}`)
	for _, tc := range []struct {
		b    *assemblyBundle
		want string
	}{
		{fifo, filepath.Join(fifo.dir, "manifest.json") + " is not a regular file (a named pipe)"},
		{zero, filepath.Join(zero.dir, "manifest.json") + " is not a regular file (a device)"},
		{big, filepath.Join(big.dir, "manifest.json") + " is larger than 16 MiB, the most read of such a file"},
	} {
		err := promptly(t, func() error {
			_, err := ReadAssembly(tc.b.dir)
			return err
		})
		require.EqualError(t, err, tc.want)
	}
}

func TestFunctionCodeZipIsHashedOnlyIfRegular(t *testing.T) {
	b := newTestBed(t)
	base := codeFolder(t)
	require.NoError(t, syscall.Mkfifo(filepath.Join(base, "pipe.zip"), 0o600))
	require.NoError(t, os.Symlink("/dev/zero", filepath.Join(base, "zero.zip")))
	for name, kind := range map[string]string{"pipe.zip": "a named pipe", "zero.zip": "a device"} {
		err := promptly(t, func() error {
			_, err := b.deployAt(t, "Resources:\n  Fn: {Type: AWS::Serverless::Function, Properties: {Runtime: python3.12, Handler: a.b, CodeUri: "+name+"}}\n", base, nil)
			return err
		})
		require.ErrorContains(t, err, "resource Fn (AWS::Serverless::Function): Properties.CodeUri: "+filepath.Join(base, name)+" is not a regular file ("+kind+")")
	}
}
