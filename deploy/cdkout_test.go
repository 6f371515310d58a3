package deploy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"stepwise/deploy/cfn"
	"stepwise/internal/testkit/cdkapp"
)

// assemblyBundle is a cloud assembly written by a test.
type assemblyBundle struct{ dir string }

func setupAssembly(t *testing.T) *assemblyBundle {
	t.Helper()
	return &assemblyBundle{dir: t.TempDir()}
}

// write writes a file of the assembly, its folders made.
func (b *assemblyBundle) write(t *testing.T, name, content string) {
	t.Helper()
	p := filepath.Join(b.dir, name)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
}

// templates writes an empty template for each name.
func (b *assemblyBundle) templates(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		b.write(t, n, `{"Resources": {}}`)
	}
}

// summary is a stack as a line: its name, dependencies and template,
// relative to the assembly.
func (b *assemblyBundle) summary(t *testing.T, stacks []AssemblyStack) []string {
	t.Helper()
	var out []string
	for _, s := range stacks {
		require.True(t, filepath.IsAbs(s.TemplatePath), s.TemplatePath)
		tpl, err := filepath.Rel(b.dir, s.TemplatePath)
		require.NoError(t, err)
		dir, err := filepath.Rel(b.dir, s.Dir)
		require.NoError(t, err)
		out = append(out, s.Name+" <- ["+strings.Join(s.DependsOn, " ")+"] "+tpl+" in "+dir)
	}
	return out
}

// A manifest as `cdk synth` writes it: the stack, its asset manifest
// (which the stack depends on), the tree; other artifact types are left
// alone.
const oneStackManifest = `{
  "version": "55.0.0",
  "artifacts": {
    "App.assets": {"type": "cdk:asset-manifest", "properties": {"file": "App.assets.json"}},
    "App": {
      "type": "aws:cloudformation:stack",
      "environment": "aws://unknown-account/unknown-region",
      "properties": {
        "templateFile": "App.template.json",
        "parameters": {"Stage": "prod"},
        "stackTemplateAssetObjectUrl": "s3://cdk-hnb659fds-assets-${AWS::AccountId}-${AWS::Region}/7e69.json"
      },
      "dependencies": ["App.assets"],
      "displayName": "App"
    },
    "Tree": {"type": "cdk:tree", "properties": {"file": "tree.json"}}
  }
}`

func TestReadAssemblyOneStack(t *testing.T) {
	t.Parallel()
	b := setupAssembly(t)
	b.write(t, "manifest.json", oneStackManifest)
	b.templates(t, "App.template.json")

	stacks, err := ReadAssembly(b.dir)
	require.NoError(t, err)
	require.Len(t, stacks, 1)
	require.Equal(t, []string{"App <- [] App.template.json in ."}, b.summary(t, stacks))
	require.Equal(t, map[string]string{"Stage": "prod"}, stacks[0].Parameters)

	// A relative folder gives absolute paths all the same.
	wd, err := os.Getwd()
	require.NoError(t, err)
	rel, err := filepath.Rel(wd, b.dir)
	require.NoError(t, err)
	stacks, err = ReadAssembly(rel)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(b.dir, "App.template.json"), stacks[0].TemplatePath)
}

func TestReadAssemblyOrdersByDependencies(t *testing.T) {
	t.Parallel()
	b := setupAssembly(t)
	// Api depends on Data through its asset manifest's artifact; Web on
	// Api and Data; Alone on nothing. Ids sort Alone, Api, Data, Web.
	b.write(t, "manifest.json", `{"version": "55.0.0", "artifacts": {
		"Web": {"type": "aws:cloudformation:stack", "properties": {"templateFile": "Web.template.json", "stackName": "web-prod"}, "dependencies": ["Api", "Data"]},
		"Api.assets": {"type": "cdk:asset-manifest", "properties": {"file": "Api.assets.json"}, "dependencies": ["Data"]},
		"Api": {"type": "aws:cloudformation:stack", "properties": {"templateFile": "Api.template.json"}, "dependencies": ["Api.assets"]},
		"Data": {"type": "aws:cloudformation:stack", "properties": {"templateFile": "Data.template.json"}},
		"Alone": {"type": "aws:cloudformation:stack", "properties": {"templateFile": "Alone.template.json"}}
	}}`)
	b.templates(t, "Web.template.json", "Api.template.json", "Data.template.json", "Alone.template.json")

	stacks, err := ReadAssembly(b.dir)
	require.NoError(t, err)
	require.Equal(t, []string{
		"Alone <- [] Alone.template.json in .",
		"Data <- [] Data.template.json in .",
		"Api <- [Data] Api.template.json in .",
		"web-prod <- [Api Data] Web.template.json in .",
	}, b.summary(t, stacks))
	require.Nil(t, stacks[0].Parameters)
}

