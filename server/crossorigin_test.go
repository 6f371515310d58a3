package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/awsjson"
	"stepwise/engine"
	"stepwise/internal/security/authn"
	"stepwise/internal/security/crossorigin"
)

// The server's host in the table's requests.
const guardHost = "stepwise.test:8083"

// The ways a request says where it comes from, and whether the guard lets
// it through.
var guardOrigins = []struct {
	name    string
	header  http.Header
	allowed bool
}{
	{"no Origin, no Sec-Fetch-Site (a CLI, an SDK)", nil, true},
	{"Origin of the server", http.Header{"Origin": {"http://" + guardHost}, "Sec-Fetch-Site": {"same-origin"}}, true},
	{"Sec-Fetch-Site: same-origin", http.Header{"Sec-Fetch-Site": {"same-origin"}}, true},
	{"Origin of another site", http.Header{"Origin": {"http://evil.example"}}, false},
	{"Origin: null", http.Header{"Origin": {"null"}}, false},
	{"Sec-Fetch-Site: cross-site", http.Header{"Sec-Fetch-Site": {"cross-site"}}, false},
	{"Sec-Fetch-Site: same-site", http.Header{"Sec-Fetch-Site": {"same-site"}}, false},
	{"Origin of another port of the host", http.Header{"Origin": {"http://stepwise.test:9999"}}, false},
	{"Origin of the server, Sec-Fetch-Site: cross-site", http.Header{"Origin": {"http://" + guardHost}, "Sec-Fetch-Site": {"cross-site"}}, false},
}

// The content types a request may claim; the first three a browser sends
// without a preflight.
var guardContentTypes = []string{
	"text/plain",
	"application/x-www-form-urlencoded",
	"multipart/form-data; boundary=x",
	"application/json",
	"application/x-amz-json-1.0",
}

// guardRequest is a request of one route, made for one case.
type guardRequest struct {
	method, path string
	header       http.Header
	body         string
	// refusal checks the guard's answer, in the route's protocol.
	refusal func(t *testing.T, rec *httptest.ResponseRecorder)
	// done, when set, reports whether the request's change is there, so
	// an allowed request is seen to have reached its handler.
	done func(t *testing.T) bool
	// doneWith says which content types the handler takes (all when nil).
	doneWith func(contentType string) bool
	// reached, when set, checks the answer of an allowed request.
	reached func(t *testing.T, contentType string, rec *httptest.ResponseRecorder)
}

// guardBundle is a server, with what its requests act on.
type guardBundle struct {
	api *Server
	eng *engine.Engine
	// machine is a state machine with a tag "keep", group a schedule
	// group with a schedule "keep" and a tag "keep", for requests to act
	// on; doomedMachine and doomedGroup are for the deletes.
	machine, group, groupArn   string
	doomedMachine, doomedGroup string
}

func setupGuard(t *testing.T, auth *apiAuth) *guardBundle {
	t.Helper()
	ctx := context.Background()
	parts := newAPIParts(t)
	parts.cfg.FileTriggerRoots = []string{os.TempDir()}
	api := parts.api(t, false, auth)
	b := &guardBundle{api: api, eng: parts.eng, group: "guarded", doomedGroup: "doomed"}
	b.machine = b.self(t, "CreateStateMachine", b.machineBody("guarded"))["stateMachineArn"].(string)
	b.doomedMachine = b.self(t, "CreateStateMachine", b.machineBody("doomed"))["stateMachineArn"].(string)
	_, err := api.sched.CreateScheduleGroup(ctx, b.doomedGroup, "", nil)
	require.NoError(t, err)
	b.self(t, "TagResource", fmt.Sprintf(`{"resourceArn": %q, "tags": [{"key": "keep", "value": "v"}]}`, b.machine))
	b.groupArn, err = api.sched.CreateScheduleGroup(ctx, b.group, "", nil)
	require.NoError(t, err)
	rec := b.schedules(t, "POST", "/tags/"+b.groupArn, `{"Tags": [{"Key": "keep", "Value": "v"}]}`)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	rec = b.schedules(t, "POST", "/schedules/keep", b.scheduleBody())
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	return b
}

func (b *guardBundle) machineBody(name string) string {
	return fmt.Sprintf(`{"name": %q, "roleArn": "arn:aws:iam::123456789012:role/r", "definition": %q}`, name,
		`{"StartAt": "P", "States": {"P": {"Type": "Pass", "End": true}}}`)
}

