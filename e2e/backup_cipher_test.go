package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// backupCipherConf runs deploy/local/lib.sh's backup_cipher on repo and
// pass, and returns what it printed (the cipher mode for `platform render
// pgbackrest`) and what it said.
func backupCipherConf(t *testing.T, repo, pass string) (stdout, stderr string) {
	t.Helper()
	lib, err := filepath.Abs("../deploy/local/lib.sh")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "-c", `source "$0"; backup_cipher "$1" "$2"`, lib, repo, pass)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("backup_cipher: %v\n%s", err, errb.String())
	}
	return out.String(), errb.String()
}

// TestBackupsAreEncrypted: a new pgBackRest repository of the local stack
// or cluster is encrypted with a passphrase generated once (mode 600, kept
// apart from it); one made unencrypted before stays so, said on stderr and
// "none" alone on stdout (a warning printed among the configuration's lines
// broke `make stack` on an existing repository).
func TestBackupsAreEncrypted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pass := filepath.Join(dir, "secrets", "backup_cipher_pass")
	conf, said := backupCipherConf(t, filepath.Join(dir, "repo"), pass)
	secret, err := os.ReadFile(pass)
	if err != nil || len(secret) < 64 {
		t.Fatalf("passphrase %q: %v", secret, err)
	}
	if conf != "file\n" || said != "" {
		t.Fatalf("a new repository's lines %q (said %q)", conf, said)
	}
	if fi, err := os.Stat(pass); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the passphrase file's mode: %v %v", fi.Mode(), err)
	}
	again, _ := backupCipherConf(t, filepath.Join(dir, "repo"), pass)
	if again != conf {
		t.Fatalf("the passphrase changed: %q, then %q", conf, again)
	}

	plain := filepath.Join(dir, "plain")
	if err := os.MkdirAll(filepath.Join(plain, "backup", "platform"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(plain, "backup", "platform", "backup.info"), []byte("[backrest]\nbackrest-format=5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	conf, said = backupCipherConf(t, plain, filepath.Join(dir, "other-pass"))
	if conf != "none\n" || !strings.Contains(said, "made unencrypted and stays so") {
		t.Fatalf("an unencrypted repository's lines %q (said %q)", conf, said)
	}
}
