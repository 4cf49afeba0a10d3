package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Each mode of a sequence promises something else, and seqload checks what the
// mode in force promised (README, "Modes"):
//
//   - strict, and the optimistic strategy: no value twice, and real-time order
//     across every client and address: a request sent after another was
//     answered receives larger values, whichever instances served the two.
//   - cached: no value twice across all, and real-time order among the requests
//     that one instance answered, that is per address. Each instance hands out
//     values from blocks of its own, so two instances' answers are not ordered.
//   - -client-cache: every value comes from one Go client's cache, which keeps
//     real-time order among its callers, so across all clients, whatever the
//     server's mode.
//
// A sequence switched while the load runs is judged by the mode in force when
// each request was answered, as the readings of the mode (watch.go) bound it. A
// request sent after a reading showed the sequence strict and answered before a
// later reading was sent, every reading between them strict too, was answered
// in strict mode: it must hold values above every request answered before it
// was sent, whichever the address (a switch to strict drains first, so its
// answers lie above every earlier one, cached ones included). Every other
// request is held to its address's order. A switch to cached and back between
// two readings would go unseen: it takes a drain of at least the block lease
// (15 s by default), so -mode-poll must be shorter than the lease.

// A judgement says which requests bind which in the sequence check.
type judgement struct {
	global  bool     // every request is bound by every request answered before it was sent
	windows []window // otherwise: requests wholly inside one are; the others by their address's
	promise string   // what was checked, for the summary
}

// A window is a stretch of the load, from lo to hi since it began, over which
// the sequence was strict.
type window struct{ lo, hi time.Duration }

// The promises as the summary states them.
const (
	promiseStrict   = "no value twice; real-time order across all clients and addresses"
	promiseCached   = "no value twice; real-time order per address (instance)"
	promiseSwitched = "no value twice; real-time order per address, and across all addresses for the requests answered while strict"
)

// judge returns the judgement for a run of cfg whose mode readings, in the order
// they were taken, are readings: the first before any request was sent, the last
// after every answer was read.
func judge(cfg config, readings []modeReading) judgement {
	switch {
	case cfg.target != targetSeq:
		return judgement{}
	case cfg.clientCache:
		return judgement{global: true, promise: "one Go client's cache: no value twice; real-time order across its callers, all clients"}
	case cfg.strategy == strategyOptimistic:
		return judgement{global: true, promise: "strict (optimistic strategy): " + promiseStrict}
	}
	counts := map[string]int{}
	var unknown string // why the first reading that told nothing told nothing
	var j judgement
	first := -1 // the first reading of the current run of strict ones, or -1
	for i, r := range readings {
		mode := r.mode
		if mode == "" && unknown == "" {
			unknown = r.err
		}
		if mode == "" && cfg.mode != "" {
			mode = cfg.mode // what -mode put there before the load
		}
		counts[mode]++
		if mode == modeStrict && first < 0 {
			first = i
		}
		if mode != modeStrict || i == len(readings)-1 {
			last := i - 1
			if mode == modeStrict {
				last = i
			}
			if first >= 0 && last > first {
				j.windows = append(j.windows, window{readings[first].read, readings[last].sent})
			}
			if mode != modeStrict {
				first = -1
			}
		}
	}
	source := fmt.Sprintf("read %d times from %s", len(readings), cfg.addrs[0])
	if unknown != "" {
		source += fmt.Sprintf(", %d times without an answer (%s)", counts[""], unknown)
		if cfg.mode != "" {
			source += fmt.Sprintf(", taken as -mode %s then", cfg.mode)
		}
	}
	switch {
	case counts[modeStrict] == len(readings) && len(readings) >= 2:
		j = judgement{global: true, promise: fmt.Sprintf("strict (%s): %s", source, promiseStrict)}
	case counts[modeStrict] == 0:
		j.promise = fmt.Sprintf("%s (%s): %s", modesSeen(counts), source, promiseCached)
	default:
		j.promise = fmt.Sprintf("switched, %s (%s): %s", modesSeen(counts), source, promiseSwitched)
	}
	return j
}

// modesSeen names the modes the readings showed, with how many showed each.
func modesSeen(counts map[string]int) string {
	var seen []string
	for _, m := range slices.Sorted(maps.Keys(counts)) {
		name := m
		if m == "" {
			name = "unknown"
		}
		seen = append(seen, fmt.Sprintf("%s %d", name, counts[m]))
	}
	if len(seen) == 1 {
		return strings.Fields(seen[0])[0]
	}
	return strings.Join(seen, ", ")
}

// strict reports whether an op sent at start and answered at end lies wholly
// inside one of j's windows.
func (j judgement) strict(start, end time.Duration) bool {
	// The windows are in order and disjoint: the last that opens by start is the
	// only one that can hold the op.
	i, _ := slices.BinarySearchFunc(j.windows, start, func(w window, t time.Duration) int {
		if w.lo <= t {
			return -1
		}
		return 1
	})
	return i > 0 && end <= j.windows[i-1].hi
}