// stagedManifest is an app with a stack of its own and a Stage "Prod"
// (a nested assembly) of two stacks, as CDK names them.
const stagedManifest = `{"version": "55.0.0", "artifacts": {
	"Pipeline": {"type": "aws:cloudformation:stack", "properties": {"templateFile": "Pipeline.template.json"}},
	"assembly-Prod": {"type": "cdk:cloud-assembly", "properties": {"directoryName": "assembly-Prod", "displayName": "Prod"}}
}}`

const stagedProdManifest = `{"version": "55.0.0", "artifacts": {
	"ProdServiceAB12CD34": {"type": "aws:cloudformation:stack", "properties": {"templateFile": "ProdServiceAB12CD34.template.json", "stackName": "Prod-Service"}, "dependencies": ["ProdTableEF56AB78"], "displayName": "Prod/Service"},
	"ProdTableEF56AB78": {"type": "aws:cloudformation:stack", "properties": {"templateFile": "ProdTableEF56AB78.template.json", "stackName": "Prod-Table"}, "displayName": "Prod/Table"}
}}`

func setupStaged(t *testing.T) *assemblyBundle {
	t.Helper()
	b := setupAssembly(t)
	b.write(t, "manifest.json", stagedManifest)
	b.write(t, "assembly-Prod/manifest.json", stagedProdManifest)
	b.templates(t, "Pipeline.template.json", "assembly-Prod/ProdServiceAB12CD34.template.json", "assembly-Prod/ProdTableEF56AB78.template.json")
	return b
}

func TestReadAssemblyNestedAssemblies(t *testing.T) {
	t.Parallel()
	b := setupStaged(t)
	stacks, err := ReadAssembly(b.dir)
	require.NoError(t, err)
	require.Equal(t, []string{
		"Pipeline <- [] Pipeline.template.json in .",
		"Prod-Table <- [] assembly-Prod/ProdTableEF56AB78.template.json in assembly-Prod",
		"Prod-Service <- [Prod-Table] assembly-Prod/ProdServiceAB12CD34.template.json in assembly-Prod",
	}, b.summary(t, stacks))
}

func TestReadAssemblyPicksStacks(t *testing.T) {
	t.Parallel()
	b := setupStaged(t)
	for _, tc := range []struct {
		pick []string
		want []string
	}{
		{[]string{"Pipeline"}, []string{"Pipeline"}},
		// A stack comes with those it depends on.
		{[]string{"Prod-Service"}, []string{"Prod-Table", "Prod-Service"}},
		{[]string{"Prod/Service"}, []string{"Prod-Table", "Prod-Service"}},
		{[]string{"ProdTableEF56AB78"}, []string{"Prod-Table"}},
		{[]string{"Prod/*"}, []string{"Prod-Table", "Prod-Service"}},
		{[]string{"Prod-Table", "Pipeline"}, []string{"Pipeline", "Prod-Table"}},
		{[]string{"Prod-Table", "Prod/Table"}, []string{"Prod-Table"}},
	} {
		stacks, err := ReadAssembly(b.dir, tc.pick...)
		require.NoError(t, err, tc.pick)
		var got []string
		for _, s := range stacks {
			got = append(got, s.Name)
		}
		require.Equal(t, tc.want, got, tc.pick)
	}

	_, err := ReadAssembly(b.dir, "Pipeline", "Prod-Servise")
	require.EqualError(t, err, "cloud assembly "+b.dir+`: no stack "Prod-Servise"; the assembly's stacks: Pipeline, Prod-Table (Prod/Table), Prod-Service (Prod/Service)`)
}

