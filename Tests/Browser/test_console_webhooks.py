"""The console's Webhooks page in a real browser: redelivery in one click, the secret rotated and shown once."""

import hashlib
import hmac
import time

from conftest import wait_for
from selenium.webdriver.common.by import By


def signed_with(delivery, secret):
    """Whether the delivery's Orchard-Signature carries a v1 made with `secret`."""
    parts = [part.split("=", 1) for part in delivery["headers"]["Orchard-Signature"].split(",")]
    timestamp = [value for name, value in parts if name == "t"][0]
    expected = hmac.new(secret.encode(), f"{timestamp}.".encode() + delivery["raw"], hashlib.sha256).hexdigest()
    return any(name == "v1" and hmac.compare_digest(value, expected) for name, value in parts)


def event_card(session, event_id):
    return session.wait(lambda d: d.find_element(By.CSS_SELECTOR, f'article.event[data-event-id="{event_id}"]'),
                        "the event " + event_id)


def test_redeliver_a_webhook_in_one_click(console_session, webhook_receiver):
    status, endpoint, _ = console_session.api("PUT", "/v1/webhook-endpoint", {"url": webhook_receiver.url})
    assert status == 200
    payment = console_session.pay("100.00")
    first = wait_for(console_session.driver, lambda d: webhook_receiver.received("payment.succeeded", payment["id"]),
                     timeout=30, message="the first delivery")[0]
    event_id = first["headers"]["Orchard-Event-Id"]
    assert signed_with(first, endpoint["secret"])
    console_session.open("webhooks")
    card = event_card(console_session, event_id)
    assert "delivered" in card.text
    card.find_element(By.CSS_SELECTOR, "button.show-attempts").click()
    table = console_session.wait(lambda d: card.find_element(By.CSS_SELECTOR, "table.attempts"), "the attempts")
    rows = table.find_elements(By.CSS_SELECTOR, "tbody tr")
    assert len(rows) == 1 and "200" in rows[0].text and " ms" in rows[0].text and "delivered" in rows[0].text
    card.find_element(By.CSS_SELECTOR, "button.redeliver").click()
    console_session.wait(lambda d: "sent again" in card.find_element(By.CSS_SELECTOR, ".redeliver-result").text,
                         "the redelivery queued")
    again = wait_for(console_session.driver,
                     lambda d: [x for x in webhook_receiver.deliveries if x["headers"]["Orchard-Event-Id"] == event_id
                                and x["headers"]["Orchard-Delivery-Attempt"] == "2"],
                     timeout=30, message="the second delivery")[0]
    assert again["body"]["id"] == event_id and again["raw"] == first["raw"]
    # The attempts list, drawn again, shows both.
    card = event_card(console_session, event_id)
    console_session.wait(lambda d: refresh_attempts(card) == 2, "two attempts on the page")
    status, attempts, _ = console_session.api("GET", f"/v1/events/{event_id}/attempts")
    assert [a["http_status"] for a in attempts["data"]] == [200, 200]
    assert all(isinstance(a["latency_ms"], int) for a in attempts["data"])


def refresh_attempts(card):
    """Hides and shows the event's attempts again (loading them anew); returns how many rows are shown."""
    toggle = card.find_element(By.CSS_SELECTOR, "button.show-attempts")
    if toggle.get_attribute("aria-expanded") == "true":
        toggle.click()
    toggle.click()
    time.sleep(0.5)
    return len(card.find_elements(By.CSS_SELECTOR, "table.attempts tbody tr"))


def test_rotate_the_webhook_secret_shown_once(console_session, webhook_receiver):
    status, endpoint, _ = console_session.api("PUT", "/v1/webhook-endpoint", {"url": webhook_receiver.url})
    old_secret = endpoint["secret"]
    console_session.open("webhooks")
    console_session.wait(lambda d: d.find_element(By.ID, "endpoint-url").text == webhook_receiver.url, "the endpoint")
    assert old_secret not in console_session.driver.page_source
    console_session.find("#endpoint-rotate").click()
    shown = console_session.wait(lambda d: d.find_element(By.ID, "new-secret-value").text, "the new secret")
    assert shown.startswith("whsec_") and shown != old_secret
    status, current, _ = console_session.api("GET", "/v1/webhook-endpoint")
    assert current["url"] == webhook_receiver.url and current["secret_hint"].endswith(shown[-4:])
    # Once acknowledged, the secret is gone from the page; only its hint remains.
    console_session.find("#secret-done").click()
    console_session.wait(lambda d: d.find_element(By.ID, "endpoint-secret-hint").text.endswith(shown[-4:]),
                         "the hint")
    assert shown not in console_session.driver.page_source
    assert console_session.driver.execute_script("return window.localStorage.length + window.sessionStorage.length") == 0
    # The next delivery is signed with the new secret (and, during the overlap, the old one).
    payment = console_session.pay("10.00")
    delivery = wait_for(console_session.driver,
                        lambda d: webhook_receiver.received("payment.succeeded", payment["id"]),
                        timeout=30, message="a delivery after the rotation")[0]
    assert signed_with(delivery, shown) and signed_with(delivery, old_secret)


def test_set_the_endpoint_url_and_see_the_api_refusal(console_session, webhook_receiver):
    console_session.open("webhooks")
    field = console_session.wait(lambda d: d.find_element(By.ID, "endpoint-url-input"), "the endpoint form")
    field.send_keys("ftp://example.com/h")
    console_session.find("#endpoint-save").click()
    console_session.wait(lambda d: "parameter_invalid" in d.find_element(By.ID, "endpoint-result").text,
                         "the API's refusal")
    field.clear()
    field.send_keys(webhook_receiver.url)
    console_session.find("#endpoint-save").click()
    secret = console_session.wait(lambda d: d.find_element(By.ID, "new-secret-value").text, "the first secret")
    status, current, _ = console_session.api("GET", "/v1/webhook-endpoint")
    assert current["url"] == webhook_receiver.url and current["enabled"] is True
    assert current["secret_hint"].endswith(secret[-4:])
