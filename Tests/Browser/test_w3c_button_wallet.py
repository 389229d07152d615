"""orchard.js beyond ApplePaySession: the W3C Payment Request path (through a stand-in for the browser's
PaymentRequest that records what the SDK asks), Orchard.renderButton on each path and under a strict CSP, and the
sandbox wallet's coupon field and merchant checks."""

import json
import time

from conftest import http_json, wait_for
from selenium.webdriver.common.by import By
from test_apple_pay_sheet import STAND_IN, provision

# A stand-in for the browser's PaymentRequest with Apple Pay: it records the requests, and the test fires their
# events (`__w3cFire`) and answers show() (`__w3cRespond`), recording updateWith, complete and retry.
W3C_STAND_IN = """
(function () {
  var log = window.__w3c = { requests: [], updates: [], retries: [], completes: [], request: null };
  function PaymentRequest(methodData, details, options) {
    this.methodData = methodData;
    this.details = details;
    this.options = options || {};
    this.listeners = {};
    this.shippingOption = null;
    this.shippingAddress = null;
    log.requests.push({ methodData: methodData, details: details });
    if (details.total.label !== 'probe') log.request = this;
  }
  PaymentRequest.prototype.addEventListener = function (name, listener) { this.listeners[name] = listener; };
  PaymentRequest.prototype.canMakePayment = function () { return Promise.resolve(true); };
  PaymentRequest.prototype.show = function () {
    var self = this;
    return new Promise(function (resolve, reject) { self.resolveShow = resolve; self.rejectShow = reject; });
  };
  window.__w3cFire = function (name, props) {
    var request = log.request;
    var event = Object.assign({}, props || {});
    event.updateWith = function (promise) {
      Promise.resolve(promise).then(function (details) {
        log.updates.push({ name: name, details: JSON.parse(JSON.stringify(details)) });
      });
    };
    event.complete = function (promise) {
      Promise.resolve(promise).then(function (session) { log.updates.push({ name: name, session: session }); },
        function () {
          log.updates.push({ name: name, refused: true });
          request.rejectShow(new DOMException('The merchant could not be validated', 'AbortError'));
        });
    };
    request.listeners[name](event);
  };
  window.__w3cRespond = function (response) {
    response.complete = function (status) { log.completes.push(status); return Promise.resolve(); };
    response.retry = function (errors) {
      log.retries.push(JSON.parse(JSON.stringify(errors)));
      return new Promise(function (resolve) { window.__w3cResubmit = resolve; });
    };
    window.__w3cResponse = response;
    log.request.resolveShow(response);
  };
  window.PaymentRequest = PaymentRequest;
})();
"""

W3C_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>Chrome shop</title></head>
<body>
<script src="{gateway}/sdk/v1/orchard.js"></script>
<script>
  Orchard.setupSDK('{app_id}', '{app_key}', 'sandbox');
  Orchard.paymentRequestApi.setupApplePay({{ merchantIdentifier: '{merchant_identifier}', countryCode: 'TW' }});
  window.outcome = null;
  window.setupResult = null;
  window.hookCalls = [];
  Orchard.paymentRequestApi.setupPaymentRequest({{
    supportedNetworks: ['VISA'], supportedMethods: ['apple_pay'],
    displayItems: [{{ label: 'Oolong', amount: {{ currency: 'TWD', value: '480.00' }} }}],
    total: {{ label: 'Orchard Tea', amount: {{ currency: 'TWD', value: '480.00' }} }},
    options: {{ requestPayerEmail: true, requestShipping: true }}
  }}, function (result) {{ window.setupResult = result; }}, {{
    shippingAddressChange: function (address) {{
      hookCalls.push(['shippingAddressChange', address.postalCode]);
      return address.postalCode === '000'
        ? {{ errors: [{{ code: 'shippingContactInvalid', contactField: 'postalCode', message: 'ZIP code is invalid' }}] }}
        : {{}};
    }},
    paymentMethodChange: function (method) {{
      hookCalls.push(['paymentMethodChange', method.type]);
      if (method.type !== 'debit') return {{}};
      return {{ displayItems: [{{ label: 'Oolong', amount: {{ currency: 'TWD', value: '480.00' }} }},
                              {{ label: 'Debit discount', amount: {{ currency: 'TWD', value: '-10.00' }} }}] }};
    }},
    paymentAuthorized: function (payment) {{
      hookCalls.push(['paymentAuthorized', payment.payer.email]);
      return payment.payer.email ? {{}} : {{ errors: [{{ code: 'shippingContactInvalid', contactField: 'emailAddress',
        message: 'Enter an email' }}] }};
    }}
  }});
  window.buy = function () {{ Orchard.paymentRequestApi.getPrime(function (r) {{ window.outcome = r; }}); }};
