"""The demo store (GET /demo) in headless Chromium: orchard.js, the sandbox wallet sheet, pay by prime."""

import re
import time

from conftest import wait_for
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

SANDBOX_PANS = ["4761120010000492", "4147090000000015", "5204740000000012", "3569990000000017",
                "371449635398431", "4000000000000002"]


def open_demo(driver, gateway, cart="tea"):
    driver.get(f"{gateway.url}/demo?cart={cart}")
    wait_for(driver, lambda d: d.find_element(By.ID, "status").get_attribute("data-demo-status") == "ready",
             message="the demo to be ready")


def open_sheet(driver):
    driver.find_element(By.ID, "buy").click()
    return wait_for(driver, lambda d: d.find_element(By.CSS_SELECTOR, "dialog[data-orchard-sheet]"),
                    message="the sandbox sheet")


def status(driver):
    node = driver.find_element(By.ID, "status")
    return node.get_attribute("data-demo-status")


def wait_status(driver, *wanted):
    wait_for(driver, lambda d: status(d) in wanted, message=f"status {wanted}")
    return status(driver), driver.find_element(By.ID, "message").text


def field(driver, table, name):
    row = driver.find_element(By.CSS_SELECTOR, f"#{table} tr[data-demo-field='{name}']")
    return row.find_elements(By.TAG_NAME, "td")[1].text


def assert_no_secrets(driver, gateway):
    text = "\n".join(driver.console_messages()) + gateway.log_text()
    for pan in SANDBOX_PANS:
        assert pan not in text
    for secret in ("onlinePaymentCryptogram", "paymentData", "AgAAAAAAAAAAAAAAAAAAAAAAAAA="):
        assert secret not in text


def test_purchase_through_the_sandbox_wallet(orchard_server, driver, screenshot):
    gateway = orchard_server()
    open_demo(driver, gateway)
    sheet = open_sheet(driver)
    lines = sheet.find_elements(By.CSS_SELECTOR, "[data-orchard-line]")
    assert [line.text.replace("\n", " ") for line in lines] == [
        "Alishan oolong, 150 g TWD 480.00", "Sun Moon Lake black tea TWD 320.00"]
    total = sheet.find_element(By.CSS_SELECTOR, "[data-orchard-total]")
    assert total.text == "TWD 860.00"  # the first shipping option, 60.00
    sheet.find_element(By.CSS_SELECTOR, "[data-orchard-shipping-option='express']").click()
    wait_for(driver, lambda d: total.text == "TWD 950.00", message="the total with express shipping")
    for name in ("name", "email", "phone", "address"):
        assert sheet.find_element(By.CSS_SELECTOR, f"[data-orchard-field='{name}']").get_attribute("value")
    name_field = sheet.find_element(By.CSS_SELECTOR, "[data-orchard-field='name']")
    name_field.clear()
    name_field.send_keys("Lin Mei")
    cards = Select(sheet.find_element(By.CSS_SELECTOR, "select[data-orchard-card]"))
    assert [option.text.split(" ····")[0] for option in cards.options] == [
        "Visa credit", "Visa debit", "Mastercard", "JCB", "Amex", "Declined card"]
    cards.select_by_value("visa_credit")
    screenshot("demo-sheet")
    sheet.find_element(By.CSS_SELECTOR, "[data-orchard-action='pay']").click()
    state, message = wait_status(driver, "succeeded", "failed", "cancelled")
    assert state == "succeeded", message
    assert "TWD 950.00" in message
    assert field(driver, "payment", "status") == "captured"
    assert field(driver, "payment", "amount") == "TWD 950.00"
    assert field(driver, "card-info", "issuer") == "Sandbox Bank"
    assert field(driver, "card-info", "lastfour") == "0492"
    assert field(driver, "card-info", "countrycode") == "TW"
    events = [item.get_attribute("data-demo-event") for item in driver.find_elements(By.CSS_SELECTOR, "#events li")]
    assert "payment.succeeded" in events
    assert not driver.find_elements(By.CSS_SELECTOR, "dialog[data-orchard-sheet]")
    screenshot("demo-success")
    assert_no_secrets(driver, gateway)


def test_deferred_cart_gives_a_thirty_day_prime(orchard_server, driver):
    gateway = orchard_server()
    open_demo(driver, gateway, cart="taxi")
    sheet = open_sheet(driver)
    assert sheet.find_element(By.CSS_SELECTOR, "[data-orchard-total]").text == "Amount pending"
    lines = [line.text.replace("\n", " ") for line in sheet.find_elements(By.CSS_SELECTOR, "[data-orchard-line]")]
    assert lines == ["Flag fall TWD 85.00", "Per-mile fare Amount pending"]
    before = time.time() * 1000
    sheet.find_element(By.CSS_SELECTOR, "[data-orchard-action='pay']").click()
    state, message = wait_status(driver, "succeeded", "failed", "cancelled")
    assert state == "succeeded", message
    expiry = int(driver.find_element(By.ID, "payment-section").get_attribute("data-demo-prime-expiry"))
    thirty_days = 30 * 24 * 3600 * 1000
    assert before + thirty_days - 60_000 < expiry < time.time() * 1000 + thirty_days + 60_000
    assert field(driver, "payment", "amount") == "TWD 285.00"


