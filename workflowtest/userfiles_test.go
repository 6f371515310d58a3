package workflowtest

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/internal/testkit/hostile"
	"stepwise/jsonvalue"
)

// loadPromptly is Load, failing the test if it has not returned within a
// few seconds.
func loadPromptly(t *testing.T, path string) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := Load(path)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("loading %s: still running after 10s", path)
		return nil
	}
}

func TestParseYAMLBoundsAliasExpansion(t *testing.T) {
	t.Parallel()
	start := time.Now()
	_, err := ParseYAML([]byte(hostile.AliasBomb()))
	require.EqualError(t, err, "line 7: the document expands to more than 1000000 values (aliases within aliases?)")
	require.Less(t, time.Since(start), 2*time.Second)

	// Merge keys expand too.
	merged := "a: &a {k: [\"" + strings.Repeat("x", 1<<20) + "\"]}\nb: &b [" + strings.Repeat("*a,", 31) + "*a]\nc: [" + strings.Repeat("{<<: *b},", 3) + "{}]\n"
	_, err = ParseYAML([]byte(merged))
	require.EqualError(t, err, "line 3: the document expands to more than 67108864 bytes of text (aliases within aliases?)")

	// Aliases within the limits are expanded.
	v, err := ParseYAML([]byte("a: &x [1, 2]\nb: *x\n"))
	require.NoError(t, err)
	require.JSONEq(t, `{"a":[1,2],"b":[1,2]}`, jsonvalue.String(v))
}

func TestLoadReadsOnlyRegularFilesOfBoundedSize(t *testing.T) {
	t.Parallel()
	dir := write(t, map[string]string{
		"sm.json":              `{"StartAt":"A","States":{"A":{"Type":"Pass","End":true}}}`,
		"big.json":             `{"Comment":"` + strings.Repeat("x", 1<<20) + `","StartAt":"A","States":{"A":{"Type":"Pass","End":true}}}`,
		"bomb.test.yaml":       "definition: sm.json\nbomb:\n  " + strings.ReplaceAll(hostile.AliasBomb(), "\n", "\n  ") + "\ncases: [{name: boom, input: *i}]\n",
		"zerodef.test.json":    `{"definition": "/dev/zero", "cases": [{"name": "x"}]}`,
		"bigdef.test.json":     `{"definition": "big.json", "cases": [{"name": "x"}]}`,
		"fifodef.test.json":    `{"definition": "fifo.json", "cases": [{"name": "x"}]}`,
		"zeroinput.test.json":  `{"definition": "sm.json", "cases": [{"name": "x", "inputFile": "/dev/zero"}]}`,
		"fifoinput.test.json":  `{"definition": "sm.json", "cases": [{"name": "x", "inputFile": "fifo.json"}]}`,
		"zeromocks.test.json":  `{"definition": "sm.json", "mocks": "/dev/zero", "cases": [{"name": "x"}]}`,
		"fifoconfig.test.json": `{"definition": "sm.json", "mockConfig": "fifo.json", "cases": [{"name": "x"}]}`,
		"casemocks.test.json":  `{"definition": "sm.json", "cases": [{"name": "x", "mocks": "fifo.json"}]}`,
		"bombdef.test.json":    `{"definition": "bomb.yaml", "cases": [{"name": "x"}]}`,
		"bomb.yaml":            hostile.AliasBomb(),
		"bombinput.test.json":  `{"definition": "sm.json", "cases": [{"name": "x", "inputFile": "bomb.yaml"}]}`,
		"bombmocks.test.json":  `{"definition": "sm.json", "mocks": "bomb.yaml", "cases": [{"name": "x"}]}`,
	})
	fifo := filepath.Join(dir, "fifo.json")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	fifoTest := filepath.Join(dir, "fifo.test.json")
	require.NoError(t, syscall.Mkfifo(fifoTest, 0o600))
	at := func(name string) string { return filepath.Join(dir, name) }
	const bombed = "line 7: the document expands to more than 1000000 values (aliases within aliases?)"
	for name, want := range map[string]string{
		"fifo.test.json":       "cannot read: not a regular file (a named pipe)",
		"bomb.test.yaml":       "line 9: the document expands to more than 1000000 values (aliases within aliases?)",
		"zerodef.test.json":    "definition: /dev/zero: cannot read: not a regular file (a device)",
		"bigdef.test.json":     "definition: " + at("big.json") + ": cannot read: larger than 1 MiB, the most read of such a file",
		"fifodef.test.json":    "definition: " + fifo + ": cannot read: not a regular file (a named pipe)",
		"zeroinput.test.json":  "cases[0].inputFile: /dev/zero: cannot read: not a regular file (a device)",
		"fifoinput.test.json":  "cases[0].inputFile: " + fifo + ": cannot read: not a regular file (a named pipe)",
		"zeromocks.test.json":  "mocks: /dev/zero: cannot read: not a regular file (a device)",
		"fifoconfig.test.json": "mockConfig: " + fifo + ": cannot read: not a regular file (a named pipe)",
		"casemocks.test.json":  "cases[0].mocks: " + fifo + ": cannot read: not a regular file (a named pipe)",
		"bombdef.test.json":    "definition: " + at("bomb.yaml") + ": " + bombed,
		"bombinput.test.json":  "cases[0].inputFile: " + at("bomb.yaml") + ": " + bombed,
		"bombmocks.test.json":  "mocks: " + at("bomb.yaml") + ": " + bombed,
	} {
		err := loadPromptly(t, at(name))
		require.EqualError(t, err, at(name)+": "+want, name)
	}

	// stepwise run --mock's file.
	_, err := LoadStateMocks("/dev/zero")
	require.EqualError(t, err, "/dev/zero is not a regular file (a device)")
	_, err = LoadStateMocks(fifo)
	require.EqualError(t, err, fifo+" is not a regular file (a named pipe)")
}
