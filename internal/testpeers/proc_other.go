//go:build !linux

package testpeers

import "os/exec"

// dieWithParent does nothing where there is no parent-death signal: a
// test process that ends without its cleanups leaves its servers running.
func dieWithParent(*exec.Cmd) {}