// self calls the Step Functions API past the guard and authentication.
func (b *guardBundle) self(t *testing.T, op, body string) map[string]any {
	t.Helper()
	rec := b.try(op, body)
	require.Equal(t, http.StatusOK, rec.Code, "%s: %s", op, rec.Body.String())
	var out map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
	return out
}

// try is self without requiring success.
func (b *guardBundle) try(op, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "http://"+guardHost+"/", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", awsjson.TargetPrefix+op)
	rec := httptest.NewRecorder()
	b.api.self.ServeHTTP(rec, req)
	return rec
}

// exists reports whether op, which describes a resource, finds it.
func (b *guardBundle) exists(op, member, arn string) func(t *testing.T) bool {
	return func(t *testing.T) bool {
		return b.try(op, fmt.Sprintf(`{%q: %q}`, member, arn)).Code == http.StatusOK
	}
}

// schedules calls the Scheduler API past the guard and authentication.
func (b *guardBundle) schedules(t *testing.T, method, path, body string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	b.api.scheduleAPI.ServeHTTP(rec, httptest.NewRequest(method, "http://"+guardHost+path, strings.NewReader(body)))
	return rec
}

// scheduleBody makes a schedule whose one slot does not come while the
// test runs: the server fires its schedules, and an execution started
// meanwhile would change the fingerprint.
func (b *guardBundle) scheduleBody() string {
	return fmt.Sprintf(`{"GroupName": %q, "ScheduleExpression": "at(2099-01-01T00:00:00)", "FlexibleTimeWindow": {"Mode": "OFF"},
		"Target": {"Arn": %q, "RoleArn": "arn:aws:iam::123456789012:role/r"}}`, b.group, b.machine)
}

// fingerprint is what the requests could change: the state machines,
// activities, executions and tags, the schedules, groups and their tags.
func (b *guardBundle) fingerprint(t *testing.T) string {
	t.Helper()
	var sb strings.Builder
	for _, c := range [][2]string{
		{"ListStateMachines", `{}`},
		{"ListActivities", `{}`},
		{"ListExecutions", fmt.Sprintf(`{"stateMachineArn": %q}`, b.machine)},
		{"ListTagsForResource", fmt.Sprintf(`{"resourceArn": %q}`, b.machine)},
	} {
		out, err := json.Marshal(b.self(t, c[0], c[1]))
		require.NoError(t, err)
		sb.Write(out)
	}
	for _, path := range []string{"/schedules?ScheduleGroup=" + b.group, "/schedules", "/schedule-groups", "/tags/" + b.groupArn} {
		rec := b.schedules(t, http.MethodGet, path, "")
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		sb.Write(rec.Body.Bytes())
	}
	return sb.String()
}

func (b *guardBundle) scheduleExists(t *testing.T, name string) bool {
	t.Helper()
	return b.schedules(t, http.MethodGet, "/schedules/"+name+"?groupName="+b.group, "").Code == http.StatusOK
}

// apiRefusal checks a refusal in the Step Functions API's words.
func apiRefusal(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	require.Equal(t, http.StatusForbidden, rec.Code, rec.Body.String())
	require.NotEmpty(t, rec.Header().Get("x-amzn-RequestId"))
	require.JSONEq(t, fmt.Sprintf(`{"__type": "com.amazon.coral.service#AccessDeniedException", "message": %q}`, crossorigin.Message), rec.Body.String())
}

// schedulerRefusal checks a refusal in the Scheduler API's words
// (REST-JSON).
func schedulerRefusal(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	require.Equal(t, http.StatusForbidden, rec.Code, rec.Body.String())
	require.Equal(t, "AccessDeniedException", rec.Header().Get("X-Amzn-ErrorType"))
	require.NotEmpty(t, rec.Header().Get("x-amzn-RequestId"))
	require.JSONEq(t, fmt.Sprintf(`{"Message": %q}`, crossorigin.Message), rec.Body.String())
}

// formRefusal checks a refusal of one of the console's forms.
func formRefusal(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	require.Equal(t, http.StatusForbidden, rec.Code, rec.Body.String())
	require.Equal(t, "text/plain; charset=utf-8", rec.Header().Get("Content-Type"))
	require.Equal(t, crossorigin.Message+"\n", rec.Body.String())
	require.Empty(t, rec.Result().Cookies())
}

