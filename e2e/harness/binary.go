package harness

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
)

// Binary returns the platform binary: $PLATFORM_BIN (set by `make test`), or
// one built once per test process.
func Binary(t TB) string {
	t.Helper()
	if p := os.Getenv("PLATFORM_BIN"); p != "" {
		return p
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "platform-bin")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "platform")
		root, err := moduleRoot()
		if err != nil {
			buildErr = err
			return
		}
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/platform")
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatalf("build platform: %v", buildErr)
	}
	return binPath
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the test directory")
		}
		dir = parent
	}
}

// FreePort returns a loopback port that is free now, from the private range
// 10000–17999: below the kernel's ephemeral range (32768 and up), where an
// outgoing connection of any process may take a port between the moment it
// was found free and the moment the platform binds it (a METRICS_ADDR once
// lost that race), and below the cluster's blocks (20000–32000). The scan
// starts at a random port so that test processes running side by side
// rarely try the same ones; this process never hands a port out twice.
func FreePort(t TB) int {
	t.Helper()
	handedOut.Lock()
	defer handedOut.Unlock()
	const from, to = 10000, 18000
	start := from + rand.IntN(to-from)
	for i := 0; i < to-from; i++ {
		port := from + (start-from+i)%(to-from)
		if handedOut.ports[port] {
			continue
		}
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue
		}
		l.Close()
		handedOut.ports[port] = true
		return port
	}
	t.Fatalf("free port: none free in %d-%d", from, to-1)
	return 0
}

// handedOut remembers the ports FreePort gave this test process.
var handedOut = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}
