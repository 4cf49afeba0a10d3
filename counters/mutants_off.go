//go:build !seqdmutants

package counters

// Mutants are deliberately broken behaviours that the robustness suite
// (integration/robustness) must catch, to show that it can fail. They exist only
// in a binary built with -tags seqdmutants (mutants_on.go), which reads
// SEQD_MUTANT; in every other build, production's included, these are constants
// and the compiler drops the branches they guard.
const (
	mutantNoLease     = false // blocks are served whatever their lease
	mutantNoFence     = false // a give-back ignores floor and forced
	mutantEarlyAnswer = false // the coalescer answers before its write returns
)

func answerEarly(reserve reserveFunc) reserveFunc { return reserve }
