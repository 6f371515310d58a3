package service

import (
	"context"
	"errors"
	"strings"
	"time"

	"stepwise/asl"
	"stepwise/awsarn"
	"stepwise/history"
	"stepwise/internal/startrule"
	"stepwise/sfnapi"
	"stepwise/store"
)

// State machine statuses and types.
const (
	statusActive   = "ACTIVE"
	statusDeleting = startrule.Deleting
	typeStandard   = asl.TypeStandard
	typeExpress    = asl.TypeExpress
)

// CreateStateMachine creates a state machine. It is idempotent: a request
// with the name, definition, type and configurations of an existing state
// machine returns that state machine (AWS ignores roleArn and tags in this
// comparison); any other request for a taken name is
// StateMachineAlreadyExists.
func (s *Service) CreateStateMachine(ctx context.Context, in *CreateStateMachineInput) (*CreateStateMachineOutput, error) {
	v := newValidator()
	if v.required("name", in.Name) {
		v.length("name", in.Name, 1, maxNameLength)
	}
	if v.required("definition", in.Definition) {
		v.sensitiveLength("definition", in.Definition, 1, maxDefinitionLength)
	}
	if v.required("roleArn", in.RoleArn) {
		v.length("roleArn", in.RoleArn, 1, maxArnLength)
	}
	v.enum("type", in.Type, typeStandard, typeExpress)
	v.sensitiveLength("versionDescription", in.VersionDescription, 0, 256)
	validateTags(v, in.Tags)
	logging := normalLogging(v, in.LoggingConfiguration)
	tracing := normalTracing(in.TracingConfiguration)
	encryption, encErr := normalEncryption(v, in.EncryptionConfiguration)
	if err := v.err(); err != nil {
		return nil, err
	}
	if err := checkPolicyTags(in.Tags, nil); err != nil {
		return nil, err
	}
	if !in.Publish && in.VersionDescription != "" {
		return nil, errVersionDescription()
	}
	if !awsarn.ValidName(in.Name) {
		return nil, errInvalidName(in.Name)
	}
	if err := checkRoleArn(in.RoleArn); err != nil {
		return nil, err
	}
	if err := checkLogging(logging); err != nil {
		return nil, err
	}
	if encErr != nil {
		return nil, encErr
	}
	typ := in.Type
	if typ == "" {
		typ = typeStandard
	}
	m, err := s.parseDefinition(in.Definition, typ)
	if err != nil {
		return nil, err
	}
	if err := checkPolicyTags(in.Tags, m); err != nil {
		return nil, err
	}
	if len(in.Tags) > maxTagsPerResource {
		return nil, errTooManyTags(s.StateMachineArn(in.Name), maxTagsPerResource)
	}

	now := s.now()
	sm := &store.StateMachine{
		Arn:                     s.StateMachineArn(in.Name),
		Name:                    in.Name,
		Type:                    typ,
		Status:                  statusActive,
		RevisionID:              s.cfg.NewID(),
		Definition:              in.Definition,
		RoleArn:                 in.RoleArn,
		LoggingConfiguration:    configText(logging),
		TracingConfiguration:    configText(tracing),
		EncryptionConfiguration: configText(encryption),
		CreatedAt:               now,
		UpdatedAt:               now,
	}
	var created *store.StateMachine
	var version *store.Version
	err = s.inTx(ctx, func(tx store.ExecutorTx) error {
		var err error
		created, err = tx.StateMachineInsert(ctx, &store.StateMachineInsertParams{StateMachine: sm})
		if err != nil {
			return err
		}
		if in.Publish {
			if version, err = publish(ctx, tx, created, in.VersionDescription, now); err != nil {
				return err
			}
		}
		if len(in.Tags) > 0 {
			return tx.TagPut(ctx, sm.Arn, storeTags(in.Tags))
		}
		return nil
	})
	s.starter.Forget(sm.Arn)
	if errors.Is(err, store.ErrAlreadyExists) {
		existing, getErr := s.db().StateMachineGet(ctx, sm.Arn)
		if getErr != nil {
			if errors.Is(getErr, store.ErrNotFound) {
				return nil, errStateMachineAlreadyExists(sm.Arn) // deleted meanwhile
			}
			return nil, storeError("get state machine", getErr)
		}
		if sameStateMachine(existing, sm) {
			out := &CreateStateMachineOutput{StateMachineArn: existing.Arn, CreationDate: history.EpochTime(existing.CreatedAt)}
			if in.Publish {
				v, err := publish(ctx, s.db(), existing, in.VersionDescription, now)
				if err != nil {
					return nil, storeError("publish version", err)
				}
				out.StateMachineVersionArn = v.Arn()
			}
			return out, nil
		}
		return nil, errStateMachineAlreadyExists(sm.Arn)
	}
	if err != nil {
		return nil, storeError("create state machine", err)
	}
	if s.cfg.OnDefinition != nil {
		s.cfg.OnDefinition(created.Arn, m)
	}
	if s.cfg.OnStateMachine != nil {
		s.cfg.OnStateMachine(created)
	}
	out := &CreateStateMachineOutput{StateMachineArn: created.Arn, CreationDate: history.EpochTime(created.CreatedAt)}
	if version != nil {
		out.StateMachineVersionArn = version.Arn()
	}
	return out, nil
}

