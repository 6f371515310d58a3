package docs

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/internal/testkit/slowtest"
)

// The guides write the server as 127.0.0.1:8083; their commands run
// against a server on a free port, put in its place.
const docAddr = "127.0.0.1:8083"

// prelude starts every script: it stops at the first failing command,
// and gives "stepwise clock" and "stepwise deploy", whose --endpoint
// defaults to 127.0.0.1:8083, the server's address.
const prelude = `set -eo pipefail
stepwise() {
  case "$1" in
  clock|deploy)
    case " $* " in
    *" --endpoint "*|*" --endpoint="*) ;;
    *) set -- "$@" --endpoint "$STEPWISE_DOCS_ENDPOINT" ;;
    esac ;;
  esac
  command stepwise "$@"
}
`

var (
	serveLineRE = regexp.MustCompile(`^(?:\./bin/|go run \./cmd/)?stepwise serve\b`)
	startRE     = regexp.MustCompile(`on (https?)://(\S+) `)
	commentRE   = regexp.MustCompile(`\s+#\s[^'"]*$`)
)

// TestGuideCommands runs the command blocks of the README, the
// contributor's guide and the guides in docs/ against a freshly built
// stepwise, each document against a server of its own on a temporary
// SQLite file, in a folder holding the repository's top-level entries
// and the files of docs/testdata. A block's "stepwise serve" line starts
// the server the rest of the block talks to (on a free port), in place of
// the document's own; "go run ./cmd/stepwise" is the built binary. A sh
// block must succeed; a console block's commands must print what the
// block shows.
func TestGuideCommands(t *testing.T) {
	slowtest.Require(t, "builds stepwise and runs the guides' commands with the AWS CLI")
	for _, tool := range []string{"aws", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("the %s command is not on PATH", tool)
			}
			t.Skipf("the %s command is not on PATH; install it to run the guides' commands", tool)
		}
	}
	bin := buildStepwise(t)
	run, notRun := 0, 0
	for _, file := range guides(t) {
		bs, err := blocks(file, readDoc(t, file))
		require.NoError(t, err)
		var todo []block
		for _, b := range bs {
			switch {
			case !b.command():
			case b.marked:
				notRun++
				t.Logf("%s: not run: %s", b, b.notRun)
			default:
				todo = append(todo, b)
			}
		}
		if len(todo) == 0 {
			continue
		}
		run += len(todo)
		t.Run(file, func(t *testing.T) {
			g := newGuideRun(t, bin)
			for _, b := range todo {
				g.block(t, b)
			}
		})
	}
	t.Logf("%d command blocks run, %d not run", run, notRun)
	require.Greater(t, run, 20, "the guides' command blocks were not found")
}

// buildStepwise builds the binary into a temporary folder.
func buildStepwise(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "stepwise")
	out, err := exec.Command("go", "build", "-o", bin, "stepwise/cmd/stepwise").CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	return bin
}

// guideRun is one document's run: its folder and its default server.
type guideRun struct {
	bin, dir string
	server   *server // the document's own, started at its first use
}

func newGuideRun(t *testing.T, bin string) *guideRun {
	t.Helper()
	dir := t.TempDir()
	top, err := filepath.Abs(root)
	require.NoError(t, err)
	entries, err := os.ReadDir(top)
	require.NoError(t, err)
	for _, e := range entries {
		name := e.Name()
		switch {
		case name == ".git" || name == "bin" || strings.HasPrefix(name, "stepwise"):
		case name == "examples": // a copy, which the commands walk as a folder
			require.NoError(t, os.CopyFS(filepath.Join(dir, name), os.DirFS(filepath.Join(top, name))))
		default:
			require.NoError(t, os.Symlink(filepath.Join(top, name), filepath.Join(dir, name)))
		}
	}
	data, err := os.ReadDir(filepath.Join(top, "docs", "testdata"))
	require.NoError(t, err)
	for _, e := range data {
		b, err := os.ReadFile(filepath.Join(top, "docs", "testdata", e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644))
	}
	require.NoError(t, os.Mkdir(filepath.Join(dir, "bin"), 0o755))
	require.NoError(t, os.Symlink(bin, filepath.Join(dir, "bin", "stepwise")))
	return &guideRun{bin: bin, dir: dir}
}

func (g *guideRun) env(addr string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") && !strings.HasPrefix(kv, "PATH=") {
			env = append(env, kv)
		}
	}
	return append(env,
		"PATH="+filepath.Join(g.dir, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"),
		"AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local", "AWS_DEFAULT_REGION=us-east-1", "AWS_PAGER=",
		"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null",
		"STEPWISE_DOCS_ENDPOINT=http://"+addr)
}

