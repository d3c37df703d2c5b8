//go:build !linux

package topics

import "os"

func fdatasync(f *os.File) error { return f.Sync() }
