//go:build linux

package ddblocal

import (
	"os/exec"
	"runtime"
	"syscall"
)

// startProcess starts cmd in its own process group with a parent-death
// signal, and calls exited with cmd.Wait's result once it exits.
//
// Linux sends the parent-death signal when the *thread* that forked the child
// exits, so the child is started from a goroutine locked to its OS thread
// that stays alive (in cmd.Wait) for as long as the child runs.
func startProcess(cmd *exec.Cmd, exited func(error)) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		exited(cmd.Wait())
	}()
	return <-started
}

// terminate asks the server's process group to shut down.
func terminate(cmd *exec.Cmd) { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }

// kill ends the server's process group at once.
func kill(cmd *exec.Cmd) { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
