"""boto3 against a server that requires signed requests: creates an
EXPRESS state machine (once per name) and runs it with StartSyncExecution,
whose host prefix stays on ("sync-" + the endpoint's host, resolved here
to the host itself). Prints one JSON line: the execution's status and
output and the sync- hosts resolved, or the error botocore raised.

Usage: auth_boto3.py ENDPOINT ACCESS_KEY_ID SECRET_ACCESS_KEY NAME [SESSION_TOKEN [CA_BUNDLE]]"""
import json
import socket
import sys

import boto3
import botocore.config
import botocore.exceptions

endpoint, key, secret, name = sys.argv[1:5]
token = sys.argv[5] if len(sys.argv) > 5 and sys.argv[5] else None
ca_bundle = sys.argv[6] if len(sys.argv) > 6 else None

_getaddrinfo = socket.getaddrinfo
prefixed = []


def getaddrinfo(host, *args, **kwargs):
    if isinstance(host, str) and host.startswith("sync-"):
        prefixed.append(host)
        host = host[len("sync-"):]
    return _getaddrinfo(host, *args, **kwargs)


socket.getaddrinfo = getaddrinfo

sfn = boto3.client(
    "stepfunctions",
    endpoint_url=endpoint,
    region_name="us-east-1",
    aws_access_key_id=key,
    aws_secret_access_key=secret,
    aws_session_token=token,
    verify=ca_bundle if ca_bundle else None,
    config=botocore.config.Config(retries={"max_attempts": 1}),
)
try:
    arn = sfn.create_state_machine(
        name=name,
        type="EXPRESS",
        roleArn="arn:aws:iam::123456789012:role/stepwise",
        definition=json.dumps({"StartAt": "Hello", "States": {"Hello": {
            "Type": "Pass", "Parameters": {"greeting.$": "States.Format('Hello, {}!', $.who)"}, "End": True}}}),
    )["stateMachineArn"]
    run = sfn.start_sync_execution(stateMachineArn=arn, input=json.dumps({"who": "boto3"}))
    print(json.dumps({"status": run["status"], "output": run.get("output"), "prefixedHosts": prefixed}))
except botocore.exceptions.ClientError as e:
    print(json.dumps({
        "error": e.response["Error"]["Code"],
        "message": e.response["Error"]["Message"],
        "httpStatus": e.response["ResponseMetadata"]["HTTPStatusCode"],
    }))
