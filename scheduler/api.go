package scheduler

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"stepwise/internal/frontdoor"
	"stepwise/store"
)

// Config configures a Service.
type Config struct {
	Region  string
	Account string
	// Now is the clock of creation and modification dates (time.Now when
	// nil).
	Now    func() time.Time
	Logger *slog.Logger
	// Calendars are the business calendars schedules may name in their
	// group's tags (stepwise:calendar), by name.
	Calendars map[string]*Calendar
	// FileTriggerRoots are the folders under which a file-arrival
	// trigger may watch a local folder (serve --file-trigger-root); none:
	// local folder triggers are refused.
	FileTriggerRoots []string
	// Objects lists a bucket's objects at the s3 endpoint (serve
	// --aws-endpoint or --endpoint s3=); nil: bucket triggers are refused.
	Objects ObjectLister
}

// Service is the EventBridge Scheduler API over a store.
type Service struct {
	exec         store.Executor
	cfg          Config
	defaultReady atomic.Bool

	fireMu  sync.Mutex
	lastErr map[string]string // the last error logged of each schedule
	retries map[string]*retry // by schedule ARN: its slot whose start failed

	fileMu sync.Mutex
	files  map[string]map[string]*fileState // by trigger, by path: what the polls saw
	polled map[string]time.Time             // by trigger: its last poll

	lookMu sync.Mutex
	look   func(ctx context.Context) // Start's look, while its loop runs (Look)
}

// New returns the service.
func New(exec store.Executor, cfg Config) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Service{exec: exec, cfg: cfg}
}

// ScheduleArn is the ARN of a schedule.
func (s *Service) ScheduleArn(group, name string) string {
	return "arn:aws:scheduler:" + s.cfg.Region + ":" + s.cfg.Account + ":schedule/" + group + "/" + name
}

// GroupArn is the ARN of a schedule group.
func (s *Service) GroupArn(name string) string {
	return "arn:aws:scheduler:" + s.cfg.Region + ":" + s.cfg.Account + ":schedule-group/" + name
}

func (s *Service) now() time.Time { return s.cfg.Now().UTC().Truncate(time.Millisecond) }

// ensureDefault creates the group "default" the first time it is needed.
func (s *Service) ensureDefault(ctx context.Context) error {
	if s.defaultReady.Load() {
		return nil
	}
	now := s.now()
	err := s.exec.ScheduleGroupInsert(ctx, &store.ScheduleGroup{Name: DefaultGroup, Arn: s.GroupArn(DefaultGroup), CreatedAt: now, UpdatedAt: now})
	if err != nil && !errors.Is(err, store.ErrAlreadyExists) {
		return err
	}
	s.defaultReady.Store(true)
	return nil
}

// groupExists fails with ResourceNotFoundException when a group does not
// exist.
func (s *Service) groupExists(ctx context.Context, name string) error {
	if err := s.ensureDefault(ctx); err != nil {
		return err
	}
	if _, err := s.exec.ScheduleGroupGet(ctx, name); errors.Is(err, store.ErrNotFound) {
		return notFoundError("Schedule group %s does not exist.", name)
	} else if err != nil {
		return err
	}
	return nil
}

// CreateSchedule creates a schedule and returns its ARN. A request that
// repeats the ClientToken of the one that created the schedule succeeds
// again.
func (s *Service) CreateSchedule(ctx context.Context, in *Schedule) (string, error) {
	now := s.now()
	in.Arn, in.CreationDate, in.LastModificationDate = "", nil, nil
	if err := in.normalize(now); err != nil {
		return "", err
	}
	if err := s.groupExists(ctx, in.GroupName); err != nil {
		return "", err
	}
	token := in.ClientToken
	if token == "" {
		token = uuid.NewString()
	}
	in.ClientToken = ""
	body, err := json.Marshal(in)
	if err != nil {
		return "", err
	}
	row := &store.Schedule{GroupName: in.GroupName, Name: in.Name, State: in.State, Body: string(body), ClientToken: token, CreatedAt: now, UpdatedAt: now}
	if err := s.exec.ScheduleInsert(ctx, row); errors.Is(err, store.ErrAlreadyExists) {
		old, gerr := s.exec.ScheduleGet(ctx, in.GroupName, in.Name)
		if gerr == nil && old.ClientToken == token {
			return s.ScheduleArn(in.GroupName, in.Name), nil
		}
		return "", conflictError("Schedule %s already exists.", in.Name)
	} else if err != nil {
		return "", err
	}
	in.Arn = s.ScheduleArn(in.GroupName, in.Name)
	s.logNotAWS(ctx, in)
	return in.Arn, nil
}

