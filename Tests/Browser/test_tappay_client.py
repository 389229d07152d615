"""TapPay's published Python client (`tappay` from PyPI, pinned in scripts/install-deps.sh) against a real
`orchard serve` over TLS: the client's code is unchanged; only its host (the loopback server) and the CA it
trusts (a test CA made for the run) differ. It pays Orchard primes minted by the sandbox wallet."""

import json
import time

import pytest

from conftest import http_json, missing

try:
    import tappay
except ImportError:  # pragma: no cover - reported by the fixture below
    tappay = None

CARDHOLDER = {"phone_number": "+886923456789", "name": "Wang Hsiao-ming", "email": "ming@example.com"}


@pytest.fixture
def gateway(orchard_server, test_ca, monkeypatch):
    if tappay is None:
        missing("the tappay package is not installed (scripts/install-deps.sh --test installs it)")
    assert tappay.__version__ == "0.7.3"
    server = orchard_server(tls=test_ca)
    # requests reads its CA bundle from the environment, ahead of a session's own setting.
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(test_ca.certificate))
    monkeypatch.setenv("CURL_CA_BUNDLE", str(test_ca.certificate))
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    return server


def client_for(server, merchant_id=None):
    """TapPay's client as a merchant's code makes it, pointed at the gateway: only `api_host` changes."""
    client = tappay.Client(True, server.secret_key, merchant_id or server.merchant["merchant_id"])
    client.api_host = f"127.0.0.1:{server.port}"
    return client


def prime(server, amount, card="visa_credit"):
    """A prime for `amount` TWD: a sandbox wallet token, tokenized with the app key as the SDKs do."""
    headers = server.client_headers()
    status, minted, _ = http_json(
        "POST", server.url + "/v1/sandbox/wallet/tokens",
        {"amount": f"{amount}.00", "currency": "TWD", "card": card}, headers, context=server.context)
    assert status == 200, minted
    status, tokenized, _ = http_json(
        "POST", server.url + "/v1/tokens", {"token": minted["token"]}, headers, context=server.context)
    assert status == 200, tokenized
    return tokenized["prime"]


def holder():
    return tappay.Models.CardHolderData(**CARDHOLDER)


def test_the_tappay_client_runs_unchanged_against_orchard(gateway):
    status, settings, _ = http_json(
        "PUT", gateway.url + "/v1/compat/tappay", {"merchant_alias": "GlobalTesting_CTBC"},
        {"Authorization": "Bearer " + gateway.secret_key}, context=gateway.context)
    assert status == 200, settings
    shown = gateway.cli("merchant", "show", "--json", "--database", gateway.database)
    assert json.loads(shown.stdout)["tappay_merchant_alias"] == "GlobalTesting_CTBC", shown.stderr

    client = client_for(gateway, "GlobalTesting_CTBC")
    paid = client.pay_by_prime(prime(gateway, 100), 100, "A cup of tea", holder(),
                               order_number="ORD-1", bank_transaction_id="BT-1")
    assert paid["status"] == 0, paid
    assert paid["msg"] == "Success"
    assert paid["amount"] == 100 and paid["currency"] == "TWD"
    assert paid["card_info"]["type"] == 1 and paid["card_info"]["funding"] == 0
    assert isinstance(paid["bank_transaction_time"]["start_time_millis"], str)
    rec_trade_id = paid["rec_trade_id"]

    # The same payment through Orchard's own API.
    status, payment, _ = http_json(
        "GET", gateway.url + "/v1/payments/" + rec_trade_id, None,
        {"Authorization": "Bearer " + gateway.secret_key}, context=gateway.context)
    assert status == 200 and payment["amount"] == "100.00" and payment["status"] == "captured"

    refunded = client.refund(rec_trade_id, 40)
    assert refunded["status"] == 0, refunded
    assert refunded["refund_amount"] == 40

    history = client.get_trade_history(rec_trade_id)
    assert history["status"] == 0, history
    assert [step["action"] for step in history["trade_history"]] == [0, 1, 3]

    now = int(time.time() * 1000)
    records = client.get_records({"time": {"start_time": now - 3_600_000, "end_time": now + 60_000},
                                  "bank_transaction_id": "BT-1"})
    assert records["status"] == 0, records
    assert [r["rec_trade_id"] for r in records["trade_records"]] == [rec_trade_id]
    assert records["trade_records"][0]["record_status"] == 2
    end = client.get_records({}, page=5)
    assert end["status"] == 2

    held = client.pay_by_prime(prime(gateway, 30), 30, "Held for capture", holder(), delay_capture_in_days=2)
    assert held["status"] == 0, held
    cancelled = client.cancel_capture(held["rec_trade_id"])
    assert cancelled["status"] == 0, cancelled
    captured = client.capture_today(held["rec_trade_id"])
    assert captured["status"] == 0, captured
    assert isinstance(captured["cap_millis"], int)


def test_a_declined_card_and_a_reused_prime_answer_tappay_codes(gateway):
    client = client_for(gateway)
    declined = client.pay_by_prime(prime(gateway, 10, card="declined"), 10, "Declined", holder())
    assert declined["status"] == 10003, declined
    assert declined["orchard_code"] == "card_declined"
    assert declined["bank_result_code"] == "do_not_honor"

    used = prime(gateway, 20)
    first = client.pay_by_prime(used, 20, "Once", holder())
    assert first["status"] == 0, first
    again = client.pay_by_prime(used, 20, "Twice", holder())
    assert again["status"] == 121, again
    assert again["orchard_code"] == "prime_already_used"

    strict = tappay.Client(True, gateway.secret_key, gateway.merchant["merchant_id"], raise_on_error=True)
    strict.api_host = f"127.0.0.1:{gateway.port}"
    with pytest.raises(tappay.TapPayError) as raised:
        strict.pay_by_prime(used, 20, "Thrice", holder())
    assert raised.value.status == 121


def test_a_wrong_partner_key_answers_as_tappay_does(gateway):
    client = tappay.Client(True, "sk_test_" + "a" * 44, gateway.merchant["merchant_id"])
    client.api_host = f"127.0.0.1:{gateway.port}"
    answer = client.capture_today("pay_unknown")
    assert answer["status"] == 81, answer
    assert answer["msg"] == "Partner not found"
