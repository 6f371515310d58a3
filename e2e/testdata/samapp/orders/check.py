import os
import time


class OrderRejected(Exception):
    """An order the shop does not take."""


def handler(event, context):
    if event.get("amount", 0) > 100:
        raise OrderRejected("order %s: amount %s is over the limit" % (event["id"], event["amount"]))
    return {
        "id": event["id"],
        "amount": event["amount"],
        "stage": os.environ["STAGE"],
        "table": os.environ["TABLE"],
        "checkedBy": context.function_name,
        "memory": context.memory_limit_in_mb,
        "version": "v1",
    }


def slow(event, context):
    time.sleep(10)
    return {"late": True}
