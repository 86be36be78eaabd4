"""Tools for the plan examples. Every public function of a file passed with --tools is a
tool a plan may name; its name, signature and docstring are what the model sees.

    nodeloom run examples/plan/aggregate.json --tools examples/plan/tools.py ...
"""

SALES = {"north": 120, "south": 95}
ACTIVITY = {
    "2026-01-07": ["sold 3 kettles", "a customer returned a toaster", "restocked kettles"],
}
PRODUCTS = {
    "kettle": "Kettle K2: 1.7 l, 2200 W, 39 EUR",
    "toaster": "Toaster T4: 4 slots, 1500 W, 49 EUR",
}


def get_sales(region: str = "north") -> dict:
    """Units sold last week in a region.

    Args:
        region: "north" or "south".
    """
    return {"region": region, "units": SALES.get(region, 0)}


def get_reviews() -> list:
    """The three latest customer reviews."""
    return ["Fast delivery", "The kettle is loud", "Great value"]


def get_activity(date: str) -> list:
    """What happened in the shop on a day.

    Args:
        date: The day, as YYYY-MM-DD.
    """
    return ACTIVITY.get(date, [])


def lookup_product(name: str) -> str:
    """The catalogue entry of a product.

    Args:
        name: The product, e.g. "kettle".
    """
    return PRODUCTS.get(name.lower(), f"no product named {name!r}")
