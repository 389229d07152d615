"""Rules of openapi.yaml that a JSON schema cannot state, applied to the requests schemathesis generates
(scripts/schemathesis.sh loads this module through SCHEMATHESIS_HOOKS):

- an amount has at most as many decimals as its currency allows (the exponents come from the one table
  in Sources/ApplePayModel/Currency.swift);
- the amount filters of GET /v1/payments are in the unit of the `currency` filter, which they need.

Every other generated request is sent as it is, so a 400 for a schema-valid request still fails the run.
"""

import pathlib
import re

import schemathesis

_TABLE = (pathlib.Path(__file__).resolve().parent.parent / "Sources/ApplePayModel/Currency.swift").read_text()
EXPONENTS = {code: int(exponent) for code, exponent in re.findall(r"\b([A-Z]{3}):\d{3}:(\d)\b", _TABLE)}


def _fit(amount, currency):
    """The amount with its fraction cut to what the currency allows."""
    if not isinstance(amount, str) or currency not in EXPONENTS or "." not in amount:
        return amount
    whole, fraction = amount.split(".", 1)
    allowed = EXPONENTS[currency]
    fitted = whole if allowed == 0 else whole + "." + fraction[:allowed]
    # A positive amount stays positive: "0.5" in a currency without decimals becomes "1", not "0".
    return "1" if amount.strip("0.") and not fitted.strip("0.") else fitted


@schemathesis.hook
def map_body(context, body):
    if isinstance(body, dict) and isinstance(body.get("currency"), str) and "amount" in body:
        body = dict(body)
        body["amount"] = _fit(body["amount"], body["currency"])
    return body


@schemathesis.hook
def map_query(context, query):
    if not isinstance(query, dict) or not ({"amount_min", "amount_max"} & query.keys()):
        return query
    query = dict(query)
    currency = query.setdefault("currency", "TWD")
    for name in ("amount_min", "amount_max"):
        if name in query:
            query[name] = _fit(query[name], currency)
    return query
