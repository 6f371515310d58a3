"""Writes botocore_request.json: requests of the Step Functions API signed
by botocore (the signer of boto3 and the AWS CLI), for the verifier's
tests; each request's X-Amz-Date is when the script ran. Run: python3 botocore_request.py > botocore_request.json"""
import json

import botocore.session
from botocore.awsrequest import AWSRequest
from botocore.auth import SigV4Auth
from botocore.credentials import Credentials


def signed(host, target, body, token=None):
    req = AWSRequest(method="POST", url="http://" + host + "/", data=body, headers={
        "Content-Type": "application/x-amz-json-1.0",
        "X-Amz-Target": "AWSStepFunctions." + target,
        "User-Agent": "Boto3/1.43 test",
    })
    creds = Credentials("AKIDBOTOCORE", "botocore/secret+key", token)
    SigV4Auth(creds, "states", "us-east-1").add_auth(req)
    return {"host": host, "headers": dict(req.headers.items()), "body": body}


print(json.dumps({
    "botocore": botocore.__version__,
    "secret": "botocore/secret+key",
    "requests": [
        signed("127.0.0.1:8083", "ListStateMachines", '{"maxResults": 10}'),
        signed("sync-127.0.0.1:8083", "StartSyncExecution",
               '{"stateMachineArn": "arn:aws:states:us-east-1:123456789012:stateMachine:m", "input": "{\\"a\\": \\"é\\"}"}'),
        signed("localhost:8083", "ListActivities", "", token="session-token-value"),
    ],
}, indent=2))
