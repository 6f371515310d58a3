package lambda_test

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/integration"
	"stepwise/integration/lambda"
)

// A function put while the server runs is found as a --function one is,
// by name, partial or full ARN with any qualifier; Put replaces it,
// Remove removes it, and nothing is added once the functions closed.
func TestPutLookupRemove(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	reg, err := integration.New(integration.Config{Region: "eu-west-1", Account: "111122223333", Functions: map[string]string{"echo": "cat"}})
	require.NoError(t, err)
	local := lambda.LocalOf(reg)
	require.NotNil(t, local, "the registry keeps its local functions")
	require.Same(t, local, lambda.LocalOf(reg), "one set of local functions a registry")
	require.NotNil(t, local.Lookup("echo"), "the --function ones are there")

	require.NoError(t, local.Put("orders", &lambda.Handler{Runtime: "python3.12", Dir: dir, Name: "app.handler"}))
	for _, ident := range []string{"orders", "orders:prod", "111122223333:function:orders",
		"arn:aws:lambda:eu-west-1:111122223333:function:orders", "arn:aws:lambda:eu-west-1:111122223333:function:orders:$LATEST"} {
		fn := local.Lookup(ident)
		require.NotNil(t, fn, ident)
		require.Equal(t, "orders", fn.Name, ident)
		require.Equal(t, lambda.RuntimePython, fn.Handler.Runtime, "Lambda's runtime names are taken")
	}
	first := local.Lookup("orders")
	require.NoError(t, local.Put("orders", &lambda.Handler{Runtime: lambda.RuntimeNode, Dir: dir, Name: "index.handler"}))
	require.NotSame(t, first, local.Lookup("orders"))
	require.Equal(t, lambda.RuntimeNode, local.Lookup("orders").Handler.Runtime, "Put replaced the function")
	require.ErrorContains(t, local.AddHandler("orders", &lambda.Handler{Runtime: lambda.RuntimeNode, Dir: dir, Name: "index.handler"}), "given twice")
	require.NoError(t, local.Put("echo", &lambda.Handler{Runtime: lambda.RuntimeNode, Dir: dir, Name: "index.handler"}), "a command function is replaced too")
	require.Equal(t, []string{"echo", "orders"}, local.Names())

	require.True(t, local.Remove("orders"))
	require.Nil(t, local.Lookup("orders"))
	require.False(t, local.Remove("orders"))

	for name, h := range map[string]*lambda.Handler{
		"a:b": {Runtime: lambda.RuntimePython, Dir: dir, Name: "app.handler"},
		"f":   {Runtime: "java21", Dir: dir, Name: "app.handler"},
		"g":   {Runtime: lambda.RuntimePython, Dir: filepath.Join(dir, "absent"), Name: "app.handler"},
		"h":   {Runtime: lambda.RuntimeProvided, Dir: dir},
		"i":   nil,
	} {
		require.Error(t, local.Put(name, h), name)
		require.Nil(t, local.Lookup(name), name)
	}
	require.ErrorContains(t, local.Put("h", &lambda.Handler{Runtime: lambda.RuntimeProvided, Dir: dir}), "a provided runtime runs the executable file bootstrap")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bootstrap"), []byte("#!/bin/sh\n"), 0o644))
	require.ErrorContains(t, local.Put("h", &lambda.Handler{Runtime: lambda.RuntimeProvided, Dir: dir}), "is not an executable file")
	require.NoError(t, os.Chmod(filepath.Join(dir, "bootstrap"), 0o755))
	require.NoError(t, local.Put("h", &lambda.Handler{Runtime: "provided.al2023", Dir: dir}))

	reg.Close()
	require.ErrorContains(t, local.Put("late", &lambda.Handler{Runtime: lambda.RuntimePython, Dir: dir, Name: "app.handler"}), "closed")
	require.Nil(t, local.Lookup("late"))
}

// Functions are put, replaced and removed while others look them up.
func TestPutWhileLookingUp(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	local, err := lambda.NewLocal(nil, 0, nil)
	require.NoError(t, err)
	t.Cleanup(local.Close)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if fn := local.Lookup(fmt.Sprintf("arn:aws:lambda:us-east-1:123456789012:function:f%d:$LATEST", i%2)); fn != nil {
					_ = fn.Handler.Name
				}
				_ = local.Names()
			}
		}()
	}
	for n := range 200 {
		name := fmt.Sprintf("f%d", n%2)
		require.NoError(t, local.Put(name, &lambda.Handler{Runtime: lambda.RuntimePython, Dir: dir, Name: fmt.Sprintf("app.h%d", n)}))
		require.Equal(t, fmt.Sprintf("app.h%d", n), local.Lookup(name).Handler.Name)
		if n%3 == 0 {
			require.True(t, local.Remove(name))
		}
	}
	close(stop)
	wg.Wait()
}

// zipOf writes a zip of entries (name → content; a mode for some).
func zipOf(t *testing.T, entries []zipEntry) string {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		hdr := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		if e.mode != 0 {
			hdr.SetMode(e.mode)
		}
		w, err := zw.CreateHeader(hdr)
		require.NoError(t, err)
		_, err = w.Write([]byte(e.content))
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	path := filepath.Join(t.TempDir(), "code.zip")
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	return path
}

type zipEntry struct {
	name, content string
	mode          fs.FileMode
}