func TestReadAssemblyErrors(t *testing.T) {
	t.Parallel()
	stack := func(id, extra string) string {
		return `"` + id + `": {"type": "aws:cloudformation:stack", "properties": {"templateFile": "` + id + `.template.json"}` + extra + `}`
	}
	for _, tc := range []struct {
		name  string
		files map[string]string // manifest.json and the other files
		want  string            // the error, DIR standing for the assembly's folder
	}{
		{"no manifest", map[string]string{"App.template.json": "{}"},
			"DIR/manifest.json: no such file: not a cloud assembly (run `cdk synth`, or the app with CDK_OUTDIR set, to write one)"},
		{"not JSON", map[string]string{"manifest.json": `{"version": "55.0.0",`},
			"DIR/manifest.json: not valid JSON: unexpected end of JSON input"},
		{"not an object", map[string]string{"manifest.json": `["App"]`},
			"DIR/manifest.json: a manifest is a JSON object, got an array"},
		{"artifacts not an object", map[string]string{"manifest.json": `{"artifacts": ["App"]}`},
			"DIR/manifest.json: artifacts must be an object of artifacts by id, got an array"},
		{"artifact null", map[string]string{"manifest.json": `{"artifacts": {"App": null}}`},
			`DIR/manifest.json: artifact "App" is null, not an object`},
		{"type not a string", map[string]string{"manifest.json": `{"artifacts": {"App": {"type": 7}}}`},
			`DIR/manifest.json: artifact "App": type must be string, got number`},
		{"no stack", map[string]string{"manifest.json": `{"version": "55.0.0", "artifacts": {"Tree": {"type": "cdk:tree"}}}`},
			"cloud assembly DIR: manifest.json lists no CloudFormation stack (no artifact of type aws:cloudformation:stack)"},
		{"empty", map[string]string{"manifest.json": `{}`},
			"cloud assembly DIR: manifest.json lists no CloudFormation stack (no artifact of type aws:cloudformation:stack)"},
		{"template missing", map[string]string{"manifest.json": `{"artifacts": {` + stack("App", "") + `}}`},
			`DIR/manifest.json: stack "App": its template DIR/App.template.json is missing`},
		{"template a folder", map[string]string{"manifest.json": `{"artifacts": {` + stack("App", "") + `}}`, "App.template.json/x": "{}"},
			`DIR/manifest.json: stack "App": its template DIR/App.template.json is not a file`},
		{"no templateFile", map[string]string{"manifest.json": `{"artifacts": {"App": {"type": "aws:cloudformation:stack", "properties": {"stackName": "app"}}}}`},
			`DIR/manifest.json: stack "App": properties.templateFile is missing`},
		{"absolute templateFile", map[string]string{"manifest.json": `{"artifacts": {"App": {"type": "aws:cloudformation:stack", "properties": {"templateFile": "/etc/passwd"}}}}`},
			`DIR/manifest.json: stack "App": templateFile "/etc/passwd" must be relative to the assembly`},
		{"properties not an object", map[string]string{"manifest.json": `{"artifacts": {"App": {"type": "aws:cloudformation:stack", "properties": "App.template.json"}}}`},
			`DIR/manifest.json: stack "App": properties: must be an object, got string`},
		{"parameter not a string", map[string]string{"manifest.json": `{"artifacts": {"App": {"type": "aws:cloudformation:stack", "properties": {"templateFile": "App.template.json", "parameters": {"Size": 3}}}}}`, "App.template.json": "{}"},
			`DIR/manifest.json: stack "App": properties.parameters.Size must be a string, got a number`},
		{"unknown dependency", map[string]string{"manifest.json": `{"artifacts": {` + stack("App", `, "dependencies": ["Dta"]`) + `}}`, "App.template.json": "{}"},
			`DIR/manifest.json: artifact "App" depends on "Dta", which the manifest does not list`},
		{"cycle", map[string]string{
			"manifest.json": `{"artifacts": {` + stack("A", `, "dependencies": ["B.assets"]`) + `, "B.assets": {"type": "cdk:asset-manifest", "dependencies": ["B"]}, ` +
				stack("B", `, "dependencies": ["C"]`) + `, ` + stack("C", `, "dependencies": ["A"]`) + `}}`,
			"A.template.json": "{}", "B.template.json": "{}", "C.template.json": "{}"},
			"cloud assembly DIR: stacks depend on each other in a cycle: A → B → C → A"},
		{"self dependency", map[string]string{"manifest.json": `{"artifacts": {` + stack("A", `, "dependencies": ["A"]`) + `}}`, "A.template.json": "{}"},
			"cloud assembly DIR: stacks depend on each other in a cycle: A → A"},
		{"nested manifest missing", map[string]string{"manifest.json": `{"artifacts": {"assembly-Prod": {"type": "cdk:cloud-assembly", "properties": {"directoryName": "assembly-Prod"}}}}`},
			"DIR/assembly-Prod/manifest.json: no such file: not a cloud assembly (run `cdk synth`, or the app with CDK_OUTDIR set, to write one)"},
		{"nested outside", map[string]string{"manifest.json": `{"artifacts": {"up": {"type": "cdk:cloud-assembly", "properties": {"directoryName": "../elsewhere"}}}}`},
			`DIR/manifest.json: artifact "up": directoryName "../elsewhere" must be a folder inside the assembly`},
		{"nested no directory", map[string]string{"manifest.json": `{"artifacts": {"up": {"type": "cdk:cloud-assembly"}}}`},
			`DIR/manifest.json: artifact "up": properties.directoryName is missing`},
		{"nested loop", map[string]string{"manifest.json": `{"artifacts": {"self": {"type": "cdk:cloud-assembly", "properties": {"directoryName": "."}}}}`},
			"DIR/manifest.json: the nested assemblies lead back to this one"},
		{"two stacks of one name", map[string]string{
			"manifest.json": `{"artifacts": {"A": {"type": "aws:cloudformation:stack", "properties": {"templateFile": "A.template.json", "stackName": "app"}},
				"B": {"type": "aws:cloudformation:stack", "properties": {"templateFile": "B.template.json", "stackName": "app"}}}}`,
			"A.template.json": "{}", "B.template.json": "{}"},
			`cloud assembly DIR: two stacks are named "app" (artifact "A" of DIR/manifest.json and artifact "B" of DIR/manifest.json): pick one`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setupAssembly(t)
			for name, content := range tc.files {
				b.write(t, name, content)
			}
			stacks, err := ReadAssembly(b.dir)
			require.Error(t, err, "stacks %v", stacks)
			require.Equal(t, tc.want, strings.ReplaceAll(err.Error(), b.dir, "DIR"))
		})
	}
}

