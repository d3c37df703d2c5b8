//go:build !linux

package broker

import "os"

func fdatasync(f *os.File) error { return f.Sync() }
