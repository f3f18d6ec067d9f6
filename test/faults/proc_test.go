package faults_test

import (
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// daemonProc is one `driftd run` of the built binary on a free loopback
// address, its output captured, run in its config file's directory.
type daemonProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	base   string
	log    *cappedBuffer
	exited chan error
}

// startDaemon runs `driftd run --config.file config` with flags until
// the test ends, when it is stopped with SIGTERM (stop).
func startDaemon(t *testing.T, config string, flags ...string) *daemonProc {
	t.Helper()
	addr := freeAddr(t)
	p := &daemonProc{t: t, base: "http://" + addr, log: newCapped(16 << 20), exited: make(chan error, 1)}
	p.cmd = exec.Command(binPath, append([]string{"run", "--config.file", config, "--web.listen-address=" + addr}, flags...)...)
	p.cmd.Dir, p.cmd.Stdout, p.cmd.Stderr = filepath.Dir(config), p.log, p.log
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.exited <- p.cmd.Wait() }()
	t.Cleanup(func() { p.stop(syscall.SIGTERM) })
	return p
}

// stop sends sig and waits for the exit, once; after SIGTERM the exit
// must be clean and within 12 s.
func (p *daemonProc) stop(sig syscall.Signal) {
	if p.cmd.ProcessState != nil {
		return
	}
	p.cmd.Process.Signal(sig)
	select {
	case err := <-p.exited:
		if sig == syscall.SIGTERM && err != nil {
			p.t.Errorf("exit after SIGTERM: %v\n%.4000s", err, p.log.String())
		}
	case <-time.After(12 * time.Second):
		p.cmd.Process.Kill()
		<-p.exited
		p.t.Errorf("driftd did not stop within 12 s of signal %v", sig)
	}
}

// waitFor polls /metrics until cond holds, within, and returns the body.
func (p *daemonProc) waitFor(what string, within time.Duration, cond func(metrics string) bool) string {
	p.t.Helper()
	for deadline := time.Now().Add(within); ; time.Sleep(100 * time.Millisecond) {
		if r := get(p.base + "/metrics"); r.err == nil && cond(r.body) {
			return r.body
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("no %s after %v:\n%.4000s", what, within, p.log.String())
		}
	}
}