def test_declined_card(orchard_server, driver):
    gateway = orchard_server()
    open_demo(driver, gateway)
    sheet = open_sheet(driver)
    Select(sheet.find_element(By.CSS_SELECTOR, "select[data-orchard-card]")).select_by_value("declined")
    sheet.find_element(By.CSS_SELECTOR, "[data-orchard-action='pay']").click()
    state, message = wait_status(driver, "succeeded", "failed", "cancelled")
    assert state == "failed"
    assert "card_declined" in message and "do_not_honor" in message
    assert field(driver, "card-info", "issuer") == "Sandbox Decline Bank"
    assert_no_secrets(driver, gateway)


def test_cancel(orchard_server, driver):
    gateway = orchard_server()
    open_demo(driver, gateway)
    sheet = open_sheet(driver)
    sheet.find_element(By.CSS_SELECTOR, "[data-orchard-action='cancel']").click()
    state, message = wait_status(driver, "succeeded", "failed", "cancelled")
    assert state == "cancelled"
    assert message.startswith("user_cancelled")
    assert not driver.find_elements(By.CSS_SELECTOR, "dialog[data-orchard-sheet]")
    # The button works again after a cancel.
    open_sheet(driver)


def test_cancel_while_tokenizing_reports_the_outcome(orchard_server, driver):
    gateway = orchard_server()
    open_demo(driver, gateway)
    # Hold the tokenize call so the cancel lands while it is in flight.
    driver.execute_script("""
        var original = window.fetch;
        window.fetch = function (url, init) {
          if (String(url).indexOf('/v1/tokens') >= 0) {
            return new Promise(function (resolve) { window.__release = resolve; })
              .then(function () { return original(url, init); });
          }
          return original(url, init);
        };""")
    sheet = open_sheet(driver)
    sheet.find_element(By.CSS_SELECTOR, "[data-orchard-action='pay']").click()
    wait_for(driver, lambda d: d.execute_script("return typeof window.__release === 'function'"),
             message="the tokenize call")
    sheet.find_element(By.CSS_SELECTOR, "[data-orchard-action='cancel']").click()
    time.sleep(0.3)
    assert status(driver) == "paying"
    driver.execute_script("window.__release()")
    state, message = wait_status(driver, "succeeded", "failed", "cancelled")
    assert state == "succeeded", message


def test_demo_pays_under_default_src_self(orchard_server, driver):
    """The demo page's policy is default-src 'self' (plus directives that only forbid more): orchard.js by its
    versioned path with its integrity, the wallet's file it loads, their styles and calls all hold under it."""
    import urllib.request
    gateway = orchard_server()
    with urllib.request.urlopen(gateway.url + "/demo") as page:
        policy = page.headers["Content-Security-Policy"]
    directives = [d.strip() for d in policy.split(";")]
    assert directives[0] == "default-src 'self'"
    fetch = {"script-src", "style-src", "img-src", "connect-src", "font-src", "frame-src", "media-src",
             "object-src", "worker-src", "child-src", "manifest-src", "script-src-elem", "style-src-elem",
             "script-src-attr", "style-src-attr"}
    assert not [d for d in directives if d.split(" ")[0] in fetch], policy
    driver.get_log("browser")
    open_demo(driver, gateway)
    script = driver.find_element(By.CSS_SELECTOR, "script[src*='/sdk/v1/orchard.']")
    assert re.fullmatch(r"/sdk/v1/orchard\.[0-9a-f]{32}\.js", script.get_attribute("src").replace(gateway.url, ""))
    assert script.get_attribute("integrity").startswith("sha384-")
    sheet = open_sheet(driver)
    # The sheet's styles came from the wallet's constructed stylesheet: allowed, and applied.
    assert driver.execute_script(
        "return arguments[0].hasAttribute('style') || !!arguments[0].querySelector('[style]')", sheet) is False
    assert driver.execute_script("return getComputedStyle(arguments[0]).borderTopLeftRadius", sheet) == "14px"
    pay = sheet.find_element(By.CSS_SELECTOR, "[data-orchard-action='pay']")
    assert driver.execute_script("return getComputedStyle(arguments[0]).backgroundColor", pay) == "rgb(0, 0, 0)"
    pay.click()
    state, message = wait_status(driver, "succeeded", "failed", "cancelled")
    assert state == "succeeded", message
    refused = [m for m in driver.console_messages() if "Content Security Policy" in m or "Refused to" in m
               or "integrity" in m]
    assert refused == []


def test_orchard_js_is_cacheable(orchard_server):
    import urllib.error
    import urllib.request
    gateway = orchard_server()
    with urllib.request.urlopen(gateway.url + "/sdk/v1/orchard.js") as response:
        body = response.read().decode()
        assert response.headers["Content-Type"].startswith("text/javascript")
        etag = response.headers["ETag"]
        assert re.fullmatch(r'"[0-9a-f]{32}"', etag)
        assert "max-age" in response.headers["Cache-Control"]
    assert "window.Orchard" in body
    assert "console." not in body  # the SDK logs nothing
    request = urllib.request.Request(gateway.url + "/sdk/v1/orchard.js", headers={"If-None-Match": etag})
    try:
        urllib.request.urlopen(request)
        raise AssertionError("expected 304")
    except urllib.error.HTTPError as error:
        assert error.code == 304
        assert error.headers["ETag"] == etag
    with urllib.request.urlopen(gateway.url + "/demo") as page:
        assert page.status == 200 and page.headers["Content-Type"].startswith("text/html")
