package start

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"stepwise/history"
	"stepwise/sfnapi"
	"stepwise/store"
)

// Exclusive nets: a state machine tagged
//
//	stepwise:exclusive = <group>:refuse
//
// runs alone among the state machines of its group: a start while an
// execution of the group runs is refused with ExecutionLimitExceeded,
// naming that execution. The tag is read as the failure policies are
// (a state machine's tags, when a start resolves it); every start goes
// through here — StartExecution, StartSyncExecution, the schedules' slots,
// a states:startExecution Task's child — but a map run's children, which
// run their parent's ItemProcessor.
//
// The group is held through the store, so that the nodes of a cluster
// agree: each start of the group claims the next free number of the
// group, a row of the store's meta table under
//
//	stepwise:exclusive/<group>/<n>  =  <execution ARN> <claimed at, Unix ms>
//
// written only if there is none (MetaGetOrPut: one writer wins). A claim
// whose execution still runs holds the group; so does one whose execution
// is not in the store yet while the claim is younger than claimGrace (the
// start between its claim and its first step); an ended or abandoned one
// is passed over. Two starts at once claim the same number, and the one
// that loses sees the winner's claim and is refused. A restart loses
// nothing: the claims are rows, the executions too.
const ExclusiveTag = "stepwise:exclusive"

// claimGrace is how long a claim whose execution is not in the store holds
// its group: its start is under way, or was cut short by a stop.
const claimGrace = time.Minute

// Exclusive is what a state machine's stepwise:exclusive tag says.
type Exclusive struct {
	Group string
}

// ParseExclusive reads a stepwise:exclusive tag's value.
func ParseExclusive(v string) (*Exclusive, error) {
	group, mode, ok := strings.Cut(v, ":")
	switch {
	case !ok || mode != "refuse":
		return nil, fmt.Errorf("the tag %s has the value %q: write <group>:refuse (a start while another execution of the group runs is refused)", ExclusiveTag, v)
	case group == "" || strings.ContainsAny(group, "/ \x00"):
		return nil, fmt.Errorf("the tag %s has the value %q: the group is a name without '/' or spaces", ExclusiveTag, v)
	}
	return &Exclusive{Group: group}, nil
}

// exclusiveOf reads a state machine's stepwise:exclusive tag (nil for
// none, or for a value that is not right: TagResource refuses it).
func exclusiveOf(tags []store.Tag) *Exclusive {
	for _, t := range tags {
		if t.Key == ExclusiveTag {
			x, _ := ParseExclusive(t.Value)
			return x
		}
	}
	return nil
}

// exclusiveRefused is the refusal of a start of an exclusive net
// while another execution of its group runs.
func exclusiveRefused(group, arn, running string) *sfnapi.Error {
	return sfnapi.NewError(sfnapi.CodeExecutionLimitExceeded,
		"Execution %s was not started: the exclusive group %q (tag %s) has the execution %s running", arn, group, ExclusiveTag, running)
}

// claims are the numbers of the groups' claims looked at already: every
// number below is passed over for good (an ended execution stays ended).
type claims struct {
	mu   sync.Mutex
	next map[string]int
	// void are the claims of this process whose start failed: passed over
	// here at once (another node waits claimGrace).
	void map[string]bool
}

// claimFor claims the exclusive group of a start, if it has one.
func (s *Starter) claimFor(ctx context.Context, p *Params) error {
	if p.Exclusive == nil {
		return nil
	}
	return s.claim(ctx, p.Exclusive, p.ExecutionArn)
}

// void says the start of p failed: its claim holds nothing.
func (s *Starter) void(p *Params) {
	if p.Exclusive == nil {
		return
	}
	s.claims.mu.Lock()
	defer s.claims.mu.Unlock()
	if s.claims.void == nil {
		s.claims.void = map[string]bool{}
	}
	s.claims.void[claimKey(p.Exclusive.Group, s.claims.next[p.Exclusive.Group])] = true
}

func claimKey(group string, n int) string {
	return ExclusiveTag + "/" + group + "/" + strconv.Itoa(n)
}

// claim holds x's group for the execution arn, or refuses the start.
func (s *Starter) claim(ctx context.Context, x *Exclusive, arn string) error {
	s.claims.mu.Lock()
	defer s.claims.mu.Unlock() // one claim at a time in this process
	if s.claims.next == nil {
		s.claims.next = map[string]int{}
	}
	mine := arn + " " + strconv.FormatInt(time.Now().UnixMilli(), 10)
	for n := s.claims.next[x.Group]; ; n++ {
		got, err := s.cfg.Store.MetaGetOrPut(ctx, claimKey(x.Group, n), []byte(mine))
		if err != nil {
			return fmt.Errorf("claim exclusive group %s: %w", x.Group, err)
		}
		holder, at, _ := strings.Cut(string(got), " ")
		if s.claims.void[claimKey(x.Group, n)] {
			s.claims.next[x.Group] = n + 1
			continue
		}
		if string(got) == mine || holder == arn {
			// Ours (or the same execution's again: a repeated start,
			// answered as StartExecution answers it).
			s.claims.next[x.Group] = n
			return nil
		}
		row, err := s.cfg.Store.ExecutionGet(ctx, holder)
		switch {
		case errors.Is(err, store.ErrNotFound):
			ms, _ := strconv.ParseInt(at, 10, 64)
			if time.Since(time.UnixMilli(ms)) < claimGrace {
				return exclusiveRefused(x.Group, arn, holder)
			}
		case err != nil:
			return fmt.Errorf("claim exclusive group %s: %w", x.Group, err)
		case row.Status == history.StatusRunning:
			return exclusiveRefused(x.Group, arn, holder)
		}
		s.claims.next[x.Group] = n + 1
	}
}
