package service

import (
	"context"
	"errors"
	"time"

	"stepwise/awsarn"
	"stepwise/engine/activity"
	"stepwise/history"
	"stepwise/sfnapi"
	"stepwise/store"
)

const (
	cursorActivities   = "ac"
	maxTaskTokenLength = 2048
	maxWorkerName      = 80
)

// CreateActivityInput is the request of CreateActivity.
type CreateActivityInput struct {
	Name                    string          `json:"name" awsjson:"name"`
	Tags                    []Tag           `json:"tags,omitempty"`
	EncryptionConfiguration *map[string]any `json:"encryptionConfiguration,omitempty"`
}

// CreateActivityOutput is the response of CreateActivity.
type CreateActivityOutput struct {
	ActivityArn  string            `json:"activityArn"`
	CreationDate history.EpochTime `json:"creationDate"`
}

// DescribeActivityInput is the request of DescribeActivity.
type DescribeActivityInput struct {
	ActivityArn string `json:"activityArn"`
}

// DescribeActivityOutput is the response of DescribeActivity.
type DescribeActivityOutput struct {
	ActivityArn             string            `json:"activityArn"`
	Name                    string            `json:"name"`
	CreationDate            history.EpochTime `json:"creationDate"`
	EncryptionConfiguration map[string]any    `json:"encryptionConfiguration"`
}

// DeleteActivityInput is the request of DeleteActivity.
type DeleteActivityInput struct {
	ActivityArn string `json:"activityArn"`
}

// DeleteActivityOutput is the response of DeleteActivity.
type DeleteActivityOutput struct{}

// ListActivitiesInput is the request of ListActivities.
type ListActivitiesInput struct {
	MaxResults *int    `json:"maxResults,omitempty"`
	NextToken  *string `json:"nextToken,omitempty"`
}

// ActivityListItem is one activity in ListActivities.
type ActivityListItem struct {
	ActivityArn  string            `json:"activityArn"`
	Name         string            `json:"name"`
	CreationDate history.EpochTime `json:"creationDate"`
}

// ListActivitiesOutput is the response of ListActivities.
type ListActivitiesOutput struct {
	Activities []ActivityListItem `json:"activities"`
	NextToken  *string            `json:"nextToken,omitempty"`
}

// GetActivityTaskInput is the request of GetActivityTask.
type GetActivityTaskInput struct {
	ActivityArn string  `json:"activityArn"`
	WorkerName  *string `json:"workerName,omitempty"`
}

// GetActivityTaskOutput is the response of GetActivityTask; both members
// are absent when no task arrived in time.
type GetActivityTaskOutput struct {
	TaskToken *string `json:"taskToken,omitempty"`
	Input     *string `json:"input,omitempty"`
}

// SendTaskSuccessInput is the request of SendTaskSuccess.
type SendTaskSuccessInput struct {
	TaskToken string `json:"taskToken"`
	Output    string `json:"output"`
}

// SendTaskFailureInput is the request of SendTaskFailure.
type SendTaskFailureInput struct {
	TaskToken string  `json:"taskToken"`
	Error     *string `json:"error,omitempty"`
	Cause     *string `json:"cause,omitempty"`
}

// SendTaskHeartbeatInput is the request of SendTaskHeartbeat.
type SendTaskHeartbeatInput struct {
	TaskToken string `json:"taskToken"`
}

// SendTaskOutput is the (empty) response of the SendTask operations.
type SendTaskOutput struct{}

func (s *Service) activityArn(name string) string {
	return s.prefix().Activity(name)
}

// errActivityDoesNotExist (AWS).
func errActivityDoesNotExist(arn string) error {
	return apiErr(sfnapi.CodeActivityDoesNotExist, "Activity Does Not Exist: '%s'", arn)
}

// parseActivityArn checks an activity ARN; ok is false for a well-formed
// ARN of another account or region, which names nothing here.
func (s *Service) parseActivityArn(text string) (ok bool, err error) {
	a, err := parseArn(text)
	if err != nil {
		return false, err
	}
	if a.Resource != awsarn.Activity {
		return false, errInvalidArnResourceType(a.Resource)
	}
	if len(a.Parts) != 1 {
		return false, errInvalidArn(text)
	}
	return s.local(a), nil
}

