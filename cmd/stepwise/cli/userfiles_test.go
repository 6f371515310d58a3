package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/internal/testkit/hostile"
)

// executePromptly is execute, failing the test if the command has not
// ended within a few seconds (a read of a FIFO hangs, one of /dev/zero
// runs out of memory).
func executePromptly(t *testing.T, args ...string) (string, int) {
	t.Helper()
	type result struct {
		errOut string
		code   int
	}
	done := make(chan result, 1)
	go func() {
		_, errOut, code := execute(args...)
		done <- result{errOut, code}
	}()
	select {
	case r := <-done:
		return r.errOut, r.code
	case <-time.After(10 * time.Second):
		t.Fatalf("stepwise %s: still running after 10s", strings.Join(args, " "))
		return "", 0
	}
}

func TestCommandsReadOnlyRegularFilesOfBoundedSize(t *testing.T) {
	t.Parallel()
	b := setup(t)
	fifo := filepath.Join(b.dir, "fifo.json")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	fifoTest := filepath.Join(b.dir, "fifo.test.yaml")
	require.NoError(t, syscall.Mkfifo(fifoTest, 0o600))
	def := b.write(t, "sm.json", `{"StartAt":"A","States":{"A":{"Type":"Pass","End":true}}}`)
	bigDef := b.write(t, "big.json", `{"Comment":"`+strings.Repeat("x", 1<<20)+`","StartAt":"A","States":{"A":{"Type":"Pass","End":true}}}`)
	bomb := b.write(t, "bomb.test.yaml", "definition: sm.json\nbomb:\n  "+strings.ReplaceAll(hostile.AliasBomb(), "\n", "\n  ")+"\ncases: [{name: boom, input: *i}]\n")
	zeroDef := b.write(t, "zerodef.test.json", `{"definition": "/dev/zero", "cases": [{"name": "x"}]}`)
	zeroInput := b.write(t, "zeroinput.test.json", `{"definition": "sm.json", "cases": [{"name": "x", "inputFile": "/dev/zero"}]}`)
	fifoInput := b.write(t, "fifoinput.test.json", `{"definition": "sm.json", "cases": [{"name": "x", "inputFile": "fifo.json"}]}`)
	recording := b.write(t, "rec.test.json", `{"definition": "sm.json", "cases": [{"name": "x", "expect": {"status": "SUCCEEDED", "output": {}}}]}`)
	bigInput := b.write(t, "big-input.json", `{"a":"`+strings.Repeat("x", 300<<10)+`"}`)

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "/dev/zero"}, "/dev/zero is not a regular file (a device)"},
		{[]string{"run", fifo}, fifo + " is not a regular file (a named pipe)"},
		{[]string{"run", bigDef}, bigDef + " is larger than 1 MiB, the most read of such a file"},
		{[]string{"run", def, "--input-file", "/dev/zero"}, "/dev/zero is not a regular file (a device)"},
		{[]string{"run", def, "--input-file", fifo}, fifo + " is not a regular file (a named pipe)"},
		{[]string{"run", def, "--input-file", bigInput}, "--input-file " + bigInput + " is more than the payload limit of 262144 bytes"},
		{[]string{"run", def, "--mock", fifo}, fifo + " is not a regular file (a named pipe)"},
		{[]string{"run", def, "--mock-config", "/dev/zero", "--test-case", "x"}, "mock configuration: /dev/zero is not a regular file (a device)"},
		{[]string{"validate", "/dev/zero"}, "/dev/zero is not a regular file (a device)"},
		{[]string{"validate", fifo}, fifo + " is not a regular file (a named pipe)"},
		{[]string{"eval", "--jsonpath", "$", "--input-file", "/dev/zero"}, "/dev/zero is not a regular file (a device)"},
		{[]string{"eval", "--jsonpath", "$", "--input-file", fifo}, fifo + " is not a regular file (a named pipe)"},
		{[]string{"replay", "--recording", "/dev/zero"}, "--recording: /dev/zero is not a regular file (a device)"},
		{[]string{"replay", "--recording", fifo}, "--recording: " + fifo + " is not a regular file (a named pipe)"},
		{[]string{"replay", "--recording", bomb}, "line 9: the document expands to more than 1000000 values (aliases within aliases?)"},
		{[]string{"replay", "--recording", recording, "--definition", "/dev/zero"}, "--definition: /dev/zero is not a regular file (a device)"},
		{[]string{"replay", "--recording", recording, "--definition", fifo}, "--definition: " + fifo + " is not a regular file (a named pipe)"},
		{[]string{"test", bomb}, bomb + ": line 9: the document expands to more than 1000000 values (aliases within aliases?)"},
		{[]string{"test", fifoTest}, "cannot read: not a regular file (a named pipe)"},
		{[]string{"test", zeroDef}, "definition: /dev/zero: cannot read: not a regular file (a device)"},
		{[]string{"test", zeroInput}, "cases[0].inputFile: /dev/zero: cannot read: not a regular file (a device)"},
		{[]string{"test", fifoInput}, "cases[0].inputFile: " + fifo + ": cannot read: not a regular file (a named pipe)"},
		{[]string{"deploy", "/dev/zero", "--endpoint", "http://127.0.0.1:1"}, "/dev/zero is not a regular file (a device)"},
		{[]string{"deploy", fifo, "--endpoint", "http://127.0.0.1:1"}, fifo + " is not a regular file (a named pipe)"},
		{[]string{"deploy", bigDef, "--endpoint", "http://127.0.0.1:1"}, bigDef + " is larger than 1 MiB, the most read of such a file"},
	} {
		errOut, code := executePromptly(t, tc.args...)
		require.NotEqual(t, 0, code, tc.args)
		require.Contains(t, errOut, tc.want, tc.args)
	}
}

func TestServeTemplateIsReadOnlyIfRegular(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "template.yaml")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	done := make(chan error, 1)
	go func() { done <- deployTemplates(t.Context(), nil, []string{fifo}, nil, false, nil) }()
	select {
	case err := <-done:
		require.EqualError(t, err, "--template: "+fifo+" is not a regular file (a named pipe)")
	case <-time.After(10 * time.Second):
		t.Fatal("still reading the template after 10s")
	}
	_, err := os.Stat(fifo)
	require.NoError(t, err)
}
