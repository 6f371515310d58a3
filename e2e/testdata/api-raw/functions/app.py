import json


def proxy(event, context):
    return {
        "statusCode": 200,
        "headers": {"Content-Type": "application/json"},
        "body": json.dumps({
            "path": event["path"],
            "proxy": (event.get("pathParameters") or {}).get("proxy"),
            "stage": event["requestContext"]["stage"],
            "method": event["httpMethod"],
        }),
    }


def greet(event, context):
    name = event["pathParameters"]["name"]
    return {"statusCode": 200, "body": json.dumps({"greeting": "hello " + name})}