// UpdateSchedule replaces a schedule's settings (what the request leaves
// out takes its default) and returns its ARN.
func (s *Service) UpdateSchedule(ctx context.Context, in *Schedule) (string, error) {
	now := s.now()
	in.Arn, in.CreationDate, in.LastModificationDate = "", nil, nil
	if err := in.normalize(now); err != nil {
		return "", err
	}
	old, err := s.exec.ScheduleGet(ctx, in.GroupName, in.Name)
	if errors.Is(err, store.ErrNotFound) {
		return "", notFoundError("Schedule %s does not exist.", in.Name)
	} else if err != nil {
		return "", err
	}
	in.ClientToken = ""
	body, err := json.Marshal(in)
	if err != nil {
		return "", err
	}
	old.State, old.Body, old.UpdatedAt = in.State, string(body), now
	if err := s.exec.ScheduleUpdate(ctx, old); errors.Is(err, store.ErrNotFound) {
		return "", notFoundError("Schedule %s does not exist.", in.Name)
	} else if err != nil {
		return "", err
	}
	in.Arn = s.ScheduleArn(in.GroupName, in.Name)
	s.logNotAWS(ctx, in)
	return in.Arn, nil
}

// decode turns a stored row into the schedule GetSchedule returns.
func (s *Service) decode(row *store.Schedule) (*Schedule, error) {
	var out Schedule
	if err := json.Unmarshal([]byte(row.Body), &out); err != nil {
		return nil, err
	}
	out.Arn = s.ScheduleArn(row.GroupName, row.Name)
	out.Name, out.GroupName, out.State = row.Name, row.GroupName, row.State
	out.CreationDate, out.LastModificationDate = epochPtr(row.CreatedAt), epochPtr(row.UpdatedAt)
	return &out, nil
}

// GetSchedule returns a schedule.
func (s *Service) GetSchedule(ctx context.Context, group, name string) (*Schedule, error) {
	if group == "" {
		group = DefaultGroup
	}
	var v checks
	v.name(name, "name")
	v.name(group, "groupName")
	if err := v.err(); err != nil {
		return nil, err
	}
	row, err := s.exec.ScheduleGet(ctx, group, name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFoundError("Schedule %s does not exist.", name)
	} else if err != nil {
		return nil, err
	}
	return s.decode(row)
}

// DeleteSchedule deletes a schedule.
func (s *Service) DeleteSchedule(ctx context.Context, group, name string) error {
	if group == "" {
		group = DefaultGroup
	}
	err := s.exec.ScheduleDelete(ctx, group, name)
	if errors.Is(err, store.ErrNotFound) {
		return notFoundError("Schedule %s does not exist.", name)
	} else if err != nil {
		return err
	}
	return s.exec.TagDelete(ctx, s.ScheduleArn(group, name), []string{HoldTag, SkippedTag})
}

// ScheduleSummary is an item of ListSchedules.
type ScheduleSummary struct {
	Arn                  string         `json:"Arn"`
	CreationDate         *Epoch         `json:"CreationDate"`
	GroupName            string         `json:"GroupName"`
	LastModificationDate *Epoch         `json:"LastModificationDate"`
	Name                 string         `json:"Name"`
	State                string         `json:"State"`
	Target               *TargetSummary `json:"Target,omitempty"`
}

// TargetSummary is the target of a ScheduleSummary.
type TargetSummary struct {
	Arn string `json:"Arn"`
}

// ListSchedulesInput filters and pages ListSchedules.
type ListSchedulesInput struct {
	GroupName, NamePrefix, State, NextToken string
	MaxResults                              int
}

