package service

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"stepwise/history"
	"stepwise/sfnapi"
	"stepwise/store"
)

// Versions are numbered, immutable revisions of a state machine
// (…:stateMachine:NAME:N); aliases (…:stateMachine:NAME:ALIAS) route the
// executions started on them to one or two versions by weight.

// PublishStateMachineVersionInput is the request of PublishStateMachineVersion.
type PublishStateMachineVersionInput struct {
	StateMachineArn string  `json:"stateMachineArn"`
	RevisionID      *string `json:"revisionId,omitempty"`
	Description     string  `json:"description,omitempty"`
}

// PublishStateMachineVersionOutput is the response of PublishStateMachineVersion.
type PublishStateMachineVersionOutput struct {
	CreationDate           history.EpochTime `json:"creationDate"`
	StateMachineVersionArn string            `json:"stateMachineVersionArn"`
}

// ListStateMachineVersionsInput is the request of ListStateMachineVersions.
type ListStateMachineVersionsInput struct {
	StateMachineArn string  `json:"stateMachineArn"`
	NextToken       *string `json:"nextToken,omitempty"`
	MaxResults      *int    `json:"maxResults,omitempty"`
}

// StateMachineVersionListItem is a version in ListStateMachineVersions.
type StateMachineVersionListItem struct {
	StateMachineVersionArn string            `json:"stateMachineVersionArn"`
	CreationDate           history.EpochTime `json:"creationDate"`
}

// ListStateMachineVersionsOutput is the response of ListStateMachineVersions.
type ListStateMachineVersionsOutput struct {
	StateMachineVersions []StateMachineVersionListItem `json:"stateMachineVersions"`
	NextToken            string                        `json:"nextToken,omitempty"`
}

// DeleteStateMachineVersionInput is the request of DeleteStateMachineVersion.
type DeleteStateMachineVersionInput struct {
	StateMachineVersionArn string `json:"stateMachineVersionArn"`
}

// DeleteStateMachineVersionOutput is the (empty) response of DeleteStateMachineVersion.
type DeleteStateMachineVersionOutput struct{}

// RoutingConfigurationListItem is a version of an alias and its weight.
type RoutingConfigurationListItem struct {
	StateMachineVersionArn string `json:"stateMachineVersionArn"`
	Weight                 *int   `json:"weight"`
}

// CreateStateMachineAliasInput is the request of CreateStateMachineAlias.
type CreateStateMachineAliasInput struct {
	Description          string                         `json:"description,omitempty"`
	Name                 string                         `json:"name"`
	RoutingConfiguration []RoutingConfigurationListItem `json:"routingConfiguration"`
}

// CreateStateMachineAliasOutput is the response of CreateStateMachineAlias.
type CreateStateMachineAliasOutput struct {
	StateMachineAliasArn string            `json:"stateMachineAliasArn"`
	CreationDate         history.EpochTime `json:"creationDate"`
}

// DescribeStateMachineAliasInput is the request of DescribeStateMachineAlias.
type DescribeStateMachineAliasInput struct {
	StateMachineAliasArn string `json:"stateMachineAliasArn"`
}

// DescribeStateMachineAliasOutput is the response of DescribeStateMachineAlias.
type DescribeStateMachineAliasOutput struct {
	StateMachineAliasArn string                         `json:"stateMachineAliasArn"`
	Name                 string                         `json:"name"`
	Description          string                         `json:"description,omitempty"`
	RoutingConfiguration []RoutingConfigurationListItem `json:"routingConfiguration"`
	CreationDate         history.EpochTime              `json:"creationDate"`
	UpdateDate           history.EpochTime              `json:"updateDate"`
}

// UpdateStateMachineAliasInput is the request of UpdateStateMachineAlias.
type UpdateStateMachineAliasInput struct {
	StateMachineAliasArn string                         `json:"stateMachineAliasArn"`
	Description          *string                        `json:"description,omitempty"`
	RoutingConfiguration []RoutingConfigurationListItem `json:"routingConfiguration,omitempty"`
}

// UpdateStateMachineAliasOutput is the response of UpdateStateMachineAlias.
type UpdateStateMachineAliasOutput struct {
	UpdateDate history.EpochTime `json:"updateDate"`
}

// DeleteStateMachineAliasInput is the request of DeleteStateMachineAlias.
type DeleteStateMachineAliasInput struct {
	StateMachineAliasArn string `json:"stateMachineAliasArn"`
}

