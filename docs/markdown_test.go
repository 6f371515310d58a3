// Package docs tests the user's documents: README.md, CONTRIBUTING.md and
// the guides in docs/ (and the design notes' links in docs/design/). Its
// code is in test files only.
//
// The fast tests check the README's shape, that every relative link
// points to a file that exists (and a heading that exists, for an
// anchor), and that every command block is either run or says why not.
// The slow test (commands_test.go) runs the command blocks against a
// freshly built stepwise.
//
// A command block is a fenced block whose info string is "sh" (a shell
// script) or "console" ("$ command" lines, each followed by the output it
// must print). One that cannot be run (it serves until stopped, needs a
// PostgreSQL server, writes to /etc) carries the comment
//
//	<!-- not run: why -->
//
// on the line before its opening fence or the line after its closing one.
package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"
)

// root is the repository's top, from this package's folder.
const root = ".."

// block is a fenced code block of a document.
type block struct {
	file   string   // the document, relative to the repository's top
	line   int      // the opening fence's line, from 1
	lang   string   // the first word of the info string
	body   []string // the lines between the fences, their indent removed
	notRun string   // the reason of a "not run" comment, if any
	marked bool     // a "not run" comment is next to the block
}

func (b block) String() string { return fmt.Sprintf("%s:%d", b.file, b.line) }

// command reports whether the block is a command block (sh or console).
func (b block) command() bool { return b.lang == "sh" || b.lang == "console" }

var (
	fenceRE  = regexp.MustCompile("^(\\s*)```+\\s*([^`]*)$")
	notRunRE = regexp.MustCompile(`^\s*<!-- not run:(.*)-->\s*$`)
)

// guides are the documents whose commands are run: the README, the
// contributor's guide and the guides in docs/.
func guides(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md", "CONTRIBUTING.md"}
	more, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	for _, f := range more {
		rel, err := filepath.Rel(root, f)
		require.NoError(t, err)
		files = append(files, filepath.ToSlash(rel))
	}
	return files
}

// documents are the guides and the design notes: every file whose links
// are checked.
func documents(t *testing.T) []string {
	t.Helper()
	files := guides(t)
	more, err := filepath.Glob(filepath.Join(root, "docs", "design", "*.md"))
	require.NoError(t, err)
	for _, f := range more {
		rel, err := filepath.Rel(root, f)
		require.NoError(t, err)
		files = append(files, filepath.ToSlash(rel))
	}
	return files
}

func readDoc(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, file))
	require.NoError(t, err)
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n")
}

// blocks returns the fenced blocks of a document's lines.
func blocks(file string, lines []string) ([]block, error) {
	var out []block
	for i := 0; i < len(lines); i++ {
		m := fenceRE.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		indent := m[1]
		b := block{file: file, line: i + 1}
		if f := strings.Fields(m[2]); len(f) > 0 {
			b.lang = f[0]
		}
		j := i + 1
		for ; j < len(lines); j++ {
			if strings.TrimSpace(lines[j]) == "```" && strings.HasPrefix(lines[j], indent) {
				break
			}
			b.body = append(b.body, strings.TrimPrefix(lines[j], indent))
		}
		if j == len(lines) {
			return nil, fmt.Errorf("%s:%d: a fenced block that is never closed", file, i+1)
		}
		if r, ok := notRunAt(lines, i, -1); ok {
			b.notRun, b.marked = r, true
		} else if r, ok := notRunAt(lines, j, +1); ok {
			b.notRun, b.marked = r, true
		}
		out = append(out, b)
		i = j
	}
	return out, nil
}

// notRunAt looks at the first non-blank line from lines[i] in direction
// dir (not lines[i] itself) for a "not run" comment.
func notRunAt(lines []string, i, dir int) (string, bool) {
	for k := i + dir; k >= 0 && k < len(lines); k += dir {
		if strings.TrimSpace(lines[k]) == "" {
			continue
		}
		if m := notRunRE.FindStringSubmatch(lines[k]); m != nil {
			return strings.TrimSpace(m[1]), true
		}
		return "", false
	}
	return "", false
}

