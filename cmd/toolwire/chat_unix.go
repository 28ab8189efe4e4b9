//go:build unix

package main

import (
	"os"
	"os/signal"
	"syscall"
)

// onResize returns a channel that receives when the terminal's size
// changes (SIGWINCH), and the func that stops it.
func onResize() (<-chan os.Signal, func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGWINCH)
	return ch, func() { signal.Stop(ch) }
}
