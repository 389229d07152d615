"""A merchant's own page on another origin, loading orchard.js cross-origin from the gateway."""

import json

from conftest import http_json, wait_for
from selenium.webdriver.common.by import By

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>Merchant page</title></head>
<body>
<button id="buy" type="button">Buy</button>
<script src="{gateway}/sdk/v1/orchard.js"></script>
<script>
  Orchard.setupSDK('{app_id}', '{app_key}', 'sandbox', {{ wallet: 'sandbox' }});
  Orchard.paymentRequestApi.setupApplePay({{ merchantIdentifier: '{merchant_identifier}', countryCode: 'TW' }});
  window.outcome = null;
  document.getElementById('buy').addEventListener('click', function () {{
    Orchard.paymentRequestApi.getPrime().then(function (result) {{ window.outcome = result; }});
  }});
</script>
</body></html>
"""


def request_for(items, total):
    return {"supportedNetworks": ["VISA", "MASTERCARD"], "supportedMethods": ["apple_pay"],
            "displayItems": items, "total": total}


SHOWN = [{"label": "Room", "amount": {"currency": "TWD", "value": "100.00"}},
         {"label": "Breakfast", "amount": {"currency": "TWD", "value": "50.00"}}]
PENDING = [{"label": "Fare", "isAmountPending": True}, {"label": "Tolls", "isAmountPending": True}]
MIXED = [{"label": "Flag fall", "amount": {"currency": "TWD", "value": "100.00"}},
         {"label": "Per-mile fare", "isAmountPending": True}]


def total(value, pending, shown):
    entry = {"label": "Orchard", "isAmountPending": pending, "isShowTotalAmount": shown}
    entry["amount"] = {"currency": "TWD", "value": value} if value is not None else {"currency": "TWD"}
    return entry


# Every row of TapPay's deferred-payment table that does not initialise, with its code.
REFUSED_ROWS = [
    ("all shown, neither pending nor shown", SHOWN, total("150.00", False, False), "88013"),
    ("all pending, pending and shown", PENDING, total("0.00", True, True), "88014"),
    ("all pending, shown but not pending", PENDING, total("0.00", False, True), "88015"),
    ("all pending, neither", PENDING, total(None, False, False), "88013"),
    ("mixed, shown but not pending", MIXED, total("100.00", False, True), "88015"),
    ("mixed, neither", MIXED, total(None, False, False), "88013"),
    ("a shown total of 0", [], total("0.00", False, True), "88016"),
]


def merchant_page(gateway, second_origin):
    return second_origin.page("/shop.html", PAGE.format(
        gateway=gateway.url, app_id=gateway.app_id, app_key=gateway.app_key,
        merchant_identifier=gateway.merchant["merchant_identifier"]))


def setup_payment_request(driver, request):
    return driver.execute_async_script(
        "var done = arguments[arguments.length - 1];"
        "Orchard.paymentRequestApi.setupPaymentRequest(arguments[0], function (result) { done(result); });",
        request)


def test_listed_origin_gets_a_prime_cross_origin(orchard_server, second_origin, driver):
    gateway = orchard_server(web_origins=[second_origin.origin])
    driver.get(merchant_page(gateway, second_origin))
    result = setup_payment_request(driver, request_for(SHOWN, total("150.00", False, True)))
    assert result["status"] == 0, result
    assert result["browserSupportPaymentRequest"] is True
    assert result["canMakePaymentWithActiveCard"] is True
    assert result["errors"] == []
    driver.find_element(By.ID, "buy").click()
    sheet = wait_for(driver, lambda d: d.find_element(By.CSS_SELECTOR, "dialog[data-orchard-sheet]"))
    assert sheet.find_element(By.CSS_SELECTOR, "[data-orchard-total]").text == "TWD 150.00"
    sheet.find_element(By.CSS_SELECTOR, "select[data-orchard-card] option[value='jcb']").click()
    sheet.find_element(By.CSS_SELECTOR, "[data-orchard-action='pay']").click()
    outcome = wait_for(driver, lambda d: d.execute_script("return window.outcome"), message="the prime")
    assert outcome["status"] == 0, outcome
    assert outcome["prime"].startswith("prm_")
    assert outcome["total_amount"] == "150.00"
    assert outcome["methodName"] == "apple_pay"
    assert outcome["requestId"].startswith("req_")
    assert outcome["client_ip"] == "127.0.0.1"
    assert outcome["card"] == {"lastfour": "0017", "funding": 0, "type": 3}
    info = outcome["card_info"]
    assert info["bincode"] == "356999" and info["lastfour"] == "0017"
    assert info["issuer"] == "Sandbox Bank" and info["bank_id"] == "999" and info["level"] == "GOLD"
    assert info["issuer_zh_tw"] == "沙盒銀行"
    assert info["country"] == "TAIWAN" and info["countrycode"] == "TW"
    assert outcome["merchant_reference_info"] == {"affiliate_codes": []}
    assert outcome["prime_expiry_millis"] > 0
    # The merchant's server pays with the prime.
    status, payment, _ = http_json(
        "POST", gateway.url + "/v1/payments", {"prime": outcome["prime"], "amount": "150.00", "currency": "TWD"},
        headers={"Authorization": "Bearer " + gateway.secret_key})
    assert status == 200, payment
    assert payment["status"] == "captured"


def test_unlisted_origin_is_refused(orchard_server, second_origin, driver):
    gateway = orchard_server(web_origins=["https://some-other-shop.example"])
    driver.get(merchant_page(gateway, second_origin))
    result = setup_payment_request(driver, request_for(SHOWN, total("150.00", False, True)))
    # The browser hides the gateway's 403 from the page: the SDK sees a refused request.
    assert result["status"] != 0
    assert result["code"] == "network_error"
    assert result["canMakePaymentWithActiveCard"] is False
    log = [json.loads(line) for line in gateway.log_text().splitlines() if line.startswith("{")]
    assert any(entry.get("error_code") == "origin_not_allowed" and entry.get("status") == 403 for entry in log)
    outcome = driver.execute_async_script(
        "var done = arguments[arguments.length - 1]; Orchard.paymentRequestApi.getPrime(done);")
    assert outcome["code"] == "payment_request_not_setup"


def test_every_refusing_row_of_the_deferred_table(orchard_server, second_origin, driver):
    gateway = orchard_server(web_origins=[second_origin.origin])
    driver.get(merchant_page(gateway, second_origin))
    for name, items, request_total, code in REFUSED_ROWS:
        request = request_for(items, request_total)
        result = setup_payment_request(driver, request)
        assert result["status"] == int(code), (name, result)
        assert result["code"] == code, name
        printed = gateway.cli("request", "validate", "--format", "tappay-web", "--merchant-identifier",
                              gateway.merchant["merchant_identifier"], "--country-code", "TW", "-",
                              input_text=json.dumps(request))
        assert printed.returncode == 1, (name, printed.stderr)
        assert result["errors"] == json.loads(printed.stdout)["errors"], name
        outcome = driver.execute_async_script(
            "var done = arguments[arguments.length - 1]; Orchard.paymentRequestApi.getPrime(done);")
        assert outcome["code"] == "payment_request_not_setup", name
    # The valid deferred row initialises: a pending per-mile fare and a hidden total without a value.
    result = setup_payment_request(driver, request_for(MIXED, total(None, True, False)))
    assert result["status"] == 0, result
