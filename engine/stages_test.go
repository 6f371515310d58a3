package engine

import (
	"go/ast"
	"go/parser"
	"go/token"
	"testing"

	"github.com/stretchr/testify/require"
)

// stageFiles are the files of a step's stages, in the order the step loop
// (exec.go) calls them (see doc.go).
var stageFiles = []string{"load.go", "own.go", "interpret.go", "throttle.go", "write.go", "commit.go", "observe.go", "effects.go"}

// stageDecls are the functions and methods a file declares: plain
// functions by name, methods as "Recv.name".
func stageDecls(f *ast.File) map[string]bool {
	out := map[string]bool{}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		out[declName(fd)] = true
	}
	return out
}

func declName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}

// stageCalls are the calls a file makes, named as stageDecls names them
// where the callee is known from the source alone: a plain function, or
// a method called on the receiver of the method it is in.
func stageCalls(f *ast.File) map[string]token.Pos {
	out := map[string]token.Pos{}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		recv, recvType := "", ""
		if fd.Recv != nil && len(fd.Recv.List) == 1 && len(fd.Recv.List[0].Names) == 1 {
			recv = fd.Recv.List[0].Names[0].Name
			recvType, _, _ = cutDot(declName(fd))
		}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			switch fn := call.Fun.(type) {
			case *ast.Ident:
				out[fn.Name] = call.Pos()
			case *ast.SelectorExpr:
				if x, ok := fn.X.(*ast.Ident); ok && recv != "" && x.Name == recv {
					out[recvType+"."+fn.Sel.Name] = call.Pos()
				}
			}
			return true
		})
	}
	return out
}

func cutDot(s string) (string, string, bool) {
	for i := range len(s) {
		if s[i] == '.' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// TestStagesCallNoEarlierStage holds the step to its pipeline: a stage
// calls helpers below it, or a later stage, never an earlier one (only
// the step loop goes from one stage to the next).
func TestStagesCallNoEarlierStage(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	files := make([]*ast.File, len(stageFiles))
	for i, name := range stageFiles {
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		files[i] = f
	}
	var back []string
	for i, f := range files {
		own := stageDecls(f)
		for call, pos := range stageCalls(f) {
			if own[call] {
				continue
			}
			for j := range i {
				if stageDecls(files[j])[call] {
					back = append(back, fset.Position(pos).String()+": "+call+" of "+stageFiles[j])
				}
			}
		}
	}
	require.Empty(t, back, "a stage calls an earlier stage back")
}

// TestStagesCallNoEarlierStageFails makes sure the test above sees a call
// back: the effects stage calling the load stage's drop.
func TestStagesCallNoEarlierStageFails(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	load, err := parser.ParseFile(fset, "load.go", nil, parser.SkipObjectResolution)
	require.NoError(t, err)
	effects, err := parser.ParseFile(fset, "effects.go", `package engine
func (e *Engine) after(l *liveExecution) { e.drop(l) }
`, parser.SkipObjectResolution)
	require.NoError(t, err)
	calls := stageCalls(effects)
	require.Contains(t, calls, "Engine.drop")
	require.True(t, stageDecls(load)["Engine.drop"])
}
