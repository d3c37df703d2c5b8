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
// end-to-end latency exactly. A sum of the hops' own medians is not the
// median of the sums (on a loaded machine far from it), so the table also
// gives the budget of the median transfer and of the p99 one: the mean of
// each hop over the transfers whose end-to-end latency lies within a band
// around that percentile (45–55%, 98.5–99.5%); those columns add up to
// the end-to-end median and p99, and the sums are printed against them.

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
		if err == nil && v == 0 && i == 3 {
			// The broker's acknowledgement came after the reply (acks=all
			// on a broker of its own, the cluster's): it held nothing up,
			// so the ack hop is nil and the next runs from the produce.
			v = ts[2]
		}
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
	n                int
	p50, p99, mean   [10]time.Duration
	at50, at99       [10]time.Duration // mean over the transfers around the e2e median, p99
	e2eP50, e2eP99   time.Duration
	e2eMean          time.Duration
	sumP50, sumMean  time.Duration
	sumAt50, sumAt99 time.Duration
	skipped          int
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
	type byE2E struct {
		e2e int64
		i   int
	}
	order := make([]byE2E, len(samples))
	var sum int64
	for i, s := range samples {
		order[i].i = i
		for _, d := range s {
			order[i].e2e += int64(d)
		}
		sum += order[i].e2e
	}
	sort.Slice(order, func(i, j int) bool { return order[i].e2e < order[j].e2e })
	n := len(order)
	b.e2eP50 = time.Duration(order[n/2].e2e)
	b.e2eP99 = time.Duration(order[min(n-1, n*99/100)].e2e)
	b.e2eMean = time.Duration(sum / int64(n))
	band := func(lo, hi float64, out *[10]time.Duration, total *time.Duration) {
		from, to := int(lo*float64(n)), max(int(hi*float64(n)), int(lo*float64(n))+1)
		to = min(to, n)
		var acc [10]int64
		for _, o := range order[from:to] {
			for k, d := range samples[o.i] {
				acc[k] += int64(d)
			}
		}
		for k := range acc {
			out[k] = time.Duration(acc[k] / int64(to-from))
			*total += out[k]
		}
	}
	band(0.45, 0.55, &b.at50, &b.sumAt50)
	band(0.985, 0.995, &b.at99, &b.sumAt99)
	return b
}

func (b *hopBudget) print(runP50 time.Duration) {
	fmt.Printf("  %-22s %d transfers answered without a retry (%d without usable times)\n", "latency budget", b.n, b.skipped)
	fmt.Printf("    %-32s %8s %8s %8s %10s %10s\n", "hop (ms)", "p50", "p99", "mean", "@p50 tr", "@p99 tr")
	for k, name := range hopNames {
		fmt.Printf("    %-32s %8.2f %8.2f %8.2f %10.2f %10.2f\n", name, msf(b.p50[k]), msf(b.p99[k]), msf(b.mean[k]), msf(b.at50[k]), msf(b.at99[k]))
	}
	fmt.Printf("    %-32s %8.2f %8s %8.2f %10.2f %10.2f\n", "sum of hops", msf(b.sumP50), "", msf(b.sumMean), msf(b.sumAt50), msf(b.sumAt99))
	fmt.Printf("    %-32s %8.2f %8.2f %8.2f %10.2f %10.2f\n", "end to end", msf(b.e2eP50), msf(b.e2eP99), msf(b.e2eMean), msf(b.e2eP50), msf(b.e2eP99))
	fmt.Printf("    sum / end to end: @p50 transfer %.3f, @p99 transfer %.3f, mean %.3f (sum of the hops' own medians %.2f); the run's p50 over all answers %.2f ms\n",
		ratio(b.sumAt50, b.e2eP50), ratio(b.sumAt99, b.e2eP99), ratio(b.sumMean, b.e2eMean), ratio(b.sumP50, b.e2eP50), msf(runP50))
}

func msf(d time.Duration) float64 { return float64(d) / 1e6 }

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// printBudget prints the latency budget of a run, or why it has none.
func printBudget(r *results) {
	if b := budgetOf(r.hops, r.hopSkipped); b != nil {
		b.print(r.p(0.50))
	} else if r.hopSkipped > 0 {
		fmt.Printf("  %-22s none: no answer carried the Platform-Hops times (%d answers)\n", "latency budget", r.hopSkipped)
	}
}
