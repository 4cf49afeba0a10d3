package period_test

import (
	"fmt"
	"time"

	"github.com/seqd/seqd/period"
)

// A day in Berlin on which the clock jumps from 02:00 to 03:00 is 23 hours long,
// and has no hour 02.
func ExampleSpec() {
	berlin, err := period.ParseZone("Europe/Berlin")
	if err != nil {
		panic(err)
	}
	at := time.Date(2027, 3, 28, 12, 0, 0, 0, time.UTC)

	day := period.Spec{Unit: period.Day, Zone: berlin}
	fmt.Println(day.Key(at), day.Start(at), day.End(at).Sub(day.Start(at)))

	hour := period.Spec{Unit: period.Hour, Zone: berlin}
	_, err = hour.ParseKey("2027-03-28T02")
	fmt.Println(err)
	// Output:
	// 2027-03-28 2027-03-28 00:00:00 +0100 CET 23h0m0s
	// invalid period key: "2027-03-28T02" does not occur in Europe/Berlin: its clock skips it
}
