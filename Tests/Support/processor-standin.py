#!/usr/bin/env python3
"""A stand-in for Adyen's Checkout API v71 or Checkout.com's payments API, for tests, written from their public
documentation. It refuses what the real API refuses (a wrong key, a missing required field, a wrong merchant account
or processing channel, an idempotency key reused for another request), keeps the payments as the processor would,
records every request, answers per test, and sends the processor's signed notifications to the gateway.

usage:
  python3 Tests/Support/processor-standin.py --api adyen|checkout_com [--host 127.0.0.1] [--port 0]

Once it accepts connections it prints the port, alone on one line of standard output. The API is served at the
root (Adyen's base URL is http://127.0.0.1:PORT/v71, Checkout.com's http://127.0.0.1:PORT). Python 3 standard
library only; SIGTERM or SIGINT stops it.

Control routes (JSON, no credentials; the tests' own):
  POST /_standin/config    the account: Adyen {api_key, merchant_account, hmac_key, notification_url,
                           notification_username, notification_password}; Checkout.com {secret_key,
                           processing_channel_id, webhook_secret, webhook_url}
  POST /_standin/script    {"kind": "authorize"|"capture"|"void"|"refund", "answers": [ANSWER, ...]}: the next calls
                           of that kind are answered so, in order (then the default: approve, accept). An ANSWER:
                             authorize, Adyen: {"result": "Authorised"|"Refused"|"Error"|"Received", "code": "12",
                                                "reason": "Not enough balance"}
                             authorize, Checkout.com: {"approved": false, "response_code": "20051",
                                                "response_summary": "Insufficient Funds"}
                             capture, void, refund: {"success": false, "reason": "…"}: accepted now, the
                                                notification (or the action) then says it failed
                           and any of them may add {"fail": "timeout"|"500"|"truncated", "seconds": N}: the request
                           is processed as the answer says, then the answer is lost: held N seconds (timeout), a 500
                           instead, or a body cut short and the connection closed.
  GET  /_standin/requests  every API request received: method, path, headers, body
  GET  /_standin/ledger    the payments as the processor keeps them, with "authorizations": how many times the
                           authorization was processed (a replayed idempotent answer does not count)
  GET  /_standin/queued    the notifications waiting to be sent
  POST /_standin/deliver   sends the waiting notifications to the configured URL, one request each (Adyen: one item
                           per request, unless "batch": true): {"order": "queued"|"reversed", "duplicate": true,
                           "tamper": true, "keep": true}; answers [{"status", "body"}]
  POST /_standin/notify    sends the notifications given (Adyen: {"items": [NotificationRequestItem …]};
                           Checkout.com: {"events": [event …]}) signed as the processor signs them
"""

import argparse
import base64
import hashlib
import hmac
import http.server
import json
import random
import signal
import socketserver
import string
import sys
import threading
import time
import urllib.request
import uuid

MAXIMUM_BODY = 1 << 20


def random_id(alphabet, length):
    return "".join(random.choice(alphabet) for _ in range(length))


class StandIn:
    """The processor's state, shared by the request threads."""

    def __init__(self, api):
        self.api = api
        self.lock = threading.Lock()
        self.config = {}
        self.scripts = {"authorize": [], "capture": [], "void": [], "refund": []}
        self.requests = []
        self.payments = {}  # by the processor's payment reference
        self.idempotency = {}  # key -> (fingerprint, status, headers, body)
        self.queued = []

    def next_answer(self, kind):
        with self.lock:
            queue = self.scripts[kind]
            return queue.pop(0) if queue else {}


def adyen_error(status, code, message, error_type="validation"):
    return status, {"status": status, "errorCode": code, "message": message, "errorType": error_type}


