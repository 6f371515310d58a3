package cli

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"stepwise/config"
)

// dbProbe reads, on a PostgreSQL database the servers share, what the
// scale-out model of docs/design/store.md needs besides the servers' own CPU:
// the database's write transactions (the transaction ids it handed out),
// its top-level statements (pg_stat_statements, when installed), its WAL
// bytes (the WAL position) and flushes (pg_stat_wal) and, when the
// database runs on this machine, the CPU of its processes (from /proc).
// Whatever the URL's user may not read is left out.
type dbProbe struct {
	conn       *pgx.Conn
	postmaster int // the server's postmaster when it runs here, else 0
}

// dbSample is the database's counters at one moment; a counter that
// could not be read is -1.
type dbSample struct {
	writes, stmts, walSyncs, walBytes int64
	cpu                               float64 // seconds
}

// statsSettle is how long a sample waits first, so that the backends
// have published most of their WAL flushes: a busy backend publishes its
// counts once a second (PostgreSQL's PGSTAT_MIN_INTERVAL), and one that
// went idle within a second of its last publication only ten seconds
// later, so the flushes are within a second's worth of the truth. The
// other counters are exact: transaction ids, the WAL position and
// pg_stat_statements move at once.
const statsSettle = 1100 * time.Millisecond

// openDBProbe connects to url; it returns nil (and no error) where the
// database cannot be read, the probe being optional.
func openDBProbe(ctx context.Context, url string) *dbProbe {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil
	}
	p := &dbProbe{conn: conn}
	var pid int
	if conn.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid) == nil {
		p.postmaster = localPostmaster(pid)
	}
	return p
}

// cpu is the CPU seconds the database's processes used so far, or -1
// where they are not on this machine.
func (p *dbProbe) cpu() float64 {
	if p == nil || p.postmaster == 0 {
		return -1
	}
	return clusterCPU(p.postmaster)
}

func (p *dbProbe) close() {
	if p != nil {
		p.conn.Close(context.Background())
	}
}

// analyze brings the planner's statistics up to date, as autovacuum
// would have on a database in service: on tables it never analyzed the
// plans a connection caches while they are nearly empty scan them
// whole, at a cost growing with every execution the bench adds.
func (p *dbProbe) analyze(ctx context.Context) error {
	if p == nil {
		return nil
	}
	_, err := p.conn.Exec(ctx, `ANALYZE`)
	return err
}