</script>
</body></html>
"""


def w3c_page(driver, gateway, shop_origin):
    url = shop_origin.page("/w3c.html", W3C_PAGE.format(
        gateway=gateway.url, app_id=gateway.app_id, app_key=gateway.app_key,
        merchant_identifier=gateway.merchant["merchant_identifier"]))
    driver.before_load(W3C_STAND_IN)
    driver.get(url)
    setup = wait_for(driver, lambda d: d.execute_script("return window.setupResult"), message="setupPaymentRequest")
    assert setup["status"] == 0, setup
    driver.execute_script("window.buy();")
    wait_for(driver, lambda d: d.execute_script("return !!(window.__w3c.request && window.__w3c.request.resolveShow)"),
             message="show()")


def updates(driver, name, count=1):
    found = wait_for(driver, lambda d: len([u for u in d.execute_script("return window.__w3c.updates")
                                             if u["name"] == name]) >= count
                     and [u for u in d.execute_script("return window.__w3c.updates") if u["name"] == name],
                     message=f"{name} #{count}")
    return found[count - 1]


def test_w3c_path_wires_address_and_method_changes_and_retries_field_errors(orchard_server, apple_pay_standin,
                                                                          shop_origin, driver):
    gateway = orchard_server(web_origins=[shop_origin.origin], extra_args=apple_pay_standin.gateway_args)
    provision(gateway, apple_pay_standin, gateway.secret_key)
    w3c_page(driver, gateway, shop_origin)
    driver.execute_script("window.__w3cFire('merchantvalidation', {validationURL: arguments[0]});",
                          apple_pay_standin.validation_url)
    session = updates(driver, "merchantvalidation")["session"]
    assert session["merchantIdentifier"] == gateway.merchant["merchant_identifier"]
    # shippingaddresschange goes to the shippingAddressChange hook; its errors become the W3C address errors.
    driver.execute_script("window.__w3c.request.shippingAddress = {postalCode: '000', country: 'TW', city: 'Taipei'};"
                          "window.__w3cFire('shippingaddresschange');")
    address = updates(driver, "shippingaddresschange")["details"]
    assert address["error"] == "ZIP code is invalid"
    assert address["shippingAddressErrors"] == {"postalCode": "ZIP code is invalid"}
    driver.execute_script("window.__w3c.request.shippingAddress = {postalCode: '110', country: 'TW', city: 'Taipei'};"
                          "window.__w3cFire('shippingaddresschange');")
    assert "error" not in updates(driver, "shippingaddresschange", 2)["details"]
    # paymentmethodchange goes to the paymentMethodChange hook: the debit discount reaches the total.
    driver.execute_script("window.__w3cFire('paymentmethodchange', {methodDetails: {type: 'debit'}});")
    method = updates(driver, "paymentmethodchange")["details"]
    assert method["total"]["amount"] == {"currency": "TWD", "value": "470.00"}
    assert [i["label"] for i in method["displayItems"]] == ["Oolong", "Debit discount"]
    status, minted, _ = http_json("POST", gateway.url + "/v1/sandbox/wallet/tokens",
                                  {"amount": "470.00", "currency": "TWD"}, headers=gateway.client_headers())
    assert status == 200, minted
    # The merchant's check refuses a payment without an email: retry() with the field error keeps the sheet open.
    driver.execute_script("window.__w3cRespond({details: {token: arguments[0]}, payerEmail: '', payerName: 'Mei',"
                          " shippingAddress: {postalCode: '110', country: 'TW', city: 'Taipei'}});", minted["token"])
    retries = wait_for(driver, lambda d: d.execute_script("return window.__w3c.retries"), message="retry()")
    assert retries == [{"error": "Enter an email"}]
    assert driver.execute_script("return window.__w3c.completes") == []
    driver.execute_script("window.__w3cResponse.payerEmail = 'mei@example.com'; window.__w3cResubmit();")
    outcome = wait_for(driver, lambda d: d.execute_script("return window.outcome"), message="the prime")
    assert outcome["status"] == 0, outcome
    assert outcome["total_amount"] == "470.00" and outcome["payer"]["email"] == "mei@example.com"
    assert driver.execute_script("return window.__w3c.completes") == ["success"]
    assert ["paymentMethodChange", "debit"] in driver.execute_script("return window.hookCalls")


def test_w3c_merchant_validation_refused_keeps_its_reason(orchard_server, apple_pay_standin, shop_origin, driver):
    gateway = orchard_server(web_origins=[shop_origin.origin], extra_args=apple_pay_standin.gateway_args)
    provision(gateway, apple_pay_standin, gateway.secret_key)
    w3c_page(driver, gateway, shop_origin)
    driver.execute_script("window.__w3cFire('merchantvalidation', "
                          "{validationURL: 'https://apple-pay.evil.example/paymentservices/x'});")
    assert updates(driver, "merchantvalidation")["refused"] is True
    outcome = wait_for(driver, lambda d: d.execute_script("return window.outcome"), message="the refusal")
    # Not user_cancelled: the refusal's own code, with the gateway's reason.
    assert outcome["code"] == "merchant_validation_failed" and outcome["status"] == 7
    assert outcome["reason"] == "validation_url_not_allowed"
    assert outcome["requestId"].startswith("req_")
    assert apple_pay_standin.recorded() == []


BUTTON_PAGE = """<!doctype html>
<html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy"
      content="default-src 'none'; script-src 'unsafe-inline' {gateway}; connect-src {gateway}; style-src 'self'">
