package main

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/stretchr/testify/require"

	"stepwise/integration/awssdk/awsmodel"
)

const wholeModel = `{"version":"2.0","metadata":{"endpointPrefix":"whole","protocol":"json","serviceId":"Whole","uid":"whole-2020"},
"documentation":"<p>A service.</p>",
"operations":{"Get":{"name":"Get","http":{"method":"POST","requestUri":"/"},"input":{"shape":"In"},"output":{"shape":"Out"},"documentation":"<p>Gets.</p>"}},
"shapes":{"In":{"type":"structure","required":["Id"],"members":{"Id":{"shape":"S","documentation":"<p>Which.</p>"}}},
"Out":{"type":"structure","members":{"Size":{"shape":"N"}}},"S":{"type":"string","pattern":"[a-z]+"},"N":{"type":"integer","min":1,"max":9}}}`

const outputsModel = `{"metadata":{"endpointPrefix":"outs","protocol":"rest-json","serviceId":"Outs"},
"operations":{"Put":{"name":"Put","http":{"method":"PUT","requestUri":"/"},"input":{"shape":"In"}},
"List":{"name":"List","http":{"method":"GET","requestUri":"/"},"input":{"shape":"In"},"output":{"shape":"Out"}}},
"shapes":{"In":{"type":"structure","members":{"Filter":{"shape":"F"}}},"F":{"type":"string","enum":["x"]},
"Out":{"type":"structure","required":["Items"],"members":{"Zeta":{"shape":"Doc","location":"header","locationName":"x-z"},"Items":{"shape":"Items"},"Tags":{"shape":"Tags"}}},
"Items":{"type":"list","member":{"shape":"Kind"},"max":5},"Kind":{"type":"string","enum":["A","B"]},
"Tags":{"type":"map","key":{"shape":"F"},"value":{"shape":"Kind"}},"Doc":{"type":"structure","members":{},"document":true,"required":["a"]}}}`

func writeFile(t *testing.T, path, text string, zip bool) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	data := []byte(text)
	if zip {
		var buf bytes.Buffer
		z := gzip.NewWriter(&buf)
		_, err := z.Write(data)
		require.NoError(t, err)
		require.NoError(t, z.Close())
		data = buf.Bytes()
	}
	require.NoError(t, os.WriteFile(path, data, 0o644))
}

// botocoreDir lays out a botocore package of version 9.9.9 and returns
// its data directory.
func botocoreDir(t *testing.T) string {
	root := filepath.Join(t.TempDir(), "botocore")
	writeFile(t, filepath.Join(root, "__init__.py"), "import os\n__version__ = '9.9.9'\n", false)
	data := filepath.Join(root, "data")
	writeFile(t, filepath.Join(data, "whole", "2010-01-01", "service-2.json"), `{"metadata":{"endpointPrefix":"old"},"operations":{"Old":{}},"shapes":{}}`, false)
	writeFile(t, filepath.Join(data, "whole", "2020-01-01", "service-2.json.gz"), wholeModel, true)
	writeFile(t, filepath.Join(data, "outs", "2021-01-01", "service-2.json"), outputsModel, false)
	return data
}

