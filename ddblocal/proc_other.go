//go:build !linux

package ddblocal

import (
	"os/exec"
	"syscall"
)

// startProcess starts cmd and calls exited with cmd.Wait's result once it
// exits. Without Linux's parent-death signal, a server whose parent is killed
// outright outlives it; Stop and Run's normal paths still end it.
func startProcess(cmd *exec.Cmd, exited func(error)) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { exited(cmd.Wait()) }()
	return nil
}

// terminate asks the server to shut down, or kills it where signals are not
// supported (Windows).
func terminate(cmd *exec.Cmd) {
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		_ = cmd.Process.Kill()
	}
}

// kill ends the server at once.
func kill(cmd *exec.Cmd) { _ = cmd.Process.Kill() }