func jsonContent(contentType string) bool { return strings.Contains(contentType, "json") }

// apiRequests are the requests of the Step Functions API's route ("/"):
// every operation, and methods other than POST.
func (b *guardBundle) apiRequests(n string) []guardRequest {
	var out []guardRequest
	prefix := strings.TrimSuffix(b.machine, "stateMachine:guarded") // arn:aws:states:region:account:
	for _, op := range awsjson.Operations() {
		r := guardRequest{method: http.MethodPost, path: "/", header: http.Header{"X-Amz-Target": {awsjson.TargetPrefix + op}},
			body: `{}`, refusal: apiRefusal, doneWith: jsonContent}
		switch op {
		case "CreateStateMachine":
			r.body = b.machineBody(n)
			r.done = b.exists("DescribeStateMachine", "stateMachineArn", prefix+"stateMachine:"+n)
		case "CreateActivity":
			r.body = fmt.Sprintf(`{"name": %q}`, n)
			r.done = b.exists("DescribeActivity", "activityArn", prefix+"activity:"+n)
		case "StartExecution":
			r.body = fmt.Sprintf(`{"stateMachineArn": %q, "name": %q}`, b.machine, n)
			r.done = b.exists("DescribeExecution", "executionArn", prefix+"execution:guarded:"+n)
		case "TagResource":
			r.body = fmt.Sprintf(`{"resourceArn": %q, "tags": [{"key": %q, "value": "v"}]}`, b.machine, n)
			r.done = func(t *testing.T) bool {
				return strings.Contains(b.try("ListTagsForResource", fmt.Sprintf(`{"resourceArn": %q}`, b.machine)).Body.String(), n)
			}
		case "UntagResource":
			r.body = fmt.Sprintf(`{"resourceArn": %q, "tagKeys": ["keep"]}`, b.machine)
		case "DeleteStateMachine":
			r.body = fmt.Sprintf(`{"stateMachineArn": %q}`, b.doomedMachine)
		}
		out = append(out, r)
	}
	for _, method := range []string{http.MethodPut, http.MethodDelete, http.MethodPatch} {
		out = append(out, guardRequest{method: method, path: "/", body: `{}`, refusal: apiRefusal})
	}
	return out
}

// clockRequests are the requests of the clock's advance by an hour (the
// server's clock is virtual: a wait-time scale of 0): done once the
// clock is an hour past its reading now.
func (b *guardBundle) clockRequests() []guardRequest {
	before := b.eng.Now()
	r := guardRequest{method: http.MethodPost, path: ClockPath, body: `{"advance": "1h"}`}
	r.refusal = func(t *testing.T, rec *httptest.ResponseRecorder) {
		require.Equal(t, http.StatusForbidden, rec.Code, rec.Body.String())
		require.JSONEq(t, fmt.Sprintf(`{"virtual": false, "error": %q}`, crossorigin.Message), rec.Body.String())
	}
	r.done = func(t *testing.T) bool { return !b.eng.Now().Before(before.Add(time.Hour)) }
	r.reached = func(t *testing.T, _ string, rec *httptest.ResponseRecorder) {
		var resp ClockResponse
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &resp), rec.Body.String())
		if b.api.gate != nil { // unsigned
			require.Equal(t, http.StatusForbidden, rec.Code, rec.Body.String())
			require.Contains(t, resp.Error, "clock: ")
			return
		}
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		require.True(t, resp.Virtual)
	}
	return []guardRequest{r}
}

// deployRequests are the requests of a deploy: sent from httptest's
// address, which is not this machine's, one that reaches its handler is
// refused there, in its own words.
func deployRequests() []guardRequest {
	r := guardRequest{method: http.MethodPost, path: DeployPath, body: `{}`}
	r.refusal = func(t *testing.T, rec *httptest.ResponseRecorder) {
		require.Equal(t, http.StatusForbidden, rec.Code, rec.Body.String())
		require.JSONEq(t, fmt.Sprintf(`{"error": %q}`, crossorigin.Message), rec.Body.String())
	}
	r.reached = func(t *testing.T, _ string, rec *httptest.ResponseRecorder) {
		require.Equal(t, http.StatusForbidden, rec.Code, rec.Body.String())
		require.Contains(t, rec.Body.String(), "deploys are taken from this machine only")
	}
	return []guardRequest{r}
}

