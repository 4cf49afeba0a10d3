package history

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Values received in several processes are checked for uniqueness together, and only
// for that: a cached sequence promises no order across processes, and their clocks
// need not agree. Each process checks its own history in full, then hands on its
// values alone, as ascending ranges, which a block allocator makes few: a million
// values served from a dozen blocks are a dozen lines.

// WriteRanges writes the values of the n ops (op(i) returns the i-th, as for
// CheckFunc) to w as ascending ranges, "first last" one a line. Adjacent values are
// merged into one range; values received twice stay apart, so that the reader sees
// them twice. Invalid ops (First above Last) are left out.
func WriteRanges(w io.Writer, n int, op func(i int) Op) error {
	ranges := make([][2]int64, 0, n)
	for i := range n {
		if o := op(i); o.First <= o.Last {
			ranges = append(ranges, [2]int64{o.First, o.Last})
		}
	}
	slices.SortFunc(ranges, func(a, b [2]int64) int { return cmp.Compare(a[0], b[0]) })
	bw := bufio.NewWriter(w)
	for i := 0; i < len(ranges); {
		first, last := ranges[i][0], ranges[i][1]
		for i++; i < len(ranges) && last < ranges[i][0] && ranges[i][0]-1 == last; i++ {
			last = ranges[i][1]
		}
		if _, err := fmt.Fprintf(bw, "%d %d\n", first, last); err != nil {
			return fmt.Errorf("history: write ranges: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("history: write ranges: %w", err)
	}
	return nil
}

// ReadRanges reads what WriteRanges wrote, one op of client for each range, without
// times: ops checked together this way show values received twice, never an order
// violation.
func ReadRanges(r io.Reader, client string) ([]Op, error) {
	var ops []Op
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		var err1, err2 error
		o := Op{Client: client}
		if len(f) == 2 {
			o.First, err1 = strconv.ParseInt(f[0], 10, 64)
			o.Last, err2 = strconv.ParseInt(f[1], 10, 64)
		}
		if len(f) != 2 || err1 != nil || err2 != nil || o.First > o.Last {
			return nil, fmt.Errorf("history: %s: line %d: %q is not a range \"first last\"", client, line, sc.Text())
		}
		ops = append(ops, o)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("history: read ranges of %s: %w", client, err)
	}
	return ops, nil
}

// ReadRangesFile reads the file path that WriteRanges wrote, as ReadRanges with the
// path for the client.
func ReadRangesFile(path string) ([]Op, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	defer f.Close()
	return ReadRanges(f, path)
}