// sameStateMachine is CreateStateMachine's idempotency check.
func sameStateMachine(a, b *store.StateMachine) bool {
	return a.Name == b.Name && a.Definition == b.Definition && a.Type == b.Type &&
		configOr(a.LoggingConfiguration, defaultLogging()) == b.LoggingConfiguration &&
		configOr(a.TracingConfiguration, defaultTracing()) == b.TracingConfiguration &&
		configOr(a.EncryptionConfiguration, defaultEncryption()) == b.EncryptionConfiguration
}

func configOr(text string, def any) string {
	if text == "" {
		return configText(def)
	}
	return text
}

// checkRoleArn refuses a role that is not an ARN (AWS checks the prefix).
func checkRoleArn(roleArn string) error {
	if !strings.HasPrefix(roleArn, "arn:") {
		return errInvalidArnPrefix(roleArn)
	}
	return nil
}

// parseDefinition parses and validates a definition for a state machine
// type, or returns the InvalidDefinition error AWS gives for it.
func (s *Service) parseDefinition(definition, typ string) (*asl.StateMachine, error) {
	m, diags := asl.ParseWith([]byte(definition), asl.Options{Type: typ})
	if m != nil {
		diags = s.resourceDiagnostics(m)
	}
	if m == nil || len(diags) > 0 {
		return nil, sfnapi.NewError(sfnapi.CodeInvalidDefinition, "%s", asl.InvalidDefinitionMessage(diags))
	}
	return m, nil
}

// resourceDiagnostics refuses the Task resources that name actions that
// do not exist (see Config.KnowsResource).
func (s *Service) resourceDiagnostics(m *asl.StateMachine) []asl.Diagnostic {
	if s.cfg.KnowsResource == nil {
		return nil
	}
	var diags []asl.Diagnostic
	for _, t := range m.Tasks() {
		if !s.cfg.KnowsResource(t.Resource) {
			diags = append(diags, asl.ErrResourceNotRecognized(t.Location, t.Resource))
		}
	}
	return diags
}

// getStateMachine returns the state machine a (parsed) ARN names, or
// StateMachineDoesNotExist.
func (s *Service) getStateMachine(ctx context.Context, ref *stateMachineRef) (*store.StateMachine, error) {
	if !ref.local || ref.qualifier != "" {
		// Versions and aliases do not exist yet.
		return nil, errStateMachineDoesNotExist(ref.arn)
	}
	sm, err := s.db().StateMachineGet(ctx, ref.arn)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errStateMachineDoesNotExist(ref.arn)
	}
	if err != nil {
		return nil, storeError("get state machine", err)
	}
	return sm, nil
}

