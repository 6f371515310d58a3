"""Prices an order: the sum of its items' quantities times their prices."""


def handler(event, context):
    total = sum(item["qty"] * item["price"] for item in event["items"])
    return {"order": event["order"], "total": total}
