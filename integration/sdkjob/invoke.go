package sdkjob

import (
	"context"
	"errors"
	"strings"

	"stepwise/failure"
	"stepwise/integration"
	"stepwise/integration/awssdk"
	"stepwise/jsonvalue"
)

// Service calls one AWS service's operations with the model-driven
// client of the aws-sdk integration, and names its errors as the AWS
// SDK for Java v1 does (integration.ServiceFailure).
type Service struct {
	// Name is the service as Step Functions names it ("glue"); Prefix
	// and Java name its failures (Glue.EntityNotFoundException; AWSGlue
	// in causes).
	Name, Prefix, Java string
	Client             *awssdk.Client
	// Options are how results are rendered.
	Options awssdk.InvokeOptions
}

// NewService returns the Service name of the configured endpoints; its
// Parameters are checked as the optimized integrations check them (a
// string member takes only a string).
func NewService(cfg *integration.Config, name, prefix, java string) *Service {
	return &Service{Name: name, Prefix: prefix, Java: java, Client: awssdk.Shared(cfg), Options: awssdk.InvokeOptions{StrictStrings: true}}
}

// Call makes one call of an operation (StartJobRun) with params as its
// input.
func (s *Service) Call(ctx context.Context, operation string, params *jsonvalue.Object) (*awssdk.Reply, error) {
	reply, err := s.Client.Invoke(ctx, s.Name, operation, params, s.Options)
	if err != nil {
		return nil, s.Failure(err)
	}
	return reply, nil
}

// Check checks params for an operation without calling it.
func (s *Service) Check(operation string, params *jsonvalue.Object) error {
	return s.Client.Check(s.Name, operation, params, s.Options)
}

const clientException = ".SdkClientException"

// Failure is the task failure of a call's error: a failure as it is,
// a service's error named as integration.ServiceFailure names it.
func (s *Service) Failure(err error) error {
	var f *failure.Failure
	if errors.As(err, &f) {
		if strings.HasSuffix(f.Name, clientException) {
			// A call that got no answer, named by the model's prefix.
			return failure.New(s.Prefix+clientException, f.Cause)
		}
		return f
	}
	return integration.ServiceFailure(s.Prefix, s.Java, err)
}

// WithReplyMetadata adds a reply's HTTP metadata to a rendered response,
// as request-response results carry it, keeping the members in order.
func WithReplyMetadata(obj *jsonvalue.Object, reply *awssdk.Reply) *jsonvalue.Object {
	integration.SdkHTTPMetadata(obj, reply.Status, reply.Header, reply.RequestID())
	members := make(map[string]any, obj.Len())
	for k, v := range obj.All() {
		members[k] = v
	}
	return sortedObject(members)
}

// LookupPages is Lookup over the pages of a model-driven call: page reads
// the page after token ("" the first) and returns it with the token of
// the next ("" after the last).
func LookupPages(ctx context.Context, page func(ctx context.Context, token string) (*awssdk.Reply, string, error), look func(*awssdk.Reply) (*jsonvalue.Object, error)) (*jsonvalue.Object, error) {
	token := ""
	for n := 0; n < MaxLookupPages; n++ {
		reply, next, err := page(ctx, token)
		if err != nil {
			return nil, err
		}
		if found, err := look(reply); found != nil || err != nil {
			return found, err
		}
		if next == "" {
			break
		}
		token = next
	}
	return nil, nil
}

// Member is a member of a result: an object's member by its name, nil
// when absent.
func Member(v any, name string) any {
	obj, _ := v.(*jsonvalue.Object)
	if obj == nil {
		return nil
	}
	x, _ := obj.Get(name)
	return x
}

// Text is a string member of a result ("" when absent or not a string).
func Text(v any, name string) string {
	s, _ := Member(v, name).(string)
	return s
}
