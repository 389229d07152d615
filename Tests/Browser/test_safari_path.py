"""The ApplePaySession path (Safari), with a scripted ApplePaySession injected before orchard.js loads and
merchant validation through the gateway against the mutual-TLS stand-in for Apple."""

from conftest import SHOP_HOST, http_json, wait_for
from selenium.webdriver.common.by import By

# A scripted ApplePaySession: begin() validates the merchant with `window.__validationURL`; once validated it
# chooses the `express` shipping method; once the total is updated it authorizes with `window.__mintedToken`.
STAND_IN = """
(function () {
  var log = window.__applePay = { calls: [], session: null };
  function Session(version, request) {
    this.version = version;
    this.request = request;
    log.session = this;
    log.calls.push(['new', version]);
  }
  Session.STATUS_SUCCESS = 0;
  Session.STATUS_FAILURE = 1;
  Session.supportsVersion = function (v) { return v <= 14; };
  Session.canMakePayments = function () { return true; };
  Session.canMakePaymentsWithActiveCard = function () { return Promise.resolve(true); };
  Session.prototype.begin = function () {
    var self = this;
    log.calls.push(['begin']);
    setTimeout(function () { self.onvalidatemerchant({ validationURL: window.__validationURL }); }, 0);
  };
  Session.prototype.abort = function () { log.calls.push(['abort']); };
  Session.prototype.completeMerchantValidation = function (session) {
    var self = this;
    log.calls.push(['completeMerchantValidation', session]);
    setTimeout(function () {
      self.onshippingmethodselected({ shippingMethod: { identifier: 'express', label: 'Express' } });
    }, 0);
  };
  Session.prototype.completeShippingMethodSelection = function (update) {
    var self = this;
    log.calls.push(['completeShippingMethodSelection', update]);
    var wait = setInterval(function () {
      if (!window.__mintedToken) return;
      clearInterval(wait);
      self.onpaymentauthorized({ payment: { token: window.__mintedToken,
        shippingContact: { givenName: 'Mei', familyName: 'Lin', emailAddress: 'mei@example.com',
          phoneNumber: '0912345678', addressLines: ['No. 7 Xinyi Road'], locality: 'Taipei', countryCode: 'TW' } } });
    }, 20);
  };
  Session.prototype.completePayment = function (status) { log.calls.push(['completePayment', status]); };
  window.ApplePaySession = Session;
})();
"""

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>Safari shop</title></head>
<body>
<button id="buy" type="button">Buy with Apple Pay</button>
<script src="{gateway}/sdk/v1/orchard.js"></script>
<script>
  Orchard.setupSDK('{app_id}', '{app_key}', 'sandbox');
  Orchard.paymentRequestApi.setupApplePay({{ merchantIdentifier: '{merchant_identifier}', countryCode: 'TW' }});
  window.outcome = null;
  window.setupResult = null;
  Orchard.paymentRequestApi.setupPaymentRequest({{
    supportedNetworks: ['VISA', 'MASTERCARD'], supportedMethods: ['apple_pay'],
    displayItems: [{{ label: 'Oolong', amount: {{ currency: 'TWD', value: '480.00' }} }},
                   {{ label: 'Black tea', amount: {{ currency: 'TWD', value: '320.00' }} }}],
    total: {{ label: 'Orchard Tea', amount: {{ currency: 'TWD', value: '800.00' }} }},
    shippingOptions: [
      {{ id: 'standard', label: 'Standard', detail: '2 days', amount: {{ currency: 'TWD', value: '60.00' }} }},
      {{ id: 'express', label: 'Express', detail: 'Today', amount: {{ currency: 'TWD', value: '150.00' }} }}],
    options: {{ requestPayerName: true, requestShipping: true }}
  }}).then(function (result) {{ window.setupResult = result; }});
  document.getElementById('buy').addEventListener('click', function () {{
    Orchard.paymentRequestApi.getPrime(function (result) {{ window.outcome = result; }});
  }});
