//go:build !unix

package main

import "os"

// onResize returns a channel that never receives: the terminal's size is
// read once, at the start.
func onResize() (<-chan os.Signal, func()) { return nil, func() {} }
