"""Prices an order: the Python function of the CDK test app."""

import os


class OrderRejected(Exception):
    """An order that cannot be priced; the state machine catches it by name."""


def handler(event, context=None):
    items = event.get("items") or []
    if not items:
        raise OrderRejected(f"order {event.get('orderId')} has no items")
    total = sum(int(i.get("quantity", 1)) * float(i["price"]) for i in items)
    return {
        "orderId": event.get("orderId"),
        "total": round(total, 2),
        "currency": os.environ.get("CURRENCY", "EUR"),
        "table": os.environ.get("TABLE_NAME", ""),
    }
