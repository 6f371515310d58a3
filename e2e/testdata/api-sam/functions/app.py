import json


def hello(event, context):
    if event.get("version") == "2.0":
        # an HTTP API's event (payload format 2.0): the simple answer
        return {"v": 2, "id": event["pathParameters"]["id"], "body": event.get("body"),
                "q": event.get("queryStringParameters"), "route": event["routeKey"]}
    return {
        "statusCode": 200,
        "headers": {"Content-Type": "application/json", "X-Route": event["resource"]},
        "body": json.dumps({"hello": event["pathParameters"]["name"],
                            "q": event["queryStringParameters"],
                            "stage": event["requestContext"]["stage"]}),
    }


def boom(event, context):
    raise ValueError("boom")