// DeleteStateMachineAliasOutput is the (empty) response of DeleteStateMachineAlias.
type DeleteStateMachineAliasOutput struct{}

// ListStateMachineAliasesInput is the request of ListStateMachineAliases.
type ListStateMachineAliasesInput struct {
	StateMachineArn string  `json:"stateMachineArn"`
	NextToken       *string `json:"nextToken,omitempty"`
	MaxResults      *int    `json:"maxResults,omitempty"`
}

// StateMachineAliasListItem is an alias in ListStateMachineAliases.
type StateMachineAliasListItem struct {
	StateMachineAliasArn string            `json:"stateMachineAliasArn"`
	CreationDate         history.EpochTime `json:"creationDate"`
}

// ListStateMachineAliasesOutput is the response of ListStateMachineAliases.
type ListStateMachineAliasesOutput struct {
	StateMachineAliases []StateMachineAliasListItem `json:"stateMachineAliases"`
	NextToken           string                      `json:"nextToken,omitempty"`
}

// Cursor kinds of versions and aliases.
const (
	cursorVersions = "ver"
	cursorAliases  = "ali"
)

// aliasNamePattern is the pattern AWS gives for alias names: at least one
// character that is not a digit.
const aliasNamePattern = `^(?=.*[a-zA-Z_\-\.])[a-zA-Z0-9_\-\.]+$`

var aliasNameRE = regexp.MustCompile(`^[a-zA-Z0-9_\-.]+$`)

func validAliasName(name string) bool {
	return aliasNameRE.MatchString(name) && strings.ContainsFunc(name, func(r rune) bool {
		return r < '0' || r > '9'
	})
}

// versionNumber says whether a qualifier names a version (a number) rather
// than an alias.
func versionNumber(qualifier string) (int64, bool) {
	if qualifier == "" || qualifier[0] < '1' || qualifier[0] > '9' {
		return 0, false
	}
	n, err := strconv.ParseInt(qualifier, 10, 64)
	return n, err == nil
}

// unqualified is a state machine ARN without its version or alias.
func (s *Service) unqualified(ref *stateMachineRef) string { return s.StateMachineArn(ref.name) }

// getVersion returns a version a reference names, with the state machine
// it belongs to; StateMachineDoesNotExist when either is missing.
func (s *Service) getVersion(ctx context.Context, ref *stateMachineRef) (*store.StateMachine, *store.Version, error) {
	n, ok := versionNumber(ref.qualifier)
	if !ok || !ref.local {
		return nil, nil, errStateMachineDoesNotExist(ref.arn)
	}
	sm, err := s.db().StateMachineGet(ctx, s.unqualified(ref))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, errStateMachineDoesNotExist(ref.arn)
	}
	if err != nil {
		return nil, nil, storeError("get state machine", err)
	}
	v, err := s.db().VersionGet(ctx, sm.Arn, n)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, errStateMachineDoesNotExist(ref.arn)
	}
	if err != nil {
		return nil, nil, storeError("get version", err)
	}
	return sm, v, nil
}

// atVersion is a state machine as a version of it runs: the version's
// revision (definition and role).
func (s *Service) atVersion(ctx context.Context, sm *store.StateMachine, v *store.Version) (*store.StateMachine, error) {
	rev, err := s.db().RevisionGet(ctx, sm.Arn, v.RevisionID)
	if err != nil {
		return nil, storeError("get revision", err)
	}
	out := *sm
	out.RevisionID, out.Definition, out.RoleArn = rev.RevisionID, rev.Definition, rev.RoleArn
	return &out, nil
}

// publish publishes a state machine's current revision (or returns the
// version that has it already).
func publish(ctx context.Context, ex store.Executor, sm *store.StateMachine, description string, now time.Time) (*store.Version, error) {
	v, _, err := ex.VersionPublish(ctx, &store.Version{StateMachineArn: sm.Arn, RevisionID: sm.RevisionID, Description: description, CreatedAt: now})
	return v, err
}