// TestReadme holds the README to its contract: at most 300 lines, the
// two commands of a fresh machine in its first code block, a quick start.
func TestReadme(t *testing.T) {
	t.Parallel()
	lines := readDoc(t, "README.md")
	require.LessOrEqual(t, len(lines), 300, "README.md has %d lines: move the detail into a guide in docs/", len(lines))
	require.Equal(t, "# Stepwise", lines[0])
	bs, err := blocks("README.md", lines)
	require.NoError(t, err)
	require.NotEmpty(t, bs)
	first := bs[0]
	require.Equal(t, "sh", first.lang, "the README's first code block is a shell block")
	require.Len(t, first.body, 2, "the README's first code block gives two commands")
	require.True(t, strings.HasPrefix(first.body[0], "go run ./cmd/stepwise serve"), "first command: %q", first.body[0])
	require.True(t, strings.HasPrefix(first.body[1], "go test ./..."), "second command: %q", first.body[1])
	for _, l := range lines[:first.line-1] {
		require.True(t, l == "" || strings.HasPrefix(l, "# "), "only the title comes before the first code block, not %q", l)
	}
	require.Contains(t, lines, "## Quick start")
}

// TestCommandBlocksMarked checks that every command block either runs or
// says why not, and that every "not run" comment belongs to a block.
func TestCommandBlocksMarked(t *testing.T) {
	t.Parallel()
	for _, file := range guides(t) {
		lines := readDoc(t, file)
		bs, err := blocks(file, lines)
		require.NoError(t, err)
		comments := 0
		for _, l := range lines {
			if notRunRE.MatchString(l) {
				comments++
			}
		}
		marked := 0
		for _, b := range bs {
			if !b.marked {
				continue
			}
			marked++
			require.True(t, b.command(), "%s: a \"not run\" comment on a %q block, which is never run", b, b.lang)
			require.NotEmpty(t, b.notRun, "%s: a \"not run\" comment must say why", b)
		}
		require.Equal(t, comments, marked, "%s: a \"not run\" comment is next to no command block", file)
	}
}

var (
	linkRE    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	inlineRE  = regexp.MustCompile("`[^`]*`")
	headingRE = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
)

// TestLinks checks that every relative link of the documents points to a
// file that exists, and an anchor to a heading of its document.
func TestLinks(t *testing.T) {
	t.Parallel()
	anchors := map[string]map[string]bool{}
	anchorsOf := func(file string) map[string]bool {
		if a, ok := anchors[file]; ok {
			return a
		}
		a := headingAnchors(readDoc(t, file))
		anchors[file] = a
		return a
	}
	checked := 0
	for _, file := range documents(t) {
		lines := readDoc(t, file)
		inBlock := false
		for i, l := range lines {
			if fenceRE.MatchString(l) {
				inBlock = !inBlock
				continue
			}
			if inBlock {
				continue
			}
			for _, m := range linkRE.FindAllStringSubmatch(inlineRE.ReplaceAllString(l, ""), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				checked++
				where := fmt.Sprintf("%s:%d", file, i+1)
				path, anchor, _ := strings.Cut(target, "#")
				dest := file
				if path != "" {
					dest = filepath.ToSlash(filepath.Join(filepath.Dir(file), path))
					_, err := os.Stat(filepath.Join(root, dest))
					require.NoError(t, err, "%s: the link %q points to nothing", where, target)
				}
				if anchor != "" {
					require.True(t, strings.HasSuffix(dest, ".md"), "%s: the link %q has an anchor in a file that is not Markdown", where, target)
					require.True(t, anchorsOf(dest)[anchor], "%s: the link %q: %s has no heading whose anchor is #%s", where, target, dest, anchor)
				}
			}
		}
	}
	require.Greater(t, checked, 50, "the links were not found")
}

