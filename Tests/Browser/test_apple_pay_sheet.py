"""Every Apple Pay sheet feature of orchard.js on the ApplePaySession path, driven through a stand-in for Safari's
ApplePaySession (and ApplePayError) installed before orchard.js loads: it records what the SDK calls and the test
fires the sheet's events. Merchant validation goes through the gateway to the mutual-TLS stand-in for Apple."""

import json

from conftest import http_json, wait_for
from selenium.webdriver.common.by import By

# A stand-in for Safari's Apple Pay JS: ApplePaySession records every call; ApplePayError records each instance and,
# as Safari's, refuses an unknown code. `window.__applePay.capabilities` is what applePayCapabilities answers
# (`null`: the method is missing, as before Safari 17).
STAND_IN = """
(function () {
  var log = window.__applePay = { calls: [], errors: [], capabilityCalls: [], activeCardCalls: [], setupCalls: [],
    session: null, capabilities: 'paymentCredentialsAvailable' };
  var CODES = ['shippingContactInvalid', 'billingContactInvalid', 'addressUnserviceable', 'couponCodeInvalid',
    'couponCodeExpired', 'unknown'];
  function ApplePayError(code, contactField, message) {
    if (CODES.indexOf(code) < 0) throw new TypeError('unknown ApplePayErrorCode ' + code);
    this.code = code;
    this.contactField = contactField;
    this.message = message;
    log.errors.push({ code: code, contactField: contactField === undefined ? null : contactField, message: message });
  }
  window.ApplePayError = ApplePayError;
  function record(name, update) {
    var errors = (update && update.errors) || [];
    log.calls.push({ name: name, update: JSON.parse(JSON.stringify(update === undefined ? null : update)),
      errorsAreApplePayErrors: errors.every(function (e) { return e instanceof ApplePayError; }) });
  }
  function Session(version, request) {
    this.version = version;
    this.request = request;
    log.session = this;
    record('new', { version: version });
  }
  Session.STATUS_SUCCESS = 0;
  Session.STATUS_FAILURE = 1;
  Session.supportsVersion = function (v) { return v <= 14; };
  Session.canMakePayments = function () { return true; };
  Session.canMakePaymentsWithActiveCard = function (id) { log.activeCardCalls.push(id); return Promise.resolve(true); };
  Session.openPaymentSetup = function (id) { log.setupCalls.push(id); return Promise.resolve(true); };
  Object.defineProperty(Session, 'applePayCapabilities', { configurable: true, get: function () {
    if (log.capabilities === null) return undefined;
    return function (id) {
      log.capabilityCalls.push(id);
      return Promise.resolve({ paymentCredentialStatus: log.capabilities });
    };
  } });
  ['begin', 'abort', 'completeMerchantValidation', 'completeShippingMethodSelection',
   'completeShippingContactSelection', 'completePaymentMethodSelection', 'completeCouponCodeChange',
   'completePayment'].forEach(function (name) {
    Session.prototype[name] = function (update) { record(name, update); };
  });
  window.ApplePaySession = Session;
})();
"""

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>Safari shop</title></head>
<body>
<div id="apple-pay"></div>
<script src="{gateway}/sdk/v1/orchard.js"></script>
<script>
  Orchard.setupSDK('{app_id}', '{app_key}', 'sandbox', {{ requestTimeoutMillis: {timeout} }});
  Orchard.paymentRequestApi.setupApplePay({{ merchantIdentifier: '{merchant_identifier}', countryCode: 'TW' }});
  window.outcome = null;
  window.setupResult = null;
  window.hookCalls = [];
  var hooks = {{
    shippingAddressChange: function (address) {{
      hookCalls.push(['shippingAddressChange', address.postalCode]);
      return address.postalCode === '000'
        ? {{ errors: [{{ code: 'shippingContactInvalid', contactField: 'postalCode', message: 'ZIP code is invalid' }}] }}
        : {{}};
    }},
    shippingOptionChange: function (option) {{
      hookCalls.push(['shippingOptionChange', option.id]);
      return option.id === 'express' ? {{ errors: [{{ code: 'addressUnserviceable', message: 'No express delivery here' }}] }} : {{}};
    }},
    paymentMethodChange: function (method) {{
      hookCalls.push(['paymentMethodChange', method.type]);
      return method.type === 'debit' ? {{ errors: [{{ code: 'bogus', message: 'Debit cards cost extra' }}] }} : {{}};
    }},
    couponCodeChange: function (coupon) {{
      hookCalls.push(['couponCodeChange', coupon.couponCode]);
      if (coupon.couponCode === 'OLD') return {{ errors: [{{ code: 'couponCodeExpired', message: 'This coupon has expired' }}] }};
      if (coupon.couponCode !== 'TEA10') return {{}};
      return {{ displayItems: [
        {{ label: 'Oolong', amount: {{ currency: 'TWD', value: '480.00' }} }},
        {{ label: 'Coupon TEA10', amount: {{ currency: 'TWD', value: '-48.00' }} }}] }};
    }},
    paymentAuthorized: function (payment) {{
      hookCalls.push(['paymentAuthorized', payment.payer.email]);
      if (!payment.payer.email) {{
        return {{ errors: [{{ code: 'shippingContactInvalid', contactField: 'emailAddress', message: 'Enter an email' }}] }};
      }}
      return {{ orderDetails: {{ orderTypeIdentifier: 'com.example.order', orderIdentifier: 'order-77',
        webServiceURL: 'https://shop.example/orders', authenticationToken: 'token-77' }} }};
    }}
  }};
  Orchard.paymentRequestApi.setupPaymentRequest({{
    supportedNetworks: ['VISA', 'MASTERCARD'], supportedMethods: ['apple_pay'],
    displayItems: [{{ label: 'Oolong', amount: {{ currency: 'TWD', value: '480.00' }} }}],
    total: {{ label: 'Orchard Tea', amount: {{ currency: 'TWD', value: '480.00' }} }},
    shippingOptions: [
      {{ id: 'standard', label: 'Standard', detail: '2 days', amount: {{ currency: 'TWD', value: '60.00' }} }},
      {{ id: 'express', label: 'Express', detail: 'Today', amount: {{ currency: 'TWD', value: '150.00' }} }}],
    couponCode: 'WELCOME',
    options: {{ requestPayerName: true, requestPayerEmail: true, requestShipping: true }}
  }}, function (result) {{ window.setupResult = result; }}, hooks);
  window.buy = function () {{
    Orchard.paymentRequestApi.getPrime(function (result) {{ window.outcome = result; }});
  }};
