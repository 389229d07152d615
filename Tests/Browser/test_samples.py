"""The complete sample of docs/ios.md and docs/web.md, run as a merchant runs it: a real `orchard serve`, the
merchant backend sample (Examples/merchant-backend/backend.py) holding the secret key and receiving the signed
webhooks, the app-side Swift package (Examples/OrchardPayCheckout, its `checkout-sample` on the simulated sheet)
paying through both flows, and the curl walk-through (Examples/merchant-backend/curl.sh).

scripts/test.sh builds the Swift package before the browser tests; without its binary these tests skip
(locally) or fail (CI=true).
"""

import json
import os
import pathlib
import subprocess
import sys
import time

import pytest

from conftest import http_json, missing

ROOT = pathlib.Path(__file__).resolve().parents[2]
BACKEND = ROOT / "Examples" / "merchant-backend" / "backend.py"
CURL_WALKTHROUGH = ROOT / "Examples" / "merchant-backend" / "curl.sh"
CHECKOUT_SAMPLE = ROOT / "Examples" / "OrchardPayCheckout" / ".build" / "debug" / "checkout-sample"


@pytest.fixture
def merchant_backend(orchard_server):
    """A gateway and the backend sample beside it, with the merchant's webhook endpoint pointed at the backend."""
    gateway = orchard_server()
    secret_key = gateway.secret_key
    process = subprocess.Popen(
        [sys.executable, str(BACKEND), "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env=dict(os.environ, ORCHARD_GATEWAY=gateway.url, ORCHARD_SECRET_KEY=secret_key))
    try:
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), url
        status, endpoint, _ = http_json("PUT", gateway.url + "/v1/webhook-endpoint", {"url": url + "/webhooks"},
                                        {"Authorization": "Bearer " + secret_key})
        assert status == 200, endpoint
        process.terminate()
        process.wait(timeout=10)
        # Restarted with the signing secret the gateway answered, as a merchant configures it.
        process = subprocess.Popen(
            [sys.executable, str(BACKEND), "--port", url.rsplit(":", 1)[1]], stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True,
            env=dict(os.environ, ORCHARD_GATEWAY=gateway.url, ORCHARD_SECRET_KEY=secret_key,
                     ORCHARD_WEBHOOK_SECRET=endpoint["secret"]))
        assert process.stdout.readline().strip() == url
        yield gateway, url
    finally:
        process.terminate()
        process.wait(timeout=10)


def objects_of_events(backend, expected, timeout=30):
    """The objects of the events the backend verified, once it has one for each of `expected` (or at the timeout)."""
    deadline = time.monotonic() + timeout
    while True:
        objects = {event["object"] for event in http_json("GET", backend + "/events")[1]["events"]}
        if expected <= objects or time.monotonic() > deadline:
            return objects
        time.sleep(0.2)


def test_the_backend_sample_refuses_bad_orders_and_forged_webhooks(merchant_backend):
    gateway, backend = merchant_backend
    status, body, _ = http_json("POST", backend + "/orders/pay", {"prime": "pr_x", "amount": "10.00"})
    assert (status, body) == (400, {"error": "currency is required"})
    # A prime the gateway does not know: the gateway's code reaches the app, nothing is paid.
    status, body, _ = http_json("POST", backend + "/orders/pay", {
        "prime": "pr_unknown", "amount": "10.00", "currency": "TWD", "order_number": "o-1"})
    assert status == 502 and body["paid"] is False and body["code"], body
    forged = json.dumps({"id": "evt_forged", "type": "payment.captured", "data": {"id": "pay_x"}}).encode()
    status, body, _ = http_json("POST", backend + "/webhooks", json.loads(forged),
                                {"Orchard-Signature": "t=%d,v1=%s" % (int(time.time()), "0" * 64)})
    assert (status, body) == (400, {"error": "bad signature"})
    assert http_json("GET", backend + "/events")[1] == {"events": []}


def test_the_app_package_pays_both_flows_through_the_backend_sample(merchant_backend):
    if not CHECKOUT_SAMPLE.is_file():
        missing(f"no {CHECKOUT_SAMPLE}: run `swift build --package-path Examples/OrchardPayCheckout` first")
    gateway, backend = merchant_backend
    run = subprocess.run(
        [str(CHECKOUT_SAMPLE), "--gateway", gateway.url, "--backend", backend, "--app-id", gateway.app_id,
         "--app-key", gateway.app_key, "--merchant-identifier", gateway.merchant["merchant_identifier"]],
        capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    prime, session = [json.loads(line) for line in run.stdout.splitlines()]
    # 480.00 of tea, air mail to Japan 400.00, the coupon -48.00, the debit discount -1.00.
    assert prime["flow"] == "prime" and prime["succeeded"] and prime["code"] is None, prime
    assert prime["amount"] == "831" and prime["payment_id"].startswith("pay_"), prime
    assert session["flow"] == "session" and session["succeeded"] and session["amount"] == "250", session
    payment = http_json("GET", gateway.url + "/v1/payments/" + prime["payment_id"], None,
                        {"Authorization": "Bearer " + gateway.secret_key})[1]
    assert payment["amount"] == "831.00" and payment["currency"] == "TWD", payment
    # The backend verified the gateway's signed events for both payments.
    paid = {prime["payment_id"], session["payment_id"]}
    objects = objects_of_events(backend, paid)
    assert paid <= objects, objects


def test_the_curl_walkthrough_pays_refunds_and_opens_a_session(merchant_backend):
    gateway, _ = merchant_backend
    run = subprocess.run(
        ["bash", str(CURL_WALKTHROUGH)], capture_output=True, text=True, timeout=120,
        env=dict(os.environ, ORCHARD_GATEWAY=gateway.url, ORCHARD_SECRET_KEY=gateway.secret_key,
                 ORCHARD_APP_ID=gateway.app_id, ORCHARD_APP_KEY=gateway.app_key))
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith("paid: pay_") and lines[0].endswith(" captured"), lines
    assert lines[1] == "refunded: 80.00" and lines[2].startswith("session: "), lines
    payment_id = lines[0].split()[1]
    payment = http_json("GET", gateway.url + "/v1/payments/" + payment_id, None,
                        {"Authorization": "Bearer " + gateway.secret_key})[1]
    assert payment["amount"] == "480.00" and payment["refunded_amount"] == "80.00", payment
