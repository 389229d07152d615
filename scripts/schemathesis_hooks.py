"""Rules of openapi.yaml that a JSON schema cannot state, applied to every request schemathesis sends, in
every phase (`before_call`; scripts/schemathesis.sh loads this module through SCHEMATHESIS_HOOKS):

- an amount has at most as many decimals as its currency allows (the exponents come from the one table
  in Sources/ApplePayModel/Currency.swift);
- the amount filters of GET /v1/payments are in the unit of the `currency` filter, which they need;
- a capture's or refund's amount is in its payment's currency (`before_call`, below).

Every other generated request is sent as it is, so a 400 for a schema-valid request still fails the run.
Pay requests, session payments and tokenizations get real primes and tokens (`before_call`, below).
"""

import itertools
import json
import os
import pathlib
import re
import urllib.error
import urllib.parse
import urllib.request
import uuid

import schemathesis

_TABLE = (pathlib.Path(__file__).resolve().parent.parent / "Sources/ApplePayModel/Currency.swift").read_text()
EXPONENTS = {code: int(exponent) for code, exponent in re.findall(r"\b([A-Z]{3}):\d{3}:(\d)\b", _TABLE)}


def _fit(amount, currency):
    """The amount with its fraction cut to what the currency allows."""
    if not isinstance(amount, str) or not isinstance(currency, str) or currency not in EXPONENTS or "." not in amount:
        return amount
    whole, fraction = amount.split(".", 1)
    allowed = EXPONENTS[currency]
    fitted = whole if allowed == 0 else whole + "." + fraction[:allowed]
    # A positive amount stays positive: "0.5" in a currency without decimals becomes "1", not "0".
    return "1" if amount.strip("0.") and not fitted.strip("0.") else fitted


def _fit_body(body):
    """A body's amount in its currency's decimals."""
    if isinstance(body, dict) and isinstance(body.get("currency"), str) and "amount" in body:
        body["amount"] = _fit(body["amount"], body["currency"])


def _fit_query(query):
    """The amount filters of GET /v1/payments in the unit of its currency filter (TWD when there is none)."""
    if isinstance(query, dict) and {"amount_min", "amount_max"} & query.keys():
        currency = query.setdefault("currency", "TWD")
        for name in ("amount_min", "amount_max"):
            if name in query:
                query[name] = _fit(query[name], currency)


# Real payments for the stateful phase: made-up tokens and primes never pass the token check, so without these
# the links from a payment to its capture, void and refund are never followed with a real id. Each pay request
# gets a prime minted for its own amount and currency, each session payment a token for its session's amount,
# and each tokenization a real token, through the sandbox wallet of the server under test (scripts/schemathesis.sh
# exports its URL and the sandbox merchant's keys).
_URL = os.environ.get("ORCHARD_FUZZ_URL", "")
_APP = {
    "X-Orchard-App-Id": os.environ.get("ORCHARD_FUZZ_APP_ID", ""),
    "X-Orchard-App-Key": os.environ.get("ORCHARD_FUZZ_APP_KEY", ""),
}
_SERVER = {"Authorization": "Bearer " + os.environ.get("ORCHARD_FUZZ_SECRET_KEY", "")}


def _call(method, path, headers, body=None):
    """The JSON answer of a 200, else None (the case then goes out as generated)."""
    if not _URL:
        return None
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(_URL + path, data=data, method=method, headers=dict(headers))
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return json.loads(answer.read())
    except (urllib.error.URLError, ValueError, OSError):
        return None


def _token(amount, currency):
    """A sandbox wallet token for the amount (in the currency's decimals), or None."""
    if not isinstance(amount, str) or not isinstance(currency, str) or currency not in EXPONENTS:
        return None
    answer = _call("POST", "/v1/sandbox/wallet/tokens", _APP,
                   {"amount": _fit(amount, currency), "currency": currency, "card": "visa_credit"})
    return answer.get("token") if isinstance(answer, dict) else None


def _prime(amount, currency):
    token = _token(amount, currency)
    answer = _call("POST", "/v1/tokens", _APP, {"token": token}) if token is not None else None
    return answer.get("prime") if isinstance(answer, dict) else None


_IDEMPOTENCY_KEY = re.compile(r"^[\x21-\x7e]{1,255}$")
_calls = itertools.count()


@schemathesis.hook
def before_call(context, case, **kwargs):
    label = f"{case.operation.method.upper()} {case.operation.path}"
    body = case.body
    call = next(_calls)
    # In every phase (the coverage phase builds its cases without the map hooks): amounts in their currency.
    _fit_body(body)
    if label == "GET /v1/payments":
        _fit_query(case.query)
    # Generated Idempotency-Keys repeat ("0", "A" …): a valid one is made unique, or every later request with
    # it would be idempotency_conflict and the payment behind it never reached. Invalid keys go as they are.
    key = case.headers.get("Idempotency-Key") if case.headers else None
    if isinstance(key, str) and _IDEMPOTENCY_KEY.match(key):
        case.headers["Idempotency-Key"] = f"fuzz-{uuid.uuid4().hex}"
    if label == "POST /v1/payments" and isinstance(body, dict):
        prime = _prime(body.get("amount"), body.get("currency"))
        if prime is not None:
            body["prime"] = prime
        # Every other payment without capture options is authorized only, so that the links to its capture
        # and its void find it capturable; the others take the default (captured at once).
        if "capture" not in body and call % 2 == 0:
            body["capture"] = {"mode": "manual"}
    elif label == "POST /v1/tokens" and isinstance(body, dict):
        token = _token("100.00", "TWD")
        if token is not None:
            body["token"] = token
    elif label in ("POST /v1/payments/{id}/capture", "POST /v1/payments/{id}/refunds") and isinstance(body, dict):
        # The amount is in the payment's currency, which the request does not name: its decimals are the
        # payment's currency's.
        payment_id = (case.path_parameters or {}).get("id")
        payment = _call("GET", f"/v1/payments/{urllib.parse.quote(str(payment_id), safe='')}", _SERVER) \
            if payment_id and "amount" in body else None
        if isinstance(payment, dict):
            body["amount"] = _fit(body["amount"], payment.get("currency"))
    elif label == "POST /v1/sessions/{order_token}/pay" and isinstance(body, dict):
        order_token = (case.path_parameters or {}).get("order_token")
        session = _call("GET", f"/v1/sessions/{urllib.parse.quote(str(order_token), safe='')}", _SERVER) \
            if order_token else None
        if isinstance(session, dict):
            token = _token(session.get("amount"), session.get("currency"))
            if token is not None:
                body["token"] = token
