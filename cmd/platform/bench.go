package main

import (
	"fmt"
	"os"
)

// runBench load-tests a running platform.
func runBench(args []string) int {
	fmt.Fprintln(os.Stderr, "platform bench: not built yet")
	return 2
}
