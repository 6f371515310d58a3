package service

import (
	"stepwise/awsarn"
	"stepwise/internal/startrule"
)

// parseArn parses a Step Functions ARN, or returns the InvalidArn error
// AWS gives for it (startrule.ParseArn).
func parseArn(s string) (*awsarn.ARN, error) {
	a, refused := startrule.ParseArn(s)
	if refused != nil {
		return nil, refused
	}
	return a, nil
}

// local reports whether the ARN names a resource of this server's
// partition, region and account. A well-formed ARN of somewhere else names
// nothing that exists here.
func (s *Service) local(a *awsarn.ARN) bool {
	return a.Prefix == s.prefix()
}

// stateMachineRef is a parsed state machine ARN.
type stateMachineRef struct {
	arn       string
	name      string
	qualifier string // version number or alias name; "" when unqualified
	local     bool
}

// parseStateMachineArn parses the ARN of a state machine (possibly
// qualified by a version or an alias).
func (s *Service) parseStateMachineArn(text string) (*stateMachineRef, error) {
	a, refused := startrule.StateMachineArn(text)
	if refused != nil {
		return nil, refused
	}
	ref := &stateMachineRef{arn: text, name: a.Parts[0], local: s.local(a)}
	if len(a.Parts) == 2 {
		ref.qualifier = a.Parts[1]
	}
	return ref, nil
}

// executionRef is a parsed execution ARN.
type executionRef struct {
	arn              string
	stateMachineName string
	name             string
	express          bool
	local            bool
}

// parseExecutionArn parses the ARN of an execution (STANDARD or EXPRESS).
func (s *Service) parseExecutionArn(text string) (*executionRef, error) {
	a, err := parseArn(text)
	if err != nil {
		return nil, err
	}
	switch {
	case a.Resource == awsarn.Execution && len(a.Parts) == 2:
		return &executionRef{arn: text, stateMachineName: a.Parts[0], name: a.Parts[1], local: s.local(a)}, nil
	case a.Resource == awsarn.Express && len(a.Parts) == 3:
		return &executionRef{arn: text, stateMachineName: a.Parts[0], name: a.Parts[1], express: true, local: s.local(a)}, nil
	case a.Resource == awsarn.Execution || a.Resource == awsarn.Express:
		return nil, errInvalidArn(text)
	default:
		return nil, errInvalidArnResourceType(a.Resource)
	}
}

// prefix is where this server's resources live.
func (s *Service) prefix() awsarn.Prefix {
	return awsarn.Prefix{Partition: s.cfg.Partition, Region: s.cfg.Region, Account: s.cfg.Account}
}

// StateMachineArn returns the ARN of the state machine called name.
func (s *Service) StateMachineArn(name string) string { return s.prefix().StateMachine(name) }
