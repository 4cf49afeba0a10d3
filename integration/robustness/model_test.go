//go:build integration

package robustness

import (
	"fmt"
	"time"

	"github.com/anishathalye/porcupine"
)

// The model of one sequence, as porcupine checks it: a counter that may skip
// values (a request whose answer was lost leaves a gap), moved forward by Set.
// Its state is a lower bound of the sequence's value: the largest value known
// to be handed out or set. What it holds the answers to:
//
//   - a strict answer first…last: first above the state; the state becomes last;
//   - a Set of v answered ok: the state at most v (no value above v was handed
//     out before it); the state becomes v, so that strict answers after it are
//     above v — a give-back under a Set breaks this (the no-fence mutant);
//   - a Set of v answered backwards: the sequence was above v; the state
//     becomes at least v (at least v+1 for a strict name; a switching name's
//     give-back may move it back to v, the floor the refused Set left);
//   - a read of v: v at least the state (the stored value is at or above every
//     value handed out); for a strict name the state becomes v, since only
//     a give-back can move a stored value back.
//
// Operations whose outcome is unknown (no answer, a 503) are left out: each
// could only have raised the sequence, and leaving them out only lowers the
// bound. Answers that may have come from blocks are left out too (the history
// checks them for uniqueness and per-instance order, and history.CheckAbove holds
// every strict answer above them).

// seqInput is an operation's input: its kind, and for a set its value.
type seqInput struct {
	kind   opKind
	count  int64 // next
	value  int64 // set
	strict bool  // the name is never cached
}

// seqOutput is its answer.
type seqOutput struct {
	first, last int64 // next
	backwards   bool  // set
	value       int64 // read
}

var seqModel = porcupine.Model{
	Init: func() any { return int64(0) },
	Step: func(state, input, output any) (bool, any) {
		s, in, out := state.(int64), input.(seqInput), output.(seqOutput)
		switch in.kind {
		case opNext:
			return out.first > s, out.last
		case opSet:
			switch {
			case !out.backwards:
				return s <= in.value, in.value
			case in.strict:
				return true, max(s, in.value+1)
			default:
				return true, max(s, in.value)
			}
		case opRead:
			if in.strict {
				return out.value >= s, out.value
			}
			return out.value >= s, s
		}
		return false, s
	},
	Equal: func(a, b any) bool { return a.(int64) == b.(int64) },
	DescribeOperation: func(input, output any) string {
		in, out := input.(seqInput), output.(seqOutput)
		switch in.kind {
		case opNext:
			if out.first == out.last {
				return fmt.Sprintf("next → %d", out.first)
			}
			return fmt.Sprintf("next(%d) → %d..%d", in.count, out.first, out.last)
		case opSet:
			if out.backwards {
				return fmt.Sprintf("set %d → backwards", in.value)
			}
			return fmt.Sprintf("set %d → ok", in.value)
		case opRead:
			return fmt.Sprintf("read → %d", out.value)
		}
		return string(in.kind)
	},
	DescribeState: func(state any) string { return fmt.Sprintf("≥ %d", state.(int64)) },
}

// porcupineOps turns the ops of one name into porcupine's, times in nanoseconds
// from t0, each client a number.
func porcupineOps(ops []op, strict bool, t0 time.Time) []porcupine.Operation {
	clients := map[string]int{}
	out := make([]porcupine.Operation, 0, len(ops))
	for _, o := range ops {
		id, ok := clients[o.Client]
		if !ok {
			id = len(clients)
			clients[o.Client] = id
		}
		in := seqInput{kind: o.Kind, count: o.Count, value: o.Value, strict: strict}
		res := seqOutput{first: o.First, last: o.Last, backwards: o.Backwards, value: o.Value}
		out = append(out, porcupine.Operation{
			ClientId: id, Input: in, Output: res,
			Call: int64(o.Start.Sub(t0)), Return: int64(o.End.Sub(t0)),
			Metadata: o.who(),
		})
	}
	return out
}
