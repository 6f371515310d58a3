package teststate

import (
	"stepwise/asl"
	"stepwise/failure"
	"stepwise/internal/startrule"
	"stepwise/jsonvalue"
	"stepwise/service"
	"stepwise/service/teststate/apishape"
)

// checkMock checks a request with a mock and returns the mock.
func checkMock(t *test, conf *service.TestStateConfiguration) (*mock, error) {
	st, m := t.state, t.in.Mock
	switch st.Type {
	case asl.TypeTask, asl.TypeMap, asl.TypeParallel:
	default:
		return nil, errMockStateType(st.Type)
	}
	if t.in.RevealSecrets {
		return nil, errRevealSecretsWithMock()
	}
	switch {
	case m.Result != nil && m.ErrorOutput != nil:
		return nil, errMockBoth()
	case m.Result == nil && m.ErrorOutput == nil:
		return nil, errMockNeither()
	}
	if t.in.Context != nil {
		if err := checkContext(*t.in.Context, t); err != nil {
			return nil, err
		}
	}
	if e := m.ErrorOutput; e != nil {
		fl := &failure.Failure{}
		if e.Error != nil {
			fl.Name = *e.Error
		}
		if e.Cause != nil {
			fl.Cause, fl.HasCause = *e.Cause, true
		}
		return &mock{failure: fl}, nil
	}

	result, err := jsonvalue.ParseString(*m.Result)
	if err != nil {
		return nil, errMockNotJSON()
	}
	switch st.Type {
	case asl.TypeMap:
		if st.ResultWriter != nil {
			if _, ok := result.(*jsonvalue.Object); !ok {
				return nil, errMockNotObject()
			}
			break
		}
		items, ok := result.([]any)
		if !ok {
			return nil, errMockNotArray()
		}
		if n := conf.MapIterationFailureCount; n != nil && *n > len(items) {
			return nil, errFailureCountTooLarge()
		}
	case asl.TypeParallel:
		branches, ok := result.([]any)
		if !ok {
			return nil, errMockNotArray()
		}
		if len(branches) != len(st.Branches) {
			return nil, errMockBranches()
		}
	case asl.TypeTask:
		if err := checkResultShape(t.res, m.FieldValidationMode, result); err != nil {
			return nil, err
		}
	}
	return &mock{result: result}, nil
}

// checkResultShape checks a Task's mocked result against the output of
// the API operation its resource calls, as fieldValidationMode says
// (STRICT by default).
func checkResultShape(res resource, mode string, result any) error {
	var m apishape.Mode
	switch mode {
	case "NONE":
		return nil
	case "PRESENT":
		m = apishape.Present
	default:
		m = apishape.Strict
	}
	op, anyJSON, ok := res.outputShape()
	if !ok {
		return nil
	}
	if err := op.Validate(result, m, anyJSON...); err != nil {
		return validation("%s", err.Error())
	}
	return nil
}

// contextFields lists the members a mocked context object may have, and
// the fields of each with their types.
var contextFields = map[string]map[string]string{
	"Execution": {
		"Id": "string", "Input": "any", "Name": "string", "RoleArn": "string",
		"StartTime": "string", "RedriveCount": "integer", "RedriveTime": "string",
	},
	"State":        {"EnteredTime": "string", "Name": "string", "RetryCount": "integer"},
	"StateMachine": {"Id": "string", "Name": "string"},
	"Task":         {"Token": "string"},
}

// checkContext checks the context object a request gives: a JSON object
// with only the members and fields of a real context object, of the right
// types. "Map" is refused, and "Task" is allowed only for the integration
// patterns that have a task token.
func checkContext(text string, t *test) error {
	v, err := jsonvalue.ParseString(text)
	if err != nil {
		return errInvalidContext(startrule.JSONErrorMessage(text, err))
	}
	obj, ok := v.(*jsonvalue.Object)
	if !ok {
		return errInvalidContext("must be a JSON object")
	}
	for member, mv := range obj.All() {
		fields, known := contextFields[member]
		switch {
		case member == "Map":
			return errInvalidContext("'Map' field is not supported when mocking a Context object")
		case !known:
			return errInvalidContext("Field '" + member + "' is not allowed")
		case mv == nil:
			continue
		}
		mo, ok := mv.(*jsonvalue.Object)
		if !ok {
			return errInvalidContext(member + " must be an object")
		}
		for field, fv := range mo.All() {
			kind, known := fields[field]
			if !known {
				return errInvalidContext("Field '" + field + "' is not allowed")
			}
			if fv == nil {
				continue
			}
			switch kind {
			case "string":
				if _, ok := fv.(string); !ok {
					return errInvalidContext(member + "." + field + " must be a string")
				}
			case "integer":
				if n, ok := fv.(jsonvalue.Number); !ok || !n.IsInteger() {
					return errInvalidContext(member + "." + field + " must be an integer")
				}
			}
		}
		if member == "Task" && (t.state.Type != asl.TypeTask || t.res.pattern == "") {
			return errInvalidContext("'Task' field is only supported for Task states with the '.sync' or '.waitForTaskToken' integration pattern")
		}
	}
	return nil
}