// PublishStateMachineVersion publishes the current revision of a state
// machine as a version; a revision published already returns its version.
func (s *Service) PublishStateMachineVersion(ctx context.Context, in *PublishStateMachineVersionInput) (*PublishStateMachineVersionOutput, error) {
	v := newValidator()
	if v.required("stateMachineArn", in.StateMachineArn) {
		v.length("stateMachineArn", in.StateMachineArn, 1, maxArnLength)
	}
	v.sensitiveLength("description", in.Description, 0, 256)
	if err := v.err(); err != nil {
		return nil, err
	}
	ref, err := s.parseStateMachineArn(in.StateMachineArn)
	if err != nil {
		return nil, err
	}
	sm, err := s.getStateMachine(ctx, ref)
	if err != nil {
		return nil, err
	}
	if in.RevisionID != nil {
		// A state machine never updated is at its INITIAL revision, whose
		// id is not shown.
		public, err := s.publicRevision(ctx, sm)
		if err != nil {
			return nil, err
		}
		shown := public
		if shown == "" {
			shown = "INITIAL"
		}
		if *in.RevisionID != shown && *in.RevisionID != sm.RevisionID {
			return nil, apiErr(sfnapi.CodeConflict,
				"Failed to publish the State Machine version for revision %s. The current State Machine revision is %s.", *in.RevisionID, shown)
		}
	}
	ver, err := publish(ctx, s.db(), sm, in.Description, s.now())
	if err != nil {
		return nil, storeError("publish version", err)
	}
	return &PublishStateMachineVersionOutput{CreationDate: history.EpochTime(ver.CreatedAt), StateMachineVersionArn: ver.Arn()}, nil
}

// ListStateMachineVersions lists the versions of a state machine, newest
// first.
func (s *Service) ListStateMachineVersions(ctx context.Context, in *ListStateMachineVersionsInput) (*ListStateMachineVersionsOutput, error) {
	sm, c, err := s.listPage(ctx, in.StateMachineArn, in.MaxResults, in.NextToken, cursorVersions)
	if err != nil {
		return nil, err
	}
	var before int64
	if c != nil {
		before = c.ID
	}
	limit := pageSize(in.MaxResults)
	rows, err := s.db().VersionList(ctx, sm.Arn, before, limit+1)
	if err != nil {
		return nil, storeError("list versions", err)
	}
	out := &ListStateMachineVersionsOutput{StateMachineVersions: []StateMachineVersionListItem{}}
	for i, ver := range rows {
		if i == limit {
			out.NextToken = encodeToken(cursor{Kind: cursorVersions, Scope: sm.Arn, ID: rows[i-1].Number})
			break
		}
		out.StateMachineVersions = append(out.StateMachineVersions, StateMachineVersionListItem{StateMachineVersionArn: ver.Arn(), CreationDate: history.EpochTime(ver.CreatedAt)})
	}
	return out, nil
}

// listPage checks a list request of a state machine's versions or
// aliases and returns the state machine and the page's cursor (nil for
// the first page).
func (s *Service) listPage(ctx context.Context, smArn string, maxResults *int, nextToken *string, kind string) (*store.StateMachine, *cursor, error) {
	v := newValidator()
	if v.required("stateMachineArn", smArn) {
		v.length("stateMachineArn", smArn, 1, maxArnLength)
	}
	v.intRange("maxResults", maxResults, 0, maxPageSize)
	if nextToken != nil {
		v.tokenLength("nextToken", *nextToken, maxTokenLength)
	}
	if err := v.err(); err != nil {
		return nil, nil, err
	}
	ref, err := s.parseStateMachineArn(smArn)
	if err != nil {
		return nil, nil, err
	}
	sm, err := s.getStateMachine(ctx, ref)
	if err != nil {
		return nil, nil, err
	}
	c, err := decodeToken(nextToken, kind, sm.Arn)
	if err != nil {
		return nil, nil, err
	}
	return sm, c, nil
}

