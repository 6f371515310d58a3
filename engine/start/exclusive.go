package start

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"stepwise/history"
	"stepwise/interp"
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
	// Wait: a start while the group is held waits its turn (the tag's
	// value is the group alone); otherwise it is refused (<group>:refuse).
	Wait bool
}

// ParseExclusive reads a stepwise:exclusive tag's value.
func ParseExclusive(v string) (*Exclusive, error) {
	group, mode, hasMode := strings.Cut(v, ":")
	switch {
	case hasMode && mode != "refuse":
		return nil, fmt.Errorf("the tag %s has the value %q: write <group> (a start while another execution of the group runs waits for it) or <group>:refuse (such a start is refused)", ExclusiveTag, v)
	case group == "" || strings.ContainsAny(group, "/ \x00"):
		return nil, fmt.Errorf("the tag %s has the value %q: the group is a name without '/' or spaces", ExclusiveTag, v)
	}
	return &Exclusive{Group: group, Wait: !hasMode}, nil
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
	// floor is, by group, the lowest claim that may still hold the group
	// (every one below has ended), for the starts that wait their turn.
	floor map[string]int
	// void are the claims of this process whose start failed: passed over
	// here at once (another node waits claimGrace).
	void map[string]bool
}

// PolicyWaiting marks, in an execution's policies, the state a start that
// waits its exclusive group's turn holds (its first): the engine releases
// it once the group's earlier claims have ended (WaitingFor says "").
const PolicyWaiting interp.Policy = "exclusive-wait"

// WaitBy names the exclusive groups' releases in the operator log.
const WaitBy = "stepwise:exclusive"

// claimFor claims the exclusive group of a start, if it has one. A start
// that waits its turn (and is not synchronous: that is refused) takes the
// next number of its group; if an earlier claim still holds the group, it
// starts with its first state held (PolicyWaiting).
func (s *Starter) claimFor(ctx context.Context, p *Params, sync bool) error {
	x := p.Exclusive
	if x == nil {
		return nil
	}
	if !x.Wait || sync {
		return s.claim(ctx, x, p.ExecutionArn)
	}
	n, err := s.queue(ctx, x.Group, p.ExecutionArn)
	if err != nil {
		return err
	}
	p.queued = claimKey(x.Group, n)
	before, err := s.holder(ctx, x.Group, n)
	if err != nil || before == "" {
		return err
	}
	if _, err := s.cfg.Store.MetaGetOrPut(ctx, waitKey(p.ExecutionArn), []byte(x.Group+" "+strconv.Itoa(n))); err != nil {
		return fmt.Errorf("claim exclusive group %s: %w", x.Group, err)
	}
	ps := make(interp.Policies, len(p.Policies)+1)
	for st, list := range p.Policies {
		ps[st] = list
	}
	start := p.Machine.StartAt
	ps[start] = append(slices.Clip(ps[start]), interp.PolicyHeld, PolicyWaiting)
	p.Policies = ps
	return nil
}

// waitKey is the meta row that names the claim of an execution that
// waited its turn: "<group> <n>".
func waitKey(arn string) string { return ExclusiveTag + "-wait/" + arn }

// queue takes the next free number of group for the execution arn (or
// the one it holds already: a repeated start).
func (s *Starter) queue(ctx context.Context, group, arn string) (int, error) {
	s.claims.mu.Lock()
	defer s.claims.mu.Unlock()
	if s.claims.next == nil {
		s.claims.next = map[string]int{}
	}
	mine := arn + " " + strconv.FormatInt(time.Now().UnixMilli(), 10)
	for n := s.claims.next[group]; ; n++ {
		got, err := s.cfg.Store.MetaGetOrPut(ctx, claimKey(group, n), []byte(mine))
		if err != nil {
			return 0, fmt.Errorf("claim exclusive group %s: %w", group, err)
		}
		if holder, _, _ := strings.Cut(string(got), " "); string(got) == mine || holder == arn {
			return n, nil
		}
	}
}

// holder is the execution of the first claim of group below n that still
// holds the group, "" for none.
func (s *Starter) holder(ctx context.Context, group string, n int) (string, error) {
	s.claims.mu.Lock()
	defer s.claims.mu.Unlock()
	if s.claims.floor == nil {
		s.claims.floor = map[string]int{}
	}
	floor := s.claims.floor[group]
	for k := floor; k < n; k++ {
		got, err := s.cfg.Store.MetaGetOrPut(ctx, claimKey(group, k), []byte{})
		if err != nil {
			return "", fmt.Errorf("exclusive group %s: %w", group, err)
		}
		holder, at, _ := strings.Cut(string(got), " ")
		live := false
		if holder != "" && !s.claims.void[claimKey(group, k)] {
			if live, err = s.holds(ctx, holder, at); err != nil {
				return "", fmt.Errorf("exclusive group %s: %w", group, err)
			}
		}
		if live {
			return holder, nil
		}
		if k == floor {
			floor++
			s.claims.floor[group] = floor
		}
	}
	return "", nil
}

// holds says whether a claim made at (Unix ms) for the execution holder
// holds its group: its execution runs, or is not in the store yet while
// the claim is younger than claimGrace.
func (s *Starter) holds(ctx context.Context, holder, at string) (bool, error) {
	row, err := s.cfg.Store.ExecutionGet(ctx, holder)
	switch {
	case errors.Is(err, store.ErrNotFound):
		ms, _ := strconv.ParseInt(at, 10, 64)
		return time.Since(time.UnixMilli(ms)) < claimGrace, nil
	case err != nil:
		return false, err
	}
	return row.Status == history.StatusRunning, nil
}

// WaitingFor says what a RUNNING execution started with PolicyWaiting
// waits for: the execution of the first earlier claim of its group that
// still holds it, "" once there is none (its turn).
func (s *Starter) WaitingFor(ctx context.Context, arn string) (string, error) {
	got, err := s.cfg.Store.MetaGetOrPut(ctx, waitKey(arn), []byte{})
	if err != nil {
		return "", err
	}
	group, num, ok := strings.Cut(string(got), " ")
	n, err := strconv.Atoi(num)
	if !ok || err != nil {
		return "", nil
	}
	return s.holder(ctx, group, n)
}

// WaitingState is the state an execution's policies hold while it waits
// its exclusive group's turn, "" for none.
func WaitingState(ps interp.Policies) string {
	for st := range ps {
		if ps.Has(st, PolicyWaiting) {
			return st
		}
	}
	return ""
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
	key := p.queued
	if key == "" {
		key = claimKey(p.Exclusive.Group, s.claims.next[p.Exclusive.Group])
	}
	s.claims.void[key] = true
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
