"""The console's sign-in, its session cookie, the CSRF rule and sign-out, in a real browser."""

import json

from conftest import http_json, wait_for
from selenium.webdriver.common.by import By


def storage_and_cookies(driver):
    return driver.execute_script(
        "return {local: window.localStorage.length, session: window.sessionStorage.length,"
        " cookies: document.cookie};")


def test_sign_in_keeps_nothing_in_the_browser(console_session):
    driver = console_session.driver
    # The key left the field as soon as the form was sent, and is nowhere in the page or its storage.
    assert driver.find_element(By.ID, "secret-key").get_attribute("value") == ""
    assert console_session.secret_key not in driver.page_source
    assert storage_and_cookies(driver) == {"local": 0, "session": 0, "cookies": ""}
    cookie = driver.get_cookie("orchard_console")
    assert cookie["httpOnly"] is True and cookie["sameSite"] == "Strict" and cookie["secure"] is False
    assert driver.find_element(By.ID, "console-merchant").text == console_session.server.merchant["merchant_id"]
    # A reload keeps the session (the cookie), without asking for the key again.
    console_session.open()
    assert driver.find_element(By.ID, "sign-in").get_attribute("hidden") is not None


def test_a_wrong_key_is_refused_on_the_page(driver, orchard_server):
    server = orchard_server()
    driver.get(server.url + "/console")
    field = wait_for(driver, lambda d: d.find_element(By.ID, "secret-key").is_displayed()
                     and d.find_element(By.ID, "secret-key"), message="the sign-in form")
    field.send_keys("sk_test_" + "0" * 44)
    driver.find_element(By.ID, "sign-in-button").click()
    wait_for(driver, lambda d: "not valid" in d.find_element(By.ID, "sign-in-error").text, message="the error")
    assert field.get_attribute("value") == ""
    assert driver.get_cookie("orchard_console") is None


def test_a_forged_request_without_the_csrf_token_is_refused(console_session, second_origin):
    driver = console_session.driver
    url = console_session.server.url
    # From the console's own page, with the cookie but without X-CSRF-Token.
    answer = driver.execute_async_script("""
        var done = arguments[arguments.length - 1];
        fetch('/v1/webhook-endpoint', {method: 'PUT', credentials: 'same-origin',
            headers: {'Content-Type': 'application/json'}, body: JSON.stringify({url: 'https://evil.example/h'})})
          .then(function (r) { return r.json().then(function (b) { done({status: r.status, body: b}); }); });
    """)
    assert answer["status"] == 403 and answer["body"]["error"]["code"] == "csrf_token_invalid"
    # With the cookie lifted out of the browser, still no token: refused.
    cookie = console_session.cookie()
    status, body, _ = http_json("PUT", url + "/v1/webhook-endpoint", {"url": "https://evil.example/h"},
                                {"Cookie": "orchard_console=" + cookie})
    assert status == 403 and body["error"]["code"] == "csrf_token_invalid"
    # A page of another origin posting a form to the gateway. On loopback the two origins differ only by port,
    # so they are the same site and the browser sends the SameSite=Strict cookie: the CSRF token refuses it.
    forged = second_origin.page("/forge.html", f"""<!doctype html><html><body>
        <form id="f" method="post" action="{url}/v1/payments/pay_x/void" enctype="text/plain">
        <input name='{{"a":"' value='"}}'></form><script>document.getElementById('f').submit();</script>
        </body></html>""")
    driver.get(forged)
    wait_for(driver, lambda d: d.current_url.startswith(url), message="the forged form post")
    text = driver.find_element(By.TAG_NAME, "body").text
    assert "csrf_token_invalid" in text
    assert "voided" not in text
    # Nothing changed: the endpoint is still unset.
    status, endpoint, _ = console_session.api("GET", "/v1/webhook-endpoint")
    assert status == 200 and endpoint["url"] is None


def test_after_sign_out_the_old_cookie_is_refused(console_session):
    driver = console_session.driver
    url = console_session.server.url
    cookie = console_session.cookie()
    assert http_json("GET", url + "/v1/payments", headers={"Cookie": "orchard_console=" + cookie})[0] == 200
    driver.find_element(By.ID, "sign-out").click()
    wait_for(driver, lambda d: d.find_element(By.ID, "sign-in").get_attribute("hidden") is None, message="sign-out")
    assert "signed out" in driver.find_element(By.ID, "sign-in-error").text
    assert driver.get_cookie("orchard_console") is None
    for method, path in [("GET", "/v1/payments"), ("GET", "/console/session")]:
        status, body, _ = http_json(method, url + path, headers={"Cookie": "orchard_console=" + cookie})
        assert status == 401 and body["error"]["code"] == "invalid_credentials", (method, path, body)
    # The page, reloaded, asks for the key again.
    driver.get(url + "/console")
    wait_for(driver, lambda d: d.find_element(By.ID, "secret-key").is_displayed(), message="the sign-in form")
    assert json.dumps(driver.execute_script("return window.localStorage.length")) == "0"


def test_sign_out_everywhere_ends_every_session_of_the_merchant(console_session):
    driver = console_session.driver
    url = console_session.server.url
    cookie = console_session.cookie()
    # A second session, as another browser of the merchant would open it.
    status, other, headers = http_json("POST", url + "/console/session", {"secret_key": console_session.secret_key})
    assert status == 200
    other_cookie = headers["Set-Cookie"].split(";")[0]
    button = driver.find_element(By.ID, "sign-out-everywhere")
    assert button.is_displayed()
    button.click()
    wait_for(driver, lambda d: d.find_element(By.ID, "sign-in").get_attribute("hidden") is None,
             message="signed out everywhere")
    assert "every" in driver.find_element(By.ID, "sign-in-error").text
    assert "2" in driver.find_element(By.ID, "sign-in-error").text
    assert driver.get_cookie("orchard_console") is None
    for session in ["orchard_console=" + cookie, other_cookie]:
        status, body, _ = http_json("GET", url + "/console/session", headers={"Cookie": session})
        assert status == 401 and body["error"]["code"] == "invalid_credentials", body
    # The audit log says who ended them.
    status, log, _ = console_session.api("GET", "/v1/audit-log?limit=100")
    ended = [entry for entry in log["data"] if entry["action"] == "console.sessions_end"]
    assert ended and ended[0]["detail"] == {"reason": "sign_out_everywhere", "sessions": "2"}
