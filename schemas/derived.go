package schemas

import (
	"crypto/sha256"
	"time"

	"github.com/segmentio/ksuid"
)

// DerivedID returns the ksuid a command's application mints for purpose: its
// time is at (the command's occurredAt), its payload the first 16 bytes of
// SHA-256(commandID, purpose). Applying the same command again (a consumer
// re-reading its topic after a point-in-time restore) mints the same ids, so
// the rows, the ledger sources and the event ids it writes are the ones it
// wrote the first time, and the unique keys downstream dedupe them. A
// command that mints several ids of one kind numbers its purposes.
func DerivedID(commandID, purpose string, at time.Time) string {
	var buf [128]byte
	in := append(append(append(buf[:0], commandID...), 0), purpose...)
	sum := sha256.Sum256(in)
	id, err := ksuid.FromParts(at, sum[:16])
	if err != nil {
		// FromParts fails only on a payload that is not 16 bytes.
		panic(err)
	}
	return id.String()
}