// ListSchedulesOutput is a page of ListSchedules.
type ListSchedulesOutput struct {
	NextToken *string           `json:"NextToken,omitempty"`
	Schedules []ScheduleSummary `json:"Schedules"`
}

const maxPage = 100

// Page tokens are the front door's (frontdoor.PageToken): each names its
// list and what was listed (the group, prefix and state asked for), and
// is refused by another list, or the same list with other filters.
const (
	tokenSchedules = "schedules"
	tokenGroups    = "groups"
)

// after is where a page of a list starts: after this schedule or group.
type after struct {
	Group string `json:"g,omitempty"`
	Name  string `json:"n"`
}

func encodeToken(kind, scope string, pos after) *string {
	t := frontdoor.PageToken(kind, scope, pos)
	return &t
}

// decodeToken reads a NextToken given for the list kind over scope. A
// token of the form before the front door's (the base64 of a JSON array:
// [group, name] for schedules, [name] for groups) is still read, with
// no scope to check, as it was then, so that a client paging across an
// upgrade pages on.
func decodeToken(token, kind, scope string) (after, error) {
	var pos after
	if err := frontdoor.ReadPageToken(token, kind, scope, &pos); err != nil {
		if pos, ok := legacyToken(token, kind); ok {
			return pos, nil
		}
		return after{}, validationError("Invalid NextToken.")
	}
	return pos, nil
}

// legacyToken reads a token of the array form.
func legacyToken(token, kind string) (after, bool) {
	b, err := base64.RawURLEncoding.DecodeString(token)
	var parts []string
	if err != nil || json.Unmarshal(b, &parts) != nil {
		return after{}, false
	}
	switch {
	case kind == tokenSchedules && len(parts) == 2:
		return after{Group: parts[0], Name: parts[1]}, true
	case kind == tokenGroups && len(parts) == 1:
		return after{Name: parts[0]}, true
	}
	return after{}, false
}

func pageSize(n int) (int, error) {
	if n == 0 {
		return maxPage, nil
	}
	if n < 1 || n > maxPage {
		return 0, validationError("1 validation error detected: Value '%d' at 'maxResults' failed to satisfy constraint: Member must have value less than or equal to 100 and greater than or equal to 1", n)
	}
	return n, nil
}