// block runs one command block.
func (g *guideRun) block(t *testing.T, b block) {
	t.Helper()
	if b.lang == "console" {
		g.console(t, b)
		return
	}
	var own *server // the block's own server, from its serve line
	defer func() {
		if own != nil {
			own.stop(t)
		}
	}()
	var chunk []string
	flush := func() {
		if len(chunk) == 0 {
			return
		}
		s := own
		if s == nil {
			s = g.defaultServer(t)
		}
		script := strings.Join(chunk, "\n")
		out, err := g.script(s.addr, script)
		require.NoError(t, err, "%s: the block failed:\n%s\n--- its output:\n%s", b, script, out)
		chunk = nil
	}
	for i := 0; i < len(b.body); i++ {
		line := b.body[i]
		if !serveLineRE.MatchString(line) {
			chunk = append(chunk, line)
			continue
		}
		flush()
		for strings.HasSuffix(line, `\`) && i+1 < len(b.body) {
			i++
			line = strings.TrimSuffix(line, `\`) + " " + strings.TrimSpace(b.body[i])
		}
		if own != nil {
			own.stop(t)
		}
		own = g.serve(t, b, line)
	}
	flush()
}

// console runs a console block's "$ command" lines and compares what
// each prints with the lines that follow it.
func (g *guideRun) console(t *testing.T, b block) {
	t.Helper()
	s := g.defaultServer(t)
	var cmd string
	var want []string
	check := func() {
		if cmd == "" {
			return
		}
		out, _ := g.script(s.addr, cmd) // the exit status is the command's to choose
		require.Equal(t, trimLines(strings.Join(want, "\n")), trimLines(out), "%s: $ %s", b, cmd)
	}
	for _, l := range b.body {
		if c, ok := strings.CutPrefix(l, "$ "); ok {
			check()
			cmd, want = c, nil
			continue
		}
		want = append(want, l)
	}
	check()
}

func trimLines(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return strings.Join(lines, "\n")
}

// script runs a script of a block in the document's folder, against the
// server at addr.
func (g *guideRun) script(addr, script string) (string, error) {
	script = strings.ReplaceAll(script, "go run ./cmd/stepwise", "stepwise")
	script = strings.ReplaceAll(script, docAddr, addr)
	script = strings.ReplaceAll(script, "localhost:8083", addr)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", prelude+script)
	cmd.Dir = g.dir
	cmd.Env = g.env(addr)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (g *guideRun) defaultServer(t *testing.T) *server {
	t.Helper()
	if g.server == nil {
		g.server = g.start(t, "the document's server", []string{g.bin, "serve", "--db", filepath.Join(g.dir, "stepwise.db"), "--addr", "127.0.0.1:0"})
		t.Cleanup(func() { g.server.stop(t) })
	}
	return g.server
}

// serve starts a block's "stepwise serve" line on a free port.
func (g *guideRun) serve(t *testing.T, b block, line string) *server {
	t.Helper()
	line = commentRE.ReplaceAllString(line, "")
	line = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(line), "&"))
	line = strings.Replace(line, "go run ./cmd/stepwise", "stepwise", 1)
	if !strings.Contains(line, "--db") { // not the document's server's file
		line += " --db " + filepath.Join(t.TempDir(), "block.db")
	}
	return g.start(t, b.String(), []string{"bash", "-c", "exec " + line + " --addr 127.0.0.1:0"})
}

// server is a stepwise serve process.
type server struct {
	cmd  *exec.Cmd
	addr string
	done chan error
	what string
	logs *logs
}

func (g *guideRun) start(t *testing.T, what string, argv []string) *server {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = g.dir
	cmd.Env = g.env(docAddr)
	l := &logs{}
	cmd.Stderr = l
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("%s: the server printed nothing: %s", what, l)
	}
	m := startRE.FindStringSubmatch(lines.Text())
	require.NotNil(t, m, "%s: unexpected start-up line %q", what, lines.Text())
	s := &server{cmd: cmd, addr: m[2], done: make(chan error, 1), what: what, logs: l}
	go func() {
		io.Copy(io.Discard, stdout)
		s.done <- cmd.Wait()
	}()
	// Serving, it answers its liveness probe; only then is the server
	// ready for what the block does, and for a SIGTERM.
	scheme := m[1]
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := client.Get(scheme + "://" + s.addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the server did not answer /healthz within a minute: %v\n%s", what, err, l)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop ends the server with SIGTERM, as an operator would.
func (s *server) stop(t *testing.T) {
	t.Helper()
	if s.cmd.ProcessState != nil {
		return
	}
	require.NoError(t, s.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-s.done:
		// serve takes SIGTERM from before it says it serves: it ends
		// cleanly, whenever the signal comes.
		require.NoError(t, err, "%s: the server did not stop cleanly:\n%s", s.what, s.logs)
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
		t.Fatalf("%s: the server did not stop within 30s of SIGTERM", s.what)
	}
}

// logs collects a server's stderr.
type logs struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (l *logs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// TestGuideCommandFlags checks every stepwise command of the guides'
// command blocks, those not run included: its verb exists and each of its
// flags is one the verb's --help lists.
func TestGuideCommandFlags(t *testing.T) {
	slowtest.Require(t, "builds stepwise and asks it for its flags")
	bin := buildStepwise(t)
	helps := map[string]string{}
	help := func(verb []string) (string, error) {
		key := strings.Join(verb, " ")
		if h, ok := helps[key]; ok {
			return h, nil
		}
		out, err := exec.Command(bin, append(verb, "--help")...).CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("stepwise %s --help: %v: %s", key, err, out)
		}
		helps[key] = string(out)
		return string(out), nil
	}
	checked := 0
	for _, file := range guides(t) {
		bs, err := blocks(file, readDoc(t, file))
		require.NoError(t, err)
		for _, b := range bs {
			if !b.command() {
				continue
			}
			for _, c := range stepwiseCommands(b) {
				verb := c[:1]
				if len(c) > 1 && c[0] == "clock" && c[1] == "advance" {
					verb = c[:2]
				}
				h, err := help(verb)
				require.NoError(t, err, "%s: stepwise %s", b, strings.Join(c, " "))
				for _, arg := range c[len(verb):] {
					name, ok := strings.CutPrefix(arg, "--")
					if !ok || name == "" {
						continue
					}
					name, _, _ = strings.Cut(name, "=")
					require.Regexp(t, `(?m)^\s+(-\w, )?--`+regexp.QuoteMeta(name)+`\b`, h,
						"%s: stepwise %s has no flag --%s", b, strings.Join(verb, " "), name)
					checked++
				}
			}
		}
	}
	require.Greater(t, checked, 30, "the guides' stepwise flags were not found")
}

// stepwiseCommands returns the arguments of each stepwise command of a
// block: the words after "stepwise" (or "./bin/stepwise", "go run
// ./cmd/stepwise") up to the end of the command.
func stepwiseCommands(b block) [][]string {
	var text []string
	for _, l := range b.body {
		if b.lang == "console" {
			c, ok := strings.CutPrefix(l, "$ ")
			if !ok {
				continue
			}
			l = c
		}
		text = append(text, l)
	}
	script := strings.ReplaceAll(strings.Join(text, "\n"), "\\\n", " ")
	var out [][]string
	for _, line := range strings.Split(script, "\n") {
		words := shellWords(line)
		for i := 0; i < len(words); i++ {
			w := words[i]
			start := -1
			switch {
			case w == "stepwise" || w == "./bin/stepwise":
				start = i + 1
			case w == "go" && i+2 < len(words) && words[i+1] == "run" && words[i+2] == "./cmd/stepwise":
				start = i + 3
			}
			if start < 0 || start >= len(words) || strings.HasPrefix(words[start], "-") {
				continue
			}
			end := start
			for end < len(words) && !isOperator(words[end]) {
				end++
			}
			out = append(out, words[start:end])
			i = end
		}
	}
	return out
}

func isOperator(w string) bool {
	switch w {
	case "|", "||", "&&", ";", "&", "#":
		return true
	}
	return strings.HasPrefix(w, "2>") || strings.HasPrefix(w, ">") || strings.HasPrefix(w, "#")
}

// shellWords splits a line into words as the shell would, near enough:
// quotes kept together, operators their own words, a comment dropped.
func shellWords(line string) []string {
	var words []string
	var cur strings.Builder
	in := false
	var quote rune
	flush := func() {
		if in {
			words = append(words, cur.String())
			cur.Reset()
			in = false
		}
	}
	for _, r := range line {
		if r == '#' && quote == 0 && !in { // a comment, to the end of the line
			break
		}
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ' || r == '\t':
			flush()
		case r == '|' || r == ';' || r == '&':
			flush()
			words = append(words, string(r))
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	flush()
	return words
}

func TestStepwiseCommands(t *testing.T) {
	t.Parallel()
	b := block{lang: "sh", body: []string{
		"stepwise serve --addr 0.0.0.0:8443 --credentials /etc/stepwise/credentials \\",
		"  --tls-cert a.pem   # a comment, ./bin/stepwise serve",
		"go run ./cmd/stepwise deploy cdk.out && stepwise clock advance 24h --endpoint=http://x",
		"VERSION=v1 scripts/build-release.sh; ./bin/stepwise run x.json --input '{\"a\": 1}' | jq .",
		"stepwise --version",
	}}
	require.Equal(t, [][]string{
		{"serve", "--addr", "0.0.0.0:8443", "--credentials", "/etc/stepwise/credentials", "--tls-cert", "a.pem"},
		{"deploy", "cdk.out"},
		{"clock", "advance", "24h", "--endpoint=http://x"},
		{"run", "x.json", "--input", `{"a": 1}`},
	}, stepwiseCommands(b))
}