func TestIsAssembly(t *testing.T) {
	t.Parallel()
	b := setupAssembly(t)
	require.False(t, IsAssembly(b.dir))
	b.write(t, "manifest.json", oneStackManifest)
	require.True(t, IsAssembly(b.dir))
	require.False(t, IsAssembly(filepath.Join(b.dir, "manifest.json")), "a file is not an assembly")
	require.False(t, IsAssembly(filepath.Join(b.dir, "missing")))
	b.write(t, "odd/manifest.json/x", "")
	require.False(t, IsAssembly(filepath.Join(b.dir, "odd")), "manifest.json must be a file")
}

func FuzzReadAssembly(f *testing.F) {
	f.Add([]byte(oneStackManifest))
	f.Add([]byte(stagedManifest))
	f.Add([]byte(stagedProdManifest))
	f.Add([]byte(`{"artifacts": {"A": {"type": "aws:cloudformation:stack", "properties": {"templateFile": "App.template.json"}, "dependencies": ["A"]}}}`))
	f.Add([]byte(`{"artifacts": {"A": {"type": "cdk:cloud-assembly", "properties": {"directoryName": "."}}}}`))
	f.Add([]byte(`{"artifacts": {"A": {"type": "aws:cloudformation:stack", "properties": null}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "manifest.json"), data, 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "App.template.json"), []byte("{}"), 0o644))
		stacks, err := ReadAssembly(dir)
		if err != nil {
			require.Nil(t, stacks, "stacks and an error")
			return
		}
		// Every stack read has its template, comes after those it depends
		// on, and names them.
		seen := map[string]bool{}
		for _, s := range stacks {
			require.Equal(t, filepath.Join(dir, "App.template.json"), s.TemplatePath)
			for _, d := range s.DependsOn {
				require.True(t, seen[d], "stack %q before %q, which it depends on", s.Name, d)
			}
			require.False(t, seen[s.Name], "two stacks named %q", s.Name)
			seen[s.Name] = true
		}
		var m struct{ Artifacts map[string]json.RawMessage }
		require.NoError(t, json.Unmarshal(data, &m))
		require.LessOrEqual(t, len(stacks), len(m.Artifacts))
	})
}

// TestSynthesizedCDKApp synthesizes the CDK test app (e2e/testdata/cdkapp)
// offline and reads what a deploy reads: the stack from the manifest, its
// template through cfn, each function's asset folder.
func TestSynthesizedCDKApp(t *testing.T) {
	t.Parallel()
	out := cdkapp.Synth(t)

	require.True(t, IsAssembly(out))
	stacks, err := ReadAssembly(out)
	require.NoError(t, err)
	require.Len(t, stacks, 1)
	s := stacks[0]
	require.Equal(t, cdkapp.StackName, s.Name)
	require.Equal(t, out, s.Dir)
	require.Empty(t, s.DependsOn)
	picked, err := ReadAssembly(out, cdkapp.StackName)
	require.NoError(t, err)
	require.Equal(t, stacks, picked)

	data, err := os.ReadFile(s.TemplatePath)
	require.NoError(t, err)
	tpl, err := cfn.Parse(data)
	require.NoError(t, err)
	// CDK's bootstrap check: an SSM parameter type and a Rules section.
	require.Equal(t, "AWS::SSM::Parameter::Value<String>", tpl.Parameters["BootstrapVersion"].Type)
	stack, err := cfn.Prepare(tpl, s.Parameters)
	require.NoError(t, err)

	byType := map[string][]string{}
	for _, id := range tpl.ResourceIDs() {
		byType[tpl.Resources[id].Type] = append(byType[tpl.Resources[id].Type], id)
	}
	require.Len(t, byType["AWS::Lambda::Function"], 2, "resources by type: %v", byType)
	require.Len(t, byType["AWS::DynamoDB::Table"], 1)
	require.Len(t, byType["AWS::StepFunctions::StateMachine"], 1)
	require.Contains(t, tpl.Outputs, "StateMachineArn")

	runtimes := map[string]string{}
	for _, id := range byType["AWS::Lambda::Function"] {
		r := tpl.Resources[id]
		require.True(t, stack.Included(id))
		meta, ok := r.Metadata.(map[string]any)
		require.True(t, ok, "%s: Metadata %v", id, r.Metadata)
		asset, ok := meta["aws:asset:path"].(string)
		require.True(t, ok, "%s: Metadata has no aws:asset:path: %v", id, meta)
		require.Equal(t, "Code", meta["aws:asset:property"])
		fi, err := os.Stat(filepath.Join(s.Dir, asset))
		require.NoError(t, err, "%s: its asset", id)
		require.True(t, fi.IsDir(), "%s: asset %s is a folder", id, asset)
		runtime := r.Properties["Runtime"].(string)
		runtimes[runtime] = r.Properties["Handler"].(string)
		handlerFile := map[string]string{"python3.12": "price.py", "nodejs20.x": "index.js"}[runtime]
		require.FileExists(t, filepath.Join(s.Dir, asset, handlerFile), id)
	}
	require.Equal(t, map[string]string{"python3.12": "price.handler", "nodejs20.x": "index.handler"}, runtimes)

	// The definition is a Fn::Join of strings and the function's ARN and
	// the table's name; the Catch names the Python function's exception.
	sm := tpl.Resources[byType["AWS::StepFunctions::StateMachine"][0]]
	def, err := json.Marshal(sm.Properties["DefinitionString"])
	require.NoError(t, err)
	require.Contains(t, string(def), `"Fn::Join"`)
	require.Contains(t, string(def), `\"ErrorEquals\":[\"OrderRejected\"]`)
	require.Contains(t, string(def), `{"Fn::GetAtt":["`+byType["AWS::Lambda::Function"][1]+`","Arn"]}`)
	require.Contains(t, string(def), `{"Ref":"`+byType["AWS::DynamoDB::Table"][0]+`"}`)
}
