package main

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"time"
)

// The latency budget (issue 48, item 1): every transfer asks for the times
// its command passed (the gateway's Platform-Hops answer header:
// gateway/commands.HeaderHops) and the client adds its own send and
// receive, all read from the one clock of the machine. Consecutive
// differences are the hops below; per transfer they add up to its
// end-to-end latency exactly, so the table's sum of means equals the mean
// latency, and the sum of medians is printed against the median latency
// (a sum of medians is not the median of the sums, but close when hops
// are not skewed against each other).

// hopNames are the hops between consecutive times: the client's send, the
// nine of the header, the client's receipt.
var hopNames = []string{
	"client send → request read",
	"request read → produced",
	"produced → broker ack",
	"broker ack → applier fetch",
	"fetch → batch begins",
	"batch begins → committed",
	"committed → reply produced",
	"reply produced → gateway sees",
	"gateway sees → answer written",
	"answer written → client reads",
}

// maxHopSamples bounds the samples one client keeps (the first ones), so a
// soak does not hold millions.
const maxHopSamples = 1 << 15

// hopSample is one transfer's hops, in nanoseconds.
type hopSample [10]int32

// parseHops turns the client's send and receipt and the header value into
// a sample; false when the header is missing, malformed, or its ack time
// is unknown (the reply came before the acknowledgement was handled).
func parseHops(sent, got int64, header []byte) (hopSample, bool) {
	var ts [11]int64
	ts[0], ts[10] = sent, got
	i := 1
	for len(header) > 0 && i < 10 {
		field := header
		if j := bytes.IndexByte(header, ','); j >= 0 {
			field, header = header[:j], header[j+1:]
		} else {
			header = nil
		}
		v, err := strconv.ParseInt(string(field), 10, 64)
		if err != nil || v == 0 {
			return hopSample{}, false
		}
		ts[i] = v
		i++
	}
	if i != 10 || len(header) > 0 {
		return hopSample{}, false
	}
	var s hopSample
	for k := range s {
		d := ts[k+1] - ts[k]
		if d > 1<<31-1 || d < -(1<<31) {
			return hopSample{}, false
		}
		s[k] = int32(d)
	}
	return s, true
}

// hopBudget is the table of one run: per hop its median, p99 and mean.
type hopBudget struct {
	n               int
	p50, p99, mean  [10]time.Duration
	e2eP50, e2eMean time.Duration
	sumP50, sumMean time.Duration
	skipped         int
}

func budgetOf(samples []hopSample, skipped int) *hopBudget {
	if len(samples) == 0 {
		return nil
	}
	b := &hopBudget{n: len(samples), skipped: skipped}
	col := make([]int64, len(samples))
	for k := 0; k < 10; k++ {
		var sum int64
		for i, s := range samples {
			col[i] = int64(s[k])
			sum += col[i]
		}
		sort.Slice(col, func(i, j int) bool { return col[i] < col[j] })
		b.p50[k] = time.Duration(col[len(col)/2])
		b.p99[k] = time.Duration(col[min(len(col)-1, len(col)*99/100)])
		b.mean[k] = time.Duration(sum / int64(len(col)))
		b.sumP50 += b.p50[k]
		b.sumMean += b.mean[k]
	}
	var sum int64
	for i, s := range samples {
		col[i] = 0
		for _, d := range s {
			col[i] += int64(d)
		}
		sum += col[i]
	}
	sort.Slice(col, func(i, j int) bool { return col[i] < col[j] })
	b.e2eP50 = time.Duration(col[len(col)/2])
	b.e2eMean = time.Duration(sum / int64(len(col)))
	return b
}

func (b *hopBudget) print(runP50 time.Duration) {
	fmt.Printf("  %-22s %d transfers answered without a retry (%d without usable times)\n", "latency budget", b.n, b.skipped)
	fmt.Printf("    %-32s %8s %8s %8s\n", "hop", "p50 ms", "p99 ms", "mean ms")
	for k, name := range hopNames {
		fmt.Printf("    %-32s %8.2f %8.2f %8.2f\n", name, msf(b.p50[k]), msf(b.p99[k]), msf(b.mean[k]))
	}
	fmt.Printf("    %-32s %8.2f %8s %8.2f\n", "sum of hops", msf(b.sumP50), "", msf(b.sumMean))
	fmt.Printf("    %-32s %8.2f %8s %8.2f   (sum/end-to-end: p50 %.2f, mean %.2f; the run's p50 over all answers %.2f ms)\n",
		"end to end", msf(b.e2eP50), "", msf(b.e2eMean), ratio(b.sumP50, b.e2eP50), ratio(b.sumMean, b.e2eMean), msf(runP50))
}

func msf(d time.Duration) float64 { return float64(d) / 1e6 }

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