// stateMachineArnInput checks a required state machine ARN member and
// parses it.
func (s *Service) stateMachineArnInput(member, text string) (*stateMachineRef, error) {
	v := newValidator()
	if v.required(member, text) {
		v.length(member, text, 1, maxArnLength)
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	return s.parseStateMachineArn(text)
}

// DescribeStateMachine describes a state machine, with the defaults of its
// configurations and the variables its states read.
func (s *Service) DescribeStateMachine(ctx context.Context, in *DescribeStateMachineInput) (*DescribeStateMachineOutput, error) {
	if err := checkIncludedData(in.IncludedData); err != nil {
		return nil, err
	}
	ref, err := s.stateMachineArnInput("stateMachineArn", in.StateMachineArn)
	if err != nil {
		return nil, err
	}
	var sm *store.StateMachine
	var version *store.Version
	if ref.qualifier != "" {
		var base *store.StateMachine
		if base, version, err = s.getVersion(ctx, ref); err != nil {
			return nil, err
		}
		if sm, err = s.atVersion(ctx, base, version); err != nil {
			return nil, err
		}
	} else if sm, err = s.getStateMachine(ctx, ref); err != nil {
		return nil, err
	}
	out := &DescribeStateMachineOutput{
		StateMachineArn:         sm.Arn,
		Name:                    sm.Name,
		Status:                  sm.Status,
		Definition:              sm.Definition,
		RoleArn:                 sm.RoleArn,
		Type:                    sm.Type,
		CreationDate:            history.EpochTime(sm.CreatedAt),
		LoggingConfiguration:    readConfig(sm.LoggingConfiguration, defaultLogging()),
		TracingConfiguration:    readConfig(sm.TracingConfiguration, defaultTracing()),
		EncryptionConfiguration: readConfig(sm.EncryptionConfiguration, defaultEncryption()),
		VariableReferences:      variableReferencesOf(sm.Definition),
	}
	if in.IncludedData == includedMetadataOnly {
		out.Definition = ""
	}
	if version != nil {
		// A version is described as it was published: its ARN, date
		// and description, and its revision unless it is the first.
		out.StateMachineArn, out.CreationDate, out.Description = version.Arn(), history.EpochTime(version.CreatedAt), version.Description
		rev, err := s.db().RevisionGet(ctx, sm.Arn, version.RevisionID)
		if err != nil {
			return nil, storeError("get revision", err)
		}
		if !rev.CreatedAt.Equal(sm.CreatedAt) {
			out.RevisionID = rev.RevisionID
		}
		return out, nil
	}
	if out.RevisionID, err = s.publicRevision(ctx, sm); err != nil {
		return nil, err
	}
	return out, nil
}

// publicRevision returns the revision id DescribeStateMachine shows: none
// until the state machine is updated with a new definition or role, as on
// AWS.
func (s *Service) publicRevision(ctx context.Context, sm *store.StateMachine) (string, error) {
	if sm.UpdatedAt.Equal(sm.CreatedAt) {
		return "", nil
	}
	rev, err := s.db().RevisionGet(ctx, sm.Arn, sm.RevisionID)
	if err != nil {
		return "", storeError("get revision", err)
	}
	if rev.CreatedAt.Equal(sm.CreatedAt) {
		return "", nil
	}
	return rev.RevisionID, nil
}

// UpdateStateMachine changes a state machine's definition, role or
// configurations. A new definition, role or logging configuration makes a
// new revision (as on AWS); running executions keep the revision they
// started with.
func (s *Service) UpdateStateMachine(ctx context.Context, in *UpdateStateMachineInput) (*UpdateStateMachineOutput, error) {
	v := newValidator()
	if v.required("stateMachineArn", in.StateMachineArn) {
		v.length("stateMachineArn", in.StateMachineArn, 1, maxArnLength)
	}
	if in.Definition != nil {
		v.sensitiveLength("definition", *in.Definition, 1, maxDefinitionLength)
	}
	if in.RoleArn != nil {
		v.length("roleArn", *in.RoleArn, 1, maxArnLength)
	}
	v.sensitiveLength("versionDescription", in.VersionDescription, 0, 256)
	var logging *LoggingConfiguration
	if in.LoggingConfiguration != nil {
		logging = normalLogging(v, in.LoggingConfiguration)
	}
	var encryption *EncryptionConfiguration
	var encErr error
	if in.EncryptionConfiguration != nil {
		encryption, encErr = normalEncryption(v, in.EncryptionConfiguration)
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	ref, err := s.parseStateMachineArn(in.StateMachineArn)
	if err != nil {
		return nil, err
	}
	if !in.Publish && in.VersionDescription != "" {
		return nil, errVersionDescription()
	}
	if in.Definition == nil && in.RoleArn == nil && in.LoggingConfiguration == nil &&
		in.TracingConfiguration == nil && in.EncryptionConfiguration == nil {
		return nil, errMissingUpdate()
	}
	sm, err := s.getStateMachine(ctx, ref)
	if err != nil {
		return nil, err
	}
	if sm.Status == statusDeleting {
		return nil, errStateMachineDeleting(sm.Arn)
	}
	if in.RoleArn != nil {
		if err := checkRoleArn(*in.RoleArn); err != nil {
			return nil, err
		}
	}
	if logging != nil {
		if err := checkLogging(logging); err != nil {
			return nil, err
		}
	}
	if encErr != nil {
		return nil, encErr
	}
	var m *asl.StateMachine
	if in.Definition != nil {
		if m, err = s.parseDefinition(*in.Definition, sm.Type); err != nil {
			return nil, err
		}
		// The state machine's policy tags must still name its states: a
		// definition that drops (or retypes) a state a policy names is
		// refused until the tag is removed, so no policy is silently lost.
		tags, err := s.db().TagList(ctx, sm.Arn)
		if err != nil {
			return nil, storeError("list tags", err)
		}
		if err := checkPolicyTags(tagsOf(tags), m); err != nil {
			return nil, err
		}
	}

	next := *sm
	newRevision := false
	if in.Definition != nil && *in.Definition != sm.Definition {
		next.Definition, newRevision = *in.Definition, true
	}
	if in.RoleArn != nil && *in.RoleArn != sm.RoleArn {
		next.RoleArn, newRevision = *in.RoleArn, true
	}
	if logging != nil {
		// A new logging configuration is a new revision, as on AWS: the
		// executions started before it log as they started.
		if text := configText(logging); text != configOr(sm.LoggingConfiguration, defaultLogging()) {
			next.LoggingConfiguration, newRevision = text, true
		}
	}
	if in.TracingConfiguration != nil {
		next.TracingConfiguration = configText(normalTracing(in.TracingConfiguration))
	}
	if encryption != nil {
		next.EncryptionConfiguration = configText(encryption)
	}
	if newRevision {
		next.RevisionID = s.cfg.NewID()
	}
	now := s.now()
	if !now.After(sm.UpdatedAt) {
		now = sm.UpdatedAt.Add(time.Millisecond) // updates are ordered
	}
	next.UpdatedAt = now
	s.forgetStateMachine(next.Arn)
	updated, err := s.db().StateMachineUpdate(ctx, &store.StateMachineUpdateParams{StateMachine: &next, NewRevision: newRevision})
	if errors.Is(err, store.ErrNotFound) {
		return nil, errStateMachineDoesNotExist(sm.Arn)
	}
	if err != nil {
		return nil, storeError("update state machine", err)
	}
	if m != nil && s.cfg.OnDefinition != nil {
		s.cfg.OnDefinition(sm.Arn, m)
	}
	if s.cfg.OnStateMachine != nil {
		s.cfg.OnStateMachine(updated)
	}
	out := &UpdateStateMachineOutput{UpdateDate: history.EpochTime(updated.UpdatedAt)}
	// As DescribeStateMachine, the first revision's id is not shown.
	if out.RevisionID, err = s.publicRevision(ctx, updated); err != nil {
		return nil, err
	}
	if in.Publish {
		v, err := publish(ctx, s.db(), updated, in.VersionDescription, now)
		if err != nil {
			return nil, storeError("publish version", err)
		}
		out.StateMachineVersionArn = v.Arn()
	}
	return out, nil
}

// DeleteStateMachine deletes a state machine. Deleting one that does not
// exist succeeds, as on AWS. Executions that are running go on with the
// revision they started with.
func (s *Service) DeleteStateMachine(ctx context.Context, in *DeleteStateMachineInput) (*DeleteStateMachineOutput, error) {
	ref, err := s.stateMachineArnInput("stateMachineArn", in.StateMachineArn)
	if err != nil {
		return nil, err
	}
	if !ref.local || ref.qualifier != "" {
		return &DeleteStateMachineOutput{}, nil
	}
	s.forgetStateMachine(ref.arn)
	err = s.db().StateMachineDelete(ctx, ref.arn)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, storeError("delete state machine", err)
	}
	return &DeleteStateMachineOutput{}, nil
}

// ListStateMachines lists state machines by name.
func (s *Service) ListStateMachines(ctx context.Context, in *ListStateMachinesInput) (*ListStateMachinesOutput, error) {
	v := newValidator()
	v.intRange("maxResults", in.MaxResults, 0, maxPageSize)
	if in.NextToken != nil {
		v.tokenLength("nextToken", *in.NextToken, maxTokenLength)
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	c, err := decodeToken(in.NextToken, cursorStateMachines, "")
	if err != nil {
		return nil, err
	}
	p := &store.StateMachineListParams{Limit: pageSize(in.MaxResults) + 1}
	if c != nil {
		p.AfterName = c.After
	}
	rows, err := s.db().StateMachineList(ctx, p)
	if err != nil {
		return nil, storeError("list state machines", err)
	}
	out := &ListStateMachinesOutput{StateMachines: []StateMachineListItem{}}
	limit := pageSize(in.MaxResults)
	for i, sm := range rows {
		if i == limit {
			out.NextToken = encodeToken(cursor{Kind: cursorStateMachines, After: rows[i-1].Name})
			break
		}
		out.StateMachines = append(out.StateMachines, StateMachineListItem{
			StateMachineArn: sm.Arn, Name: sm.Name, Type: sm.Type, CreationDate: history.EpochTime(sm.CreatedAt),
		})
	}
	return out, nil
}

// ValidateStateMachineDefinition returns the diagnostics of a definition.
func (s *Service) ValidateStateMachineDefinition(ctx context.Context, in *ValidateStateMachineDefinitionInput) (*ValidateStateMachineDefinitionOutput, error) {
	v := newValidator()
	if v.required("definition", in.Definition) {
		v.sensitiveLength("definition", in.Definition, 1, maxDefinitionLength)
	}
	v.enum("type", in.Type, typeStandard, typeExpress)
	v.enum("severity", in.Severity, string(asl.SeverityError), string(asl.SeverityWarning))
	v.intRange("maxResults", in.MaxResults, 0, maxValidateResults)
	if err := v.err(); err != nil {
		return nil, err
	}
	limit := maxValidateResults
	if in.MaxResults != nil && *in.MaxResults > 0 {
		limit = *in.MaxResults
	}
	typ := in.Type
	if typ == "" {
		typ = typeStandard
	}
	diags := asl.Validate([]byte(in.Definition), asl.Options{Type: typ, MaxDiagnostics: 10 * maxValidateResults})
	if !asl.HasErrors(diags) {
		if m, _ := asl.ParseWith([]byte(in.Definition), asl.Options{Type: typ}); m != nil {
			diags = append(s.resourceDiagnostics(m), diags...)
		}
	}
	out := &ValidateStateMachineDefinitionOutput{Result: "OK", Diagnostics: []ValidateStateMachineDefinitionDiagnostic{}}
	for _, d := range diags {
		if d.Severity == asl.SeverityError {
			out.Result = "FAIL"
		}
		if d.Severity == asl.SeverityWarning && in.Severity != string(asl.SeverityWarning) {
			continue
		}
		if len(out.Diagnostics) == limit {
			out.Truncated = true
			continue
		}
		out.Diagnostics = append(out.Diagnostics, ValidateStateMachineDefinitionDiagnostic{
			Severity: string(d.Severity), Code: d.Code, Message: d.Message, Location: d.Location,
		})
	}
	return out, nil
}

// IncludedData values.
const (
	includedAllData      = "ALL_DATA"
	includedMetadataOnly = "METADATA_ONLY"
)

func checkIncludedData(s string) error {
	v := newValidator()
	v.enum("includedData", s, includedAllData, includedMetadataOnly)
	return v.err()
}

// CreateStateMachineInput is the request of CreateStateMachine.
type CreateStateMachineInput struct {
	Name                    string                   `json:"name" awsjson:"name"`
	Definition              string                   `json:"definition"`
	RoleArn                 string                   `json:"roleArn"`
	Type                    string                   `json:"type,omitempty"`
	LoggingConfiguration    *LoggingConfiguration    `json:"loggingConfiguration,omitempty"`
	Tags                    []Tag                    `json:"tags,omitempty"`
	TracingConfiguration    *TracingConfiguration    `json:"tracingConfiguration,omitempty"`
	Publish                 bool                     `json:"publish,omitempty"`
	VersionDescription      string                   `json:"versionDescription,omitempty"`
	EncryptionConfiguration *EncryptionConfiguration `json:"encryptionConfiguration,omitempty"`
}

// CreateStateMachineOutput is the response of CreateStateMachine.
type CreateStateMachineOutput struct {
	StateMachineArn        string            `json:"stateMachineArn"`
	CreationDate           history.EpochTime `json:"creationDate"`
	StateMachineVersionArn string            `json:"stateMachineVersionArn,omitempty"`
}

// DescribeStateMachineInput is the request of DescribeStateMachine.
type DescribeStateMachineInput struct {
	StateMachineArn string `json:"stateMachineArn"`
	IncludedData    string `json:"includedData,omitempty"`
}

// VariableReferences maps state names to the variables they read.
type VariableReferences map[string][]string

// DescribeStateMachineOutput is the response of DescribeStateMachine.
type DescribeStateMachineOutput struct {
	StateMachineArn         string                   `json:"stateMachineArn"`
	Name                    string                   `json:"name"`
	Status                  string                   `json:"status,omitempty"`
	Definition              string                   `json:"definition,omitempty"`
	RoleArn                 string                   `json:"roleArn"`
	Type                    string                   `json:"type"`
	CreationDate            history.EpochTime        `json:"creationDate"`
	LoggingConfiguration    *LoggingConfiguration    `json:"loggingConfiguration,omitempty"`
	TracingConfiguration    *TracingConfiguration    `json:"tracingConfiguration,omitempty"`
	Label                   string                   `json:"label,omitempty"`
	RevisionID              string                   `json:"revisionId,omitempty"`
	Description             string                   `json:"description,omitempty"`
	EncryptionConfiguration *EncryptionConfiguration `json:"encryptionConfiguration,omitempty"`
	VariableReferences      VariableReferences       `json:"variableReferences,omitempty"`
}

// UpdateStateMachineInput is the request of UpdateStateMachine.
type UpdateStateMachineInput struct {
	StateMachineArn         string                   `json:"stateMachineArn"`
	Definition              *string                  `json:"definition,omitempty"`
	RoleArn                 *string                  `json:"roleArn,omitempty"`
	LoggingConfiguration    *LoggingConfiguration    `json:"loggingConfiguration,omitempty"`
	TracingConfiguration    *TracingConfiguration    `json:"tracingConfiguration,omitempty"`
	Publish                 bool                     `json:"publish,omitempty"`
	VersionDescription      string                   `json:"versionDescription,omitempty"`
	EncryptionConfiguration *EncryptionConfiguration `json:"encryptionConfiguration,omitempty"`
}

// UpdateStateMachineOutput is the response of UpdateStateMachine.
type UpdateStateMachineOutput struct {
	UpdateDate             history.EpochTime `json:"updateDate"`
	RevisionID             string            `json:"revisionId,omitempty"`
	StateMachineVersionArn string            `json:"stateMachineVersionArn,omitempty"`
}

// DeleteStateMachineInput is the request of DeleteStateMachine.
type DeleteStateMachineInput struct {
	StateMachineArn string `json:"stateMachineArn"`
}

// DeleteStateMachineOutput is the (empty) response of DeleteStateMachine.
type DeleteStateMachineOutput struct{}

// ListStateMachinesInput is the request of ListStateMachines.
type ListStateMachinesInput struct {
	MaxResults *int    `json:"maxResults,omitempty"`
	NextToken  *string `json:"nextToken,omitempty"`
}

// StateMachineListItem is one state machine in a list.
type StateMachineListItem struct {
	StateMachineArn string            `json:"stateMachineArn"`
	Name            string            `json:"name"`
	Type            string            `json:"type"`
	CreationDate    history.EpochTime `json:"creationDate"`
}

// ListStateMachinesOutput is the response of ListStateMachines.
type ListStateMachinesOutput struct {
	StateMachines []StateMachineListItem `json:"stateMachines"`
	NextToken     string                 `json:"nextToken,omitempty"`
}

// ValidateStateMachineDefinitionInput is the request of
// ValidateStateMachineDefinition.
type ValidateStateMachineDefinitionInput struct {
	Definition string `json:"definition"`
	Type       string `json:"type,omitempty"`
	Severity   string `json:"severity,omitempty"`
	MaxResults *int   `json:"maxResults,omitempty"`
}

// ValidateStateMachineDefinitionDiagnostic is one diagnostic.
type ValidateStateMachineDefinitionDiagnostic struct {
	Severity string `json:"severity"`
	Code     string `json:"code"`
	Message  string `json:"message"`
	Location string `json:"location,omitempty"`
}

// ValidateStateMachineDefinitionOutput is the response of
// ValidateStateMachineDefinition.
type ValidateStateMachineDefinitionOutput struct {
	Result      string                                     `json:"result"`
	Diagnostics []ValidateStateMachineDefinitionDiagnostic `json:"diagnostics"`
	Truncated   bool                                       `json:"truncated"`
}
