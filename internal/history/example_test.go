package history_test

import (
	"fmt"
	"time"

	"github.com/seqd/seqd/internal/history"
)

func Example() {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	ops := []history.Op{
		{Client: "a", Start: at(0), End: at(10), First: 1, Last: 2},
		{Client: "b", Start: at(5), End: at(15), First: 3, Last: 3},  // overlaps a: either order is fine
		{Client: "a", Start: at(20), End: at(30), First: 3, Last: 3}, // b's value again, after b completed
	}
	r := history.Check(ops, history.Options{Contiguous: true})
	fmt.Println(r)
	for _, e := range r.Examples {
		fmt.Println(e)
	}
	// Output:
	// 3 ops, 4 values in [1, 3]: 1 duplicates, 0 gaps, 1 order violations
	// duplicate 3: b got 3, a got 3
	// order: a got 3 (invoked +20ms, completed +30ms) after b got 3 (completed +15ms)
}