// DeleteStateMachineVersion deletes a version no alias routes to.
// Deleting one that does not exist succeeds, as on AWS.
func (s *Service) DeleteStateMachineVersion(ctx context.Context, in *DeleteStateMachineVersionInput) (*DeleteStateMachineVersionOutput, error) {
	v := newValidator()
	if v.required("stateMachineVersionArn", in.StateMachineVersionArn) {
		v.length("stateMachineVersionArn", in.StateMachineVersionArn, 1, maxArnLength)
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	ref, err := s.parseStateMachineArn(in.StateMachineVersionArn)
	if err != nil {
		return nil, err
	}
	n, ok := versionNumber(ref.qualifier)
	if !ok {
		return nil, errInvalidArn(in.StateMachineVersionArn)
	}
	if !ref.local {
		return &DeleteStateMachineVersionOutput{}, nil
	}
	smArn := s.unqualified(ref)
	// The store refuses, in the deletion's transaction, a version an
	// alias routes to, so an alias created or updated meanwhile is seen.
	err = s.db().VersionDelete(ctx, smArn, n)
	var inUse *store.VersionInUseError
	if errors.As(err, &inUse) {
		return nil, apiErr(sfnapi.CodeConflict,
			"Version to be deleted must not be referenced by an alias. Current list of aliases referencing this version: [%s]", strings.Join(inUse.Aliases, ", "))
	}
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, storeError("delete version", err)
	}
	return &DeleteStateMachineVersionOutput{}, nil
}

// routing checks a routing configuration as AWS does and returns the
// state machine it routes (all its versions must be of one) and its routes.
func (s *Service) routing(ctx context.Context, items []RoutingConfigurationListItem) (string, []store.AliasRoute, error) {
	v := newValidator()
	switch {
	case items == nil:
		v.add("null", "routingConfiguration", "Member must not be null")
	case len(items) == 0:
		v.add("'[]'", "routingConfiguration", "Member must have length greater than or equal to 1")
	case len(items) > 2:
		parts := make([]string, len(items))
		for i, it := range items {
			w := "null"
			if it.Weight != nil {
				w = strconv.Itoa(*it.Weight)
			}
			parts[i] = fmt.Sprintf("RoutingConfigurationListItem(stateMachineVersionArn=%s, weight=%s)", it.StateMachineVersionArn, w)
		}
		v.add("'["+strings.Join(parts, ", ")+"]'", "routingConfiguration", "Member must have length less than or equal to 2")
	}
	for i, it := range items {
		member := fmt.Sprintf("routingConfiguration.%d.member", i+1)
		if v.required(member+".stateMachineVersionArn", it.StateMachineVersionArn) {
			v.length(member+".stateMachineVersionArn", it.StateMachineVersionArn, 1, maxArnLength)
		}
		switch {
		case it.Weight == nil:
			v.add("null", member+".weight", "Member must not be null")
		default:
			v.intRange(member+".weight", it.Weight, 0, 100)
		}
	}
	if err := v.err(); err != nil {
		return "", nil, err
	}
	arns := make([]string, len(items))
	for i, it := range items {
		arns[i] = it.StateMachineVersionArn
	}
	received := "[" + strings.Join(arns, ", ") + "]"
	routes := make([]store.AliasRoute, len(items))
	smArn := ""
	for i, it := range items {
		ref, err := s.parseStateMachineArn(it.StateMachineVersionArn)
		if err != nil {
			return "", nil, err
		}
		n, ok := versionNumber(ref.qualifier)
		if !ok {
			return "", nil, apiErr(sfnapi.CodeValidation, "Routing configuration must contain state machine version ARNs. Received: %s", received)
		}
		if smArn == "" {
			smArn = s.unqualified(ref)
		} else if s.unqualified(ref) != smArn {
			return "", nil, apiErr(sfnapi.CodeValidation, "Routing configuration must contain state machine version ARNs of the same state machine. Received: %s", received)
		}
		routes[i] = store.AliasRoute{Version: n, Weight: *it.Weight}
	}
	if len(routes) == 2 && routes[0].Version == routes[1].Version {
		return "", nil, apiErr(sfnapi.CodeValidation, "Routing configuration must contain distinct state machine version ARNs. Received: %s", received)
	}
	sum := 0
	weights := make([]string, len(routes))
	for i, r := range routes {
		sum += r.Weight
		weights[i] = strconv.Itoa(r.Weight)
	}
	if sum != 100 {
		return "", nil, apiErr(sfnapi.CodeValidation, "Sum of routing configuration weights must equal 100. Received: [%s]", strings.Join(weights, ", "))
	}
	for i, it := range items {
		ref, _ := s.parseStateMachineArn(it.StateMachineVersionArn)
		if !ref.local {
			return "", nil, errStateMachineDoesNotExist(it.StateMachineVersionArn)
		}
		if _, err := s.db().VersionGet(ctx, smArn, routes[i].Version); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return "", nil, errResourceNotFound(it.StateMachineVersionArn)
			}
			return "", nil, storeError("get version", err)
		}
	}
	return smArn, routes, nil
}