// A zip whose entries would land outside its folder, or whose content is
// too big, is refused with the reason; a good one is extracted once, into
// a folder named after its content.
func TestZipRefused(t *testing.T) {
	codeRootIn(t, t.TempDir())
	local, err := lambda.NewLocal(nil, 0, nil)
	require.NoError(t, err)
	t.Cleanup(local.Close)
	for name, c := range map[string]struct {
		entries []zipEntry
		want    string
	}{
		"dotdot":   {[]zipEntry{{name: "app.py", content: "x"}, {name: "../evil.py", content: "x"}}, `the entry "../evil.py" would be written outside the code's folder`},
		"absolute": {[]zipEntry{{name: "/tmp/evil.py", content: "x"}}, "would be written outside"},
		"nested":   {[]zipEntry{{name: "lib/../../evil.py", content: "x"}}, "would be written outside"},
		"link":     {[]zipEntry{{name: "lib", content: "../../..", mode: fs.ModeSymlink | 0o777}}, `the symbolic link "lib" points outside the code's folder`},
		"big":      {[]zipEntry{{name: "app.py", content: string(bytes.Repeat([]byte("#"), 5000))}}, "more than 4096 bytes unzipped"},
		// Each link points inside by its text, but the second is made
		// through the first: together they lead out.
		"chained links": {[]zipEntry{{name: "a/b", content: "..", mode: fs.ModeSymlink | 0o777}, {name: "a/b/c", content: "..", mode: fs.ModeSymlink | 0o777},
			{name: "a/b/c/evil.py", content: "x"}}, `the entry "a/b/c" is inside the symbolic link "a/b"`},
	} {
		if name == "big" {
			old := *lambda.MaxUnzipped
			*lambda.MaxUnzipped = 4096
			t.Cleanup(func() { *lambda.MaxUnzipped = old })
		}
		path := zipOf(t, c.entries)
		err := local.Put("f", &lambda.Handler{Runtime: lambda.RuntimePython, Dir: path, Name: "app.handler"})
		require.ErrorContains(t, err, "local function f: the handler's code "+path, name)
		require.ErrorContains(t, err, c.want, name)
		require.NoFileExists(t, filepath.Join(filepath.Dir(path), "evil.py"), name)
	}
	notZip := filepath.Join(t.TempDir(), "code.zip")
	require.NoError(t, os.WriteFile(notZip, []byte("not a zip"), 0o644))
	require.ErrorContains(t, local.Put("f", &lambda.Handler{Runtime: lambda.RuntimePython, Dir: notZip, Name: "app.handler"}), "not a zip file")
	other := filepath.Join(t.TempDir(), "code.tar")
	require.NoError(t, os.WriteFile(other, []byte("x"), 0o644))
	require.ErrorContains(t, local.Put("f", &lambda.Handler{Runtime: lambda.RuntimePython, Dir: other, Name: "app.handler"}), "is not a folder, nor a .zip file")

	good := zipOf(t, []zipEntry{{name: "lib/", mode: fs.ModeDir | 0o755}, {name: "lib/app.py", content: "x = 1\n"}, {name: "bootstrap", content: "#!/bin/sh\n", mode: 0o755}})
	require.NoError(t, local.Put("f", &lambda.Handler{Runtime: lambda.RuntimeProvided, Dir: good}), "the bootstrap keeps its mode")
	again := filepath.Join(t.TempDir(), "same.zip")
	b, err := os.ReadFile(good)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(again, b, 0o644))
	require.NoError(t, local.Put("g", &lambda.Handler{Runtime: lambda.RuntimePython, Dir: again, Name: "lib/app.handler"}))
	extracted, err := filepath.Glob(filepath.Join(*lambda.CodeRoot, "*"))
	require.NoError(t, err)
	require.Len(t, extracted, 1, "one folder for one content: %v", extracted)
	require.FileExists(t, filepath.Join(extracted[0], "lib", "app.py"))
}

func TestParseProvidedHandler(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h, ok, err := lambda.ParseHandler("provided:" + dir + ":my.handler")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, &lambda.Handler{Runtime: lambda.RuntimeProvided, Dir: dir, Name: "my.handler"}, h)
	h, ok, err = lambda.ParseHandler("provided:" + dir + ":")
	require.NoError(t, err)
	require.True(t, ok)
	require.Empty(t, h.Name, "a provided runtime's handler is only its _HANDLER")
	_, _, err = lambda.ParseHandler("provided:" + dir)
	require.ErrorContains(t, err, "give a handler as provided:DIR:HANDLER")
	_, err = integration.New(integration.Config{Functions: map[string]string{"f": "provided:" + dir + ":h"}})
	require.ErrorContains(t, err, "local function f: a provided runtime runs the executable file bootstrap")
	for lambdaRuntime, want := range map[string]string{"python3.13": "python", "nodejs22.x": "node", "provided.al2": "provided", "provided": "provided", "node": "node"} {
		got, ok := lambda.RuntimeFor(lambdaRuntime)
		require.True(t, ok, lambdaRuntime)
		require.Equal(t, want, got, lambdaRuntime)
	}
	_, ok = lambda.RuntimeFor("java21")
	require.False(t, ok)
}

// codeRootIn extracts zips under dir for the test's time.
func codeRootIn(t *testing.T, dir string) {
	old := *lambda.CodeRoot
	*lambda.CodeRoot = dir
	t.Cleanup(func() { *lambda.CodeRoot = old })
}
