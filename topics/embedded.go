package topics

import (
	"fmt"
	"path/filepath"

	"github.com/twmb/franz-go/pkg/kfake"
)

// Embedded is an in-process Kafka-protocol broker (franz-go kfake) persisted
// on disk, for single-machine runs and tests.
type Embedded struct {
	cluster *kfake.Cluster
}

// StartEmbedded starts the broker on 127.0.0.1:port (0 picks a free port)
// with its data under dataDir, seeded with every topic of All. Data written
// before a restart on the same dataDir is there after it. Every produce is
// fsynced before it is acknowledged (kfake.SyncWrites), so an acknowledged
// record — a command a request waits on, or an outbox row the relay then
// deletes — survives a host crash, not only a process kill.
func StartEmbedded(dataDir string, port int) (*Embedded, error) {
	opts := []kfake.Opt{
		kfake.NumBrokers(1),
		kfake.Ports(port),
		kfake.DataDir(filepath.Join(dataDir, "kafka")),
		kfake.ClusterID("platform-embedded"),
		kfake.SyncWrites(),
	}
	byCount := map[int32][]string{}
	for _, s := range All() {
		byCount[s.Partitions] = append(byCount[s.Partitions], s.Name)
	}
	for n, names := range byCount {
		opts = append(opts, kfake.SeedTopics(n, names...))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return nil, fmt.Errorf("start embedded kafka on port %d: %w", port, err)
	}
	return &Embedded{cluster: c}, nil
}

// Addrs returns the broker's listen addresses.
func (e *Embedded) Addrs() []string { return e.cluster.ListenAddrs() }

// Close stops the broker and flushes its data to disk.
func (e *Embedded) Close() { e.cluster.Close() }
