package lambda

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"stepwise/internal/boundedfile"
)

// Processes that outlive the server
//
// A function's process (a handler's, a bootstrap, a command) runs in a
// process group of its own. It gets SIGKILL when the server dies, even
// by kill -9 (the parent-death signal, Pdeathsig): Linux sends it when
// the thread that started the process ends, so every process is started
// from one goroutine locked to its thread for good (startLocked). What
// the process started gets no such signal. So every function's process
// gets the run's token (runVar=Local.run, a random 128-bit value), which
// what it starts inherits, and each server keeps a record of its run,
// <dir>/<pid>-<random>.groups: its process id, start time, boot, process
// id namespace and token, written once (aside, then renamed) and
// removed when the server stops. A server starting (RecordGroups) reads
// every record: one written before this boot is removed; one of another
// process id namespace (a container sharing the folder) is left alone,
// its server may run; one whose server runs (the same process id with
// the same start time) is left alone; else the server is gone: every
// process of this user whose environment holds that exact token is
// killed, one by one (through a pidfd opened before it is checked, so a
// process id reused meanwhile is never signalled), and the record
// removed. Nothing is signalled on a process group's id or a process id
// alone. A server stopping kills its live groups and then its token's
// processes (those that left their group too).
//
// dir is <db>.functions next to a SQLite file, or a folder of the
// user's (see DefaultGroupsDir) for an in-memory or a PostgreSQL
// database. It is used only if it is a directory (not a link) of this
// user's that no one else may write, below folders of this user's or
// root's that no one else may write to (or sticky, as /tmp): else
// RecordGroups says why and neither reads nor writes records. A record
// is read only if it is a regular file of this user's.

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

// groupRecord is a server's record: its live process groups, and the
// file naming its run.
type groupRecord struct {
	mu     sync.Mutex
	path   string // "": no file (the folder was refused)
	token  string
	groups map[int]bool
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

// staleTemp is the age past which a record's file written aside (its
// server died while writing it) is removed.
const staleTemp = time.Minute

// maxRecord bounds what is read of a record.
const maxRecord = 4096

// RecordGroups kills the processes that servers now gone left (see
// above) in dir ("": DefaultGroupsDir), and records this server's run
// there. It returns how many processes it killed. It is called before
// the first invoke. Whatever its error, the server's own groups are
// still killed when it stops.
func (l *Local) RecordGroups(dir string) (killed int, err error) {
	if dir == "" {
		dir = DefaultGroupsDir()
	}
	r := &groupRecord{token: l.run, groups: map[int]bool{}}
	l.groups.Store(r)
	if err := ownDir(dir); err != nil {
		return 0, fmt.Errorf("the functions' processes are not recorded, nor those of dead servers killed: %w", err)
	}
	boot, ns := bootID(), pidNamespace()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("the functions' process groups: %w", err)
	}
	var errs []error
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() {
			continue
		}
		switch {
		case strings.HasSuffix(name, ".groups"):
			n, err := killLeft(filepath.Join(dir, name), boot, ns)
			killed += n
			if err != nil {
				errs = append(errs, err)
			}
		case strings.Contains(name, ".groups.tmp"):
			removeStaleTemp(filepath.Join(dir, name))
		}
	}
	self := os.Getpid()
	start, _ := procStart(self)
	// Named by process id and a random part: servers in one process
	// (tests), or of containers sharing the folder (each its own pid 1),
	// keep theirs apart.
	path := filepath.Join(dir, fmt.Sprintf("%d-%s.groups", self, randomHex(8)))
	header := fmt.Sprintf("stepwise %d %d %s %s %s\n", self, start, boot, ns, r.token)
	if err := writeRecord(path, header); err != nil {
		return killed, errors.Join(append(errs, err)...)
	}
	r.mu.Lock()
	r.path = path
	r.mu.Unlock()
	return killed, errors.Join(errs...)
}

// ownDir makes dir if it is missing and checks that it is this user's
// alone: a directory, not a link, of the effective user's, that no one
// else may write, below folders no one else may change (of this user's
// or root's, not writable by others unless sticky).
func ownDir(dir string) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
	}
	euid := uint32(os.Geteuid())
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory (%s)", dir, fi.Mode().Type())
	case !ok || st.Uid != euid:
		return fmt.Errorf("%s belongs to uid %d, not to this user (uid %d)", dir, st.Uid, euid)
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("%s may be written by other users (mode %#o; chmod 700 it)", dir, fi.Mode().Perm())
	}
	for p := filepath.Dir(dir); ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		switch {
		case !ok || st.Uid != euid && st.Uid != 0:
			return fmt.Errorf("%s, a folder above %s, belongs to uid %d, another user", p, dir, st.Uid)
		case fi.Mode().Perm()&0o022 != 0 && fi.Mode()&fs.ModeSticky == 0:
			return fmt.Errorf("%s, a folder above %s, may be written by other users (mode %#o)", p, dir, fi.Mode().Perm())
		}
		if p == filepath.Dir(p) {
			return nil
		}
	}
}

