//go:build unix

package mcp

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup makes cmd start in a process group of its own, so that
// a Ctrl-C on the client's terminal reaches the client only: the client
// then ends its calls in order (cancelling their tasks on the server)
// before it closes the server.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}
