//go:build !linux

package mcp

import "os"

// growPipes does nothing where pipe sizes cannot be set.
func growPipes(...*os.File) {}