// routingItems is a routing configuration as the API shows it.
func routingItems(a *store.Alias) []RoutingConfigurationListItem {
	out := make([]RoutingConfigurationListItem, len(a.Routing))
	for i, r := range a.Routing {
		w := r.Weight
		out[i] = RoutingConfigurationListItem{StateMachineVersionArn: a.StateMachineArn + ":" + strconv.FormatInt(r.Version, 10), Weight: &w}
	}
	return out
}

// CreateStateMachineAlias creates an alias of the state machine its
// routing configuration's versions belong to. It is idempotent: the same
// request for an existing alias returns it.
func (s *Service) CreateStateMachineAlias(ctx context.Context, in *CreateStateMachineAliasInput) (*CreateStateMachineAliasOutput, error) {
	v := newValidator()
	if v.required("name", in.Name) {
		v.length("name", in.Name, 1, 80)
	}
	v.sensitiveLength("description", in.Description, 0, 256)
	if err := v.err(); err != nil {
		return nil, err
	}
	if !validAliasName(in.Name) {
		v.pattern("name", in.Name, aliasNamePattern)
		return nil, v.err()
	}
	smArn, routes, err := s.routing(ctx, in.RoutingConfiguration)
	if err != nil {
		return nil, err
	}
	now := s.now()
	a := &store.Alias{StateMachineArn: smArn, Name: in.Name, Description: in.Description, Routing: routes, CreatedAt: now, UpdatedAt: now}
	err = s.db().AliasInsert(ctx, a)
	if errors.Is(err, store.ErrAlreadyExists) {
		existing, getErr := s.db().AliasGet(ctx, smArn, in.Name)
		if getErr == nil && existing.Description == a.Description && sameRoutes(existing.Routing, routes) {
			return &CreateStateMachineAliasOutput{StateMachineAliasArn: existing.Arn(), CreationDate: history.EpochTime(existing.CreatedAt)}, nil
		}
		return nil, apiErr(sfnapi.CodeConflict, "Failed to create alias because an alias with the same name and a different routing configuration already exists.")
	}
	var missing *store.VersionMissingError
	if errors.As(err, &missing) {
		// Deleted since routing() found it.
		return nil, errResourceNotFound(smArn + ":" + strconv.FormatInt(missing.Number, 10))
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, errStateMachineDoesNotExist(smArn)
	}
	if err != nil {
		return nil, storeError("create alias", err)
	}
	return &CreateStateMachineAliasOutput{StateMachineAliasArn: a.Arn(), CreationDate: history.EpochTime(a.CreatedAt)}, nil
}

func sameRoutes(a, b []store.AliasRoute) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// aliasRef parses an alias ARN.
func (s *Service) aliasRef(member, text string) (*stateMachineRef, error) {
	ref, err := s.stateMachineArnInput(member, text)
	if err != nil {
		return nil, err
	}
	if _, isVersion := versionNumber(ref.qualifier); ref.qualifier == "" || isVersion {
		return nil, errInvalidArn(text)
	}
	return ref, nil
}

// errAliasGone is UpdateStateMachineAlias's answer for an alias that does
// not exist, in AWS's words (which name no resource).
func errAliasGone() error {
	return apiErr(sfnapi.CodeResourceNotFound, "Request references a resource that does not exist.")
}

// getAlias returns the alias a reference names; ResourceNotFound when
// there is none.
func (s *Service) getAlias(ctx context.Context, ref *stateMachineRef) (*store.Alias, error) {
	if !ref.local {
		return nil, errResourceNotFound(ref.arn)
	}
	a, err := s.db().AliasGet(ctx, s.unqualified(ref), ref.qualifier)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errResourceNotFound(ref.arn)
	}
	if err != nil {
		return nil, storeError("get alias", err)
	}
	return a, nil
}

// DescribeStateMachineAlias describes an alias.
func (s *Service) DescribeStateMachineAlias(ctx context.Context, in *DescribeStateMachineAliasInput) (*DescribeStateMachineAliasOutput, error) {
	ref, err := s.aliasRef("stateMachineAliasArn", in.StateMachineAliasArn)
	if err != nil {
		return nil, err
	}
	a, err := s.getAlias(ctx, ref)
	if err != nil {
		return nil, err
	}
	return &DescribeStateMachineAliasOutput{
		StateMachineAliasArn: a.Arn(), Name: a.Name, Description: a.Description,
		RoutingConfiguration: routingItems(a), CreationDate: history.EpochTime(a.CreatedAt), UpdateDate: history.EpochTime(a.UpdatedAt),
	}, nil
}