</script>
</body></html>
"""


def prepare(orchard_server, apple_pay_standin, shop_origin):
    gateway = orchard_server(web_origins=[shop_origin.origin], extra_args=apple_pay_standin.gateway_args)
    secret = {"Authorization": "Bearer " + gateway.secret_key}
    status, csr, _ = http_json("POST", gateway.url + "/v1/merchant-identity/csr", {}, headers=secret)
    assert status == 200, csr
    certificate = apple_pay_standin.authority.sign(csr["csr_pem"])
    status, uploaded, _ = http_json(
        "POST", gateway.url + "/v1/merchant-identity/certificate", {"certificate": certificate}, headers=secret)
    assert status == 200, uploaded
    status, domains, _ = http_json("PUT", gateway.url + "/v1/apple-pay/domains", {"domains": [SHOP_HOST]},
                                   headers=secret)
    assert status == 200, domains
    url = shop_origin.page("/safari.html", PAGE.format(
        gateway=gateway.url, app_id=gateway.app_id, app_key=gateway.app_key,
        merchant_identifier=gateway.merchant["merchant_identifier"]))
    return gateway, url


def test_safari_path_validates_recomputes_and_authorizes(orchard_server, apple_pay_standin, shop_origin, driver,
                                                         screenshot):
    gateway, url = prepare(orchard_server, apple_pay_standin, shop_origin)
    driver.before_load(STAND_IN + f"window.__validationURL = {apple_pay_standin.validation_url!r};")
    driver.get(url)
    setup = wait_for(driver, lambda d: d.execute_script("return window.setupResult"), message="setupPaymentRequest")
    assert setup["status"] == 0, setup
    assert setup["browserSupportPaymentRequest"] is True and setup["canMakePaymentWithActiveCard"] is True
    driver.find_element(By.ID, "buy").click()
    # The session is created inside the click at the highest version supportsVersion grants.
    calls = wait_for(driver, lambda d: d.execute_script(
        "return window.__applePay.calls.some(function (c) { return c[0] === 'completeShippingMethodSelection'; })"
        " && window.__applePay.calls"), message="the shipping update")
    assert calls[0] == ["new", 14]
    request = driver.execute_script("return window.__applePay.session.request")
    assert request["total"] == {"label": "Orchard Tea", "amount": "860.00", "type": "final"}
    assert request["merchantCapabilities"] == ["supports3DS"]
    assert [m["identifier"] for m in request["shippingMethods"]] == ["standard", "express"]
    validated = [c for c in calls if c[0] == "completeMerchantValidation"][0][1]
    assert validated["domainName"] == SHOP_HOST
    assert validated["merchantIdentifier"] == gateway.merchant["merchant_identifier"]
    assert validated["displayName"] == "Orchard Tea"
    recorded = apple_pay_standin.recorded()
    assert recorded and recorded[-1] == validated  # Apple's body came back unchanged
    update = [c for c in calls if c[0] == "completeShippingMethodSelection"][0][1]
    assert update["newTotal"] == {"label": "Orchard Tea", "amount": "950.00", "type": "final"}
    assert [item["amount"] for item in update["newLineItems"]] == ["480.00", "320.00", "150.00"]
    # Authorization with a token minted for the recomputed total.
    status, minted, _ = http_json("POST", gateway.url + "/v1/sandbox/wallet/tokens",
                                  {"amount": update["newTotal"]["amount"], "currency": "TWD"},
                                  headers=gateway.client_headers())
    assert status == 200, minted
    driver.execute_script("window.__mintedToken = arguments[0];", minted["token"])
    outcome = wait_for(driver, lambda d: d.execute_script("return window.outcome"), message="the prime")
    assert outcome["status"] == 0, outcome
    assert outcome["prime"].startswith("prm_")
    assert outcome["total_amount"] == "950.00"
    assert outcome["shippingOption"] == "express"
    assert outcome["payer"]["name"] == "Mei Lin"
    assert outcome["shippingAddress"]["city"] == "Taipei"
    calls = driver.execute_script("return window.__applePay.calls")
    # STATUS_SUCCESS, after the prime came back (the version 3 form: a result with no field errors).
    assert calls[-1] == ["completePayment", {"status": 0, "errors": []}]
    screenshot("safari-path")
    status, payment, _ = http_json(
        "POST", gateway.url + "/v1/payments", {"prime": outcome["prime"], "amount": "950.00", "currency": "TWD"},
        headers={"Authorization": "Bearer " + gateway.secret_key})
    assert status == 200 and payment["status"] == "captured", payment


def test_validation_url_outside_the_allow_list_is_refused(orchard_server, apple_pay_standin, shop_origin, driver):
    gateway, url = prepare(orchard_server, apple_pay_standin, shop_origin)
    driver.before_load(STAND_IN + "window.__validationURL = 'https://apple-pay.evil.example/paymentservices/x';")
    driver.get(url)
    wait_for(driver, lambda d: d.execute_script("return window.setupResult"), message="setupPaymentRequest")
    driver.find_element(By.ID, "buy").click()
    outcome = wait_for(driver, lambda d: d.execute_script("return window.outcome"), message="the refusal")
    assert outcome["status"] != 0
    assert outcome["code"] == "merchant_validation_failed"
    assert outcome["reason"] == "validation_url_not_allowed"
    calls = driver.execute_script("return window.__applePay.calls")
    assert ["abort"] in calls
    assert not any(c[0] == "completeMerchantValidation" for c in calls)
    assert apple_pay_standin.recorded() == []
