"""The console's Payments pages in a real browser, over a real `orchard serve` with SQLite."""

from conftest import ConsoleSession, http_json, wait_for
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select


def load(session, count):
    """`count` captured payments made by `orchard bench http` against the running gateway; their ids."""
    record = session.server.directory / "load.txt"
    run = session.server.cli("bench", "http", "--url", session.server.url, "--database", session.server.database,
                             "--payments", str(count), "--clients", "2", "--warmup", "0", "--no-bound",
                             "--record", str(record))
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    lines = record.read_text().split("\n")
    return [line.split()[0] for line in lines if line.strip()]


def listed_ids(driver):
    return [row.get_attribute("data-payment-id")
            for row in driver.find_elements(By.CSS_SELECTOR, "#payments-table tbody tr")]


def wait_listed(session, predicate, message):
    """The ids listed once the page has loaded and they satisfy `predicate`."""
    def listed(driver):
        if "Loading" in driver.find_element(By.ID, "payments-status").text:
            return None
        ids = listed_ids(driver)
        return ids if predicate(ids) else None
    return session.wait(listed, message)


def test_sign_in_and_see_the_payments_a_load_created(console_session):
    ids = load(console_session, 25)
    assert len(ids) == 25
    console_session.open("payments")
    first = wait_listed(console_session, lambda found: len(found) == 20, "the first page")
    older = console_session.find("#payments-older")
    assert older.is_enabled() and not console_session.find("#payments-newer").is_enabled()
    row = console_session.find(f'tr[data-payment-id="{first[0]}"]').text
    assert "captured" in row and "476112••••••0492" in row
    older.click()
    second = wait_listed(console_session, lambda found: found and found[0] not in first, "the second page")
    assert set(first + second) == set(ids) and len(second) == 5
    assert not console_session.find("#payments-older").is_enabled()
    console_session.find("#payments-newer").click()
    assert wait_listed(console_session, lambda found: found == first, "the first page again") == first


def test_filter_by_status_last_four_and_order_number(console_session):
    captured = [console_session.pay("100.00", order_number=f"ORD-{n}") for n in range(3)]
    authorized = console_session.pay("70.00", capture="manual", order_number="ORD-M")
    console_session.open("payments")
    wait_listed(console_session, lambda found: len(found) == 4, "every payment")
    driver = console_session.driver
    Select(console_session.find("#filter-status")).select_by_value("authorized")
    console_session.find("#apply-filters").click()
    assert wait_listed(console_session, lambda found: found == [authorized["id"]], "authorized only")
    assert "status=authorized" in driver.current_url
    # Filters come from the address: a bookmarked filter opens filtered.
    console_session.open("payments?status=captured&order_number=ORD-1")
    assert wait_listed(console_session, lambda found: found == [captured[1]["id"]], "one captured order")
    assert console_session.find("#filter-order-number").get_attribute("value") == "ORD-1"
    console_session.open("payments?last_four=1111")
    session_text = lambda d: d.find_element(By.ID, "payments-status").text
    console_session.wait(lambda d: "No payments match" in session_text(d), "no card ending 1111")
    console_session.open("payments?last_four=0492&currency=TWD&amount_min=80&amount_max=100.00")
    assert set(wait_listed(console_session, lambda found: len(found) == 3, "the 100.00 ones")) == \
        {p["id"] for p in captured}
    # The API's refusal is shown as it is.
    console_session.open("payments?amount_min=80")
    console_session.wait(lambda d: "parameter_missing" in session_text(d), "amount without currency refused")


def refund_through_the_page(session, amount):
    field = session.find("#refund-amount")
    field.clear()
    field.send_keys(amount)
    session.find("#refund-form-submit").click()


def test_refund_part_of_a_payment_and_see_it_through_the_api_and_its_webhook(console_session, webhook_receiver,
                                                                             screenshot):
    status, _, _ = console_session.api("PUT", "/v1/webhook-endpoint", {"url": webhook_receiver.url})
    assert status == 200
    payment = console_session.pay("100.00", order_number="ORD-REFUND")
    console_session.open("payments/" + payment["id"])
    console_session.wait(lambda d: d.find_element(By.ID, "refund-form"), "the refund form")
    # Past the captured amount: the API's error, shown, and nothing refunded.
    refund_through_the_page(console_session, "150.00")
    console_session.wait(lambda d: "refund_exceeds_capture" in d.find_element(By.ID, "refund-form-result").text,
                         "the API's refusal")
    refund_through_the_page(console_session, "30.00")
    console_session.wait(lambda d: d.find_elements(By.CSS_SELECTOR, "#payment-refunds tr[data-refund-id]"),
                         "the refund on the page")
    assert "TWD 30.00" in console_session.find("#payment-refunded").text
    assert "partially refunded" in console_session.find("#payment-status").text
    status, seen, _ = console_session.api("GET", "/v1/payments/" + payment["id"])
    assert status == 200 and seen["status"] == "partially_refunded" and seen["refunded_amount"] == "30.00"
    assert [r["amount"] for r in seen["refunds"]] == ["30.00"]
    delivered = wait_for(console_session.driver,
                         lambda d: webhook_receiver.received("payment.refunded", payment["id"]),
                         timeout=30, message="the payment.refunded webhook")
    assert delivered[0]["body"]["data"]["refunded_amount"] == "30.00"
    # The page, drawn again, shows every transition with its time and the events with their deliveries.
    console_session.open("payments/" + payment["id"])
    card = console_session.wait(
        lambda d: [c for c in d.find_elements(By.CSS_SELECTOR, "#payment-events article.event")
                   if "payment.refunded" in c.text and "delivered" in c.text], "the refund event, delivered")[0]
    card.find_element(By.CSS_SELECTOR, "button.show-attempts").click()
    console_session.wait(lambda d: "200" in card.find_element(By.CSS_SELECTOR, "table.attempts").text, "attempts")
    transitions = console_session.find("#payment-transitions").text
    assert "partially refunded" in transitions and "UTC" in transitions
    page = console_session.driver.page_source
    assert "4761120000000492" not in page and console_session.secret_key not in page
    console_session.driver.execute_script("window.scrollTo(0, 0)")
    screenshot("console-payment")