// ListSchedules lists schedules by group and name.
func (s *Service) ListSchedules(ctx context.Context, in *ListSchedulesInput) (*ListSchedulesOutput, error) {
	var v checks
	if in.GroupName != "" {
		v.name(in.GroupName, "groupName")
	}
	if in.NamePrefix != "" {
		v.name(in.NamePrefix, "namePrefix")
	}
	if in.State != "" && !oneOf(in.State, "ENABLED", "DISABLED") {
		v.add(in.State, "state", "satisfy enum value set: [ENABLED, DISABLED]")
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	size, err := pageSize(in.MaxResults)
	if err != nil {
		return nil, err
	}
	p := &store.ScheduleListParams{GroupName: in.GroupName, NamePrefix: in.NamePrefix, State: in.State, Limit: size + 1}
	scope := strings.Join([]string{in.GroupName, in.NamePrefix, in.State}, "|")
	if in.NextToken != "" {
		pos, err := decodeToken(in.NextToken, tokenSchedules, scope)
		if err != nil {
			return nil, err
		}
		p.AfterGroup, p.AfterName = pos.Group, pos.Name
	}
	rows, err := s.exec.ScheduleList(ctx, p)
	if err != nil {
		return nil, err
	}
	out := &ListSchedulesOutput{Schedules: []ScheduleSummary{}}
	if len(rows) > size {
		rows = rows[:size]
		last := rows[size-1]
		out.NextToken = encodeToken(tokenSchedules, scope, after{Group: last.GroupName, Name: last.Name})
	}
	for _, row := range rows {
		sch, err := s.decode(row)
		if err != nil {
			return nil, err
		}
		sum := ScheduleSummary{Arn: sch.Arn, CreationDate: sch.CreationDate, GroupName: sch.GroupName,
			LastModificationDate: sch.LastModificationDate, Name: sch.Name, State: sch.State}
		if sch.Target != nil {
			sum.Target = &TargetSummary{Arn: sch.Target.Arn}
		}
		out.Schedules = append(out.Schedules, sum)
	}
	return out, nil
}

// Tag is a tag of a schedule group.
type Tag struct {
	Key   string `json:"Key"`
	Value string `json:"Value"`
}

func checkTags(tags []Tag) error {
	var v checks
	if len(tags) > 200 {
		v.add(len(tags), "tags", "have length less than or equal to 200")
	}
	for i, t := range tags {
		if n := len(t.Key); n < 1 || n > 128 {
			v.add(t.Key, "tags."+strconv.Itoa(i+1)+".member.key", "have length less than or equal to 128 and greater than or equal to 1")
		}
		if len(t.Value) > 256 {
			v.add(t.Value, "tags."+strconv.Itoa(i+1)+".member.value", "have length less than or equal to 256")
		}
	}
	return v.err()
}

func toStoreTags(tags []Tag) []store.Tag {
	out := make([]store.Tag, len(tags))
	for i, t := range tags {
		out[i] = store.Tag{Key: t.Key, Value: t.Value}
	}
	return out
}

// CreateScheduleGroup creates a schedule group with its tags.
func (s *Service) CreateScheduleGroup(ctx context.Context, name, clientToken string, tags []Tag) (string, error) {
	var v checks
	v.name(name, "name")
	v.clientToken(clientToken)
	if err := v.err(); err != nil {
		return "", err
	}
	if err := checkTags(tags); err != nil {
		return "", err
	}
	if err := s.checkCalendarTags(tags); err != nil {
		return "", err
	}
	if err := s.ensureDefault(ctx); err != nil {
		return "", err
	}
	if clientToken == "" {
		clientToken = uuid.NewString()
	}
	now := s.now()
	arn := s.GroupArn(name)
	err := s.exec.ScheduleGroupInsert(ctx, &store.ScheduleGroup{Name: name, Arn: arn, ClientToken: clientToken, CreatedAt: now, UpdatedAt: now})
	if errors.Is(err, store.ErrAlreadyExists) {
		if old, gerr := s.exec.ScheduleGroupGet(ctx, name); gerr == nil && old.ClientToken == clientToken {
			return arn, nil
		}
		return "", conflictError("Schedule group %s already exists.", name)
	} else if err != nil {
		return "", err
	}
	if err := s.exec.TagPut(ctx, arn, toStoreTags(tags)); err != nil {
		return "", err
	}
	return arn, nil
}

// ScheduleGroup is a schedule group as GetScheduleGroup returns it.
type ScheduleGroup struct {
	Arn                  string `json:"Arn"`
	CreationDate         *Epoch `json:"CreationDate"`
	LastModificationDate *Epoch `json:"LastModificationDate"`
	Name                 string `json:"Name"`
	State                string `json:"State"`
}

func (s *Service) group(g *store.ScheduleGroup) ScheduleGroup {
	return ScheduleGroup{Arn: g.Arn, CreationDate: epochPtr(g.CreatedAt), LastModificationDate: epochPtr(g.UpdatedAt), Name: g.Name, State: "ACTIVE"}
}

// GetScheduleGroup returns a schedule group.
func (s *Service) GetScheduleGroup(ctx context.Context, name string) (*ScheduleGroup, error) {
	var v checks
	v.name(name, "name")
	if err := v.err(); err != nil {
		return nil, err
	}
	if err := s.ensureDefault(ctx); err != nil {
		return nil, err
	}
	g, err := s.exec.ScheduleGroupGet(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFoundError("Schedule group %s does not exist.", name)
	} else if err != nil {
		return nil, err
	}
	out := s.group(g)
	return &out, nil
}

// DeleteScheduleGroup deletes a schedule group with its schedules.
func (s *Service) DeleteScheduleGroup(ctx context.Context, name string) error {
	var v checks
	v.name(name, "name")
	if err := v.err(); err != nil {
		return err
	}
	if name == DefaultGroup {
		return validationError("The default schedule group cannot be deleted.")
	}
	err := s.exec.ScheduleGroupDelete(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return notFoundError("Schedule group %s does not exist.", name)
	}
	return err
}

// ListScheduleGroupsOutput is a page of ListScheduleGroups.
type ListScheduleGroupsOutput struct {
	NextToken      *string         `json:"NextToken,omitempty"`
	ScheduleGroups []ScheduleGroup `json:"ScheduleGroups"`
}

// ListScheduleGroups lists schedule groups by name.
func (s *Service) ListScheduleGroups(ctx context.Context, prefix, nextToken string, maxResults int) (*ListScheduleGroupsOutput, error) {
	if prefix != "" {
		var v checks
		v.name(prefix, "namePrefix")
		if err := v.err(); err != nil {
			return nil, err
		}
	}
	size, err := pageSize(maxResults)
	if err != nil {
		return nil, err
	}
	var from after
	if nextToken != "" {
		if from, err = decodeToken(nextToken, tokenGroups, prefix); err != nil {
			return nil, err
		}
	}
	if err := s.ensureDefault(ctx); err != nil {
		return nil, err
	}
	rows, err := s.exec.ScheduleGroupList(ctx, prefix, from.Name, size+1)
	if err != nil {
		return nil, err
	}
	out := &ListScheduleGroupsOutput{ScheduleGroups: []ScheduleGroup{}}
	if len(rows) > size {
		rows = rows[:size]
		out.NextToken = encodeToken(tokenGroups, prefix, after{Name: rows[size-1].Name})
	}
	for _, g := range rows {
		out.ScheduleGroups = append(out.ScheduleGroups, s.group(g))
	}
	return out, nil
}

// taggable returns the group a tag request's ARN names.
func (s *Service) taggable(ctx context.Context, arn string) (string, error) {
	prefix := s.GroupArn("")
	name, ok := strings.CutPrefix(arn, prefix)
	if !ok {
		if strings.HasPrefix(arn, "arn:aws:scheduler:"+s.cfg.Region+":"+s.cfg.Account+":schedule/") {
			return "", validationError("Tags can only be assigned to schedule groups: %s is a schedule.", arn)
		}
		return "", validationError("1 validation error detected: Value '%s' at 'resourceArn' failed to satisfy constraint: Member must satisfy regular expression pattern: arn:aws(-[a-z]+)?:scheduler:[a-z0-9\\-]+:\\d{12}:schedule-group\\/[0-9a-zA-Z-_.]+", arn)
	}
	if err := s.groupExists(ctx, name); err != nil {
		return "", err
	}
	return name, nil
}

// ListTagsForResource returns a group's tags.
func (s *Service) ListTagsForResource(ctx context.Context, arn string) ([]Tag, error) {
	if _, err := s.taggable(ctx, arn); err != nil {
		return nil, err
	}
	tags, err := s.exec.TagList(ctx, arn)
	if err != nil {
		return nil, err
	}
	out := make([]Tag, len(tags))
	for i, t := range tags {
		out[i] = Tag{Key: t.Key, Value: t.Value}
	}
	return out, nil
}

// TagResource adds or replaces tags of a group.
func (s *Service) TagResource(ctx context.Context, arn string, tags []Tag) error {
	if err := checkTags(tags); err != nil {
		return err
	}
	if err := s.checkCalendarTags(tags); err != nil {
		return err
	}
	if _, err := s.taggable(ctx, arn); err != nil {
		return err
	}
	have, err := s.exec.TagList(ctx, arn)
	if err != nil {
		return err
	}
	keys := map[string]bool{}
	for _, t := range have {
		keys[t.Key] = true
	}
	for _, t := range tags {
		keys[t.Key] = true
	}
	if len(keys) > 200 {
		return validationError("A schedule group can have at most 200 tags.")
	}
	return s.exec.TagPut(ctx, arn, toStoreTags(tags))
}

// UntagResource removes tags of a group.
func (s *Service) UntagResource(ctx context.Context, arn string, keys []string) error {
	if _, err := s.taggable(ctx, arn); err != nil {
		return err
	}
	return s.exec.TagDelete(ctx, arn, keys)
}
