package mcp

import (
	"os"
	"syscall"
)

// pipeSize is what stdio pipes are grown to: a large message then crosses
// in a few writes instead of one per 64 KiB (Linux's default), each of
// which waits for the other side to wake up and read.
const pipeSize = 1 << 20

// growPipes grows the pipes behind files to pipeSize, as far as the system
// allows (fs.pipe-max-size); files that are not pipes, and refusals, are
// left as they are.
func growPipes(files ...*os.File) {
	for _, f := range files {
		if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
			continue
		}
		rc, err := f.SyscallConn()
		if err != nil {
			continue
		}
		_ = rc.Control(func(fd uintptr) {
			_, _, _ = syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_SETPIPE_SZ, pipeSize)
		})
	}
}
