// Package pgtest runs a throwaway PostgreSQL cluster for tests: one per
// test binary, started the first time a test asks for a database and
// stopped when the binary's tests end. Each test gets a database of its
// own, dropped when the test ends.
//
// A package whose tests use it runs them through Main (or Wrap) so that
// the cluster is stopped and its directory removed:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
//	// or, with goleak:
//	func TestMain(m *testing.M) { goleak.VerifyTestMain(pgtest.Wrap(m)) }
//
//	func TestSomething(t *testing.T) {
//		url := pgtest.NewDatabase(t) // postgres://postgres@127.0.0.1:PORT/stepwise_test_1?sslmode=disable
//		...
//	}
//
// Should the binary die without running Main's end (a panic, a timeout, a
// kill), a watchdog process stops the cluster and removes its directory
// within a second or two.
//
// # Binaries
//
// The server binaries are looked for in /usr/lib/postgresql/15/bin, then
// the newest /usr/lib/postgresql/*/bin, then `pg_config --bindir`, then
// PATH. Without them a test that asks for a database is skipped with a
// note on installing them (apt-get install postgresql, or
// scripts/install-postgresql.sh), except when the CI environment variable
// is set: there it fails, as CI must run these tests.
//
// PostgreSQL refuses to run as root. Under root the cluster's directory
// belongs to the postgres user and initdb and pg_ctl run as that user
// through runuser.
//
// The cluster trusts every local connection, listens on 127.0.0.1 on a
// free port, and runs with fsync off: it is for tests only.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"stepwise/internal/testkit/slowtest"
)

// InstallHint says how to get the server binaries.
const InstallHint = "install PostgreSQL's server (apt-get install postgresql, or scripts/install-postgresql.sh)"

var (
	wrapped atomic.Bool // Main or Wrap runs this binary's tests

	startOnce sync.Once
	shared    *cluster
	startErr  error
	missing   bool // startErr is that the binaries are not installed

	dbSeq atomic.Int64
)

// M is a *testing.M whose Run stops the cluster after the tests.
type M struct{ m *testing.M }

// Wrap returns m with a Run that stops the cluster, if one was started,
// once the tests have run, for a TestMain that hands m on (such as
// goleak.VerifyTestMain).
func Wrap(m *testing.M) *M {
	wrapped.Store(true)
	return &M{m: m}
}