// sample waits statsSettle, then reads the counters, with the database's
// CPU as it was before the wait: a measurement starts just after the
// sample before it and ends just before the one after it.
func (p *dbProbe) sample(ctx context.Context) dbSample {
	s := dbSample{writes: -1, stmts: -1, walSyncs: -1, walBytes: -1, cpu: p.cpu()}
	if p == nil {
		return s
	}
	time.Sleep(statsSettle)
	p.conn.QueryRow(ctx, `SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint`).Scan(&s.writes)
	p.conn.QueryRow(ctx, `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint`).Scan(&s.walBytes)
	p.conn.QueryRow(ctx, `SELECT sum(calls)::bigint FROM pg_stat_statements
WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&s.stmts)
	p.conn.QueryRow(ctx, `SELECT wal_sync FROM pg_stat_wal`).Scan(&s.walSyncs)
	return s
}

// perUnit describes, for the model, what the database did for each of
// n units (transitions, tasks) between two samples; the probe's own
// statements (four a sample, which write nothing) are taken off. It is empty when nothing
// could be read.
func (s dbSample) perUnit(after dbSample, n int, unit string) string {
	var parts []string
	per := func(a, b int64, own int64) float64 { return float64(b-a-own) / float64(n) }
	if s.cpu >= 0 && after.cpu >= 0 {
		parts = append(parts, fmt.Sprintf("database cpu %.0f µs", (after.cpu-s.cpu)/float64(n)*1e6))
	}
	if s.writes >= 0 && after.writes >= 0 {
		parts = append(parts, fmt.Sprintf("%.4f write transactions", per(s.writes, after.writes, 0)))
	}
	if s.stmts >= 0 && after.stmts >= 0 {
		parts = append(parts, fmt.Sprintf("%.3f statements", per(s.stmts, after.stmts, 4)))
	}
	if s.walSyncs >= 0 && after.walSyncs >= 0 {
		parts = append(parts, fmt.Sprintf("%.4f WAL flushes", per(s.walSyncs, after.walSyncs, 0)))
	}
	if s.walBytes >= 0 && after.walBytes >= 0 {
		parts = append(parts, fmt.Sprintf("%.0f WAL bytes", per(s.walBytes, after.walBytes, 0)))
	}
	if len(parts) == 0 {
		return ""
	}
	return ", " + strings.Join(parts, ", ") + " per " + unit
}

// localPostmaster returns the postmaster of backend pid when that
// backend is a process of this machine (a "postgres" whose parent is a
// "postgres"), else 0.
func localPostmaster(pid int) int {
	comm, ppid, ok := procParent(pid)
	if !ok || comm != "postgres" {
		return 0
	}
	if comm, _, ok := procParent(ppid); !ok || comm != "postgres" {
		return 0
	}
	return ppid
}

// procParent reads a process's command name and parent from /proc.
func procParent(pid int) (comm string, ppid int, ok bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", 0, false
	}
	s := string(data)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open || end+2 > len(s) {
		return "", 0, false
	}
	f := strings.Fields(s[end+2:])
	if len(f) < 2 {
		return "", 0, false
	}
	ppid, err = strconv.Atoi(f[1])
	return s[open+1 : end], ppid, err == nil
}

// clusterCPU is the CPU seconds a PostgreSQL server used so far: its
// postmaster's, with its children that ended (which the kernel adds to
// the postmaster's cutime and cstime), and its live children's.
func clusterCPU(postmaster int) float64 {
	total := procCPUWithChildren(postmaster)
	for _, task := range procTasks(postmaster) {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", postmaster, task))
		if err != nil {
			continue
		}
		for _, child := range strings.Fields(string(data)) {
			if pid, err := strconv.Atoi(child); err == nil {
				total += procCPU(pid)
			}
		}
	}
	return total
}

func procTasks(pid int) []string {
	entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return nil
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return names
}

// procCPUWithChildren is procCPU with the CPU of the process's children
// that ended and were waited for.
func procCPUWithChildren(pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	if len(f) < 15 {
		return 0
	}
	total := 0.0
	for _, i := range []int{11, 12, 13, 14} { // utime, stime, cutime, cstime
		v, _ := strconv.ParseFloat(f[i], 64)
		total += v
	}
	return total / 100 // clock ticks; 100 per second on Linux
}

// printScaleSetup prints what the model needs to know of the machine:
// its cores, shared by the servers, the load generator and, when it
// runs here, the database.
func (c *benchCommand) printScaleSetup(probe *dbProbe) {
	where := "not measured (the database runs elsewhere or cannot be read)"
	switch {
	case probe == nil && !config.IsPostgresURL(c.db):
		where = "in the servers (SQLite)"
	case probe != nil && probe.postmaster != 0:
		where = fmt.Sprintf("measured (postmaster pid %d on this machine)", probe.postmaster)
	}
	fmt.Fprintf(c.Out, "scale: %d nodes, %d cores on this machine shared by the servers and the load generator; database cpu %s\n",
		c.nodes, runtime.NumCPU(), where)
}

// machineBusy is the CPU seconds all the processes of this machine used
// so far, from /proc/stat (-1 where it cannot be read).
func machineBusy() float64 {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return -1
	}
	line, _, _ := strings.Cut(string(data), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return -1
	}
	total := 0.0
	for i, v := range f[1:9] { // user nice system idle iowait irq softirq steal
		if i == 3 || i == 4 {
			continue // idle, iowait
		}
		n, _ := strconv.ParseFloat(v, 64)
		total += n
	}
	return total / 100 // clock ticks; 100 per second on Linux
}

// machineShare says how many of this machine's cores were busy over a
// measurement of elapsed seconds, and how many of them other processes
// than the servers, the load generator and (when it runs here) the
// database kept busy: the model's budget on a machine they share.
func machineShare(busy0, busy1, elapsed, servers, client float64, db0, db1 dbSample) string {
	if busy0 < 0 || busy1 < 0 || elapsed <= 0 {
		return ""
	}
	busy := (busy1 - busy0) / elapsed
	ours := servers + client
	if db0.cpu >= 0 && db1.cpu >= 0 {
		ours += db1.cpu - db0.cpu
	}
	return fmt.Sprintf("; machine: %.2f of %d cores busy, %.2f by other processes", busy, runtime.NumCPU(), max(0, busy-ours/elapsed))
}

// checkConnections warns when the servers' pools may not all fit in the
// database's max_connections: each server keeps up to its pool's size
// (--db-pool-max, else the URL's pool_max_conns, else the larger of 4
// and the cores) and one LISTEN connection, and the bench one.
func (c *benchCommand) checkConnections(ctx context.Context, probe *dbProbe) {
	if probe == nil {
		return
	}
	var limit, reserved int
	if probe.conn.QueryRow(ctx, `SELECT current_setting('max_connections')::int, current_setting('superuser_reserved_connections')::int`).Scan(&limit, &reserved) != nil {
		return
	}
	pool := benchPoolSize(c.db, c.serverArgs)
	if need := c.nodes*(pool+1) + 1; need > limit-reserved {
		fmt.Fprintf(c.Out, "scale: %d nodes may open %d connections, above the database's max_connections %d (less %d reserved): lower --server-arg=--db-pool-max or raise max_connections\n",
			c.nodes, need, limit, reserved)
	}
}

// benchPoolSize is the most connections a server keeps in its pool: its
// --db-pool-max, else the URL's pool_max_conns, else pgx's default.
func benchPoolSize(db string, serverArgs []string) int {
	pool := max(4, runtime.NumCPU())
	if u, err := url.Parse(db); err == nil {
		if n, err := strconv.Atoi(u.Query().Get("pool_max_conns")); err == nil && n > 0 {
			pool = n
		}
	}
	for i, a := range serverArgs {
		v, ok := strings.CutPrefix(a, "--db-pool-max=")
		if !ok && a == "--db-pool-max" && i+1 < len(serverArgs) {
			v, ok = serverArgs[i+1], true
		}
		if n, err := strconv.Atoi(v); ok && err == nil && n > 0 {
			pool = n
		}
	}
	return pool
}
