"""The console's Processor page in a real browser: the settings in force, set through the form (secrets shown only
by their last four characters), the connection test against the processor's stand-in, and a payment through it."""

import json
import pathlib
import subprocess
import sys

import pytest
from conftest import console_sign_in, http_json, wait_for
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

STANDIN = pathlib.Path(__file__).resolve().parents[1] / "Support" / "processor-standin.py"
API_KEY = "AQE-browser-api-key-Ab12"
HMAC_KEY = "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056"


def start_standin(api):
    """A processor's stand-in on a free loopback port (Tests/Support/processor-standin.py --api API)."""
    process = subprocess.Popen([sys.executable, str(STANDIN), "--api", api], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
    port = int(process.stdout.readline())
    base = f"http://127.0.0.1:{port}"

    class StandIn:
        url = base + ("/v71" if api == "adyen" else "")

        @staticmethod
        def control(method, path, body=None):
            status, answer, _ = http_json(method, base + "/_standin/" + path, body)
            assert status == 200, answer
            return answer

    return process, StandIn


@pytest.fixture
def adyen_standin():
    """Adyen's stand-in."""
    process, standin = start_standin("adyen")
    yield standin
    process.kill()
    process.wait()


@pytest.fixture
def checkout_standin():
    """Checkout.com's stand-in."""
    process, standin = start_standin("checkout_com")
    yield standin
    process.kill()
    process.wait()


def field(session, element_id):
    return session.wait(lambda d: d.find_element(By.ID, element_id), element_id)


def run_connection_test(session, what):
    """Clicks "Test connection" and waits for its outcome; returns the result element."""
    field(session, "processor-test").click()
    return session.wait(lambda d: d.find_element(By.ID, "processor-test-result").get_attribute("data-outcome")
                        and d.find_element(By.ID, "processor-test-result"), what)


def test_set_test_and_pay_through_adyen(driver, orchard_server, adyen_standin, screenshot):
    server = orchard_server(extra_args=["--processor-base-url", "adyen=" + adyen_standin.url])
    notify = f"{server.url}/v1/processors/adyen/notifications/{server.merchant['merchant_id']}"
    adyen_standin.control("POST", "config", {"api_key": API_KEY, "merchant_account": "OrchardShopECOM",
                                             "hmac_key": HMAC_KEY, "notification_url": notify})
    session = console_sign_in(driver, server)
    session.open("processor")
    # The sandbox default, nothing stored.
    assert field(session, "processor-type").text == "Sandbox acquirer"
    assert "nothing stored" in field(session, "processor-version").text

    Select(field(session, "processor-type-input")).select_by_value("adyen")
    Select(field(session, "processor-environment-input")).select_by_value("test")
    field(session, "processor-merchant-account").send_keys("OrchardShopECOM")
    field(session, "processor-api-key").send_keys(API_KEY)
    field(session, "processor-hmac-key").send_keys(HMAC_KEY)
    assert field(session, "processor-api-key").get_attribute("type") == "password"
    field(session, "processor-save").click()
    session.wait(lambda d: "version 1" in d.find_element(By.ID, "processor-saved").text, "the settings saved")
    assert field(session, "processor-type").text == "Adyen"
    assert field(session, "processor-environment").text == "test"
    hint = session.find('[data-secret-hint="api_key"]').text
    assert hint == "…Ab12"
    assert session.find('[data-field="merchant_account"]').text == "OrchardShopECOM"
    # No secret in the page, nor in the form fields once sent.
    assert API_KEY not in driver.page_source and HMAC_KEY not in driver.page_source
    assert field(session, "processor-api-key").get_attribute("value") == ""
    screenshot("console-processor-adyen")

    result = run_connection_test(session, "the connection test")
    assert result.get_attribute("data-outcome") == "ok" and "Connected" in result.text, result.text

    # A live environment is refused for a sandbox merchant, with its code on the page.
    Select(field(session, "processor-environment-input")).select_by_value("live")
    field(session, "processor-live-url-prefix").send_keys("1797a841fbb37ca7-AdyenDemo")
    field(session, "processor-api-key").send_keys(API_KEY)
    field(session, "processor-hmac-key").send_keys(HMAC_KEY)
    field(session, "processor-save").click()
    session.wait(lambda d: "processor_not_allowed" in d.find_element(By.ID, "processor-result").text, "the refusal")

    # A payment through Adyen, captured by its notification; the payment page names the processor.
    payment = session.pay("120.00")
    assert payment["status"] == "capture_pending" and payment["processor"] == "adyen"
    answers = adyen_standin.control("POST", "deliver", {})
    assert answers and all(answer["status"] == 200 for answer in answers), answers
    status, shown, _ = session.api("GET", "/v1/payments/" + payment["id"])
    assert shown["status"] == "captured"
    session.open("payments/" + payment["id"])
    assert "captured" in field(session, "payment-status").text
    assert "adyen" in field(session, "payment-processor").text
    assert payment["processor_reference"] in field(session, "payment-processor").text

    # A wrong API key stored: the test says so.
    status, _, _ = session.api("PUT", "/v1/processor", {"type": "adyen", "environment": "test",
                                                        "merchant_account": "OrchardShopECOM",
                                                        "api_key": "AQE-wrong", "hmac_key": HMAC_KEY})
    assert status == 200
    session.open("processor")
    result = run_connection_test(session, "the second connection test")
    assert result.get_attribute("data-outcome") == "failed" and "401" in result.text, result.text
    screenshot("console-processor-failed-test")


CKO_SECRET = "sk_sbox_browser_secret_Cd34"
CKO_WEBHOOK = "whk-browser-signature-Ef56"


def test_checkout_com_through_the_form_then_back_to_the_sandbox(driver, orchard_server, checkout_standin, screenshot):
    server = orchard_server(extra_args=["--processor-base-url", "checkout_com=" + checkout_standin.url])
    hook = f"{server.url}/v1/processors/checkout-com/webhooks/{server.merchant['merchant_id']}"
    checkout_standin.control("POST", "config", {"secret_key": CKO_SECRET, "processing_channel_id": "pc_browser",
                                                "webhook_secret": CKO_WEBHOOK, "webhook_url": hook})
    session = console_sign_in(driver, server)
    session.open("processor")
    assert field(session, "processor-type").text == "Sandbox acquirer"

    # Checkout.com's fields replace Adyen's when the type changes; a required one left empty is refused.
    Select(field(session, "processor-type-input")).select_by_value("checkout_com")
    environments = [o.get_attribute("value") for o in
                    Select(field(session, "processor-environment-input")).options]
    assert environments == ["sandbox", "production"]
    assert not driver.find_elements(By.ID, "processor-merchant-account")
    Select(field(session, "processor-environment-input")).select_by_value("sandbox")
    field(session, "processor-secret-key").send_keys(CKO_SECRET)
    field(session, "processor-processing-channel-id").send_keys("pc_browser")
    assert field(session, "processor-webhook-secret").get_attribute("type") == "password"
    field(session, "processor-save").click()
    session.wait(lambda d: d.find_element(By.ID, "processor-result").text.strip(), "the refusal of a missing field")
    assert "webhook_secret" in field(session, "processor-result").text
    status, shown, _ = session.api("GET", "/v1/processor")
    assert status == 200 and shown["type"] == "sandbox" and not shown["configured"], shown

    field(session, "processor-secret-key").send_keys(CKO_SECRET)
    field(session, "processor-webhook-secret").send_keys(CKO_WEBHOOK)
    field(session, "processor-save").click()
    session.wait(lambda d: "version 1" in d.find_element(By.ID, "processor-saved").text, "the settings saved")
    assert field(session, "processor-type").text == "Checkout.com"
    assert field(session, "processor-environment").text == "sandbox"
    assert session.find('[data-field="processing_channel_id"]').text == "pc_browser"
    assert session.find('[data-secret-hint="secret_key"]').text == "…Cd34"
    assert session.find('[data-secret-hint="webhook_secret"]').text == "…Ef56"
    assert CKO_SECRET not in driver.page_source and CKO_WEBHOOK not in driver.page_source
    screenshot("console-processor-checkout-com")

    result = run_connection_test(session, "the connection test")
    assert result.get_attribute("data-outcome") == "ok" and "Connected" in result.text, result.text

    # Capture now through Checkout.com: captured once its signed webhooks arrive.
    payment = session.pay("80.00")
    assert payment["processor"] == "checkout_com", payment
    checkout_standin.control("POST", "deliver", {})
    status, shown, _ = session.api("GET", "/v1/payments/" + payment["id"])
    assert shown["status"] == "captured", shown

    # Back to the sandbox acquirer: a new version; the Checkout.com payment still names its processor.
    Select(field(session, "processor-type-input")).select_by_value("sandbox")
    field(session, "processor-save").click()
    session.wait(lambda d: "version 2" in d.find_element(By.ID, "processor-saved").text, "the sandbox saved")
    assert field(session, "processor-type").text == "Sandbox acquirer"
    assert not driver.find_elements(By.CSS_SELECTOR, "[data-secret-hint]")
    session.open("payments/" + payment["id"])
    assert "checkout_com" in field(session, "payment-processor").text
