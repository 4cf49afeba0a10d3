package snowflake_test

import (
	"fmt"
	"time"

	"github.com/seqd/seqd/snowflake"
)

func ExampleLayout_Decode() {
	p, err := snowflake.Twitter.Decode(119520048439119879)
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Time().Format(time.RFC3339Nano), p.Worker, p.Sequence)
	// Output: 2026-11-26T19:30:00.123Z 5 7
}

// Min and Max give the ids of a time range, for a query on the _id index.
func ExampleLayout_Min() {
	from := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	fmt.Println(snowflake.Twitter.Min(from), snowflake.Twitter.Max(from.Add(24*time.Hour-time.Millisecond)))
	// Output: 119225607782400000 119587995647999999
}

func ExampleNewGenerator() {
	g, err := snowflake.NewGenerator(snowflake.JS53, 3)
	if err != nil {
		panic(err)
	}
	a, _ := g.New()
	b, _ := g.New()
	pa, _ := g.Layout().Decode(a)
	fmt.Println(a < b, pa.Worker, b <= snowflake.JS53.MaxID())
	// Output: true 3 true
}

func ExampleLayout_Workers() {
	for _, l := range []snowflake.Layout{snowflake.Twitter, snowflake.JS53} {
		fmt.Println(l, l.Workers(), "workers,", l.PerMillisecond(), "ids/ms each, until", l.End().Format(time.DateOnly))
	}
	// Output:
	// twitter 1024 workers, 4096 ids/ms each, until 2095-09-07
	// js53 32 workers, 256 ids/ms each, until 2060-11-03
}
