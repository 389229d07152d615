"""A page written from TapPay's Web SDK documentation (seed 000, "Apple Pay on the Web"), against a real `orchard
serve`: its TPDirect.setupSDK with TapPay's numeric app id, paymentRequestApi.checkAvailability, setupApplePay,
the paymentRequest object, setupPaymentRequest with its callback and getPrime, in the document's order and as it
writes them. Only the script URL differs; APP_ID and APP_KEY, the document's placeholders, are the merchant's
credentials. The prime is then paid the way the merchant's backend does it: POST /tpc/payment/pay-by-prime with
TapPay's body and headers."""

import json
import re

from conftest import http_json, wait_for
from selenium.webdriver.common.by import By

# TapPay's numeric app id for the merchant, set with PUT /v1/compat/tappay.
APP_ID = 12345

# S000 788-791 (the setupSDK form with commas), 803-812, 814-829, 831-916, 920-951 and 1030-1045, typed in as the
# seed writes them. Its first setupSDK form (S000 773) has no commas between its arguments, so it is not
# JavaScript; the working form below is the seed's own.
SEED_PAGE = """<!doctype html>
<html>
<head>
<meta charset="utf-8">
<title>TapPay Apple Pay on the Web</title>
<script src="https://js.tappaysdk.com/tpdirect/v5.13.1"></script>
<script>
    TPDirect.setupSDK(APP_ID, 'APP_KEY', 'sandbox')
</script>
</head>
<body>
<script>
/**
    使用 TPDirect.paymentRequestApi.checkAvailability() 可以檢查使用者的瀏覽器
    是否可以使用 Payment Request API
    若回傳 true: 代表支援
    若回傳 false: 代表不支援
*/

TPDirect.paymentRequestApi.checkAvailability()

/**
    使用 TPDirect.paymentRequestApi.setupApplePay 設定 Apple Pay 相關參數
*/

TPDirect.paymentRequestApi.setupApplePay({
    merchantIdentifier: 'merchant.tech.cherri',
    countryCode: 'TW',
})

var paymentRequest = {
    supportedNetworks: ['AMEX', 'JCB', 'MASTERCARD', 'VISA'],
    supportedMethods: ['apple_pay'],

    displayItems: [{
        label: 'TapPay - iPhone8',
        amount: {
            currency: 'TWD',
            value: '1.00'
        }
    }],
    total: {
        label: '付給 TapPay',
        amount: {
            currency: 'TWD',
            value: '1.00'
        }
    },
    shippingOptions: [{
            id: "standard",
            label: "🚛 Ground Shipping (2 days)",
            detail: 'Estimated delivery time: 2 days',
            amount: {
                currency: "TWD",
                value: "5.00"
            }
        },
        {
            id: "drone",
            label: "🚀 Drone Express (2 hours)",
            detail: 'Estimated delivery time: 2 hours',
            amount: {
                currency: "TWD",
                value: "25.00"
            }
        },
    ],
    options: {
        requestPayerEmail: false,
        requestPayerName: false,
        requestPayerPhone: false,
        requestShipping: false,
        shippingType: 'shipping'
    }
}

/**
    使用 TPDirect.paymentRequestApi.setupPaymentRequest 設定 payment request 物件
    並在 callback function 回傳物件關於使用者的瀏覽器是否可以使用 Payment Request API 以及是否有卡片進行付款
*/

TPDirect.paymentRequestApi.setupPaymentRequest(paymentRequest, function (result) {
    if (!result.browserSupportPaymentRequest) {
        console.log('瀏覽器不支援 PaymentRequest')
        return
    }
    if (result.canMakePaymentWithActiveCard === true) {
        console.log('該裝置有支援的卡片可以付款')
    } else {
        console.log('該裝置沒有支援的卡片可以付款')
    }
})

/**
    使用 TPDirect.paymentRequestApi.getPrime 向 TapPay 取得付款用的 prime
*/

TPDirect.paymentRequestApi.getPrime(function(result) {
    console.log('paymentRequestApi.getPrime result', result)
    if (result.status !== 0) {
        console.error('getPrime failed: ' + result.msg)
        return
    }
    var prime = result.prime
})
</script>
</body>
</html>
"""

# The test's own instrument, run before the page's scripts: it keeps what the page logs (the page is unchanged).
RECORD_CONSOLE = """
window.__logged = [];
['log', 'error'].forEach(function (level) {
  var original = console[level];
  console[level] = function () {
    window.__logged.push({ level: level, args: Array.prototype.slice.call(arguments) });
    return original.apply(console, arguments);
  };
});
"""

