// Package http is the HTTP Task, arn:aws:states:::http:invoke: a Task
// state that calls an HTTPS API, request-response only, as AWS defines
// it in "Call HTTPS APIs in Step Functions workflows"
// (https://docs.aws.amazon.com/step-functions/latest/dg/call-https-apis.html).
//
// # Where a task may call
//
// As on AWS, public HTTPS endpoints only: plain http:// and addresses
// that are not public (loopback, private, link-local such as the
// instance metadata service, ...) fail the task with States.Http.Socket,
// whose cause names the flag that allows them, before any request is
// sent. The URL is checked before the request and on every redirect, the
// address on every connection, after DNS resolution
// (internal/security/egress.Guard). The operator allows hosts, addresses and
// networks, over plain http:// too, with Config.HTTPTaskAllow
// (stepwise serve --http-task-allow). A connection's OAuth token
// endpoint is held to the same rules. Requests go through no proxy.
//
// # Parameters
//
//	ApiEndpoint      required; an https:// URL (http:// where allowed)
//	Method           required; GET, POST, PUT, DELETE, PATCH, HEAD or OPTIONS
//	Authentication   {"ConnectionArn": "arn:aws:events:REGION:ACCOUNT:connection/NAME/ID"};
//	                 AWS requires it, Stepwise calls without authorization when it is absent
//	Headers          {"name": "value"}; the headers AWS reserves (Host, Date,
//	                 Accept-Encoding, x-amz-*, ...) are refused
//	QueryParameters  {"name": "value" or ["v1", "v2"]}; an array repeats the name
//	RequestBody      any JSON, sent as JSON (a string as it is)
//	Transform        {"RequestBodyEncoding": "NONE" | "URL_ENCODED",
//	                  "RequestEncodingOptions": {"ArrayFormat": "INDICES" | "REPEAT" | "COMMAS" | "BRACKETS"}}
//
// Any other field, or a field of the wrong type, fails the task with
// States.TaskFailed and a cause naming the field. Step Functions adds
// Content-Type (application/json; charset=UTF-8, or
// application/x-www-form-urlencoded when URL_ENCODED), User-Agent
// (Amazon|StepFunctions|HttpInvoke|REGION) and Range (bytes=0-262144).
//
// # Result and errors
//
//	request ──► connection's invocation parameters merged (the connection's win)
//	        ──► authorization (API key header, Basic, or OAuth Bearer token)
//	        ──► API ──┬─ 2xx ─────────► {"Headers", "ResponseBody", "StatusCode", "StatusText"}
//	                  ├─ other status ► States.Http.StatusCode.<NNN>, cause: that object as JSON text
//	                  └─ no answer ───► States.Http.Socket (not allowed, refused, reset, or 60 s without an answer)
//
// Headers holds each response header's values as a list. ResponseBody is
// the parsed JSON when the response's media type is application/json or
// ends in +json, else the text. A body over the payload limit fails with
// States.DataLimitExceeded. The task's TimeoutSeconds cancels the call's
// context: the request is abandoned and the engine reports States.Timeout.
//
// # Connections file
//
// AWS keeps a connection's credentials in EventBridge and Secrets
// Manager; Stepwise reads them from a local JSON file (Config
// ConnectionsFile, stepwise serve --connections FILE). Each key is a
// connection ARN, or a connection name that serves every ARN with that
// name; each value is the connection, with the fields of EventBridge's
// CreateConnection flattened:
//
//	{
//	  "arn:aws:events:us-east-1:123456789012:connection/payments/abc": {
//	    "AuthorizationType": "API_KEY", "ApiKeyName": "x-api-key", "ApiKeyValue": "secret"
//	  },
//	  "orders": {"AuthorizationType": "BASIC", "Username": "u", "Password": "p"},
//	  "crm": {
//	    "AuthorizationType": "OAUTH_CLIENT_CREDENTIALS",
//	    "AuthorizationEndpoint": "https://auth.example.com/oauth/token", "HttpMethod": "POST",
//	    "ClientId": "id", "ClientSecret": "secret",
//	    "OAuthHttpParameters": {"BodyParameters": [{"Key": "audience", "Value": "crm"}]},
//	    "InvocationHttpParameters": {
//	      "HeaderParameters": [{"Key": "x-tenant", "Value": "acme"}],
//	      "QueryStringParameters": [{"Key": "region", "Value": "eu"}],
//	      "BodyParameters": [{"Key": "source", "Value": "stepwise"}]
//	    }
//	  }
//	}
//
// A connection has exactly the fields of its AuthorizationType; unknown
// fields and parameters without a Key are errors, all reported when the
// file is loaded. InvocationHttpParameters (and OAuthHttpParameters for
// the token request) take EventBridge's {Key, Value, IsValueSecret}
// lists: headers and query parameters replace the task's of the same
// name, body parameters are set in the RequestBody object.
//
// An OAuth connection asks its AuthorizationEndpoint for a token with the
// client credentials grant (client ID and secret as Basic authorization,
// grant_type=client_credentials and the OAuthHttpParameters), sends it as
// Authorization: Bearer, and keeps it until shortly before expires_in
// runs out or the API answers 401. A token endpoint that fails fails the
// task with Events.ConnectionResource.InvalidConnectionState. A task
// naming a connection the file does not hold fails with
// States.TaskFailed.
package http
