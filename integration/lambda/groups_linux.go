package lambda

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
)

// Processes that outlive the server
//
// A function's process (a handler's, a bootstrap, a command) runs in a
// process group of its own. It gets SIGKILL when the server dies, even
// by kill -9 (the parent-death signal, Pdeathsig): Linux sends it when
// the thread that started the process ends, so every process is started
// from one goroutine locked to its thread for good (startLocked). What
// the process started gets no such signal, so the groups are recorded:
// each server keeps a file, <dir>/<pid>-<n>.groups, of its live groups (the
// leader's id and start time), written as they start and end, and
// removed when the server stops. A server starting (RecordGroups) kills
// the groups of every file whose server is gone — the same process id
// with the same start time since the same boot is a server still
// running, left alone — and deletes the file. A group is killed only
// while its leader is the recorded process, or, with the leader gone,
// while its members started after it: a process id reused since is
// never signalled. dir is <db>.functions next to a SQLite file, or a
// folder of the user's (see DefaultGroupsDir) for an in-memory or a
// PostgreSQL database; servers sharing one tell their files apart by
// process id.

// records counts the records this process made.
var records atomic.Int64

// starts carries the processes to start to the goroutine locked to its
// thread.
var (
	starts    = make(chan startRequest)
	startOnce sync.Once
)

type startRequest struct {
	cmd  *exec.Cmd
	done chan error
}

// startLocked starts cmd, which gets SIGKILL when the server dies, from
// the thread that never ends.
func startLocked(cmd *exec.Cmd) error {
	startOnce.Do(func() {
		go func() {
			// Never unlocked: the thread lives as long as the process.
			runtime.LockOSThread()
			for r := range starts {
				r.done <- r.cmd.Start()
			}
		}()
	})
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	r := startRequest{cmd: cmd, done: make(chan error, 1)}
	starts <- r
	return <-r.done
}

// groupRecord is the file of a server's live process groups.
type groupRecord struct {
	mu     sync.Mutex
	path   string
	header string
	groups map[int]uint64 // process group id → its leader's start time
	closed bool
}

// DefaultGroupsDir is where the servers of an in-memory or PostgreSQL
// database record their functions' process groups: stepwise/functions
// in $XDG_RUNTIME_DIR, else in the user's cache folder, else in the
// temporary folder.
func DefaultGroupsDir() string {
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "stepwise", "functions")
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "stepwise", "functions")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("stepwise-%d", os.Getuid()), "functions")
}

// RecordGroups kills the process groups that servers now gone left in
// dir ("": DefaultGroupsDir), and records the functions' groups there
// from now on. It returns how many groups it killed. It is called before
// the first invoke.
func (l *Local) RecordGroups(dir string) (killed int, err error) {
	if dir == "" {
		dir = DefaultGroupsDir()
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, fmt.Errorf("the functions' process groups: %w", err)
	}
	boot := bootID()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("the functions' process groups: %w", err)
	}
	var errs []error
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".groups") || !e.Type().IsRegular() {
			continue
		}
		n, err := killLeftGroups(filepath.Join(dir, name), boot)
		killed += n
		if err != nil {
			errs = append(errs, err)
		}
	}
	self := os.Getpid()
	start, _ := procStart(self)
	// Named by process id, and a count for the servers one process runs
	// (tests).
	name := fmt.Sprintf("%d-%d.groups", self, records.Add(1))
	r := &groupRecord{path: filepath.Join(dir, name),
		header: fmt.Sprintf("stepwise %d %d %s\n", self, start, boot), groups: map[int]uint64{}}
	if err := r.write(); err != nil {
		return killed, errors.Join(append(errs, err)...)
	}
	l.groups.Store(r)
	return killed, errors.Join(errs...)
}

// killLeftGroups kills the groups of a record whose server is gone, and
// removes it; a live server's is left alone.
func killLeftGroups(path, boot string) (killed int, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	lines := strings.Split(string(b), "\n")
	var owner int
	var ownerStart uint64
	var ownerBoot string
	if _, err := fmt.Sscanf(lines[0], "stepwise %d %d %s", &owner, &ownerStart, &ownerBoot); err != nil {
		return 0, fmt.Errorf("%s: not a record of process groups", path)
	}
	if ownerBoot != boot {
		// Written before a reboot: its processes are gone.
		return 0, os.Remove(path)
	}
	if st, ok := procStart(owner); ok && st == ownerStart {
		return 0, nil
	}
	for _, line := range lines[1:] {
		var pgid int
		var leaderStart uint64
		if _, err := fmt.Sscanf(line, "%d %d", &pgid, &leaderStart); err != nil || pgid <= 1 {
			continue
		}
		if groupIsOurs(pgid, leaderStart) && syscall.Kill(-pgid, syscall.SIGKILL) == nil {
			killed++
		}
	}
	return killed, os.Remove(path)
}

// groupIsOurs tells whether process group pgid is the one recorded: its
// leader is the process that started then, or, the leader gone, it has
// members that started after it (an id is not reused while a group of
// that id has members).
func groupIsOurs(pgid int, leaderStart uint64) bool {
	if st, ok := procStart(pgid); ok {
		return st == leaderStart
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return false
	}
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		if g, st, ok := procStat(pid); ok && g == pgid && st >= leaderStart {
			return true
		}
	}
	return false
}

// add records a group that started.
func (r *groupRecord) add(pgid int) {
	if r == nil {
		return
	}
	st, _ := procStart(pgid)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	r.groups[pgid] = st
	_ = r.write()
}

// remove forgets a group that was killed or ended.
func (r *groupRecord) remove(pgid int) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	if _, ok := r.groups[pgid]; ok {
		delete(r.groups, pgid)
		_ = r.write()
	}
}

// close kills the groups still recorded and removes the record: the
// server is stopping.
func (r *groupRecord) close() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	for pgid := range r.groups {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
	_ = os.Remove(r.path)
}

// write replaces the record's file (written aside and renamed: a file
// is never seen half written). Called with mu held.
func (r *groupRecord) write() error {
	var b bytes.Buffer
	b.WriteString(r.header)
	for pgid, st := range r.groups {
		fmt.Fprintf(&b, "%d %d\n", pgid, st)
	}
	tmp := r.path + ".tmp"
	if err := os.WriteFile(tmp, b.Bytes(), 0o600); err != nil {
		return fmt.Errorf("the functions' process groups: %w", err)
	}
	if err := os.Rename(tmp, r.path); err != nil {
		return fmt.Errorf("the functions' process groups: %w", err)
	}
	return nil
}

// bootID names this boot of the machine.
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}

// procStart is a process's start time (clock ticks since boot).
func procStart(pid int) (uint64, bool) {
	_, st, ok := procStat(pid)
	return st, ok
}

// procStat is a process's group and start time, from /proc/PID/stat.
func procStat(pid int) (pgid int, start uint64, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	// pid (comm) state ppid pgrp session tty_nr tpgid flags minflt
	// cminflt majflt cmajflt utime stime cutime cstime priority nice
	// num_threads itrealvalue starttime ...; comm may hold anything.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return 0, 0, false
	}
	pgid, err1 := strconv.Atoi(f[2])
	start, err2 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return pgid, start, true
}