# Every field of TapPay's getPrime result (seed S000 1050-1112, and @types/tpdirect), with its names and casing.
RESULT_FIELDS = {"prime", "total_amount", "status", "msg", "client_ip", "payer", "shippingAddress", "shippingOption",
                 "billingAddress", "methodName", "requestId", "card", "card_info", "merchant_reference_info",
                 "prime_expiry_millis"}
ADDRESS_FIELDS = {"country", "addressLine", "region", "city", "dependentLocality", "postalCode", "sortingCode",
                  "languageCode", "organization", "recipient", "phone"}
CARD_INFO_FIELDS = {"bincode", "lastfour", "issuer", "issuer_zh_tw", "bank_id", "funding", "type", "level", "country",
                    "countrycode"}


def seed_page(gateway):
    """The seed's page for this gateway: its script URL, and the merchant's numeric app id and app key."""
    page = SEED_PAGE.replace("https://js.tappaysdk.com/tpdirect/v5.13.1", gateway.url + "/sdk/v1/orchard.js")
    return page.replace("APP_ID", str(APP_ID)).replace("'APP_KEY'", "'" + gateway.app_key + "'")


def server_call(gateway, method, path, body=None):
    return http_json(method, gateway.url + path, body, {"Authorization": "Bearer " + gateway.secret_key})


def test_the_seed_page_gets_a_prime_that_pay_by_prime_pays(orchard_server, second_origin, driver):
    gateway = orchard_server(web_origins=[second_origin.origin])
    status, settings, _ = server_call(
        gateway, "PUT", "/v1/compat/tappay", {"merchant_alias": "GlobalTesting_CTBC", "app_id": APP_ID})
    assert status == 200 and settings["app_id"] == APP_ID, settings
    page = seed_page(gateway)
    # Nothing else of the seed's text changed.
    assert page.replace(gateway.url + "/sdk/v1/orchard.js", "https://js.tappaysdk.com/tpdirect/v5.13.1") \
        .replace(str(APP_ID), "APP_ID").replace(gateway.app_key, "APP_KEY") == SEED_PAGE

    driver.before_load(RECORD_CONSOLE)
    driver.get(second_origin.page("/tappay.html", page))
    assert driver.execute_script("return window.TPDirect === window.Orchard && !!TPDirect.paymentRequestApi")
    # setupPaymentRequest's callback, then getPrime's sheet (the sandbox wallet in Chromium).
    wait_for(driver, lambda d: d.execute_script(
        "return window.__logged.some(function (e) { return e.args[0] === '該裝置有支援的卡片可以付款' })"),
        message="setupPaymentRequest's callback")
    sheet = wait_for(driver, lambda d: d.find_element(By.CSS_SELECTOR, "dialog[data-orchard-sheet]"))
    # The first shipping option is chosen: the item and the ground shipping, TapPay's total_amount.
    assert sheet.find_element(By.CSS_SELECTOR, "[data-orchard-total]").text == "TWD 6.00"
    sheet.find_element(By.CSS_SELECTOR, "select[data-orchard-card] option[value='jcb']").click()
    sheet.find_element(By.CSS_SELECTOR, "[data-orchard-action='pay']").click()
    logged = wait_for(driver, lambda d: d.execute_script(
        "return window.__logged.filter(function (e) { return e.args[0] === 'paymentRequestApi.getPrime result' })"
        ".map(function (e) { return e.args[1] })[0]"), message="getPrime's result")
    errors = driver.execute_script("return window.__logged.filter(function (e) { return e.level === 'error' })")
    assert errors == [], errors

    result = logged
    assert set(result) >= RESULT_FIELDS, sorted(RESULT_FIELDS - set(result))
    assert result["status"] == 0 and result["msg"] == "Success", result
    assert result["prime"].startswith("prm_")
    assert result["total_amount"] == "6.00"
    assert result["client_ip"] == "127.0.0.1"
    assert set(result["payer"]) == {"name", "phone", "email"}
    assert set(result["shippingAddress"]) == ADDRESS_FIELDS and set(result["billingAddress"]) == ADDRESS_FIELDS
    assert result["shippingOption"] == "standard"
    assert result["methodName"] == "apple_pay"
    assert result["requestId"].startswith("req_")
    assert result["card"] == {"lastfour": "0017", "funding": 0, "type": 3}
    info = result["card_info"]
    assert set(info) == CARD_INFO_FIELDS, info
    assert info["bincode"] == "356999" and info["lastfour"] == "0017" and info["countrycode"] == "TW"
    assert result["merchant_reference_info"] == {"affiliate_codes": []}
    assert result["prime_expiry_millis"] > 0
    # Never the card number or the cryptogram: no run of digits longer than a BIN outside the random prime and
    # request id (a 48-digit hex prime holds a run of 12 decimal digits about one time in ten) and the expiry.
    text = json.dumps(result)
    assert "3569990000000017" not in text
    scanned = text
    for value in (result["prime"], result["requestId"], str(result["prime_expiry_millis"])):
        scanned = scanned.replace(value, "")
    assert not re.search(r"\d{12,}", scanned), text
    assert "cryptogram" not in text.lower() and "paymentData" not in text

    # The merchant's backend: TapPay's Pay by Prime, its body shape and headers, amount in whole TWD.
    body = {
        "prime": result["prime"], "partner_key": gateway.secret_key, "merchant_id": "GlobalTesting_CTBC",
        "amount": 6, "currency": "TWD", "details": "TapPay - iPhone8",
        "cardholder": {"phone_number": "+886923456789", "name": "王小明", "email": "LittleMing@Wang.com",
                       "zip_code": "100", "address": "台北市天龍區芝麻街1號1樓", "national_id": "A123456789"},
        "order_number": "SEED-1", "bank_transaction_id": "SEED-BT-1", "remember": False,
    }
    status, paid, _ = http_json("POST", gateway.url + "/tpc/payment/pay-by-prime", body,
                                {"x-api-key": gateway.secret_key})
    assert status == 200, paid
    assert paid["status"] == 0 and paid["msg"] == "Success", paid
    assert paid["amount"] == 6 and paid["currency"] == "TWD"
    assert paid["card_info"]["bin_code"] == info["bincode"] and paid["card_info"]["last_four"] == info["lastfour"]
    assert paid["order_number"] == "SEED-1" and paid["bank_transaction_id"] == "SEED-BT-1"
    # The same payment through Orchard's own API.
    status, payment, _ = server_call(gateway, "GET", "/v1/payments/" + paid["rec_trade_id"])
    assert status == 200 and payment["amount"] == "6.00" and payment["status"] == "captured", payment
    # The prime is used once.
    body["bank_transaction_id"] = "SEED-BT-2"
    status, again, _ = http_json("POST", gateway.url + "/tpc/payment/pay-by-prime", body,
                                 {"x-api-key": gateway.secret_key})
    assert status == 200 and again["status"] != 0, again


