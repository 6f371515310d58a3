PRICES = {"book": 12, "pen": 2}


def handler(event, context):
    item, qty = event["item"], int(event.get("qty", 1))
    if item not in PRICES:
        raise ValueError(f"no price for {item}")
    return {"total": PRICES[item] * qty}