// getActivity returns a stored activity or ActivityDoesNotExist.
func (s *Service) getActivity(ctx context.Context, member, text string) (*store.Activity, error) {
	v := newValidator()
	if v.required(member, text) {
		v.length(member, text, 1, maxArnLength)
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	local, err := s.parseActivityArn(text)
	if err != nil {
		return nil, err
	}
	if !local {
		return nil, errActivityDoesNotExist(text)
	}
	a, err := s.db().ActivityGet(ctx, text)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errActivityDoesNotExist(text)
	}
	if err != nil {
		return nil, storeError("get activity", err)
	}
	return a, nil
}

// CreateActivity creates an activity; creating one that exists returns it,
// as AWS does.
func (s *Service) CreateActivity(ctx context.Context, in *CreateActivityInput) (*CreateActivityOutput, error) {
	v := newValidator()
	if v.required("name", in.Name) {
		v.length("name", in.Name, 1, maxNameLength)
	}
	validateTags(v, in.Tags)
	if err := v.err(); err != nil {
		return nil, err
	}
	if !awsarn.ValidName(in.Name) {
		return nil, errInvalidName(in.Name)
	}
	arn := s.activityArn(in.Name)
	a, err := s.db().ActivityInsert(ctx, &store.Activity{Arn: arn, Name: in.Name, CreatedAt: s.cfg.Now()})
	if errors.Is(err, store.ErrAlreadyExists) {
		a, err = s.db().ActivityGet(ctx, arn)
	}
	if err != nil {
		return nil, storeError("create activity", err)
	}
	if len(in.Tags) > 0 {
		if err := s.db().TagPut(ctx, arn, storeTags(in.Tags)); err != nil {
			return nil, storeError("tag activity", err)
		}
	}
	return &CreateActivityOutput{ActivityArn: a.Arn, CreationDate: history.EpochTime(a.CreatedAt)}, nil
}

// DescribeActivity describes an activity.
func (s *Service) DescribeActivity(ctx context.Context, in *DescribeActivityInput) (*DescribeActivityOutput, error) {
	a, err := s.getActivity(ctx, "activityArn", in.ActivityArn)
	if err != nil {
		return nil, err
	}
	return &DescribeActivityOutput{ActivityArn: a.Arn, Name: a.Name, CreationDate: history.EpochTime(a.CreatedAt),
		EncryptionConfiguration: map[string]any{"type": "AWS_OWNED_KEY"}}, nil
}

// DeleteActivity deletes an activity; deleting one that does not exist is
// not an error, as on AWS.
func (s *Service) DeleteActivity(ctx context.Context, in *DeleteActivityInput) (*DeleteActivityOutput, error) {
	v := newValidator()
	if v.required("activityArn", in.ActivityArn) {
		v.length("activityArn", in.ActivityArn, 1, maxArnLength)
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	if _, err := s.parseActivityArn(in.ActivityArn); err != nil {
		return nil, err
	}
	s.activities.Forget(in.ActivityArn)
	s.engine.ForgetActivity(in.ActivityArn)
	err := s.db().ActivityDelete(ctx, in.ActivityArn)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, storeError("delete activity", err)
	}
	return &DeleteActivityOutput{}, nil
}

