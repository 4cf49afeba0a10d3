package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// benchResult is one line of `go test -bench` output.
type benchResult struct {
	Name    string             // without the -GOMAXPROCS suffix, e.g. "BenchmarkNew/serial"
	Procs   int                // GOMAXPROCS, from the suffix; 1 without one
	N       int64              // iterations
	NsPerOp float64            // ns/op
	Metrics map[string]float64 // every "value unit" pair, ns/op and B/op included
}

var procsSuffix = regexp.MustCompile(`-(\d+)$`)

// parseBenchOutput reads the result lines of `go test -bench` output and returns them
// by name (without the -GOMAXPROCS suffix). Other lines (goos:, PASS, ok …, log output)
// are skipped. A name seen several times, as with -count, keeps its median result by
// ns/op: on a shared machine single runs jump between modes.
func parseBenchOutput(r io.Reader) (map[string]benchResult, error) {
	all := map[string][]benchResult{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 || !strings.HasPrefix(fields[0], "Benchmark") {
			continue
		}
		n, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil {
			continue // "BenchmarkX" alone on a line, before its sub-benchmarks' output
		}
		res := benchResult{Name: fields[0], Procs: 1, N: n, Metrics: map[string]float64{}}
		if m := procsSuffix.FindStringSubmatch(fields[0]); m != nil {
			res.Name = strings.TrimSuffix(fields[0], m[0])
			res.Procs, _ = strconv.Atoi(m[1])
		}
		pairs := fields[2:]
		if len(pairs)%2 != 0 {
			return nil, fmt.Errorf("bench line %q: values and units do not pair up", sc.Text())
		}
		for i := 0; i < len(pairs); i += 2 {
			v, err := strconv.ParseFloat(pairs[i], 64)
			if err != nil {
				return nil, fmt.Errorf("bench line %q: %w", sc.Text(), err)
			}
			res.Metrics[pairs[i+1]] = v
		}
		ns, ok := res.Metrics["ns/op"]
		if !ok {
			return nil, fmt.Errorf("bench line %q: no ns/op", sc.Text())
		}
		res.NsPerOp = ns
		all[res.Name] = append(all[res.Name], res)
	}
	out := make(map[string]benchResult, len(all))
	for name, runs := range all {
		slices.SortFunc(runs, func(a, b benchResult) int { return cmp.Compare(a.NsPerOp, b.NsPerOp) })
		out[name] = runs[(len(runs)-1)/2]
	}
	return out, sc.Err()
}

// objectIDBenchArgs is figure 1's command; the table shows each benchmark's median of 5.
var objectIDBenchArgs = []string{"test", "-run", "^$", "-bench", ".", "-benchmem", "-count", "5", "./objectid/"}

// goBench runs `go args…` in the module root and parses its benchmark lines.
func (b *bench) goBench(ctx context.Context, args []string) (map[string]benchResult, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = b.cfg.root
	cmd.SysProcAttr = sysProcAttr()
	cmd.Cancel = func() error { return interruptGroup(cmd) }
	cmd.WaitDelay = 10 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go %s: %w\n%s%s", strings.Join(args, " "), err, clip(stdout.String(), 2000), clip(stderr.String(), 2000))
	}
	return parseBenchOutput(&stdout)
}