def test_a_double_clicked_refund_refunds_once(console_session):
    payment = console_session.pay("100.00")
    console_session.open("payments/" + payment["id"])
    console_session.wait(lambda d: d.find_element(By.ID, "refund-form"), "the refund form")
    key = console_session.find("#refund-form").get_attribute("data-idempotency-key")
    console_session.find("#refund-amount").send_keys("10.00")
    ActionChains(console_session.driver).double_click(console_session.find("#refund-form-submit")).perform()
    console_session.wait(lambda d: d.find_elements(By.CSS_SELECTOR, "#payment-refunds tr[data-refund-id]"),
                         "the refund")
    # The same request again with the form's key, as a retry after a lost answer would be: replayed.
    status, replay, headers = console_session.api(
        "POST", f"/v1/payments/{payment['id']}/refunds", {"amount": "10.00"}, {"Idempotency-Key": key})
    assert status == 200 and headers.get("Idempotent-Replayed") == "true"
    status, seen, _ = console_session.api("GET", "/v1/payments/" + payment["id"])
    assert [r["amount"] for r in seen["refunds"]] == ["10.00"] and seen["refunded_amount"] == "10.00"
    assert replay["id"] == seen["refunds"][0]["id"]


def test_capture_part_and_void_from_the_payment_page(console_session):
    held = console_session.pay("80.00", capture="manual")
    voided = console_session.pay("20.00", capture="manual")
    console_session.open("payments/" + held["id"])
    console_session.wait(lambda d: d.find_element(By.ID, "capture-form"), "the capture form")
    console_session.find("#capture-amount").send_keys("60.00")
    console_session.find("#capture-form-submit").click()
    console_session.wait(lambda d: "captured" in d.find_element(By.ID, "payment-status").text, "captured")
    assert "TWD 60.00" in console_session.find("#payment-captured").text
    assert console_session.find("#refund-form")
    console_session.open("payments/" + voided["id"])
    console_session.wait(lambda d: d.find_element(By.ID, "void-form"), "the void form")
    console_session.find("#void-form-submit").click()
    console_session.wait(lambda d: "voided" in d.find_element(By.ID, "payment-status").text, "voided")
    assert console_session.api("GET", "/v1/payments/" + voided["id"])[1]["status"] == "voided"
    assert "No operation applies" in console_session.find("#payment-actions").text


def test_payments_at_360_px_and_by_keyboard(driver, orchard_server):
    server = orchard_server()
    driver.set_window_size(360, 800)
    driver.get(server.url + "/console")
    wait_for(driver, lambda d: d.find_element(By.ID, "secret-key").is_displayed(), message="the sign-in form")
    # Keyboard alone: the page starts in the key's field; the tab order is the skip link, the field, the
    # button; Enter signs in.
    assert driver.switch_to.active_element.get_attribute("id") == "secret-key"
    driver.execute_script("document.querySelector('.skip-link').focus()")
    order = ["skip-link"]
    for _ in range(2):
        ActionChains(driver).send_keys(Keys.TAB).perform()
        active = driver.switch_to.active_element
        order.append(active.get_attribute("id") or active.get_attribute("class"))
    assert order == ["skip-link", "secret-key", "sign-in-button"]
    ActionChains(driver).key_down(Keys.SHIFT).send_keys(Keys.TAB).key_up(Keys.SHIFT).perform()
    ActionChains(driver).send_keys(server.secret_key + Keys.ENTER).perform()
    wait_for(driver, lambda d: not d.find_element(By.ID, "console-nav").get_attribute("hidden"), message="sign-in")
    session = ConsoleSession(driver, server)
    payment = session.pay("100.00", order_number="ORD-NARROW")
    session.open("payments/" + payment["id"])
    session.wait(lambda d: d.find_element(By.ID, "refund-form"), "the payment page")
    width = driver.execute_script("return document.documentElement.scrollWidth")
    assert width <= 360, f"the page is {width} px wide at 360"
    # Every field of the page has a label, and the focus ring is drawn.
    unlabelled = driver.execute_script("""
        return Array.from(document.querySelectorAll('#console-page input, #console-page select'))
          .filter(function (f) { return !f.labels || f.labels.length === 0; }).map(function (f) { return f.id; });""")
    assert unlabelled == []
    field = driver.find_element(By.ID, "refund-amount")
    field.click()
    outline = driver.execute_script(
        "var s = getComputedStyle(arguments[0]); return [s.outlineStyle, s.outlineWidth];", field)
    assert outline == ["solid", "3px"]  # the console's own ring (console.css), not the browser's default
