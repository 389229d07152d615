"""The console's Overview, Card data, Keys and Apple Pay, and Audit log pages, in a real browser."""

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys


def reload_page(console_session, fragment):
    """Opens #/<fragment> and reloads it, so a page drawn before (at sign-in) is drawn again from fresh data."""
    console_session.open(fragment)
    console_session.driver.refresh()
    console_session.open(fragment)


def bar_values(driver, chart):
    return [bar.get_attribute("data-value")
            for bar in driver.find_elements(By.CSS_SELECTOR, f'svg[data-chart="{chart}"] rect.bar')]


def test_co_brand_table_upload_reaches_tokenization_and_the_audit_log(console_session, tmp_path):
    driver = console_session.driver
    console_session.open("card-data")
    page = console_session.find("#console-page")
    # A file with a bad line: refused, with the line and what is wrong; the table stays empty.
    bad = tmp_path / "bad.csv"
    bad.write_text("bin_low,bin_high,affiliate_code\n476100,476199,ORCHARD7\n4761,476199,NOT-ALNUM\n")
    upload = page.find_element(By.ID, "co-brand-file")
    upload.send_keys(str(bad))
    upload.find_element(By.XPATH, "ancestor::form//button[@type='submit']").click()
    errors = console_session.wait(lambda d: d.find_elements(By.CSS_SELECTOR, "[data-row-errors] li"), "the row errors")
    assert [item.get_attribute("data-row") for item in errors] == ["3"]
    assert "bin_low must be 6 to 8 digits" in errors[0].text
    assert "affiliate_code must be 1 to 20 ASCII letters or digits" in errors[0].text
    assert console_session.api("GET", "/v1/co-brand-table")[1]["ranges"] == []

    good = tmp_path / "good.csv"
    good.write_text("bin_low,bin_high,affiliate_code\n476100,476199,ORCHARD7\n")
    upload = console_session.find("#co-brand-file")
    upload.send_keys(str(good))
    upload.find_element(By.XPATH, "ancestor::form//button[@type='submit']").click()
    console_session.wait(lambda d: d.find_elements(By.CSS_SELECTOR, '[data-saved="1"]'), "the saved table")
    # The editor shows the stored range with 8-digit BINs.
    assert console_session.find('tr[data-row="1"] input[name="bin_low"]').get_attribute("value") == "47610000"
    assert console_session.find('tr[data-row="1"] input[name="bin_high"]').get_attribute("value") == "47619999"

    # A card in the range: its prime carries the affiliate code.
    answer = console_session.tokenize("100.00")  # the wallet's default card: Visa, BIN 476112
    assert answer["merchant_reference_info"]["affiliate_codes"] == ["ORCHARD7"]

    # The editor, by keyboard: add a range whose code is bad, see its row marked, fix it, save.
    add = [b for b in driver.find_elements(By.TAG_NAME, "button") if b.text == "Add a range"][0]
    add.send_keys(Keys.ENTER)
    first = driver.switch_to.active_element
    assert first.get_attribute("name") == "bin_low"
    first.send_keys("35600000", Keys.TAB, "35699999", Keys.TAB, "JCB_2026")
    [b for b in driver.find_elements(By.TAG_NAME, "button") if b.text == "Save co-brand table"][0].click()
    console_session.wait(lambda d: d.find_elements(By.CSS_SELECTOR, '[data-row-errors] li[data-row="2"]'), "row 2's error")
    code = console_session.find('tr[data-row="2"] input[name="affiliate_code"]')
    assert code.get_attribute("aria-invalid") == "true"
    code.clear()
    code.send_keys("JCB2026", Keys.ENTER)
    console_session.wait(lambda d: d.find_elements(By.CSS_SELECTOR, '[data-saved="2"]'), "the saved table")
    assert [r["affiliate_code"] for r in console_session.api("GET", "/v1/co-brand-table")[1]["ranges"]] == [
        "JCB2026", "ORCHARD7"]

    # The audit log shows both changes, made from the console.
    console_session.open("audit")
    rows = console_session.wait(
        lambda d: d.find_elements(By.CSS_SELECTOR, 'tr[data-action="co_brand_table.replace"]'), "the audit entries")
    assert len(rows) == 2
    assert "console" in rows[0].text and "ranges: 2" in rows[0].text
    assert "ranges: 1" in rows[1].text


