"""The triage example's tool: an order lookup that answers in the normalized tool shape."""

ORDERS = {
    "A-1001": {"id": "A-1001", "status": "charged twice, refund pending", "total": 49.9},
}


def lookup_order(order_id: str) -> dict:
    order = ORDERS.get(order_id)
    if order is None:
        return {"status": 404, "error": {"type": "not_found", "message": f"no order {order_id}"}}
    return {"status": 200, "json": order, "text": f"{order_id}: {order['status']}"}
