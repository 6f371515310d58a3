"""Prices the orders the state machine sends to the queue, and answers
each execution with SendTaskSuccess (or SendTaskFailure for an order it
cannot price). boto3 reaches Stepwise through AWS_ENDPOINT_URL_SFN, which
the server sets for its functions."""

import json
import os

import boto3

sfn = boto3.client("stepfunctions", region_name=os.environ.get("AWS_REGION", "us-east-1"))


def handler(event, context):
    failures = []
    for record in event["Records"]:
        try:
            message = json.loads(record["body"])
            token = message["taskToken"]
        except (ValueError, KeyError):
            # Not a request of ours: leave it to the queue's retries.
            failures.append({"itemIdentifier": record["messageId"]})
            continue
        order = message.get("order") or {}
        items = order.get("items") or []
        if not items:
            sfn.send_task_failure(taskToken=token, error="EmptyOrder", cause="order %s has no items" % order.get("id"))
            continue
        total = sum(item["price"] * item["quantity"] for item in items)
        sfn.send_task_success(taskToken=token, output=json.dumps(
            {"order": order.get("id"), "total": total, "pricedBy": context.function_name}))
    return {"batchItemFailures": failures}