// headingAnchors returns the anchors GitHub gives a document's headings:
// lower case, punctuation dropped, spaces as hyphens, "-1", "-2", ... on
// a repeated one.
func headingAnchors(lines []string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	inBlock := false
	for _, l := range lines {
		if fenceRE.MatchString(l) {
			inBlock = !inBlock
			continue
		}
		m := headingRE.FindStringSubmatch(l)
		if inBlock || m == nil {
			continue
		}
		a := slug(m[2])
		if n := seen[a]; n > 0 {
			out[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestSlug(t *testing.T) {
	t.Parallel()
	for heading, want := range map[string]string{
		"HTTP Tasks' connections":                           "http-tasks-connections",
		"Without AWS: local functions, mocks, callbacks":    "without-aws-local-functions-mocks-callbacks",
		"stepwise run":                                      "stepwise-run",
		"Durability: a replay log, not a stored frame tree": "durability-a-replay-log-not-a-stored-frame-tree",
		"`--db` and PostgreSQL":                             "--db-and-postgresql",
	} {
		require.Equal(t, want, slug(heading), heading)
	}
}

func TestBlocks(t *testing.T) {
	t.Parallel()
	lines := strings.Split(`text
<!-- not run: serves until stopped -->
`+"```sh"+`
stepwise serve
`+"```"+`

  `+"```sh"+`
  stepwise run a.json
  `+"```"+`
`+"```console"+`
$ stepwise eval --jsonata 1
{"value":1}
`+"```"+`
<!-- not run: needs PostgreSQL -->`, "\n")
	bs, err := blocks("x.md", lines)
	require.NoError(t, err)
	require.Len(t, bs, 3)
	require.Equal(t, block{file: "x.md", line: 3, lang: "sh", body: []string{"stepwise serve"}, notRun: "serves until stopped", marked: true}, bs[0])
	require.Equal(t, block{file: "x.md", line: 7, lang: "sh", body: []string{"stepwise run a.json"}}, bs[1])
	require.Equal(t, block{file: "x.md", line: 10, lang: "console", body: []string{"$ stepwise eval --jsonata 1", `{"value":1}`}, notRun: "needs PostgreSQL", marked: true}, bs[2])

	_, err = blocks("y.md", []string{"```sh", "stepwise serve"})
	require.EqualError(t, err, "y.md:1: a fenced block that is never closed")
}

// namedPath is a source file or folder a document names in code spans:
// a path from the repository's top, ending in .go or /.
var namedPath = regexp.MustCompile("`([a-z][a-z0-9_\\-]*(?:/[a-z0-9_.\\-]+)*/(?:[a-z0-9_\\-]+\\.go)?)`")

// Every source file or folder a document names by its path from the top
// exists, so that a move or a rename that leaves a document behind fails
// here. A path given relative to another (`sqlcore/execution.go` after
// `store/internal/`) is written in full.
func TestNamedPathsExist(t *testing.T) {
	t.Parallel()
	var missing []string
	for _, file := range documents(t) {
		for n, line := range readDoc(t, file) {
			for _, m := range namedPath.FindAllStringSubmatch(line, -1) {
				p := m[1]
				if strings.HasPrefix(p, "testdata/") || !strings.ContainsRune(strings.TrimSuffix(p, "/"), '/') && !strings.HasSuffix(p, ".go") {
					continue // a test's own data folder, or a bare word such as `bin/`
				}
				if _, err := os.Stat(filepath.Join(root, p)); err != nil {
					missing = append(missing, fmt.Sprintf("%s:%d names %s, which is not there", file, n+1, p))
				}
			}
		}
	}
	require.Empty(t, missing)
}

func TestNamedPath(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]string{
		"in `server/api.go` and": "server/api.go",
		"`engine/start/`":        "engine/start/",
		"`store/`":               "store/",
		"`go test ./...`":        "",
		"`a/b.json`":             "",
	} {
		m := namedPath.FindStringSubmatch(text)
		if want == "" {
			require.Nil(t, m, text)
			continue
		}
		require.Equal(t, want, m[1], text)
	}
}