func TestBuild(t *testing.T) {
	t.Parallel()
	models, err := build(botocoreDir(t), []string{"whole"}, []string{"outs"})
	require.NoError(t, err)
	require.Len(t, models, 2)

	whole := string(models["whole"])
	require.NotContains(t, whole, "documentation")
	require.NotContains(t, whole, "pattern", "what the parser does not read is left out")
	require.NotContains(t, whole, "Old", "the newest API version is read")
	m, err := awsmodel.Parse(models["whole"])
	require.NoError(t, err)
	require.Equal(t, []string{"Id"}, m.Shapes["In"].Required)
	require.Equal(t, "POST", m.Operations["Get"].HTTP.Method)
	require.Equal(t, 9.0, *m.Shapes["N"].Max)

	var outs map[string]any
	require.NoError(t, json.Unmarshal(models["outs"], &outs))
	m, err = awsmodel.Parse(models["outs"])
	require.NoError(t, err)
	require.Equal(t, []string{"List"}, keys(m.Operations), "operations without an output are left out")
	require.Nil(t, m.Operations["List"].Input)
	require.ElementsMatch(t, []string{"Out", "Items", "Kind", "Tags", "Doc"}, keys(m.Shapes), "only the shapes outputs reach")
	out := m.Shapes["Out"]
	require.Equal(t, []string{"Items"}, out.Required)
	require.Equal(t, "Zeta", out.Members[0].Name, "members keep their order")
	require.Empty(t, out.Members[0].Location, "wire details are left out")
	require.Equal(t, 5.0, *m.Shapes["Items"].Max)
	require.Equal(t, []string{"A", "B"}, m.Shapes["Kind"].Enum)
	require.Nil(t, m.Shapes["Tags"].Key)
	require.True(t, m.Shapes["Doc"].Document)
	require.Empty(t, m.Shapes["Doc"].Required, "a document is any value")

	_, err = build(botocoreDir(t), []string{"nosuch"}, nil)
	require.ErrorContains(t, err, "nosuch: no service model")
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestOverride(t *testing.T) {
	t.Parallel()
	m, err := awsmodel.Parse([]byte(wholeModel))
	require.NoError(t, err)
	require.NoError(t, override(m, map[string]float64{"N": 7}))
	require.Equal(t, 7.0, *m.Shapes["N"].Max)
	require.ErrorContains(t, override(m, map[string]float64{"Nope": 1}), "no shape Nope")
}

func TestRun(t *testing.T) {
	t.Parallel()
	dir := botocoreDir(t)
	out := t.TempDir()
	require.ErrorContains(t, run("", "9.9.9", out), "-botocore DIR or BOTOCORE_DATA")
	require.ErrorContains(t, run(dir, botocoreVersion, out), "is 9.9.9, not "+botocoreVersion)
	require.ErrorContains(t, run(t.TempDir(), "9.9.9", out), "botocore's version beside")
	// The real lists name services this directory lacks.
	require.ErrorContains(t, run(dir, "9.9.9", out), "no service model")
	_, err := os.Stat(filepath.Join(out, awsmodel.Archive))
	require.ErrorIs(t, err, os.ErrNotExist, "nothing is written when a model is missing")
}

// The archive is a zip of <service>.json.br, each stored, the same bytes
// for the same models.
func TestWriteArchive(t *testing.T) {
	t.Parallel()
	models, err := build(botocoreDir(t), []string{"whole"}, []string{"outs"})
	require.NoError(t, err)
	var a, b bytes.Buffer
	require.NoError(t, awsmodel.WriteArchive(&a, models))
	require.NoError(t, awsmodel.WriteArchive(&b, models))
	require.Equal(t, a.Bytes(), b.Bytes())
	zr, err := zip.NewReader(bytes.NewReader(a.Bytes()), int64(a.Len()))
	require.NoError(t, err)
	got := map[string][]byte{}
	for _, f := range zr.File {
		require.Equal(t, zip.Store, f.Method)
		rc, err := f.Open()
		require.NoError(t, err)
		data, err := io.ReadAll(brotli.NewReader(rc))
		require.NoError(t, err)
		got[f.Name] = data
	}
	require.Equal(t, map[string][]byte{"outs.json.br": models["outs"], "whole.json.br": models["whole"]}, got)
}

// With BOTOCORE_DATA naming botocore's data directory of the pinned
// version, the embedded archive is what the generator writes from it.
func TestEmbeddedArchiveIsGenerated(t *testing.T) {
	t.Parallel()
	dir := os.Getenv("BOTOCORE_DATA")
	if dir == "" {
		t.Skip("BOTOCORE_DATA names no botocore data directory")
	}
	out := t.TempDir()
	require.NoError(t, run(dir, botocoreVersion, out))
	want, err := os.ReadFile(filepath.Join("..", "models", awsmodel.Archive))
	require.NoError(t, err)
	got, err := os.ReadFile(filepath.Join(out, awsmodel.Archive))
	require.NoError(t, err)
	require.True(t, bytes.Equal(want, got), "models/%s is not what gen writes from %s", awsmodel.Archive, dir)
}