def test_numeric_app_id_must_be_the_merchants(orchard_server, second_origin, driver):
    gateway = orchard_server(web_origins=[second_origin.origin])
    # No numeric app id set: the page's APP_ID names no merchant.
    driver.before_load(RECORD_CONSOLE)
    driver.get(second_origin.page("/tappay.html", seed_page(gateway)))
    logged = wait_for(driver, lambda d: d.execute_script(
        "return window.__logged.filter(function (e) { return e.args[0] === 'paymentRequestApi.getPrime result' })"
        ".map(function (e) { return e.args[1] })[0]"), message="getPrime's result")
    assert logged["status"] != 0 and logged["code"] == "invalid_credentials", logged
    assert driver.execute_script("return window.__logged.some(function (e) { return e.level === 'error' })")
    assert not driver.find_elements(By.CSS_SELECTOR, "dialog[data-orchard-sheet]")


def test_a_page_that_has_a_tpdirect_keeps_it(orchard_server, second_origin, driver):
    gateway = orchard_server(web_origins=[second_origin.origin])
    page = ("<!doctype html><html><head><script>window.TPDirect = { mine: true };</script>"
            f"<script src=\"{gateway.url}/sdk/v1/orchard.js\"></script></head><body></body></html>")
    driver.get(second_origin.page("/own.html", page))
    assert driver.execute_script("return window.TPDirect.mine === true && window.TPDirect !== window.Orchard")
    assert driver.execute_script("return typeof window.Orchard.paymentRequestApi.getPrime") == "function"
    # A numeric app id that is not a positive integer is refused where it is given.
    refused = driver.execute_script(
        "try { Orchard.setupSDK(1.5, 'k', 'sandbox'); return null } catch (e) { return e.message }")
    assert refused and "positive integer" in refused