<title>Button</title></head>
<body>
<div id="pay"><span>placeholder</span></div>
<script>
  window.violations = [];
  document.addEventListener('securitypolicyviolation', function (e) {{
    window.violations.push(e.violatedDirective + ' ' + (e.sourceFile || '') + ':' + e.lineNumber);
  }});
</script>
<script src="{gateway}/sdk/v1/orchard.js"></script>
<script>
  Orchard.setupSDK('{app_id}', '{app_key}', '{server_type}', {options});
  window.rendered = Orchard.renderButton(document.getElementById('pay'), {{ type: 'check-out', style: 'white', locale: 'zh-TW' }});
  window.described = window.rendered && {{
    tag: window.rendered.tagName.toLowerCase(), kind: window.rendered.getAttribute('data-orchard-button'),
    className: window.rendered.className, lang: window.rendered.getAttribute('lang'),
    type: window.rendered.getAttribute('type'), buttonstyle: window.rendered.getAttribute('buttonstyle'),
    locale: window.rendered.getAttribute('locale'), style: window.rendered.getAttribute('style'),
    text: window.rendered.textContent, inPage: document.getElementById('pay').firstChild === window.rendered
  }};
  window.adopted = [].concat.apply([], document.adoptedStyleSheets.map(function (sheet) {{
    return Array.prototype.map.call(sheet.cssRules, function (rule) {{ return rule.selectorText; }});
  }}));