def test_overview_charts_show_the_payments_made(console_session, screenshot):
    driver = console_session.driver
    for amount in ("100.00", "200.00", "50.00"):
        status, body = console_session.try_pay(amount)
        assert status == 200 and body["status"] == "captured", body
    status, body = console_session.try_pay("10.05")  # the sandbox acquirer declines …05 (do_not_honor)
    assert status == 402, body
    reload_page(console_session, "overview")
    console_session.wait(lambda d: d.find_elements(By.CSS_SELECTOR, 'svg[data-chart="count-hour"] rect.bar'), "the charts")
    counts = bar_values(driver, "count-hour")
    assert len(counts) == 24 and sum(int(value) for value in counts) == 4
    summary = {dd.get_attribute("data-figure"): dd.text
               for dd in driver.find_elements(By.CSS_SELECTOR, '[data-summary="hour"] dd')}
    assert summary["count"] == "4" and summary["approved"] == "3" and summary["declined"] == "1"
    assert summary["approval_rate"] == "75.00 %"
    assert "TWD 350.00" in summary["volume"]
    volumes = [value for value in bar_values(driver, "volume-hour-TWD") if value != "TWD 0"]
    assert volumes and all(value.startswith("TWD ") for value in volumes)
    assert any(value.endswith(" %") for value in bar_values(driver, "rate-hour"))
    declines = driver.find_elements(By.CSS_SELECTOR, 'svg[data-chart="declines"] rect.bar')
    assert [(bar.get_attribute("data-code"), bar.get_attribute("data-value")) for bar in declines] == [("do_not_honor", "1")]
    screenshot("console-overview")

    # By day: 30 bars, the same four payments.
    [link for link in driver.find_elements(By.CSS_SELECTOR, "a.toggle") if "30 days" in link.text][0].send_keys(Keys.ENTER)
    console_session.wait(lambda d: d.find_elements(By.CSS_SELECTOR, 'svg[data-chart="count-day"] rect.bar'), "the daily chart")
    days = bar_values(driver, "count-day")
    assert len(days) == 30 and sum(int(value) for value in days) == 4

    # At 360 px the page fits the width.
    driver.set_window_size(360, 800)
    reload_page(console_session, "overview")
    console_session.wait(lambda d: d.find_elements(By.CSS_SELECTOR, 'svg[data-chart="count-hour"]'), "the charts")
    assert driver.execute_script("return document.documentElement.scrollWidth") <= 360
    screenshot("console-overview-360")


def test_keys_page_lists_keys_and_makes_a_csr(console_session):
    driver = console_session.driver
    console_session.open("keys")
    keys = console_session.wait(lambda d: d.find_elements(By.CSS_SELECTOR, "tr[data-key]"), "the key list")
    assert keys[0].get_attribute("data-state") == "active"
    create = [b for b in driver.find_elements(By.TAG_NAME, "button") if b.text == "Create a processing key CSR"][0]
    create.click()
    box = console_session.wait(lambda d: d.find_elements(By.CSS_SELECTOR, "[data-csr] textarea"), "the CSR")[0]
    assert box.get_attribute("value").startswith("-----BEGIN CERTIFICATE REQUEST-----")
    # The download button has the focus, and the new key is listed as pending.
    assert driver.switch_to.active_element.text.startswith("Download mk_")
    assert any(row.get_attribute("data-state") == "pending" for row in driver.find_elements(By.CSS_SELECTOR, "tr[data-key]"))
    listed = console_session.api("GET", "/v1/merchant-keys")[1]
    assert [key["state"] for key in listed["data"]] == ["active", "pending"]
