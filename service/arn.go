package service

import (
	"strings"
)

// ARNs of Step Functions resources:
//
//	arn:<partition>:states:<region>:<account>:stateMachine:<name>[:<version or alias>]
//	arn:<partition>:states:<region>:<account>:execution:<stateMachineName>:<name>
//	arn:<partition>:states:<region>:<account>:express:<stateMachineName>:<name>:<id>

// Resource types, as they appear in ARNs.
const (
	resourceStateMachine = "stateMachine"
	resourceExecution    = "execution"
	resourceExpress      = "express"
)

// arn is a parsed Step Functions ARN.
type arn struct {
	text      string
	partition string
	region    string
	account   string
	resource  string   // stateMachine, execution, express, activity, ...
	parts     []string // what follows the resource type
}

// parseArn parses a Step Functions ARN, or returns the InvalidArn error AWS
// gives for it.
func parseArn(s string) (*arn, error) {
	if !strings.HasPrefix(s, "arn:") {
		return nil, errInvalidArnPrefix(s)
	}
	f := strings.Split(s, ":")
	if len(f) < 7 || f[1] == "" || f[2] != "states" || f[3] == "" || f[4] == "" || f[5] == "" {
		return nil, errInvalidArn(s)
	}
	for _, p := range f[6:] {
		if p == "" {
			return nil, errInvalidArn(s)
		}
	}
	return &arn{text: s, partition: f[1], region: f[3], account: f[4], resource: f[5], parts: f[6:]}, nil
}

// local reports whether the ARN names a resource of this server's
// partition, region and account. A well-formed ARN of somewhere else names
// nothing that exists here.
func (s *Service) local(a *arn) bool {
	return a.partition == s.cfg.Partition && a.region == s.cfg.Region && a.account == s.cfg.Account
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
	a, err := parseArn(text)
	if err != nil {
		return nil, err
	}
	if a.resource != resourceStateMachine {
		return nil, errInvalidArnResourceType(a.resource)
	}
	if len(a.parts) > 2 {
		return nil, errInvalidArn(text)
	}
	ref := &stateMachineRef{arn: text, name: a.parts[0], local: s.local(a)}
	if len(a.parts) == 2 {
		ref.qualifier = a.parts[1]
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
	case a.resource == resourceExecution && len(a.parts) == 2:
		return &executionRef{arn: text, stateMachineName: a.parts[0], name: a.parts[1], local: s.local(a)}, nil
	case a.resource == resourceExpress && len(a.parts) == 3:
		return &executionRef{arn: text, stateMachineName: a.parts[0], name: a.parts[1], express: true, local: s.local(a)}, nil
	case a.resource == resourceExecution || a.resource == resourceExpress:
		return nil, errInvalidArn(text)
	default:
		return nil, errInvalidArnResourceType(a.resource)
	}
}

func (s *Service) arnPrefix() string {
	return "arn:" + s.cfg.Partition + ":states:" + s.cfg.Region + ":" + s.cfg.Account + ":"
}

// StateMachineArn returns the ARN of the state machine called name.
func (s *Service) StateMachineArn(name string) string {
	return s.arnPrefix() + resourceStateMachine + ":" + name
}

// executionArn returns the ARN of a STANDARD execution.
func (s *Service) executionArn(stateMachineName, name string) string {
	return s.arnPrefix() + resourceExecution + ":" + stateMachineName + ":" + name
}

// expressExecutionArn returns the ARN of an EXPRESS execution.
func (s *Service) expressExecutionArn(stateMachineName, name, id string) string {
	return s.arnPrefix() + resourceExpress + ":" + stateMachineName + ":" + name + ":" + id
}

// stateMachineNameOf returns the name of the state machine an ARN names.
func stateMachineNameOf(smArn string) string {
	f := strings.Split(smArn, ":")
	if len(f) >= 7 {
		return f[6]
	}
	return smArn
}
