package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// proc is a child process. It runs in its own process group with a death
// signal, so neither it nor its children outlive the harness; stop ends it
// on every exit path (the harness registers it when it starts).
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string // its stdout and stderr, unless the caller took them
	done chan struct{}
	err  error // the exit, once done is closed
}

// start starts cmd as a registered child. A nil cmd.Stdout or cmd.Stderr
// goes to a log file in the harness's temp dir, shown when a step fails.
func (h *harness) start(name string, cmd *exec.Cmd) (*proc, error) {
	p := &proc{name: name, cmd: cmd, done: make(chan struct{})}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if cmd.Stdout == nil || cmd.Stderr == nil {
		p.log = filepath.Join(h.tmp, fmt.Sprintf("%s-%d.log", name, len(h.procs)))
		f, err := os.Create(p.log)
		if err != nil {
			return nil, err
		}
		defer f.Close() // the child has its own descriptor
		if cmd.Stdout == nil {
			cmd.Stdout = f
		}
		if cmd.Stderr == nil {
			cmd.Stderr = f
		}
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	h.procs = append(h.procs, p)
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// pid is the child's process id.
func (p *proc) pid() int { return p.cmd.Process.Pid }

// exited reports whether the child has exited, and how.
func (p *proc) exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// alive returns an error naming the child and the tail of its log if it
// has exited: a server that died mid-benchmark is a harness failure.
func (p *proc) alive() error {
	if done, err := p.exited(); done {
		return fmt.Errorf("%s exited (%v)%s", p.name, err, p.tail())
	}
	return nil
}

// stop sends SIGTERM to the child's group, waits up to grace, then
// SIGKILLs the group and reaps the child.
func (p *proc) stop(grace time.Duration) {
	if done, _ := p.exited(); !done {
		_ = syscall.Kill(-p.pid(), syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(grace):
		}
	}
	_ = syscall.Kill(-p.pid(), syscall.SIGKILL) // whatever is left of the group
	<-p.done
}

// tail is the end of the child's log, for error messages.
func (p *proc) tail() string {
	if p.log == "" {
		return ""
	}
	b, err := os.ReadFile(p.log)
	if err != nil || len(b) == 0 {
		return ""
	}
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return "; its log ends:\n" + string(bytes.TrimRight(b, "\n"))
}

// clockTick is USER_HZ, the unit of /proc/<pid>/stat's times: 100 on every
// Linux architecture Go supports.
const clockTick = 10 * time.Millisecond

// procCPU is a process's user plus system CPU time, all threads, from
// /proc/<pid>/stat (10 ms resolution).
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseStatCPU(string(b))
}

// parseStatCPU reads utime and stime, fields 14 and 15, counted after the
// command name, which may itself hold spaces and parentheses.
func parseStatCPU(stat string) (time.Duration, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, errors.New("/proc stat: no command name")
	}
	f := strings.Fields(stat[i+1:]) // f[0] is field 3, the state
	if len(f) < 13 {
		return 0, errors.New("/proc stat: too few fields")
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc stat: %w", err)
		}
		ticks += n
	}
	return time.Duration(ticks) * clockTick, nil
}

// procRSS is a process's resident set size in bytes (VmRSS).
func procRSS(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("/proc status: no VmRSS")
}