</script>
</body></html>
"""

SECRET = lambda server: {"Authorization": "Bearer " + server.secret_key}


def provision(gateway, apple_pay_standin, secret_key, domain="127.0.0.1"):
    """The merchant identity (signed by the stand-in's authority) and the page's domain, with `secret_key`."""
    headers = {"Authorization": "Bearer " + secret_key}
    status, csr, _ = http_json("POST", gateway.url + "/v1/merchant-identity/csr", {}, headers=headers)
    assert status == 200, csr
    certificate = apple_pay_standin.authority.sign(csr["csr_pem"])
    status, uploaded, _ = http_json("POST", gateway.url + "/v1/merchant-identity/certificate",
                                    {"certificate": certificate}, headers=headers)
    assert status == 200, uploaded
    status, domains, _ = http_json("PUT", gateway.url + "/v1/apple-pay/domains", {"domains": [domain]}, headers=headers)
    assert status == 200, domains


def open_page(driver, gateway, second_origin, app_id, app_key, merchant_identifier, timeout=25000, extra=""):
    url = second_origin.page("/sheet.html", PAGE.format(
        gateway=gateway.url, app_id=app_id, app_key=app_key, merchant_identifier=merchant_identifier,
        timeout=timeout))
    driver.before_load(STAND_IN + extra)
    driver.get(url)
    return wait_for(driver, lambda d: d.execute_script("return window.setupResult"), message="setupPaymentRequest")


def calls(driver, name):
    return [c for c in driver.execute_script("return window.__applePay.calls") if c["name"] == name]


def fire(driver, handler, event, then=None, count=1):
    """Fires `session[handler](event)` and waits for the `count`th call to `then`; returns that call."""
    driver.execute_script("window.__applePay.session[arguments[0]](arguments[1]);", handler, event)
    if then is None:
        return None
    return wait_for(driver, lambda d: len(calls(d, then)) >= count and calls(d, then)[count - 1],
                    message=f"{then} #{count}")


def test_capabilities_and_the_pages_merchant_identifier(orchard_server, apple_pay_standin, second_origin, driver):
    gateway = orchard_server(extra_args=apple_pay_standin.gateway_args)
    # A merchant with two identifiers; the page pays as the second one.
    created = gateway.cli("merchant", "create", "--environment", "sandbox", "--name", "Orchard Two Shops",
                          "--merchant-identifier", "merchant.test.orchard.shop",
                          "--merchant-identifier", "merchant.test.orchard.giftcards",
                          "--web-origins", second_origin.origin, "--database", gateway.database, "--json")
    assert created.returncode == 0, created.stderr
    merchant = json.loads(created.stdout)
    provision(gateway, apple_pay_standin, merchant["secret_key"])
    setup = open_page(driver, gateway, second_origin, merchant["app_id"], merchant["app_key"],
                      "merchant.test.orchard.giftcards")
    assert setup["status"] == 0, setup
    # applePayCapabilities is asked with the page's identifier, and canMakePaymentsWithActiveCard is not.
    assert driver.execute_script("return window.__applePay.capabilityCalls") == ["merchant.test.orchard.giftcards"]
    assert driver.execute_script("return window.__applePay.activeCardCalls") == []
    assert setup["paymentCredentialStatus"] == "paymentCredentialsAvailable"
    assert setup["canMakePaymentWithActiveCard"] is True and setup["canSetupApplePay"] is False
    driver.execute_script("window.buy();")
    wait_for(driver, lambda d: calls(d, "new"), message="the session")
    validated = fire(driver, "onvalidatemerchant", {"validationURL": apple_pay_standin.validation_url},
                     then="completeMerchantValidation")["update"]
    # Apple validated the identifier the page passed to setupApplePay, not the merchant's first.
    assert validated["merchantIdentifier"] == "merchant.test.orchard.giftcards"
    assert apple_pay_standin.recorded()[-1]["merchantIdentifier"] == "merchant.test.orchard.giftcards"
    # The request offers the coupon field (the page has a couponCodeChange hook) with the page's code.
    request = driver.execute_script("return window.__applePay.session.request")
    assert request["supportsCouponCode"] is True and request["couponCode"] == "WELCOME"
    fire(driver, "oncancel", {})
    outcome = wait_for(driver, lambda d: d.execute_script("return window.outcome"), message="the cancel")
    assert outcome["code"] == "user_cancelled"


def test_capabilities_unavailable_unsupported_and_missing(orchard_server, apple_pay_standin, second_origin, driver):
    gateway = orchard_server(web_origins=[second_origin.origin])
    identifier = gateway.merchant["merchant_identifier"]
    # No active card: Apple Pay is offered with "Set up Apple Pay" (openPaymentSetup), not as the way to pay.
    setup = open_page(driver, gateway, second_origin, gateway.app_id, gateway.app_key, identifier,
                      extra="window.__applePay.capabilities = 'paymentCredentialsUnavailable';")
    assert setup["status"] == 0, setup
    assert setup["paymentCredentialStatus"] == "paymentCredentialsUnavailable"
    assert setup["canMakePaymentWithActiveCard"] is False and setup["canSetupApplePay"] is True
    opened = driver.execute_async_script(
        "var done = arguments[arguments.length - 1]; Orchard.paymentRequestApi.openPaymentSetup(done);")
    assert opened == {"status": 0, "code": "", "msg": "Success", "opened": True}
    assert driver.execute_script("return window.__applePay.setupCalls") == [identifier]
    # Apple Pay unsupported on this device: the sandbox wallet takes over (sandbox credentials).
    setup = open_page(driver, gateway, second_origin, gateway.app_id, gateway.app_key, identifier,
                      extra="window.__applePay.capabilities = 'applePayUnsupported';")
    assert setup["status"] == 0 and setup["paymentCredentialStatus"] == "applePayUnsupported"
    assert driver.execute_script("return Orchard.paymentRequestApi.checkAvailability()") is True
    driver.execute_script("window.buy();")
    wait_for(driver, lambda d: d.find_element(By.CSS_SELECTOR, "dialog[data-orchard-sheet]"), message="the wallet")
    assert calls(driver, "new") == []
    # Without applePayCapabilities (Safari before 17): today's canMakePaymentsWithActiveCard.
    setup = open_page(driver, gateway, second_origin, gateway.app_id, gateway.app_key, identifier,
                      extra="window.__applePay.capabilities = null;")
    assert setup["status"] == 0 and "paymentCredentialStatus" not in setup
    assert driver.execute_script("return window.__applePay.activeCardCalls") == [identifier]
    assert setup["canMakePaymentWithActiveCard"] is True


def test_field_errors_coupons_and_order_details_reach_the_sheet(orchard_server, apple_pay_standin, second_origin,
                                                               driver, screenshot):
    gateway = orchard_server(web_origins=[second_origin.origin], extra_args=apple_pay_standin.gateway_args)
    provision(gateway, apple_pay_standin, gateway.secret_key)
    setup = open_page(driver, gateway, second_origin, gateway.app_id, gateway.app_key,
                      gateway.merchant["merchant_identifier"])
    assert setup["status"] == 0, setup
    driver.execute_script("window.buy();")
    wait_for(driver, lambda d: calls(d, "new"), message="the session")
    fire(driver, "onvalidatemerchant", {"validationURL": apple_pay_standin.validation_url},
         then="completeMerchantValidation")

    # A hook's {code, contactField, message} reaches Safari as ApplePayError objects.
    contact_update = fire(driver, "onshippingcontactselected",
                          {"shippingContact": {"postalCode": "000", "countryCode": "TW", "locality": "Taipei"}},
                          then="completeShippingContactSelection")
    assert contact_update["errorsAreApplePayErrors"] is True
    assert contact_update["update"]["errors"] == [
        {"code": "shippingContactInvalid", "contactField": "postalCode", "message": "ZIP code is invalid"}]
    # completeShippingMethodSelection carries the hook's errors too.
    method_update = fire(driver, "onshippingmethodselected",
                         {"shippingMethod": {"identifier": "express", "label": "Express"}},
                         then="completeShippingMethodSelection")
    assert method_update["errorsAreApplePayErrors"] is True
    assert [e["code"] for e in method_update["update"]["errors"]] == ["addressUnserviceable"]
    assert method_update["update"]["newTotal"]["amount"] == "630.00"
    # An unknown code from a hook becomes Safari's "unknown" instead of throwing.
    card_update = fire(driver, "onpaymentmethodselected", {"paymentMethod": {"type": "debit"}},
                       then="completePaymentMethodSelection")
    assert card_update["errorsAreApplePayErrors"] is True
    assert card_update["update"]["errors"] == [
        {"code": "unknown", "message": "Debit cards cost extra"}]
    fire(driver, "onpaymentmethodselected", {"paymentMethod": {"type": "credit"}},
         then="completePaymentMethodSelection", count=2)

    status, minted, _ = http_json("POST", gateway.url + "/v1/sandbox/wallet/tokens",
                                  {"amount": "630.00", "currency": "TWD"}, headers=gateway.client_headers())
    assert status == 200, minted
    payment = {"token": minted["token"], "shippingContact": {
        "givenName": "Mei", "familyName": "Lin", "emailAddress": "mei@example.com", "postalCode": "110",
        "locality": "Taipei", "countryCode": "TW", "addressLines": ["No. 7 Xinyi Road"]}}
    # The chosen shipping method and the contact are still refused: authorizing keeps the sheet open with their
    # errors, and nothing is tokenized.
    refused = fire(driver, "onpaymentauthorized", {"payment": payment}, then="completePayment")
    assert refused["update"]["status"] == 1 and refused["errorsAreApplePayErrors"] is True
    assert [e["code"] for e in refused["update"]["errors"]] == ["addressUnserviceable", "shippingContactInvalid"]

    fire(driver, "onshippingmethodselected", {"shippingMethod": {"identifier": "standard", "label": "Standard"}},
         then="completeShippingMethodSelection", count=2)
    fire(driver, "onshippingcontactselected",
         {"shippingContact": {"postalCode": "110", "countryCode": "TW", "locality": "Taipei"}},
         then="completeShippingContactSelection", count=2)
    # Coupons: an expired code shows its error; TEA10 takes 48.00 off.
    expired = fire(driver, "oncouponcodechanged", {"couponCode": "OLD"}, then="completeCouponCodeChange")
    assert expired["errorsAreApplePayErrors"] is True
    assert expired["update"]["errors"] == [
        {"code": "couponCodeExpired", "message": "This coupon has expired"}]
    applied = fire(driver, "oncouponcodechanged", {"couponCode": "TEA10"}, then="completeCouponCodeChange", count=2)
    assert applied["update"]["errors"] == []
    assert applied["update"]["newTotal"] == {"label": "Orchard Tea", "amount": "492.00", "type": "final"}
    assert [i["label"] for i in applied["update"]["newLineItems"]] == ["Oolong", "Coupon TEA10", "Standard"]
    assert [m["identifier"] for m in applied["update"]["newShippingMethods"]] == ["standard", "express"]

    # The merchant's paymentAuthorized hook refuses a payment without an email: the field error, no prime.
    without_email = dict(payment, shippingContact=dict(payment["shippingContact"], emailAddress=""))
    no_email = fire(driver, "onpaymentauthorized", {"payment": without_email}, then="completePayment", count=2)
    assert no_email["update"] == {"status": 1, "errors": [
        {"code": "shippingContactInvalid", "contactField": "emailAddress", "message": "Enter an email"}]}
    assert driver.execute_script("return window.outcome") is None

    status, minted, _ = http_json("POST", gateway.url + "/v1/sandbox/wallet/tokens",
                                  {"amount": "492.00", "currency": "TWD"}, headers=gateway.client_headers())
    assert status == 200, minted
    paid = fire(driver, "onpaymentauthorized", {"payment": dict(payment, token=minted["token"])},
                then="completePayment", count=3)
    # completePayment carries the order details, after the prime came back.
    assert paid["update"] == {"status": 0, "errors": [], "orderDetails": {
        "orderTypeIdentifier": "com.example.order", "orderIdentifier": "order-77",
        "webServiceURL": "https://shop.example/orders", "authenticationToken": "token-77"}}
    outcome = wait_for(driver, lambda d: d.execute_script("return window.outcome"), message="the prime")
    assert outcome["status"] == 0, outcome
    assert outcome["total_amount"] == "492.00"
    assert outcome["shippingOption"] == "standard"
    hooks = driver.execute_script("return window.hookCalls")
    assert ["couponCodeChange", "TEA10"] in hooks and ["paymentAuthorized", "mei@example.com"] in hooks
    screenshot("apple-pay-sheet-features")
    status, charged, _ = http_json("POST", gateway.url + "/v1/payments",
                                   {"prime": outcome["prime"], "amount": "492.00", "currency": "TWD"},
                                   headers=SECRET(gateway))
    assert status == 200 and charged["status"] == "captured", charged


# Holds every request to /v1/tokens until the SDK aborts it (a gateway that does not answer in time).
SLOW_TOKENS = """
(function () {
  var realFetch = window.fetch;
  window.__abortedTokenizes = 0;
  window.fetch = function (url, init) {
    if (String(url).indexOf('/v1/tokens') < 0) return realFetch.apply(this, arguments);
    return new Promise(function (resolve, reject) {
      if (init && init.signal) init.signal.addEventListener('abort', function () {
        window.__abortedTokenizes += 1;
        reject(new DOMException('aborted', 'AbortError'));
      });
    });
  };
})();
"""


def test_a_tokenize_call_past_the_timeout_fails_the_sheet_with_timeout(orchard_server, apple_pay_standin,
                                                                     second_origin, driver):
    gateway = orchard_server(web_origins=[second_origin.origin], extra_args=apple_pay_standin.gateway_args)
    provision(gateway, apple_pay_standin, gateway.secret_key)
    setup = open_page(driver, gateway, second_origin, gateway.app_id, gateway.app_key,
                      gateway.merchant["merchant_identifier"], timeout=700, extra=SLOW_TOKENS)
    assert setup["status"] == 0, setup
    driver.execute_script("window.buy();")
    wait_for(driver, lambda d: calls(d, "new"), message="the session")
    fire(driver, "onvalidatemerchant", {"validationURL": apple_pay_standin.validation_url},
         then="completeMerchantValidation")
    status, minted, _ = http_json("POST", gateway.url + "/v1/sandbox/wallet/tokens",
                                  {"amount": "540.00", "currency": "TWD"}, headers=gateway.client_headers())
    assert status == 200, minted
    failed = fire(driver, "onpaymentauthorized", {"payment": {"token": minted["token"], "shippingContact": {
        "emailAddress": "mei@example.com"}}}, then="completePayment")
    assert failed["update"] == {"status": 1, "errors": []}
    outcome = wait_for(driver, lambda d: d.execute_script("return window.outcome"), message="the timeout")
    assert outcome["code"] == "timeout" and outcome["status"] == 12
    assert "700 ms" in outcome["msg"]
    assert driver.execute_script("return window.__abortedTokenizes") == 1
    assert driver.execute_script("return Orchard.statusCodes.timeout") == 12