// formRequests are the requests of a route of the console's forms: the
// sign-in form signs in (when the body is a form), the sign-out form
// sends to the sign-in page.
func formRequests(path string) []guardRequest {
	form := url.Values{"access_key_id": {"AKIDGUARD"}, "secret_access_key": {"secret"}, "next": {"/activities"}}.Encode()
	r := guardRequest{method: http.MethodPost, path: path, body: form, refusal: formRefusal}
	r.reached = func(t *testing.T, ct string, rec *httptest.ResponseRecorder) {
		if path == authn.SignOutPath {
			require.Equal(t, http.StatusSeeOther, rec.Code)
			require.Equal(t, authn.SignInPath, rec.Header().Get("Location"))
			return
		}
		if ct != "application/x-www-form-urlencoded" {
			require.Equal(t, http.StatusUnauthorized, rec.Code) // not a form: no key given
			return
		}
		require.Equal(t, http.StatusSeeOther, rec.Code)
		require.Equal(t, "/activities", rec.Header().Get("Location"))
		require.Len(t, rec.Result().Cookies(), 1)
		require.Equal(t, authn.CookieName, rec.Result().Cookies()[0].Name)
	}
	return []guardRequest{r}
}

// mutating reports whether a ServeMux pattern takes a method that may
// change something.
func mutating(pattern string) bool {
	method, _, ok := strings.Cut(pattern, " ")
	return !ok || crossorigin.Changes(method)
}

// muxRequests are the requests of each mutating route of the server's mux:
// a route the table does not know fails the test.
func (b *guardBundle) muxRequests(t *testing.T, n string) map[string][]guardRequest {
	out := map[string][]guardRequest{}
	for _, rt := range b.api.routes {
		if !mutating(rt.pattern) {
			continue
		}
		require.NotNil(t, rt.refuse, "route %q takes more than GET and HEAD: it needs a refusal", rt.pattern)
		switch rt.pattern {
		case "/":
			out[rt.pattern] = b.apiRequests(n)
		case "POST " + authn.SignInPath, "POST " + authn.SignOutPath:
			out[rt.pattern] = formRequests(strings.TrimPrefix(rt.pattern, "POST "))
		case "POST " + ClockPath:
			out[rt.pattern] = b.clockRequests()
		case "POST /schedule-list/":
			out[rt.pattern] = b.scheduleFormRequests()
		case "POST " + DeployPath:
			out[rt.pattern] = deployRequests()
		default:
			require.Failf(t, "a route the table does not know", "%q: add its requests to TestCrossOriginGuard", rt.pattern)
		}
	}
	return out
}

// schedulerRequests are the requests of each mutating route of the
// Scheduler API.
func (b *guardBundle) schedulerRequests(t *testing.T, n string) map[string][]guardRequest {
	out := map[string][]guardRequest{}
	for _, pattern := range b.api.scheduleAPI.Patterns() {
		if !mutating(pattern) {
			continue
		}
		r := guardRequest{refusal: schedulerRefusal}
		r.method, _, _ = strings.Cut(pattern, " ")
		switch pattern {
		case "POST /schedules/{name}":
			r.path, r.body = "/schedules/"+n, b.scheduleBody()
			r.done = func(t *testing.T) bool { return b.scheduleExists(t, n) }
		case "PUT /schedules/{name}":
			r.path, r.body = "/schedules/keep", strings.Replace(b.scheduleBody(), "rate(1 minute)", "rate(2 minutes)", 1)
		case "DELETE /schedules/{name}":
			r.path = "/schedules/keep?groupName=" + b.group
		case "POST /schedules/{name}/hold-next", "DELETE /schedules/{name}/hold-next":
			r.path = "/schedules/keep/hold-next?groupName=" + b.group
		case "POST /file-triggers/{name}":
			r.path, r.body = "/file-triggers/"+n, fmt.Sprintf(`{"Folder": %q, "StateMachineArn": %q}`, t.TempDir(), b.machine)
			r.done = func(t *testing.T) bool {
				return b.schedules(t, http.MethodGet, "/file-triggers/"+n, "").Code == http.StatusOK
			}
		case "DELETE /file-triggers/{name}":
			r.path = "/file-triggers/none"
		case "POST /schedule-groups/{name}":
			r.path, r.body = "/schedule-groups/"+n, `{}`
			r.done = func(t *testing.T) bool {
				return b.schedules(t, http.MethodGet, "/schedule-groups/"+n, "").Code == http.StatusOK
			}
		case "DELETE /schedule-groups/{name}":
			r.path = "/schedule-groups/" + b.doomedGroup
		case "POST /tags/{arn...}":
			r.path, r.body = "/tags/"+b.groupArn, fmt.Sprintf(`{"Tags": [{"Key": %q, "Value": "v"}]}`, n)
			r.done = func(t *testing.T) bool {
				return strings.Contains(b.schedules(t, http.MethodGet, "/tags/"+b.groupArn, "").Body.String(), n)
			}
		case "DELETE /tags/{arn...}":
			r.path = "/tags/" + b.groupArn + "?TagKeys=keep"
		case "/":
			// Methods no route takes, on the API's paths.
			out[pattern] = []guardRequest{
				{method: http.MethodPatch, path: "/schedules/keep", body: `{}`, refusal: schedulerRefusal},
				{method: http.MethodPut, path: "/schedule-groups/" + b.group, body: `{}`, refusal: schedulerRefusal},
			}
			continue
		default:
			require.Failf(t, "a Scheduler API route the table does not know", "%q: add its requests to TestCrossOriginGuard", pattern)
		}
		out[pattern] = []guardRequest{r}
	}
	return out
}

