package pgtest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Server is a PostgreSQL server of one test's own (initdb in a temporary
// directory), for tests that stop, demote or restart a server under the
// code, which the shared test server must never see. It uses the binaries
// the local stack installed; run as root, the server runs as the postgres
// user, as the stack's does.
type Server struct {
	Port       int
	bin, dir   string
	asUser     string
	root, logf string
}

// ServerOptions tune StartServerWith.
type ServerOptions struct {
	// Port is the port to listen on; 0 takes the first free port of
	// 56010–56019.
	Port int
	// Settings returns more postgresql.conf lines, appended before the
	// first start (later lines win), given the server with its Port, Root
	// and Dir set.
	Settings func(s *Server) string
}

// StartServer starts a server on the first free port of 56010–56019 and
// stops it when the test ends.
func StartServer(t *testing.T) *Server {
	t.Helper()
	return StartServerWith(t, ServerOptions{})
}

// StartServerWith starts a server as o says and stops it (an immediate
// shutdown) and removes its files when the test ends.
func StartServerWith(t *testing.T, o ServerOptions) *Server {
	t.Helper()
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(bins) == 0 {
		t.Fatal("no PostgreSQL server binaries under /usr/lib/postgresql (make stack installs them)")
	}
	major := func(p string) int { n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(p)))); return n }
	sort.Slice(bins, func(i, j int) bool { return major(bins[i]) < major(bins[j]) })
	s := &Server{bin: filepath.Dir(bins[len(bins)-1])}
	root, err := os.MkdirTemp("", "pgtest-server-") // the postgres user must traverse to it
	if err != nil {
		t.Fatal(err)
	}
	s.root, s.dir, s.logf = root, filepath.Join(root, "data"), filepath.Join(root, "server.log")
	if err := os.Chmod(root, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(s.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		s.asUser = "postgres"
		u, err := user.Lookup(s.asUser)
		if err != nil {
			t.Fatalf("running as root needs the postgres user: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(s.dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_ = s.Ctl("stop", "-m", "immediate", "-w")
		_ = os.RemoveAll(root)
	})
	if out, err := s.run("initdb", "-D", s.dir, "--auth=trust", "-U", "postgres", "--encoding=UTF8", "--locale=C"); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	s.conf(t, "\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = ''\nmax_connections = 100\n"+
		"shared_buffers = 32MB\nfsync = off\njit = off\nlogging_collector = off\n")
	ports := []int{o.Port}
	if o.Port == 0 {
		ports = ports[:0]
		for p := 56010; p <= 56019; p++ {
			ports = append(ports, p)
		}
	}
	var errs []string
	for _, p := range ports {
		// In the range, the first port the server can bind: a port may be
		// taken by another server, or be the local end of an outgoing
		// connection.
		if o.Port == 0 {
			if l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p)); err != nil {
				continue
			} else {
				_ = l.Close()
			}
		}
		s.Port = p
		settings := fmt.Sprintf("port = %d\n", p) // the last setting wins
		if o.Settings != nil {
			settings += o.Settings(s)
		}
		s.conf(t, settings)
		err := s.Start()
		if err == nil {
			return s
		}
		errs = append(errs, err.Error())
	}
	t.Fatalf("no port of %v for a private Postgres: %s", ports, strings.Join(errs, "; "))
	return nil
}

// Root is the server's own temporary directory, which holds Dir; a test may
// keep more beside it (it is removed with the server).
func (s *Server) Root() string { return s.root }

// Dir is the server's data directory.
func (s *Server) Dir() string { return s.dir }

// AsUser is the system user the server runs as ("" for the test's own).
func (s *Server) AsUser() string { return s.asUser }

// Start starts the server and waits until it accepts connections.
func (s *Server) Start() error { return s.Ctl("start", "-w", "-t", "60", "-l", s.logf) }

// conf appends settings to postgresql.conf.
func (s *Server) conf(t *testing.T, settings string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(s.dir, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString(settings)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
}

// URL is the server's URL for database db.
func (s *Server) URL(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.Port, db)
}

// Ctl runs pg_ctl on the server's data directory.
func (s *Server) Ctl(args ...string) error {
	out, err := s.run("pg_ctl", append([]string{"-D", s.dir}, args...)...)
	if err != nil {
		return fmt.Errorf("pg_ctl %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

func (s *Server) run(tool string, args ...string) ([]byte, error) {
	name := filepath.Join(s.bin, tool)
	if s.asUser != "" {
		args = append([]string{"-u", s.asUser, "--", name}, args...)
		name = "runuser"
	}
	return exec.Command(name, args...).CombinedOutput()
}