// ListActivities pages through activities by name.
func (s *Service) ListActivities(ctx context.Context, in *ListActivitiesInput) (*ListActivitiesOutput, error) {
	v := newValidator()
	v.intRange("maxResults", in.MaxResults, 0, maxPageSize)
	if in.NextToken != nil {
		v.tokenLength("nextToken", *in.NextToken, maxTokenLength)
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	c, err := decodeToken(in.NextToken, cursorActivities, "")
	if err != nil {
		return nil, err
	}
	limit := pageSize(in.MaxResults)
	p := &store.ActivityListParams{Limit: limit + 1}
	if c != nil {
		p.AfterName = c.After
	}
	rows, err := s.db().ActivityList(ctx, p)
	if err != nil {
		return nil, storeError("list activities", err)
	}
	out := &ListActivitiesOutput{Activities: []ActivityListItem{}}
	for i, a := range rows {
		if i == limit {
			token := encodeToken(cursor{Kind: cursorActivities, After: rows[i-1].Name})
			out.NextToken = &token
			break
		}
		out.Activities = append(out.Activities, ActivityListItem{ActivityArn: a.Arn, Name: a.Name, CreationDate: history.EpochTime(a.CreatedAt)})
	}
	return out, nil
}

// GetActivityTask long-polls for a task of an activity.
func (s *Service) GetActivityTask(ctx context.Context, in *GetActivityTaskInput) (*GetActivityTaskOutput, error) {
	worker := ""
	if in.WorkerName != nil {
		worker = *in.WorkerName
		v := newValidator()
		v.length("workerName", worker, 1, maxWorkerName)
		if err := v.err(); err != nil {
			return nil, err
		}
	}
	arn, err := s.pollActivity(ctx, in.ActivityArn)
	if err != nil && ctx.Err() != nil {
		return &GetActivityTaskOutput{}, nil // the worker stopped polling
	}
	if err != nil {
		return nil, err
	}
	task, err := s.engine.GetActivityTask(ctx, arn, worker)
	if err != nil && ctx.Err() != nil {
		return &GetActivityTaskOutput{}, nil // the worker left: no one reads the answer
	}
	if err != nil {
		return nil, engineError("get activity task", err)
	}
	if task == nil {
		return &GetActivityTaskOutput{}, nil
	}
	return &GetActivityTaskOutput{TaskToken: &task.Token, Input: &task.Input}, nil
}

// activityCacheTTL is how long GetActivityTask trusts that an activity
// it found exists without reading it again. Workers poll all the time; an
// activity deleted on another node may be polled for this much longer,
// and this node forgets its own deletes at once.
const activityCacheTTL = time.Second

// pollActivity returns the ARN of the activity GetActivityTask polls, or
// ActivityDoesNotExist.
func (s *Service) pollActivity(ctx context.Context, arn string) (string, error) {
	if s.activities.Has(arn) {
		return arn, nil
	}
	look := s.activities.Look()
	a, err := s.getActivity(ctx, "activityArn", arn)
	if err != nil {
		return "", err
	}
	s.activities.Put(a.Arn, struct{}{}, look)
	return a.Arn, nil
}

func taskTokenInput(v *validator, token string) {
	if v.required("taskToken", token) {
		v.length("taskToken", token, 1, maxTaskTokenLength)
	}
}

// SendTaskSuccess completes a task with its output.
func (s *Service) SendTaskSuccess(ctx context.Context, in *SendTaskSuccessInput) (*SendTaskOutput, error) {
	v := newValidator()
	taskTokenInput(v, in.TaskToken)
	v.required("output", in.Output)
	if err := v.err(); err != nil {
		return nil, err
	}
	if len(in.Output) > s.cfg.PayloadLimit {
		return nil, apiErr(sfnapi.CodeInvalidOutput, "Invalid Output: 'Output exceeds the maximum size of %d bytes'", s.cfg.PayloadLimit)
	}
	if err := s.engine.SendTaskSuccess(ctx, in.TaskToken, in.Output); err != nil {
		return nil, engineError("send task success", err)
	}
	return &SendTaskOutput{}, nil
}

// SendTaskFailure fails a task with an error and a cause.
func (s *Service) SendTaskFailure(ctx context.Context, in *SendTaskFailureInput) (*SendTaskOutput, error) {
	v := newValidator()
	taskTokenInput(v, in.TaskToken)
	errName, cause := "", ""
	if in.Error != nil {
		errName = *in.Error
		v.sensitiveLength("error", errName, 0, maxErrorLength)
	}
	if in.Cause != nil {
		cause = *in.Cause
		v.sensitiveLength("cause", cause, 0, maxCauseLength)
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	if err := s.engine.SendTaskFailure(ctx, in.TaskToken, errName, cause); err != nil {
		return nil, engineError("send task failure", err)
	}
	return &SendTaskOutput{}, nil
}

// SendTaskHeartbeat says a task is still being worked on.
func (s *Service) SendTaskHeartbeat(ctx context.Context, in *SendTaskHeartbeatInput) (*SendTaskOutput, error) {
	v := newValidator()
	taskTokenInput(v, in.TaskToken)
	if err := v.err(); err != nil {
		return nil, err
	}
	if err := s.engine.SendTaskHeartbeat(ctx, in.TaskToken); err != nil {
		return nil, engineError("send task heartbeat", err)
	}
	return &SendTaskOutput{}, nil
}

// ActivityStatus reports the tasks of an activity waiting for a worker and
// the workers that polled it lately (for the console; no AWS operation
// answers this).
func (s *Service) ActivityStatus(activityArn string) activity.Status {
	return s.engine.ActivityStatus(activityArn)
}