</script>
</body></html>
"""


def button_page(driver, gateway, shop_origin, server_type="sandbox", options="{}", before=None):
    """The button page, with `before` injected before its scripts for this load only."""
    injected = None
    if before:
        injected = driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": before})["identifier"]
    driver.get(shop_origin.page("/button.html", BUTTON_PAGE.format(
        gateway=gateway.url, app_id=gateway.app_id, app_key=gateway.app_key, server_type=server_type,
        options=options)))
    if injected:
        driver.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", {"identifier": injected})
    return driver.execute_script("return {rendered: window.described, adopted: window.adopted,"
                                 " violations: window.violations}")


APPLE_BUTTON = """
customElements.define('apple-pay-button', class extends HTMLElement {});
"""


def test_render_button_on_each_path_without_inline_styles(orchard_server, shop_origin, driver, webdriver_module):
    gateway = orchard_server(web_origins=[shop_origin.origin])
    # Apple's <apple-pay-button> where Apple's script defined it.
    page = button_page(driver, gateway, shop_origin, before=STAND_IN + APPLE_BUTTON)
    assert page["rendered"]["tag"] == "apple-pay-button" and page["rendered"]["kind"] == "apple-pay-button"
    assert (page["rendered"]["type"], page["rendered"]["buttonstyle"], page["rendered"]["locale"]) == (
        "check-out", "white", "zh-TW")
    assert page["rendered"]["inPage"] is True and page["violations"] == []
    # Safari without Apple's script: a button styled with -apple-pay-button in a constructed stylesheet.
    page = button_page(driver, gateway, shop_origin, before=STAND_IN)
    rendered = page["rendered"]
    assert rendered["tag"] == "button" and rendered["kind"] == "apple-pay-css"
    assert rendered["className"] == ("orchard-apple-pay-button orchard-apple-pay-type-check-out "
                                     "orchard-apple-pay-style-white")
    assert rendered["lang"] == "zh-TW" and rendered["style"] is None
    assert {".orchard-apple-pay-button", ".orchard-apple-pay-type-check-out",
            ".orchard-apple-pay-style-white"} <= set(page["adopted"])
    assert page["violations"] == []
    # The sandbox wallet's own button in the sandbox (no Apple Pay in this browser).
    page = button_page(driver, gateway, shop_origin)
    rendered = page["rendered"]
    assert rendered["kind"] == "sandbox" and rendered["text"] == "Pay with the sandbox wallet"
    assert rendered["className"] == "orchard-sandbox-button orchard-sandbox-button-white"
    assert rendered["style"] is None and ".orchard-sandbox-button" in page["adopted"]
    assert page["violations"] == []
    # The sandbox loads the wallet's own file from the gateway (cross-origin, by versioned path, with its
    # integrity), under the page's strict policy.
    wallet = wait_for(driver, lambda d: d.execute_script(
        "return window.OrchardSandboxWallet ? document.querySelector('script[src*=\"orchard-sandbox-wallet.\"]')"
        ".getAttribute('integrity') : null"), message="the sandbox wallet's file")
    assert wallet.startswith("sha384-")
    assert driver.execute_script("return window.violations") == []
    # Production without Apple Pay: nothing is rendered and the element keeps its content.
    page = button_page(driver, gateway, shop_origin, server_type="production")
    assert page["rendered"] is None
    assert driver.find_element(By.CSS_SELECTOR, "#pay span").text == "placeholder"
    # Production never loads the sandbox wallet.
    time.sleep(0.5)
    loaded = driver.execute_script("return performance.getEntriesByType('resource').map(function (e) { return e.name; })")
    assert any("/sdk/v1/orchard.js" in name for name in loaded)
    assert not any("sandbox-wallet" in name for name in loaded)
    assert driver.execute_script("return document.querySelector('script[src*=\"sandbox-wallet\"]')") is None
    assert driver.execute_script("return typeof window.OrchardSandboxWallet") == "undefined"
    # Bad arguments are refused.
    for script in ["Orchard.renderButton(null)", "Orchard.renderButton(document.body, {type: 'Buy <b>'})"]:
        assert "TypeError" in driver.execute_script(
            "try { " + script + "; return 'rendered'; } catch (e) { return e.name; }")


WALLET_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>Wallet shop</title></head>
<body>
<div id="pay"></div>
<script src="{gateway}/sdk/v1/orchard.js"></script>
<script>
  Orchard.setupSDK('{app_id}', '{app_key}', 'sandbox', {{ wallet: 'sandbox' }});
  Orchard.paymentRequestApi.setupApplePay({{ merchantIdentifier: '{merchant_identifier}', countryCode: 'TW' }});
  window.outcome = null;
  Orchard.paymentRequestApi.setupPaymentRequest({{
    supportedNetworks: ['VISA', 'JCB'], supportedMethods: ['apple_pay'],
    displayItems: [{{ label: 'Tea', amount: {{ currency: 'TWD', value: '150.00' }} }}],
    total: {{ label: 'Orchard Tea', amount: {{ currency: 'TWD', value: '150.00' }} }},
    options: {{ requestPayerEmail: true }}
  }}, function (result) {{
    window.setupResult = result;
    Orchard.renderButton(document.getElementById('pay')).addEventListener('click', function () {{
      Orchard.paymentRequestApi.getPrime().then(function (r) {{ window.outcome = r; }});
    }});
  }}, {{
    couponCodeChange: function (coupon) {{
      if (coupon.couponCode !== 'TEA10') return {{ errors: [{{ code: 'couponCodeInvalid', message: 'Unknown code' }}] }};
      return {{ displayItems: [{{ label: 'Tea', amount: {{ currency: 'TWD', value: '150.00' }} }},
                              {{ label: 'Coupon', amount: {{ currency: 'TWD', value: '-18.00' }} }}] }};
    }},
    paymentAuthorized: function (payment) {{
      return payment.payer.email.indexOf('@') > 0 ? {{}} :
        {{ errors: [{{ code: 'shippingContactInvalid', contactField: 'emailAddress', message: 'Enter an email' }}] }};
    }}
  }});
</script>
</body></html>
"""