// UpdateStateMachineAlias changes an alias's description or routing.
func (s *Service) UpdateStateMachineAlias(ctx context.Context, in *UpdateStateMachineAliasInput) (*UpdateStateMachineAliasOutput, error) {
	if in.Description != nil {
		v := newValidator()
		v.sensitiveLength("description", *in.Description, 0, 256)
		if err := v.err(); err != nil {
			return nil, err
		}
	}
	ref, err := s.aliasRef("stateMachineAliasArn", in.StateMachineAliasArn)
	if err != nil {
		return nil, err
	}
	if in.Description == nil && in.RoutingConfiguration == nil {
		return nil, apiErr(sfnapi.CodeValidation, "Either the description or the RoutingConfiguration must be specified")
	}
	a, err := s.getAlias(ctx, ref)
	var apiE *sfnapi.Error
	if errors.As(err, &apiE) && apiE.Code == sfnapi.CodeResourceNotFound {
		return nil, errAliasGone()
	}
	if err != nil {
		return nil, err
	}
	if in.RoutingConfiguration != nil {
		smArn, routes, err := s.routing(ctx, in.RoutingConfiguration)
		if err != nil {
			return nil, err
		}
		if smArn != a.StateMachineArn {
			return nil, apiErr(sfnapi.CodeValidation, "Routing configuration must contain state machine version ARNs of the alias's state machine. Received: %s", smArn)
		}
		a.Routing = routes
	}
	if in.Description != nil {
		a.Description = *in.Description
	}
	now := s.now()
	if !now.After(a.UpdatedAt) {
		now = a.UpdatedAt.Add(time.Millisecond)
	}
	a.UpdatedAt = now
	if err := s.db().AliasUpdate(ctx, a); err != nil {
		var missing *store.VersionMissingError
		if errors.As(err, &missing) {
			// Deleted since routing() found it.
			return nil, errResourceNotFound(a.StateMachineArn + ":" + strconv.FormatInt(missing.Number, 10))
		}
		if errors.Is(err, store.ErrNotFound) {
			return nil, errAliasGone()
		}
		return nil, storeError("update alias", err)
	}
	return &UpdateStateMachineAliasOutput{UpdateDate: history.EpochTime(a.UpdatedAt)}, nil
}

// DeleteStateMachineAlias deletes an alias; deleting one that does not
// exist succeeds, as on AWS.
func (s *Service) DeleteStateMachineAlias(ctx context.Context, in *DeleteStateMachineAliasInput) (*DeleteStateMachineAliasOutput, error) {
	ref, err := s.aliasRef("stateMachineAliasArn", in.StateMachineAliasArn)
	if err != nil {
		return nil, err
	}
	if ref.local {
		if err := s.db().AliasDelete(ctx, s.unqualified(ref), ref.qualifier); err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, storeError("delete alias", err)
		}
	}
	return &DeleteStateMachineAliasOutput{}, nil
}

// ListStateMachineAliases lists the aliases of a state machine by name.
func (s *Service) ListStateMachineAliases(ctx context.Context, in *ListStateMachineAliasesInput) (*ListStateMachineAliasesOutput, error) {
	sm, c, err := s.listPage(ctx, in.StateMachineArn, in.MaxResults, in.NextToken, cursorAliases)
	if err != nil {
		return nil, err
	}
	after := ""
	if c != nil {
		after = c.After
	}
	limit := pageSize(in.MaxResults)
	rows, err := s.db().AliasList(ctx, sm.Arn, after, limit+1)
	if err != nil {
		return nil, storeError("list aliases", err)
	}
	out := &ListStateMachineAliasesOutput{StateMachineAliases: []StateMachineAliasListItem{}}
	for i, a := range rows {
		if i == limit {
			out.NextToken = encodeToken(cursor{Kind: cursorAliases, Scope: sm.Arn, After: rows[i-1].Name})
			break
		}
		out.StateMachineAliases = append(out.StateMachineAliases, StateMachineAliasListItem{StateMachineAliasArn: a.Arn(), CreationDate: history.EpochTime(a.CreatedAt)})
	}
	return out, nil
}
