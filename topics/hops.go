package topics

import (
	"encoding/binary"

	"github.com/twmb/franz-go/pkg/kgo"
)

// A transfer's latency hop by hop (issue 48): the applier writes its
// timestamps on each reply record in the HopsHeader header, the gateway
// reads them with the reply and, when the request asks for them
// (Platform-Hops), answers them with its own. Each is a wall-clock time in
// Unix nanoseconds, 8 bytes big-endian; all processes of one machine read
// one clock. The header costs a few time reads per batch and 32 bytes per
// reply.
const HopsHeader = "platform-hops"

// StampHops appends ts to rec's hops header, adding the header when rec has
// none.
func StampHops(rec *kgo.Record, ts ...int64) {
	i := len(rec.Headers) - 1
	for ; i >= 0 && rec.Headers[i].Key != HopsHeader; i-- {
	}
	if i < 0 {
		rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: HopsHeader, Value: make([]byte, 0, 8*4)})
		i = len(rec.Headers) - 1
	}
	v := rec.Headers[i].Value
	for _, t := range ts {
		v = binary.BigEndian.AppendUint64(v, uint64(t))
	}
	rec.Headers[i].Value = v
}

// HopsOf returns the timestamps of rec's hops header; nil without one.
func HopsOf(rec *kgo.Record) []int64 {
	for _, h := range rec.Headers {
		if h.Key != HopsHeader {
			continue
		}
		out := make([]int64, 0, len(h.Value)/8)
		for v := h.Value; len(v) >= 8; v = v[8:] {
			out = append(out, int64(binary.BigEndian.Uint64(v)))
		}
		return out
	}
	return nil
}