def test_sandbox_wallet_coupon_field_and_merchant_check(orchard_server, shop_origin, driver, screenshot):
    gateway = orchard_server(web_origins=[shop_origin.origin])
    driver.get(shop_origin.page("/wallet.html", WALLET_PAGE.format(
        gateway=gateway.url, app_id=gateway.app_id, app_key=gateway.app_key,
        merchant_identifier=gateway.merchant["merchant_identifier"])))
    button = wait_for(driver, lambda d: d.find_element(By.CSS_SELECTOR, "#pay [data-orchard-button='sandbox']"),
                      message="the sandbox button")
    button.click()
    sheet = wait_for(driver, lambda d: d.find_element(By.CSS_SELECTOR, "dialog[data-orchard-sheet]"))
    coupon = sheet.find_element(By.CSS_SELECTOR, "[data-orchard-coupon]")
    assert driver.execute_script("return arguments[0].getAttribute('style')", coupon) is None
    coupon.send_keys("NOPE")
    sheet.find_element(By.CSS_SELECTOR, "[data-orchard-action='coupon']").click()
    error = sheet.find_element(By.CSS_SELECTOR, "[data-orchard-error]")
    wait_for(driver, lambda d: error.text == "Unknown code", message="the coupon error")
    coupon.clear()
    coupon.send_keys("TEA10")
    sheet.find_element(By.CSS_SELECTOR, "[data-orchard-action='coupon']").click()
    total = sheet.find_element(By.CSS_SELECTOR, "[data-orchard-total]")
    wait_for(driver, lambda d: total.text == "TWD 132.00", message="the discounted total")
    assert error.text == ""
    email = sheet.find_element(By.CSS_SELECTOR, "[data-orchard-field='email']")
    email.clear()
    sheet.find_element(By.CSS_SELECTOR, "[data-orchard-action='pay']").click()
    wait_for(driver, lambda d: error.text == "Enter an email", message="the merchant's check")
    assert driver.execute_script("return window.outcome") is None
    email.send_keys("mei@example.com")
    screenshot("sandbox-wallet-coupon")
    sheet.find_element(By.CSS_SELECTOR, "[data-orchard-action='pay']").click()
    outcome = wait_for(driver, lambda d: d.execute_script("return window.outcome"), message="the prime")
    assert outcome["status"] == 0, outcome
    assert outcome["total_amount"] == "132.00"
    status, payment, _ = http_json("POST", gateway.url + "/v1/payments",
                                   {"prime": outcome["prime"], "amount": "132.00", "currency": "TWD"},
                                   headers={"Authorization": "Bearer " + gateway.secret_key})
    assert status == 200 and payment["status"] == "captured", payment
