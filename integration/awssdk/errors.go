package awssdk

import (
	"cmp"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/uuid"

	"stepwise/failure"
	"stepwise/integration"
	"stepwise/integration/awssdk/awsmodel"
	"stepwise/jsonvalue"
)

// apiError is an error response of a service.
type apiError struct {
	status    int
	code      string
	message   string
	requestID string
	// hostID is S3's extended request ID (x-amz-id-2).
	hostID string
}

// parseError reads an error response for the model's protocol.
func parseError(m *awsmodel.Model, op *awsmodel.Operation, resp *response) apiError {
	e := apiError{
		status:    resp.status,
		requestID: firstHeader(resp.header, "X-Amzn-Requestid", "X-Amz-Request-Id"),
		hostID:    resp.header.Get("X-Amz-Id-2"),
	}
	switch m.Protocol() {
	case "json", "rest-json":
		e.jsonBody(resp)
	default:
		e.xmlBody(resp.body)
	}
	if m.Metadata.AWSQueryCompatible != nil {
		// The query protocol's code names the error where the model
		// knows it by that code only.
		if code, _, _ := strings.Cut(resp.header.Get("X-Amzn-Query-Error"), ";"); code != "" {
			if _, modeled := m.ErrorShape(e.code); !modeled {
				if _, ok := m.ErrorShape(code); ok {
					e.code = code
				}
			}
		}
	}
	if e.code == "" {
		e.code = codeWithoutBody(op, resp.status)
	}
	return e
}

func firstHeader(h http.Header, names ...string) string {
	for _, n := range names {
		if v := h.Get(n); v != "" {
			return v
		}
	}
	return ""
}

// jsonBody reads the code and message of a JSON error: the code from
// X-Amzn-ErrorType or the body's __type/code, without the namespace
// before "#" or the URL after ":".
func (e *apiError) jsonBody(resp *response) {
	v, _ := jsonvalue.Parse(resp.body)
	obj, _ := v.(*jsonvalue.Object)
	text := func(names ...string) string {
		for _, n := range names {
			if s, ok := obj.Get(n); ok {
				if str, isString := s.(string); isString && str != "" {
					return str
				}
			}
		}
		return ""
	}
	code := cmp.Or(resp.header.Get("X-Amzn-Errortype"), text("__type", "code", "Code"))
	code, _, _ = strings.Cut(code, ":")
	if i := strings.LastIndexByte(code, '#'); i >= 0 {
		code = code[i+1:]
	}
	e.code = code
	e.message = text("message", "Message", "errorMessage")
}

// xmlBody reads an XML error: <Error><Code>, <Message>, and the request
// ids where the body has them.
func (e *apiError) xmlBody(body []byte) {
	root, err := parseXML(body)
	if err != nil {
		return
	}
	text := func(name string) string {
		if n := root.find(name); n != nil {
			return strings.TrimSpace(n.text.String())
		}
		return ""
	}
	e.code = text("Code")
	e.message = text("Message")
	e.requestID = cmp.Or(e.requestID, text("RequestId"), text("RequestID"))
	e.hostID = cmp.Or(e.hostID, text("HostId"))
}

// codeWithoutBody is the code of an error response with no body (S3
// answers HEAD requests so): the operation's one modeled error for a
// 404, else the status text (NotFound).
func codeWithoutBody(op *awsmodel.Operation, status int) string {
	if status == http.StatusNotFound && len(op.Errors) == 1 {
		return op.Errors[0].ShapeName
	}
	return strings.ReplaceAll(http.StatusText(status), " ", "")
}

// failure is the task failure of a service error, named and worded as
// the AWS SDK for Java v2 that Step Functions calls services with:
//
//	error: <Prefix>.<Exception>   the modeled error, with an Exception suffix;
//	                              <Prefix>.<Prefix>Exception for any other code
//	cause: <message> (Service: <Prefix>, Status Code: <n>, Request ID: <id>[, Extended Request ID: <id>])
func (e apiError) failure(m *awsmodel.Model) *failure.Failure {
	prefix := m.ErrorPrefix()
	name := prefix + "." + prefix + "Exception"
	if shape, ok := m.ErrorShape(e.code); ok {
		name = prefix + "." + integration.ExceptionName(shape)
	}
	cause := fmt.Sprintf("%s (Service: %s, Status Code: %d, Request ID: %s", orNull(e.message), prefix, e.status, orNull(e.requestID))
	if e.hostID != "" {
		cause += ", Extended Request ID: " + e.hostID
	}
	return failure.New(name, cause+")")
}

// orNull is a missing text as Java prints it.
func orNull(s string) string { return cmp.Or(s, "null") }

// clientFailure is the failure of a call that got no answer from the
// service (the connection failed, the answer was unreadable).
func clientFailure(m *awsmodel.Model, format string, args ...any) *failure.Failure {
	return failure.Newf(m.ErrorPrefix()+".SdkClientException", format, args...)
}

// missingRequired is the answer of a JSON-protocol service to a request
// without a member its model requires (or with it null): the service's
// own validation, which AWS's call reaches (the SDK does not check
// first), worded as those services word it, as a ValidationException:
//
//	1 validation error detected: Value null at 'item' failed to satisfy constraint: Member must not be null
//
// It is nil when nothing required is missing, and for the other
// protocols and the JSON services that answer as query services did
// (awsQueryCompatible: SQS answers MissingParameter), which word it
// otherwise: the call is made and the service answers.
func missingRequired(m *awsmodel.Model, op *awsmodel.Operation, params any) *failure.Failure {
	if m.Protocol() != "json" || m.Metadata.AWSQueryCompatible != nil || op.Input == nil || op.Input.Shape == nil {
		return nil
	}
	obj, _ := params.(*jsonvalue.Object)
	var problems []string
	for _, name := range op.Input.Shape.Required {
		var v any
		ok := false
		if obj != nil {
			v, ok = obj.Get(awsmodel.Pascal(name))
			if !ok {
				v, ok = obj.Get(name)
			}
		}
		if ok && v != nil {
			continue
		}
		problems = append(problems, fmt.Sprintf("Value null at '%s' failed to satisfy constraint: Member must not be null",
			strings.ToLower(name[:1])+name[1:]))
	}
	if len(problems) == 0 {
		return nil
	}
	count := fmt.Sprintf("%d validation error", len(problems))
	if len(problems) > 1 {
		count += "s"
	}
	return apiError{status: http.StatusBadRequest, code: "ValidationException",
		message:   count + " detected: " + strings.Join(problems, "; "),
		requestID: uuid.NewString()}.failure(m)
}
