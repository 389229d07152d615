#!/usr/bin/env python3
"""A merchant's backend for an Orchard gateway, in plain Python (the standard library only).

It holds the secret key, which never ships in an app or a page, and does the three things a shop's server does:

  POST /orders/pay      {prime, amount, currency, order_number}  pays a prime with POST /v1/payments (prime flow)
  POST /orders/session  {out_trade_no, amount, currency}         creates an order session (session flow)
  POST /webhooks        Orchard's signed events                   verifies Orchard-Signature, keeps each event once

Run it next to a gateway:

  ORCHARD_GATEWAY=http://127.0.0.1:8080 ORCHARD_SECRET_KEY=sk_… python3 backend.py --port 9000

Then point the merchant's webhook endpoint at it (PUT /v1/webhook-endpoint {"url": "http://127.0.0.1:9000/webhooks"})
and give the answered secret as ORCHARD_WEBHOOK_SECRET. GET /events lists the events it verified. See docs/ios.md
and docs/web.md, which pair it with the app and page samples.
"""

import argparse
import hashlib
import hmac
import json
import os
import sys
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

GATEWAY = os.environ.get("ORCHARD_GATEWAY", "http://127.0.0.1:8080").rstrip("/")
SECRET_KEY = os.environ.get("ORCHARD_SECRET_KEY", "")
WEBHOOK_SECRET = os.environ.get("ORCHARD_WEBHOOK_SECRET", "")
TOLERANCE_SECONDS = 300

events = {}
events_lock = threading.Lock()


def gateway(method, path, body=None, idempotency_key=None):
    """A call to the gateway's server routes with the secret key: (status, JSON body)."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(GATEWAY + path, data=data, method=method)
    request.add_header("Authorization", "Bearer " + SECRET_KEY)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if idempotency_key:
        # A retry of the same order is answered from the gateway's idempotency store: charged once.
        request.add_header("Idempotency-Key", idempotency_key)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        raw = error.read()
        return error.code, json.loads(raw) if raw else None


def pay(body):
    """Pays the app's or page's prime for the order's amount (decimal strings, never floats)."""
    for field in ("prime", "amount", "currency", "order_number"):
        if not isinstance(body.get(field), str) or not body[field]:
            return 400, {"error": field + " is required"}
    status, payment = gateway("POST", "/v1/payments", {
        "prime": body["prime"], "amount": body["amount"], "currency": body["currency"],
        "order_number": body["order_number"], "deferred": bool(body.get("deferred", False))},
        idempotency_key="order-" + body["order_number"])
    if status == 200:
        return 200, {"paid": payment["status"] in ("captured", "authorized"), "payment_id": payment["id"],
                     "status": payment["status"], "amount": payment["amount"]}
    error = (payment or {}).get("error", {})
    # A declined card is the buyer's answer, not a server error: say so to the app.
    return 402 if status == 402 else 502, {"paid": False, "code": error.get("code", "gateway_error"),
                                           "decline_code": error.get("decline_code"), "message": error.get("message")}


def session(body):
    """Creates the order session the app then pays (the amount is fixed here, on the server)."""
    for field in ("out_trade_no", "amount", "currency"):
        if not isinstance(body.get(field), str) or not body[field]:
            return 400, {"error": field + " is required"}
    status, created = gateway("POST", "/v1/sessions", {
        "out_trade_no": body["out_trade_no"], "amount": body["amount"], "currency": body["currency"],
        "country": body.get("country", "TW"), "subject": body.get("subject", "Order " + body["out_trade_no"]),
        "user_id": body.get("user_id", "guest")})
    if status != 200:
        return 502, {"code": (created or {}).get("error", {}).get("code", "gateway_error")}
    return 200, {key: created[key] for key in ("order_token", "merchant_identifier", "country", "currency", "amount")}


def verified(header, raw):
    """Orchard-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">[,v1=…] (docs/webhooks.md)."""
    if not WEBHOOK_SECRET or not header:
        return False
    items = [item.strip().split("=", 1) for item in header.split(",")]
    timestamps = [value for key, value in items if key == "t" and value.isdigit()]
    signatures = [value for key, value in items if key == "v1"]
    if not timestamps or not signatures or abs(time.time() - int(timestamps[0])) > TOLERANCE_SECONDS:
        return False
    expected = hmac.new(WEBHOOK_SECRET.encode(), timestamps[0].encode() + b"." + raw, hashlib.sha256).hexdigest()
    return any(hmac.compare_digest(expected, signature) for signature in signatures)


class Handler(BaseHTTPRequestHandler):
    def answer(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/healthz":
            return self.answer(200, {"ok": True})
        if self.path == "/events":
            with events_lock:
                return self.answer(200, {"events": list(events.values())})
        return self.answer(404, {"error": "not found"})

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path == "/webhooks":
            if not verified(self.headers.get("Orchard-Signature"), raw):
                return self.answer(400, {"error": "bad signature"})
            event = json.loads(raw)
            with events_lock:
                # At least once: a redelivery of the same event id is acknowledged and not kept twice.
                events.setdefault(event["id"], {"id": event["id"], "type": event["type"],
                                                "object": event["data"].get("id")})
            return self.answer(200, {"received": True})
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            return self.answer(400, {"error": "the body is not JSON"})
        if self.path == "/orders/pay":
            return self.answer(*pay(body))
        if self.path == "/orders/session":
            return self.answer(*session(body))
        return self.answer(404, {"error": "not found"})

    def log_message(self, *arguments):
        pass


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9000, help="0 picks a free port, printed on the first line")
    options = parser.parse_args()
    if not SECRET_KEY:
        sys.exit("set ORCHARD_SECRET_KEY to the merchant's secret key (orchard merchant show)")
    server = ThreadingHTTPServer((options.host, options.port), Handler)
    print(f"http://{options.host}:{server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