def adyen_signature(key_hex, item):
    """Adyen's HMAC of a standard notification item: the 8 values joined with ':' (no escaping), HMAC-SHA256 with
    the hex-decoded key, base64."""
    amount = item.get("amount", {})
    values = [
        item.get("pspReference", ""), item.get("originalReference", ""), item.get("merchantAccountCode", ""),
        item.get("merchantReference", ""), str(amount.get("value", "")), amount.get("currency", ""),
        item.get("eventCode", ""), item.get("success", ""),
    ]
    digest = hmac.new(bytes.fromhex(key_hex), ":".join(values).encode("utf-8"), hashlib.sha256).digest()
    return base64.b64encode(digest).decode("ascii")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "ProcessorStandIn/1"

    def log_message(self, fmt, *args):
        pass

    @property
    def state(self):
        return self.server.state

    # MARK: plumbing

    def read_body(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAXIMUM_BODY:
            return None
        return self.rfile.read(length) if length else b""

    def send(self, status, body, headers=None, fail=None):
        """Answers `body` (a dict, list, str or None) with `status`, or loses the answer as `fail` says."""
        if isinstance(body, (dict, list)):
            data = json.dumps(body, separators=(",", ":")).encode("utf-8")
        elif isinstance(body, str):
            data = body.encode("utf-8")
        else:
            data = b""
        fail = fail or {}
        mode = fail.get("fail")
        if mode == "timeout":
            time.sleep(float(fail.get("seconds", 5)))
        if mode == "500":
            status, data = 500, json.dumps({"status": 500, "errorCode": "901", "message": "Internal error"}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if mode == "truncated":
            self.send_header("Content-Length", str(len(data) + 200))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data[: max(1, len(data) // 2)])
            self.wfile.flush()
            self.close_connection = True
            return
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def record(self, body):
        try:
            parsed = json.loads(body) if body else None
        except ValueError:
            parsed = body.decode("utf-8", "replace")
        with self.state.lock:
            self.state.requests.append({
                "method": self.command, "path": self.path, "headers": dict(self.headers.items()), "body": parsed,
            })

    def do_GET(self):
        self.dispatch(b"")

    def do_POST(self):
        body = self.read_body()
        if body is None:
            self.send(413, {"message": "too large"})
            return
        self.dispatch(body)

    def dispatch(self, body):
        if self.path.startswith("/_standin/"):
            self.control(body)
            return
        self.record(body)
        if self.state.api == "adyen":
            self.adyen(body)
        else:
            self.checkout(body)

    # MARK: control

    def control(self, body):
        state = self.state
        try:
            request = json.loads(body) if body else {}
        except ValueError:
            self.send(400, {"message": "not JSON"})
            return
        route = self.path.split("?")[0]
        if route == "/_standin/config" and self.command == "POST":
            with state.lock:
                state.config.update(request)
            self.send(200, {"config": sorted(state.config)})
        elif route == "/_standin/script" and self.command == "POST":
            with state.lock:
                state.scripts[request["kind"]].extend(request.get("answers", []))
            self.send(200, {"queued": len(state.scripts[request["kind"]])})
        elif route == "/_standin/requests":
            with state.lock:
                self.send(200, state.requests)
        elif route == "/_standin/ledger":
            with state.lock:
                self.send(200, list(state.payments.values()))
        elif route == "/_standin/queued":
            with state.lock:
                self.send(200, state.queued)
        elif route == "/_standin/deliver" and self.command == "POST":
            with state.lock:
                queued = list(state.queued)
                if not request.get("keep"):
                    state.queued = []
            if request.get("order") == "reversed":
                queued.reverse()
            self.send(200, self.deliver(queued, request))
        elif route == "/_standin/notify" and self.command == "POST":
            items = request.get("items") or request.get("events") or []
            self.send(200, self.deliver(items, request))
        else:
            self.send(404, {"message": "no such control route"})

    def deliver(self, queued, options):
        answers = []
        copies = 2 if options.get("duplicate") else 1
        if self.state.api == "adyen" and options.get("batch"):
            batches = [queued] if queued else []
        else:
            batches = [[item] for item in queued]
        for batch in batches:
            for _ in range(copies):
                answers.append(self.post_notification(batch, options.get("tamper", False)))
        return answers

    def post_notification(self, batch, tamper):
        config = self.state.config
        if self.state.api == "adyen":
            items = []
            for item in batch:
                signed = json.loads(json.dumps(item))
                signature = adyen_signature(config["hmac_key"], signed)
                if tamper:
                    signature = "A" + signature[1:] if signature[0] != "A" else "B" + signature[1:]
                signed.setdefault("additionalData", {})["hmacSignature"] = signature
                items.append({"NotificationRequestItem": signed})
            data = json.dumps({"live": "false", "notificationItems": items}).encode("utf-8")
            headers = {"Content-Type": "application/json"}
            if config.get("notification_username"):
                token = base64.b64encode(
                    (config["notification_username"] + ":" + config["notification_password"]).encode()).decode()
                headers["Authorization"] = "Basic " + token
            url = config["notification_url"]
        else:
            data = json.dumps(batch[0]).encode("utf-8")
            signature = hmac.new(config["webhook_secret"].encode("utf-8"), data, hashlib.sha256).hexdigest()
            if tamper:
                signature = ("0" if signature[0] != "0" else "1") + signature[1:]
            headers = {"Content-Type": "application/json", "Cko-Signature": signature}
            url = config["webhook_url"]
        request = urllib.request.Request(url, data=data, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return {"status": response.status, "body": response.read().decode("utf-8", "replace")}
        except urllib.error.HTTPError as error:
            return {"status": error.code, "body": error.read().decode("utf-8", "replace")}

    def queue(self, notification):
        with self.state.lock:
            self.state.queued.append(notification)

    # MARK: idempotency

    def replay(self, key, body):
        """The stored answer for `key` (same request), a refusal (another request), or None (a new one)."""
        if key is None:
            return None
        fingerprint = hashlib.sha256(self.command.encode() + self.path.encode() + body).hexdigest()
        with self.state.lock:
            stored = self.state.idempotency.get(key)
        if stored is None:
            return None
        if stored[0] != fingerprint:
            return "conflict"
        return stored[1:]

    def store(self, key, body, status, headers, answer):
        if key is None:
            return
        fingerprint = hashlib.sha256(self.command.encode() + self.path.encode() + body).hexdigest()
        with self.state.lock:
            self.state.idempotency[key] = (fingerprint, status, headers, answer)

    # MARK: Adyen

    def adyen(self, body):
        config = self.state.config
        path = self.path.split("?")[0]
        if self.headers.get("X-API-Key") != config.get("api_key"):
            self.send(*adyen_error(401, "000", "HTTP Status Response - Unauthorized", "security"))
            return
        if self.command != "POST":
            self.send(*adyen_error(405, "000", "Method not allowed"))
            return
        if not (self.headers.get("Content-Type") or "").startswith("application/json"):
            self.send(*adyen_error(415, "000", "Unsupported media type"))
            return
        try:
            request = json.loads(body)
            assert isinstance(request, dict)
        except (ValueError, AssertionError):
            self.send(*adyen_error(400, "702", "Unexpected input"))
            return
        if request.get("merchantAccount") is None:
            self.send(*adyen_error(422, "100", "Required field 'merchantAccount' is not provided."))
            return
        if request["merchantAccount"] != config.get("merchant_account"):
            self.send(*adyen_error(403, "901", "Invalid Merchant Account", "security"))
            return
        key = self.headers.get("Idempotency-Key")
        if key is not None and not 1 <= len(key) <= 64:
            self.send(*adyen_error(422, "000", "Idempotency-Key is 1 to 64 characters"))
            return
        stored = self.replay(key, body)
        if stored == "conflict":
            self.send(*adyen_error(422, "000", "this Idempotency-Key was used for another request"))
            return
        if stored is not None:
            status, headers, answer = stored
            self.send(status, answer, dict(headers, **{"Idempotency-Key": key}))
            return
        parts = path.strip("/").split("/")
        if parts == ["v71", "payments"]:
            self.adyen_payment(request, key, body)
        elif parts == ["v71", "paymentMethods"]:
            self.send(200, {"paymentMethods": [{"name": "Cards", "type": "scheme"},
                                               {"name": "Apple Pay", "type": "applepay"}]})
        elif len(parts) == 4 and parts[:2] == ["v71", "payments"] and parts[3] in ("captures", "cancels", "refunds"):
            self.adyen_modification(parts[2], parts[3], request, key, body)
        else:
            self.send(*adyen_error(404, "000", "no such endpoint"))

    def adyen_payment(self, request, key, body):
        for name in ("amount", "merchantAccount", "paymentMethod", "reference", "returnUrl"):
            if name not in request:
                if name == "returnUrl":
                    self.send(*adyen_error(422, "14_030", "Return URL is missing."))
                else:
                    self.send(*adyen_error(422, "100", "Required field '%s' is not provided." % name))
                return
        amount = request["amount"]
        if not (isinstance(amount, dict) and isinstance(amount.get("value"), int) and amount["value"] >= 0
                and isinstance(amount.get("currency"), str) and len(amount["currency"]) == 3):
            self.send(*adyen_error(422, "137", "Invalid amount specified"))
            return
        reference = request["reference"]
        if not isinstance(reference, str) or not 1 <= len(reference) <= 80:
            self.send(*adyen_error(422, "130", "Reference is 1 to 80 characters"))
            return
        method = request["paymentMethod"]
        if not isinstance(method, dict) or method.get("type") != "scheme":
            self.send(*adyen_error(422, "905", "Payment details are not supported"))
            return
        number = method.get("number")
        if not (isinstance(number, str) and number.isdigit() and 12 <= len(number) <= 19):
            self.send(*adyen_error(422, "101", "Invalid card number"))
            return
        month, year = method.get("expiryMonth"), method.get("expiryYear")
        if not (isinstance(month, str) and month.isdigit() and 1 <= int(month) <= 12 and len(month) == 2):
            self.send(*adyen_error(422, "102", "Expiry month is invalid"))
            return
        if not (isinstance(year, str) and year.isdigit() and len(year) == 4):
            self.send(*adyen_error(422, "103", "Expiry year is invalid"))
            return
        mpi = request.get("mpiData") or {}
        try:
            base64.b64decode(mpi.get("cavv", ""), validate=True)
            assert mpi.get("cavv")
        except (ValueError, AssertionError):
            self.send(*adyen_error(422, "167", "A decrypted Apple Pay payment needs mpiData.cavv (the cryptogram)"))
            return
        if (request.get("additionalData") or {}).get("paymentdatasource.type") != "applepay":
            self.send(*adyen_error(422, "905", "paymentdatasource.type must say where the card came from"))
            return
        answer = self.state.next_answer("authorize")
        result = answer.get("result", "Authorised")
        psp = random_id(string.ascii_uppercase + string.digits, 16)
        with self.state.lock:
            previous = [p for p in self.state.payments.values() if p["reference"] == reference]
            authorizations = 1 + sum(p["authorizations"] for p in previous)
            for p in previous:
                p["authorizations"] = authorizations
            self.state.payments[psp] = {
                "pspReference": psp, "reference": reference, "amount": amount["value"],
                "currency": amount["currency"], "status": "authorised" if result == "Authorised" else result.lower(),
                "captured": 0, "refunded": 0, "cancelled": False, "authorizations": authorizations,
                "manualCapture": (request.get("additionalData") or {}).get("manualCapture") == "true",
                "modifications": [],
            }
        response = {"pspReference": psp, "resultCode": result, "merchantReference": reference, "amount": amount}
        if result == "Authorised":
            response["additionalData"] = {"authCode": "%06d" % random.randint(0, 999999)}
        elif result in ("Refused", "Error"):
            response["refusalReason"] = answer.get("reason", "Refused")
            response["refusalReasonCode"] = answer.get("code", "2")
        if result in ("Authorised", "Refused", "Error"):
            self.queue(self.adyen_item("AUTHORISATION", psp, None, reference, amount, result == "Authorised",
                                       "" if result == "Authorised" else response["refusalReason"]))
        headers = {"Idempotency-Key": key} if key else {}
        self.store(key, body, 200, {}, response)
        self.send(200, response, headers, answer)

    def adyen_item(self, code, psp, original, reference, amount, success, reason):
        item = {
            "pspReference": psp, "merchantAccountCode": self.state.config.get("merchant_account", ""),
            "merchantReference": reference, "amount": amount, "eventCode": code,
            "eventDate": time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime()),
            "success": "true" if success else "false", "reason": reason, "paymentMethod": "visa",
            "additionalData": {},
        }
        if original:
            item["originalReference"] = original
        return item

    def adyen_modification(self, original, action, request, key, body):
        with self.state.lock:
            payment = self.state.payments.get(original)
        if payment is None or payment["status"] != "authorised":
            self.send(*adyen_error(422, "167", "Original pspReference required for this operation"))
            return
        amount = request.get("amount")
        if action != "cancels":
            if not (isinstance(amount, dict) and isinstance(amount.get("value"), int) and amount["value"] > 0):
                self.send(*adyen_error(422, "100", "Required field 'amount' is not provided."))
                return
            if amount.get("currency") != payment["currency"]:
                self.send(*adyen_error(422, "137", "Invalid amount specified: currency differs"))
                return
        kind = {"captures": "capture", "cancels": "void", "refunds": "refund"}[action]
        with self.state.lock:
            if kind == "capture" and (payment["cancelled"] or payment["captured"] + amount["value"] > payment["amount"]):
                refused = "the capture exceeds what is left to capture"
            elif kind == "void" and (payment["captured"] > 0 or payment["cancelled"]):
                refused = "a captured or cancelled payment cannot be cancelled"
            elif kind == "refund" and payment["refunded"] + amount["value"] > payment["captured"]:
                refused = "the refund exceeds what is left to refund"
            else:
                refused = None
        if refused:
            self.send(*adyen_error(422, "167", refused))
            return
        answer = self.state.next_answer(kind)
        success = answer.get("success", True)
        psp = random_id(string.ascii_uppercase + string.digits, 16)
        with self.state.lock:
            if success:
                if kind == "capture":
                    payment["captured"] += amount["value"]
                elif kind == "void":
                    payment["cancelled"] = True
                else:
                    payment["refunded"] += amount["value"]
            payment["modifications"].append({"kind": kind, "pspReference": psp, "reference": request.get("reference"),
                                             "amount": (amount or {}).get("value", 0), "success": success})
        event = {"capture": "CAPTURE", "void": "CANCELLATION", "refund": "REFUND"}[kind]
        notified_amount = amount or {"currency": payment["currency"], "value": payment["amount"]}
        self.queue(self.adyen_item(event, psp, original, payment["reference"], notified_amount, success,
                                   "" if success else answer.get("reason", "Refused")))
        response = {"merchantAccount": request["merchantAccount"], "paymentPspReference": original,
                    "reference": request.get("reference"), "pspReference": psp, "status": "received"}
        if amount:
            response["amount"] = amount
        self.store(key, body, 201, {}, response)
        self.send(201, response, {"Idempotency-Key": key} if key else {}, answer)

    # MARK: Checkout.com

    def checkout_error(self, status, codes, error_type="request_invalid"):
        self.send(status, {"request_id": str(uuid.uuid4()), "error_type": error_type, "error_codes": codes})

    def checkout(self, body):
        config = self.state.config
        if self.headers.get("Authorization") != "Bearer " + config.get("secret_key", "\0"):
            self.send(401, None)
            return
        path, _, query = self.path.partition("?")
        parts = path.strip("/").split("/")
        if self.command == "GET":
            self.checkout_read(parts, query)
            return
        if not (self.headers.get("Content-Type") or "").startswith("application/json"):
            self.send(415, None)
            return
        try:
            request = json.loads(body) if body else {}
            assert isinstance(request, dict)
        except (ValueError, AssertionError):
            self.checkout_error(422, ["request_body_malformed"])
            return
        key = self.headers.get("Cko-Idempotency-Key")
        stored = self.replay(key, body)
        if stored == "conflict":
            self.checkout_error(422, ["idempotency_key_reused"])
            return
        if stored is not None:
            status, headers, answer = stored
            self.send(status, answer, headers)
            return
        if parts == ["payments"]:
            self.checkout_payment(request, key, body)
        elif len(parts) == 3 and parts[0] == "payments" and parts[2] in ("captures", "voids", "refunds"):
            self.checkout_action(parts[1], parts[2], request, key, body)
        else:
            self.send(404, None)

    def checkout_payment(self, request, key, body):
        config = self.state.config
        errors = []
        currency = request.get("currency")
        if currency is None:
            errors.append("currency_required")
        elif not (isinstance(currency, str) and len(currency) == 3 and currency.isupper()):
            errors.append("currency_invalid")
        source = request.get("source")
        if source is None:
            errors.append("payment_source_required")
        elif not isinstance(source, dict) or source.get("type") != "network_token":
            errors.append("payment_source_invalid")
        else:
            token = source.get("token")
            if token is None:
                errors.append("token_required")
            elif not (isinstance(token, str) and token.isdigit() and 12 <= len(token) <= 19):
                errors.append("token_invalid")
            month, year = source.get("expiry_month"), source.get("expiry_year")
            if month is None:
                errors.append("expiry_month_required")
            elif not (isinstance(month, int) and 1 <= month <= 12):
                errors.append("expiry_month_invalid")
            if year is None:
                errors.append("expiry_year_required")
            elif not (isinstance(year, int) and 2000 <= year <= 2099):
                errors.append("expiry_year_invalid")
            if source.get("token_type") not in ("vts", "mdes", "applepay", "googlepay"):
                errors.append("token_type_invalid")
            if not source.get("cryptogram"):
                errors.append("cryptogram_required")
        amount = request.get("amount", 0)
        if not (isinstance(amount, int) and 0 <= amount <= 999999999):
            errors.append("amount_invalid")
        elif currency in ("BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND") and amount % 10 != 0:
            errors.append("amount_invalid")
        if request.get("processing_channel_id") != config.get("processing_channel_id"):
            errors.append("processing_channel_id_invalid")
        reference = request.get("reference")
        if reference is not None and not (isinstance(reference, str) and len(reference) <= 80):
            errors.append("reference_invalid")
        if errors:
            self.checkout_error(422, errors)
            return
        answer = self.state.next_answer("authorize")
        approved = answer.get("approved", True)
        capture = request.get("capture", True)
        payment_id = "pay_" + random_id(string.ascii_lowercase + string.digits, 26)
        action_id = "act_" + random_id(string.ascii_lowercase + string.digits, 26)
        code = "10000" if approved else answer.get("response_code", "20005")
        summary = "Approved" if approved else answer.get("response_summary", "Declined - Do Not Honour")
        with self.state.lock:
            previous = [p for p in self.state.payments.values() if p["reference"] == reference]
            authorizations = 1 + sum(p["authorizations"] for p in previous)
            for p in previous:
                p["authorizations"] = authorizations
            payment = {
                "id": payment_id, "reference": reference, "amount": amount, "currency": currency,
                "approved": approved, "status": "Authorized" if approved else "Declined", "response_code": code,
                "response_summary": summary, "auth_code": "%06d" % random.randint(0, 999999) if approved else None,
                "captured": 0, "refunded": 0, "voided": False, "authorizations": authorizations,
                "actions": [{"id": action_id, "type": "Authorization", "approved": approved, "amount": amount,
                             "response_code": code, "response_summary": summary, "reference": reference}],
            }
            self.state.payments[payment_id] = payment
        response = self.payment_object(payment)
        event = {"id": "evt_" + random_id(string.ascii_lowercase + string.digits, 26),
                 "type": "payment_approved" if approved else "payment_declined",
                 "version": "1.0.29", "created_on": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                 "data": {"id": payment_id, "action_id": action_id, "reference": reference, "amount": amount,
                          "currency": currency, "response_code": code, "response_summary": summary,
                          "auth_code": payment["auth_code"]}}
        self.queue(event)
        if approved and capture:
            self.checkout_capture_now(payment, request)
        status = 201
        if answer.get("fail") != "500":
            self.store(key, body, status, {}, response)
        self.send(status, response, {}, answer)

    def checkout_capture_now(self, payment, request):
        """`capture: true`: the capture follows the authorization, reported by a `payment_captured` webhook."""
        action_id = "act_" + random_id(string.ascii_lowercase + string.digits, 26)
        with self.state.lock:
            payment["captured"] = payment["amount"]
            payment["status"] = "Captured"
            payment["actions"].append({"id": action_id, "type": "Capture", "approved": True,
                                       "amount": payment["amount"], "response_code": "10000",
                                       "reference": payment["reference"]})
        self.queue(self.checkout_event("payment_captured", payment, action_id, payment["reference"],
                                       payment["amount"], "10000"))

    def checkout_event(self, kind, payment, action_id, reference, amount, code):
        return {"id": "evt_" + random_id(string.ascii_lowercase + string.digits, 26), "type": kind,
                "version": "1.0.29", "created_on": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "data": {"id": payment["id"], "action_id": action_id, "reference": reference, "amount": amount,
                         "currency": payment["currency"], "response_code": code}}

    def payment_object(self, payment):
        return {key: payment[key] for key in ("id", "reference", "amount", "currency", "approved", "status",
                                               "response_code", "response_summary", "auth_code")
                if payment.get(key) is not None}

    def checkout_action(self, payment_id, action, request, key, body):
        with self.state.lock:
            payment = self.state.payments.get(payment_id)
        if payment is None:
            self.send(404, None)
            return
        kind = {"captures": "capture", "voids": "void", "refunds": "refund"}[action]
        amount = request.get("amount")
        if amount is not None and not (isinstance(amount, int) and amount > 0):
            self.checkout_error(422, ["amount_invalid"])
            return
        with self.state.lock:
            if not payment["approved"] or payment["voided"]:
                refused = "operation_not_allowed"
            elif kind == "capture" and payment["captured"] > 0:
                refused = "operation_not_allowed"
            elif kind == "void" and payment["captured"] > 0:
                refused = "operation_not_allowed"
            elif kind == "refund" and payment["captured"] == 0:
                refused = "operation_not_allowed"
            else:
                refused = None
            value = amount if amount is not None else (
                payment["amount"] if kind == "capture" else payment["captured"] - payment["refunded"])
            if refused is None and kind == "capture" and value > payment["amount"]:
                refused = "capture_value_greater_than_authorized"
            if refused is None and kind == "refund" and payment["refunded"] + value > payment["captured"]:
                refused = "refund_amount_exceeds_balance"
        if refused == "operation_not_allowed":
            self.checkout_error(403, [], "operation_not_allowed")
            return
        if refused:
            self.checkout_error(422, [refused])
            return
        answer = self.state.next_answer(kind)
        success = answer.get("success", True)
        action_id = "act_" + random_id(string.ascii_lowercase + string.digits, 26)
        code = "10000" if success else answer.get("response_code", "20006")
        with self.state.lock:
            if success:
                if kind == "capture":
                    payment["captured"] = value
                    payment["status"] = "Captured"
                elif kind == "void":
                    payment["voided"] = True
                    payment["status"] = "Voided"
                else:
                    payment["refunded"] += value
                    payment["status"] = "Refunded" if payment["refunded"] >= payment["captured"] else "Partially Refunded"
            payment["actions"].append({"id": action_id, "type": {"capture": "Capture", "void": "Void",
                                                                  "refund": "Refund"}[kind],
                                       "approved": success, "amount": value, "response_code": code,
                                       "reference": request.get("reference")})
        event = {"capture": ("payment_captured", "payment_capture_declined"),
                 "void": ("payment_voided", "payment_void_declined"),
                 "refund": ("payment_refunded", "payment_refund_declined")}[kind][0 if success else 1]
        self.queue(self.checkout_event(event, payment, action_id, request.get("reference"), value, code))
        response = {"action_id": action_id, "reference": request.get("reference"),
                    "_links": {"payment": {"href": "/payments/" + payment_id}}}
        if answer.get("fail") != "500":
            self.store(key, body, 202, {}, response)
        self.send(202, response, {}, answer)

    def checkout_read(self, parts, query):
        params = dict(item.split("=", 1) for item in query.split("&") if "=" in item)
        with self.state.lock:
            payments = list(self.state.payments.values())
        if parts == ["payments"]:
            if "reference" not in params:
                self.checkout_error(422, ["reference_required"])
                return
            found = [self.payment_object(p) for p in payments if p["reference"] == params["reference"]]
            limit = int(params.get("limit", "10"))
            self.send(200, {"limit": limit, "skip": 0, "total_count": len(found), "data": found[:limit]})
        elif len(parts) == 2 and parts[0] == "payments":
            match = [p for p in payments if p["id"] == parts[1]]
            if match:
                self.send(200, self.payment_object(match[0]))
            else:
                self.send(404, None)
        elif len(parts) == 3 and parts[0] == "payments" and parts[2] == "actions":
            match = [p for p in payments if p["id"] == parts[1]]
            if match:
                self.send(200, match[0]["actions"])
            else:
                self.send(404, None)
        else:
            self.send(404, None)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    parser = argparse.ArgumentParser(description="A stand-in for Adyen's or Checkout.com's payments API.")
    parser.add_argument("--api", choices=["adyen", "checkout_com"], required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    arguments = parser.parse_args()
    server = Server((arguments.host, arguments.port), Handler)
    server.state = StandIn(arguments.api)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print(server.server_address[1], flush=True)
    try:
        server.serve_forever()
    except (KeyboardInterrupt, SystemExit):
        pass


if __name__ == "__main__":
    main()
