"""Sends every event it gets to the queue OUT_URL, and fails on a
record whose body is "fail"."""

import json
import os

import boto3

sqs = boto3.client("sqs", region_name=os.environ.get("AWS_REGION", "us-east-1"))


def handler(event, context):
    sqs.send_message(QueueUrl=os.environ["OUT_URL"], MessageBody=json.dumps({"function": context.function_name, "event": event}))
    for record in event.get("Records", []):
        if record.get("body") == "fail":
            raise RuntimeError("told to fail")
    return {"batchItemFailures": []}
