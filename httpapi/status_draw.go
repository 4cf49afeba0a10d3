package httpapi

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/seqd/seqd/blocks"
)

// The status page's pictures are drawn here, on the server, as inline SVG: the
// page runs no script.

// blockUse is how much of the current block is used, for its bar.
type blockUse struct {
	Size, Used int64
	Percent    float64 // 0..100, the bar's filled width
}

// useOf is st's current block's use; Size 0 without a current block.
func useOf(st blocks.Status) blockUse {
	if st.CurrentSize <= 0 || st.Current.Remaining == 0 {
		return blockUse{}
	}
	used := st.CurrentSize - st.Current.Remaining
	return blockUse{Size: st.CurrentSize, Used: used, Percent: 100 * float64(used) / float64(st.CurrentSize)}
}

// The chart's size, in its own units: a slot a minute and one for now.
const (
	chartSlot   = 10
	chartHeight = 24
)

// rateChart is the rate of each of the last minutes, and now, as bars.
type rateChart struct {
	Bars   []chartBar
	Width  int
	Height int
	Label  string // the figures the bars show, for a screen reader and a tooltip
}

type chartBar struct {
	X, Y, W, H float64
	Now        bool // the last minute as of now, not a whole past window
}

// chartOf draws st's RateHistory and Rate: one bar per past window (none for a
// window before the first call), then one for now, scaled to the highest.
func chartOf(st blocks.Status) rateChart {
	rates := make([]float64, 0, len(st.RateHistory)+1)
	known := make([]bool, 0, cap(rates))
	for i, r := range st.RateHistory {
		rates, known = append(rates, finite(r)), append(known, i >= len(st.RateHistory)-st.RateHistoryKnown)
	}
	rates, known = append(rates, finite(st.Rate)), append(known, true)
	peak := 0.0
	for _, r := range rates {
		peak = max(peak, r)
	}
	c := rateChart{Width: chartSlot * len(rates), Height: chartHeight}
	var label []string
	for i, r := range rates {
		if !known[i] {
			continue
		}
		label = append(label, rateText(r))
		h := 0.0
		if peak > 0 {
			// A rate above 0 shows, however small beside the peak.
			h = max(float64(chartHeight-1)*r/peak, 1)
		}
		if r == 0 {
			h = 0
		}
		c.Bars = append(c.Bars, chartBar{X: float64(i*chartSlot) + 1, Y: chartHeight - h, W: chartSlot - 2, H: h, Now: i == len(rates)-1})
	}
	if past := len(label) - 1; past > 0 {
		c.Label = fmt.Sprintf("values a second, each of the last %d minutes with a rate, then now: %s", past, strings.Join(label, ", "))
	} else {
		c.Label = "values a second in the last minute: " + label[0]
	}
	return c
}

// rateText is a rate as the page writes it.
func rateText(r float64) string {
	return strconv.FormatFloat(r, 'f', 1, 64) + "/s"
}

// nextFetchOf says when this instance next asks the store for a block: now,
// at the next request, or in how long at the current rate.
func nextFetchOf(st blocks.Status) string {
	switch {
	case st.Fetching:
		return "now"
	case st.UntilFetch == 0:
		return "at the next request"
	case !(st.Rate > 0) || math.IsInf(st.Rate, 0):
		return fmt.Sprintf("after %d values", st.UntilFetch)
	}
	return "in " + roughDuration(time.Duration(float64(st.UntilFetch)/st.Rate*float64(time.Second)))
}

// roughDuration is d to the unit a person reads at a glance.
func roughDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return "under 1 s"
	case d < 100*time.Second:
		return fmt.Sprintf("%d s", int(d/time.Second))
	case d < 100*time.Minute:
		return fmt.Sprintf("%d min", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h", int(d/time.Hour))
	}
	return fmt.Sprintf("%d days", int(d/(24*time.Hour)))
}

// nameHTML is a sequence name that a narrow column may wrap, but never inside
// a number: a run of digits is kept whole, and the rest may break anywhere (the
// page's style). Names without a run of two digits are as they are.
func nameHTML(name string) template.HTML {
	var b strings.Builder
	for i := 0; i < len(name); {
		j := i
		for j < len(name) && '0' <= name[j] && name[j] <= '9' {
			j++
		}
		if j-i >= 2 {
			b.WriteString(`<span class="num">` + template.HTMLEscapeString(name[i:j]) + `</span>`)
			i = j
			continue
		}
		if j == i {
			j++
		}
		b.WriteString(template.HTMLEscapeString(name[i:j]))
		i = j
	}
	return template.HTML(b.String())
}