// TestCrossOriginGuard sends every route that changes anything, on the
// server's real handler, each content type from each kind of origin: a
// request from another origin is refused 403 in the route's protocol's
// words and changes nothing; the others reach the route's handler (and
// a create creates). The routes are read from the server's and the
// Scheduler API's route tables and the API's operations, so a route
// added without a place in the table fails the test.
func TestCrossOriginGuard(t *testing.T) {
	t.Parallel()
	auth := &apiAuth{keys: map[string]string{"AKIDGUARD": "secret"}}
	for _, server := range []struct {
		name string
		auth *apiAuth
	}{{"without credentials", nil}, {"with credentials", auth}} {
		t.Run(server.name, func(t *testing.T) {
			t.Parallel()
			b := setupGuard(t, server.auth)
			seen := map[string]bool{}
			cases := 0
			// The refused first, each checked to change nothing; then the
			// allowed, which may.
			for _, allowed := range []bool{false, true} {
				before := b.fingerprint(t)
				for _, o := range guardOrigins {
					if o.allowed != allowed {
						continue
					}
					for _, ct := range guardContentTypes {
						n := fmt.Sprintf("n%d", cases)
						routes := b.muxRequests(t, n)
						for pattern, reqs := range b.schedulerRequests(t, n) {
							routes["scheduler "+pattern] = reqs
						}
						for pattern, reqs := range routes {
							seen[pattern] = true
							for _, r := range reqs {
								cases++
								name := fmt.Sprintf("%s %s (route %q), %s, %s", r.method, r.path, pattern, ct, o.name)
								req := httptest.NewRequest(r.method, "http://"+guardHost+r.path, strings.NewReader(r.body))
								for k, v := range r.header {
									req.Header[k] = v
								}
								for k, v := range o.header {
									req.Header[k] = v
								}
								req.Header.Set("Content-Type", ct)
								rec := httptest.NewRecorder()
								b.api.Handler().ServeHTTP(rec, req)
								refusedHere := rec.Code == http.StatusForbidden && strings.Contains(rec.Body.String(), crossorigin.Message)
								if !allowed {
									t.Run(name, func(t *testing.T) { r.refusal(t, rec) })
									require.Equal(t, before, b.fingerprint(t), "%s changed something", name)
									if r.done != nil {
										require.False(t, r.done(t), name)
									}
									continue
								}
								require.False(t, refusedHere, "%s: refused: %s", name, rec.Body.String())
								if r.reached != nil {
									t.Run(name, func(t *testing.T) { r.reached(t, ct, rec) })
								}
								if r.done != nil && server.auth == nil && (r.doneWith == nil || r.doneWith(ct)) {
									require.True(t, r.done(t), "%s did not reach its handler: %d %s", name, rec.Code, rec.Body.String())
								}
							}
						}
					}
				}
			}
			// Every mutating route of the tables was sent.
			for _, rt := range b.api.routes {
				require.Equal(t, mutating(rt.pattern), seen[rt.pattern], rt.pattern)
			}
			for _, pattern := range b.api.scheduleAPI.Patterns() {
				require.Equal(t, mutating(pattern), seen["scheduler "+pattern], pattern)
			}
		})
	}
}