// readRecord reads a record if it is a regular file of this user's
// (never through a link, never blocking on a FIFO).
func readRecord(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !fi.Mode().IsRegular() || !ok || st.Uid != uint32(os.Geteuid()) {
		return nil, fmt.Errorf("%s: not a record of this user's (not a regular file of uid %d)", path, os.Geteuid())
	}
	return boundedfile.ReadFrom(context.Background(), f, path, maxRecord)
}

// writeRecord writes a record: aside, in a file of a new name, then
// renamed, so that it is never seen half written.
func writeRecord(path, content string) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("the functions' process groups: %w", err)
	}
	_, err = f.WriteString(content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("the functions' process groups: %w", err)
	}
	return nil
}

// removeStaleTemp removes a record's file written aside by a server
// that died before it renamed it.
func removeStaleTemp(path string) {
	fi, err := os.Lstat(path)
	if err != nil {
		return
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && fi.Mode().IsRegular() && st.Uid == uint32(os.Geteuid()) &&
		time.Since(fi.ModTime()) > staleTemp {
		_ = os.Remove(path)
	}
}

// killLeft kills the processes of a record whose server is gone, and
// removes it; a live server's, or one of another process id namespace,
// is left alone. A record another server removed meanwhile is no error.
func killLeft(path, boot, ns string) (killed int, err error) {
	b, err := readRecord(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	header, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(header)
	if len(f) < 4 || f[0] != "stepwise" {
		return 0, fmt.Errorf("%s: not a record of process groups", path)
	}
	owner, err1 := strconv.Atoi(f[1])
	ownerStart, err2 := strconv.ParseUint(f[2], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("%s: not a record of process groups", path)
	}
	// An earlier record names no namespace nor token: once its server is
	// gone it is removed, and nothing killed.
	var ownerNS, token string
	if len(f) >= 6 {
		ownerNS, token = f[4], f[5]
	}
	switch {
	case f[3] != boot:
		// Written before a reboot: its processes are gone.
		return 0, removeRecord(path)
	case ownerNS != "" && ownerNS != ns:
		// Of another container's server, which may be running.
		return 0, nil
	}
	if st, ok := procStart(owner); ok && st == ownerStart {
		return 0, nil
	}
	if token != "" {
		killed = killRun(token)
	}
	return killed, removeRecord(path)
}

// removeRecord removes a record; one another server removed first is no
// error.
func removeRecord(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// killRun kills every process of this user whose environment holds the
// run's token, and returns how many it killed.
func killRun(token string) (killed int) {
	want := []byte(runVar + "=" + token)
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	self := os.Getpid()
	euid := os.Geteuid()
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid <= 1 || pid == self {
			continue
		}
		// The pidfd names this very process: checked then signalled
		// through it, a process id reused in between is never hit.
		pidfd, err := pidfdOpen(pid)
		if err != nil && !errors.Is(err, syscall.ENOSYS) {
			continue // gone, or not ours to open
		}
		if procUID(pid) == euid && hasEntry(pid, want) {
			if pidfd >= 0 {
				err = pidfdKill(pidfd)
			} else {
				err = syscall.Kill(pid, syscall.SIGKILL)
			}
			if err == nil {
				killed++
			}
		}
		if pidfd >= 0 {
			_ = syscall.Close(pidfd)
		}
	}
	return killed
}

// pidfdOpen opens a pidfd of the process (-1 and ENOSYS on a kernel
// before 5.3).
func pidfdOpen(pid int) (int, error) {
	fd, _, errno := syscall.Syscall(sysPidfdOpen, uintptr(pid), 0, 0)
	if errno != 0 {
		return -1, errno
	}
	return int(fd), nil
}

// pidfdKill sends SIGKILL to the process of a pidfd.
func pidfdKill(pidfd int) error {
	_, _, errno := syscall.Syscall6(sysPidfdSendSignal, uintptr(pidfd), uintptr(syscall.SIGKILL), 0, 0, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// The numbers of pidfd_open and pidfd_send_signal, the same on every
// architecture.
const (
	sysPidfdSendSignal = 424
	sysPidfdOpen       = 434
)

// procUID is a process's real user id (-1 if it cannot be read).
func procUID(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return -1
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				if uid, err := strconv.Atoi(f[0]); err == nil {
					return uid
				}
			}
		}
	}
	return -1
}

// hasEntry tells whether a process's environment holds entry exactly.
func hasEntry(pid int, entry []byte) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	for kv := range bytes.SplitSeq(b, []byte{0}) {
		if bytes.Equal(kv, entry) {
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
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.closed {
		r.groups[pgid] = true
	}
}

// remove forgets a group that was killed or ended.
func (r *groupRecord) remove(pgid int) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.groups, pgid)
}

// close kills the groups still recorded, then the processes of the run
// that left them, and removes the record: the server is stopping.
func (r *groupRecord) close() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	for pgid := range r.groups {
		// Live groups: their leader is not reaped yet (remove follows
		// Wait), so the id is still theirs.
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
	killRun(r.token)
	if r.path != "" {
		_ = os.Remove(r.path)
	}
}

// bootID names this boot of the machine.
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}

// pidNamespace names this process's process id namespace
// ("pid:[4026531836]").
func pidNamespace() string {
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil || strings.ContainsAny(ns, " \n") {
		return "unknown"
	}
	return ns
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