// Run runs the tests, then stops the cluster. A failure to stop it fails
// the run.
func (w *M) Run() int {
	code := w.m.Run()
	if err := stop(); err != nil {
		fmt.Fprintln(os.Stderr, "pgtest:", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// Main runs the tests, stops the cluster and exits; a package's TestMain
// calls it.
func Main(m *testing.M) { os.Exit(Wrap(m).Run()) }

// Start returns the URL of the cluster's postgres database, starting the
// cluster if it is not running yet. Without the server binaries the test
// is skipped, or fails when the CI environment variable is set.
func Start(t testing.TB) string {
	t.Helper()
	return start(t).url("postgres")
}

// NewDatabase creates an empty database on the cluster and returns its
// URL; the database is dropped when t ends (with whatever connections are
// left to it).
func NewDatabase(t testing.TB) string {
	t.Helper()
	c := start(t)
	name := fmt.Sprintf("stepwise_test_%d", dbSeq.Add(1))
	ctx := context.Background()
	if _, err := c.admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+c.createOptions); err != nil {
		t.Fatalf("pgtest: create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		if _, err := c.admin.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})
	return c.url(name)
}

// start starts the shared cluster once, and fails or skips t if it
// cannot be.
func start(t testing.TB) *cluster {
	t.Helper()
	if !wrapped.Load() {
		t.Fatal("pgtest: the package's TestMain must run the tests through pgtest.Main(m) or pgtest.Wrap(m), which stop the cluster")
	}
	slowtest.Require(t, "PostgreSQL")
	startOnce.Do(func() {
		shared, missing, startErr = startCluster()
	})
	if startErr != nil {
		if missing && os.Getenv("CI") == "" {
			t.Skipf("pgtest: %v; %s", startErr, InstallHint)
		}
		t.Fatalf("pgtest: %v", startErr)
	}
	return shared
}

// stop stops the shared cluster if it was started.
func stop() error {
	var c *cluster
	startOnce.Do(func() {}) // no cluster can start after this
	c = shared
	if c == nil {
		return nil
	}
	return c.stop()
}

// cluster is a running PostgreSQL cluster.
type cluster struct {
	bindir     string
	dir        string // holds data/, the log and the socket
	port       int
	asPostgres bool // root: run the binaries as the postgres user
	admin      *pgxpool.Pool
	watchdog   *exec.Cmd
	// createOptions end CREATE DATABASE: copying the template's files is
	// several times faster than logging them (PostgreSQL 15's default)
	// when nothing is synced.
	createOptions string
}

func (c *cluster) dataDir() string { return filepath.Join(c.dir, "data") }

func (c *cluster) url(database string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.port, database)
}

// command runs one of the cluster's binaries, as the postgres user when
// this process is root.
func (c *cluster) command(name string, args ...string) *exec.Cmd {
	path := filepath.Join(c.bindir, name)
	var cmd *exec.Cmd
	if c.asPostgres {
		cmd = exec.Command("runuser", append([]string{"-u", "postgres", "--", path}, args...)...)
	} else {
		cmd = exec.Command(path, args...)
	}
	cmd.Dir = c.dir // readable by the user the binary runs as
	return cmd
}

func (c *cluster) run(name string, args ...string) error {
	out, err := c.command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w: %s", name, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// startCluster creates and starts a cluster. missing reports that the
// server binaries are not installed.
func startCluster() (_ *cluster, missing bool, _ error) {
	bindir, err := findBindir()
	if err != nil {
		return nil, true, err
	}
	c := &cluster{bindir: bindir, asPostgres: os.Geteuid() == 0}
	if c.dir, err = os.MkdirTemp("", "pgtest-"); err != nil {
		return nil, false, err
	}
	if err := c.setUp(); err != nil {
		c.stop()
		return nil, false, err
	}
	return c, false, nil
}

func (c *cluster) setUp() error {
	if c.asPostgres {
		u, err := user.Lookup("postgres")
		if err != nil {
			return fmt.Errorf("running as root, the cluster must run as the postgres user: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(c.dir, uid, gid); err != nil {
			return err
		}
	}
	if err := c.run("initdb", "-D", c.dataDir(), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"); err != nil {
		return err
	}
	c.startWatchdog()
	// The port is free when picked but may be taken before the server
	// binds it: try a few.
	var err error
	for range 3 {
		if c.port, err = freePort(); err != nil {
			return err
		}
		opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300", c.port, c.dir)
		if err = c.run("pg_ctl", "-D", c.dataDir(), "-o", opts, "-l", filepath.Join(c.dir, "log"), "-w", "-t", "60", "start"); err == nil {
			break
		}
		if log, rerr := os.ReadFile(filepath.Join(c.dir, "log")); rerr == nil {
			err = fmt.Errorf("%w\n%s", err, log)
		}
		// A server still starting when pg_ctl gave up holds the data
		// directory (and another port): stop it before the next try.
		_ = c.run("pg_ctl", "-D", c.dataDir(), "-m", "immediate", "-w", "stop")
	}
	if err != nil {
		return err
	}
	cfg, err := pgxpool.ParseConfig(c.url("postgres"))
	if err != nil {
		return err
	}
	cfg.MaxConns = 4
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if c.admin, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		return err
	}
	var version int
	if err := c.admin.QueryRow(ctx, "SELECT current_setting('server_version_num')::int").Scan(&version); err != nil {
		return err
	}
	if version >= 150000 {
		c.createOptions = " STRATEGY FILE_COPY"
	}
	return nil
}

// startWatchdog starts a process that stops the cluster and removes its
// directory once this process is gone, however it ended. It runs in a
// session of its own so that a signal to the test's process group does
// not take it along.
func (c *cluster) startWatchdog() {
	stopCmd := c.command("pg_ctl", "-D", c.dataDir(), "-m", "immediate", "stop")
	script := fmt.Sprintf("while kill -0 %d 2>/dev/null; do sleep 1; done; %s >/dev/null 2>&1; rm -rf %s",
		os.Getpid(), shellJoin(stopCmd.Args), shellQuote(c.dir))
	cmd := exec.Command("sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if cmd.Start() == nil {
		c.watchdog = cmd
	}
}

// stop stops the server and removes the cluster's directory.
func (c *cluster) stop() error {
	if c.admin != nil {
		c.admin.Close()
	}
	if c.watchdog != nil {
		_ = c.watchdog.Process.Kill()
		_ = c.watchdog.Wait()
	}
	var errs []error
	if _, err := os.Stat(filepath.Join(c.dataDir(), "postmaster.pid")); err == nil {
		errs = append(errs, c.run("pg_ctl", "-D", c.dataDir(), "-m", "immediate", "-w", "stop"))
	}
	errs = append(errs, os.RemoveAll(c.dir))
	return errors.Join(errs...)
}

// findBindir finds the directory of initdb, pg_ctl and postgres.
func findBindir() (string, error) {
	has := func(dir string) bool {
		for _, name := range []string{"initdb", "pg_ctl", "postgres"} {
			if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.IsDir() {
				return false
			}
		}
		return true
	}
	candidates := []string{"/usr/lib/postgresql/15/bin"}
	others, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(others, func(a, b string) int { return versionOf(b) - versionOf(a) }) // newest first
	candidates = append(candidates, others...)
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		candidates = append(candidates, strings.TrimSpace(string(out)))
	}
	if path, err := exec.LookPath("initdb"); err == nil {
		candidates = append(candidates, filepath.Dir(path))
	}
	for _, dir := range candidates {
		if has(dir) {
			return dir, nil
		}
	}
	return "", errors.New("PostgreSQL server binaries (initdb, pg_ctl, postgres) not found in /usr/lib/postgresql/*/bin, pg_config --bindir or PATH")
}

// versionOf is the major version in /usr/lib/postgresql/VERSION/bin.
func versionOf(bindir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(bindir)))
	return v
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func shellJoin(args []string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = shellQuote(a)
	}
	return strings.Join(quoted, " ")
}
