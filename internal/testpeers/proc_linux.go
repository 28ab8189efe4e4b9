package testpeers

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the kernel kill a server process when the test process ends
// without stopping it (a test binary's timeout panics past its cleanups).
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
