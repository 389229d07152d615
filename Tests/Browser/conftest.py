"""The browser test harness: a real `orchard serve` (the built binary) on a free loopback port with a temporary
SQLite database, a second origin for cross-origin pages, headless Chromium through selenium, and screenshots
under .build/browser-screenshots/.

Any browser suite (the SDK and demo store, the merchant console) uses these fixtures:

    def test_something(orchard_server, driver, second_origin, screenshot):
        gateway = orchard_server(web_origins=[second_origin.origin])
        driver.get(gateway.url + "/demo")

The console's suites start from `console_session` (a gateway with its console signed in through the page).

Missing tools (the binary, chromium, chromedriver, selenium) skip the tests with a message; with CI=true they
are a failure.
"""

import http.server
import json
import os
import pathlib
import shutil
import socket
import ssl
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / ".build" / "browser-screenshots"
IN_CI = os.environ.get("CI") == "true"


def missing(message):
    """Skips (locally) or fails (CI=true) for a missing tool."""
    if IN_CI:
        pytest.fail("CI: " + message, pytrace=False)
    pytest.skip(message)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def http_json(method, url, body=None, headers=None, timeout=10, context=None):
    """A JSON request (over TLS verified with `context` for an https URL); returns (status, parsed body or None,
    headers)."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method, headers=dict(headers or {}))
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=timeout, context=context) as response:
            raw = response.read()
            return response.status, (json.loads(raw) if raw else None), dict(response.headers)
    except urllib.error.HTTPError as error:
        raw = error.read()
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = None
        return error.code, parsed, dict(error.headers)


@pytest.fixture(scope="session")
def orchard_bin():
    """The built `orchard` executable (ORCHARD_BIN, else .build/debug/orchard)."""
    path = pathlib.Path(os.environ.get("ORCHARD_BIN", ROOT / ".build" / "debug" / "orchard"))
    if not path.is_file() or not os.access(path, os.X_OK):
        missing(f"no orchard binary at {path}: run `swift build --product orchard` first")
    return path


class OrchardServer:
    """A running `orchard serve` with its database, log and the sandbox merchant's keys."""

    def __init__(self, binary, directory, web_origins=(), extra_args=(), environment=None, tls=None):
        self.binary = str(binary)
        self.directory = pathlib.Path(directory)
        self.database = "sqlite:" + str(self.directory / "gateway.db")
        self.port = free_port()
        # With `tls` (a TestCA): HTTPS with a certificate for 127.0.0.1 that the CA signed.
        self.context = None
        self.url = f"http://127.0.0.1:{self.port}"
        if tls is not None:
            cert, key = tls.issue(self.directory, "127.0.0.1")
            extra_args = ["--tls-cert", str(cert), "--tls-key", str(key), *extra_args]
            self.context = ssl.create_default_context(cafile=str(tls.certificate))
            self.url = f"https://127.0.0.1:{self.port}"
        self.log_path = self.directory / "serve.log"
        self.environment = dict(os.environ, **(environment or {}))
        # Provision the sandbox merchant (and read its keys) before the server opens the same database.
        shown = subprocess.run(
            [self.binary, "merchant", "show", "--json", "--database", self.database],
            capture_output=True, text=True, check=True, env=self.environment, timeout=60)
        self.merchant = json.loads(shown.stdout)
        arguments = [self.binary, "serve", "--host", "127.0.0.1", "--port", str(self.port),
                     "--database", self.database, "--reconcile-interval", "0"]
        if web_origins:
            arguments += ["--web-origins", ",".join(web_origins)]
        arguments += list(extra_args)
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen(arguments, stdout=self.log, stderr=subprocess.STDOUT, env=self.environment)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"orchard serve exited ({self.process.returncode}): {self.log_text()[-2000:]}")
            try:
                if http_json("GET", self.url + "/healthz", timeout=1, context=self.context)[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError("orchard serve did not answer /healthz within 30 s")

    @property
    def app_id(self):
        return self.merchant["app_id"]

    @property
    def app_key(self):
        return self.merchant["app_key"]

    @property
    def secret_key(self):
        return self.merchant["secret_key"]

    def client_headers(self):
        return {"X-Orchard-App-Id": self.app_id, "X-Orchard-App-Key": self.app_key}

    def cli(self, *arguments, input_text=None):
        """Runs `orchard ARGUMENTS…` (the same binary); returns the completed process."""
        return subprocess.run([self.binary, *arguments], capture_output=True, text=True, input=input_text,
                              env=self.environment, timeout=60)

    def log_text(self):
        self.log.flush()
        return self.log_path.read_text(errors="replace")

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()


@pytest.fixture
def orchard_server(orchard_bin):
    """A factory: `orchard_server(web_origins=[…], extra_args=[…], environment={…})` starts a gateway on a new
    temporary database; every server started is stopped after the test."""
    started = []
    directories = []

    def start(web_origins=(), extra_args=(), environment=None, tls=None):
        directory = tempfile.mkdtemp(prefix="orchard-browser-")
        directories.append(directory)
        server = OrchardServer(orchard_bin, directory, web_origins, extra_args, environment, tls)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()
    for directory in directories:
        shutil.rmtree(directory, ignore_errors=True)


# A merchant's own host name for pages, as Apple Pay on the Web needs one (the gateway refuses IP addresses and
# localhost as Apple Pay domains): the browser resolves it to the loopback (the driver's --host-resolver-rules).
SHOP_HOST = "shop.test"


class TestCA:
    """A certificate authority made for one test run with the openssl command: it issues server certificates for
    a loopback address, and clients trust its `certificate` (a PEM file)."""

    def __init__(self, directory):
        if shutil.which("openssl") is None:
            missing("the openssl command is not installed")
        self.directory = pathlib.Path(directory)
        self.key = self.directory / "test-ca.key"
        self.certificate = self.directory / "test-ca.pem"
        self.openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                     "-keyout", self.key, "-out", self.certificate, "-days", "2", "-subj", "/CN=Orchard test CA",
                     "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign")

    def openssl(self, *arguments):
        subprocess.run(["openssl", *map(str, arguments)], check=True, capture_output=True, timeout=60)

    def issue(self, directory, address):
        """A certificate and key for `address` (an IP SAN) signed by the CA, as PEM files in `directory`."""
        directory = pathlib.Path(directory)
        key, request, certificate = directory / "server.key", directory / "server.csr", directory / "server.pem"
        extensions = directory / "server.ext"
        extensions.write_text(f"subjectAltName=IP:{address}\nextendedKeyUsage=serverAuth\n")
        self.openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key,
                     "-out", request, "-subj", f"/CN={address}")
        self.openssl("x509", "-req", "-in", request, "-CA", self.certificate, "-CAkey", self.key,
                     "-CAcreateserial", "-out", certificate, "-days", "1", "-extfile", extensions)
        return certificate, key


@pytest.fixture(scope="session")
def test_ca(tmp_path_factory):
    """The run's test certificate authority (``TestCA``)."""
    return TestCA(tmp_path_factory.mktemp("test-ca"))


class StaticOrigin:
    """A second web origin on loopback serving pages set with `page(path, html)`; named `host` in its URLs (the
    loopback address by default, or SHOP_HOST, which the browser resolves to it)."""

    def __init__(self, host="127.0.0.1"):
        pages = self.pages = {}

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body = pages.get(self.path.split("?")[0])
                if body is None:
                    self.send_error(404)
                    return
                data = body.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *arguments):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.origin = f"http://{host}:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def page(self, path, html):
        self.pages[path] = html
        return self.origin + path

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def second_origin():
    """Another origin than the gateway's (a merchant's site), for cross-origin pages."""
    origin = StaticOrigin()
    yield origin
    origin.stop()


@pytest.fixture
def shop_origin():
    """A merchant's site under its own host name (SHOP_HOST), for the pages of Apple Pay on the Web."""
    origin = StaticOrigin(SHOP_HOST)
    yield origin
    origin.stop()


@pytest.fixture(scope="session")
def webdriver_module():
    try:
        from selenium import webdriver  # noqa: F401
    except ImportError:
        missing("selenium is not installed (pip install selenium)")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    chromedriver = shutil.which("chromedriver") or ("/usr/bin/chromedriver" if os.path.exists("/usr/bin/chromedriver") else None)
    if not chromium or not chromedriver:
        missing("chromium and chromium-driver are not installed (apt-get install chromium chromium-driver)")
    from selenium import webdriver
    return webdriver, chromium, chromedriver


@pytest.fixture
def driver(webdriver_module):
    """Headless Chromium; `driver.before_load(script)` injects a script before any page's own scripts."""
    webdriver, chromium, chromedriver = webdriver_module
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--window-size=1100,1000", "--no-first-run", "--disable-extensions",
                     f"--host-resolver-rules=MAP {SHOP_HOST} 127.0.0.1"]:
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    browser = webdriver.Chrome(service=Service(chromedriver), options=options)
    browser.set_script_timeout(30)

    def before_load(source):
        browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": source})

    def console():
        return [entry.get("message", "") for entry in browser.get_log("browser")]

    browser.before_load = before_load
    browser.console_messages = console
    yield browser
    browser.quit()


@pytest.fixture
def screenshot(driver):
    """`screenshot(name)` writes .build/browser-screenshots/<name>.png and returns its path."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)

    def take(name):
        path = SCREENSHOTS / f"{name}.png"
        driver.save_screenshot(str(path))
        return path

    return take


def wait_for(driver, condition, timeout=20, message="condition"):
    """Polls `condition(driver)` until it is truthy; returns its value."""
    deadline = time.monotonic() + timeout
    last_error = None
    while time.monotonic() < deadline:
        try:
            value = condition(driver)
            if value:
                return value
        except Exception as error:  # the page may still be loading
            last_error = error
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {message}" + (f" ({last_error})" if last_error else ""))


class TestAuthority:
    """A throwaway certificate authority (the openssl command): a TLS server certificate for 127.0.0.1 and
    client certificates signed from CSRs, standing in for Apple's."""

    def __init__(self, directory):
        self.directory = pathlib.Path(directory)
        self.openssl = shutil.which("openssl")
        if not self.openssl:
            missing("the openssl command is not installed")
        (self.directory / "server.ext").write_text("subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")
        (self.directory / "client.ext").write_text("extendedKeyUsage=clientAuth\n")
        self.run("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                 "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=Orchard Test CA")
        self.run("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "server.key",
                 "-out", "server.csr", "-subj", "/CN=server")
        self.run("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                 "-out", "server.pem", "-days", "2", "-extfile", "server.ext")

    def path(self, name):
        return str(self.directory / name)

    def run(self, *arguments):
        subprocess.run([self.openssl, *arguments], cwd=self.directory, check=True, capture_output=True, timeout=60)

    def sign(self, csr_pem):
        """A client certificate (PEM) for a CSR (PEM)."""
        (self.directory / "identity.csr").write_text(csr_pem)
        self.run("x509", "-req", "-in", "identity.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                 "-out", "identity.pem", "-days", "2", "-extfile", "client.ext")
        return (self.directory / "identity.pem").read_text()


@pytest.fixture
def apple_pay_standin(tmp_path):
    """Apple's merchant-session endpoint stood in by Tests/Support/apple-pay-standin.py (mutual TLS), with its
    authority: `.authority`, `.port`, `.validation_url`, `.gateway_args` (the two sandbox-only settings)."""
    authority = TestAuthority(tmp_path)
    process = subprocess.Popen(
        ["python3", str(ROOT / "Tests" / "Support" / "apple-pay-standin.py"), "--cert", authority.path("server.pem"),
         "--key", authority.path("server.key"), "--client-ca", authority.path("ca.pem"),
         "--record", authority.path("record.jsonl")],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    port = int(process.stdout.readline().strip())

    class StandIn:
        pass

    standin = StandIn()
    standin.authority = authority
    standin.port = port
    standin.validation_url = f"https://127.0.0.1:{port}/paymentservices/startSession"
    standin.gateway_args = ["--apple-pay-extra-validation-host", f"127.0.0.1:{port}",
                            "--apple-pay-ca-file", authority.path("ca.pem")]
    standin.recorded = lambda: [json.loads(line) for line in
                                pathlib.Path(authority.path("record.jsonl")).read_text().splitlines()] \
        if os.path.exists(authority.path("record.jsonl")) else []
    yield standin
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()


class ConsoleSession:
    """The merchant console signed in through its page: `.server`, `.driver`, `.secret_key`, `open(hash)`,
    `api(method, path, body)` (the ordinary API with the secret key), `cookie()` (the session cookie's value,
    read through WebDriver since scripts cannot), `find(css)` and `wait(condition, message)`."""

    def __init__(self, driver, server):
        self.driver = driver
        self.server = server
        self.secret_key = server.secret_key

    def open(self, fragment=""):
        """Loads /console#/<fragment> afresh (not only a change of the fragment) and waits until the console is
        signed in and drawn."""
        self.driver.get("about:blank")
        self.driver.get(self.server.url + "/console#/" + fragment)
        self.wait(lambda d: not d.find_element("id", "console-nav").get_attribute("hidden")
                  and (not fragment or d.find_element("css selector", "#console-page h1")), "the console page")

    def sign_in(self):
        from selenium.webdriver.common.by import By
        self.driver.get(self.server.url + "/console")
        field = self.wait(lambda d: d.find_element(By.ID, "secret-key").is_displayed()
                          and d.find_element(By.ID, "secret-key"), "the sign-in form")
        field.send_keys(self.secret_key)
        self.driver.find_element(By.ID, "sign-in-button").click()
        self.wait(lambda d: not d.find_element(By.ID, "console-nav").get_attribute("hidden"), "signing in")
        return self

    def api(self, method, path, body=None, headers=None):
        """`(status, body, headers)` of an API call with the merchant's secret key."""
        return http_json(method, self.server.url + path, body,
                         dict({"Authorization": "Bearer " + self.secret_key}, **(headers or {})))

    def tokenize(self, amount, currency="TWD", card=None):
        """The answer of POST /v1/tokens for a sandbox wallet token (of the wallet's default card unless `card`
        is given), as a shop's page gets its prime."""
        server = self.server
        request = {"amount": amount, "currency": currency}
        if card:
            request["card"] = card
        status, minted, _ = http_json("POST", server.url + "/v1/sandbox/wallet/tokens", request,
                                      server.client_headers())
        assert status == 200, minted
        status, tokenized, _ = http_json("POST", server.url + "/v1/tokens", {"token": minted["token"]},
                                         server.client_headers())
        assert status == 200, tokenized
        return tokenized

    def try_pay(self, amount, currency="TWD", capture="now", order_number=None, card=None):
        """`(status, body)` of POST /v1/payments with a fresh prime, whether the payment is approved or not."""
        body = {"prime": self.tokenize(amount, currency, card)["prime"], "amount": amount, "currency": currency,
                "capture": {"mode": capture}}
        if order_number:
            body["order_number"] = order_number
        status, payment, _ = self.api("POST", "/v1/payments", body)
        return status, payment

    def pay(self, amount, currency="TWD", capture="now", order_number=None, card=None):
        """A payment made as a shop would: a sandbox wallet token, a prime, then POST /v1/payments (approved)."""
        status, payment = self.try_pay(amount, currency, capture, order_number, card)
        assert status == 200, payment
        return payment

    def cookie(self):
        found = self.driver.get_cookie("orchard_console")
        return found["value"] if found else None

    def find(self, css):
        return self.driver.find_element("css selector", css)

    def wait(self, condition, message="condition", timeout=20):
        try:
            return wait_for(self.driver, condition, timeout=timeout, message=message)
        except AssertionError as error:
            page = self.driver.find_element("id", "console-page").text[-1500:]
            raise AssertionError(f"{error}; the page shows: {page}; console: {self.driver.console_messages()[-5:]}")


def console_sign_in(driver, server):
    """Signs in to `server`'s console in `driver` through the sign-in form; returns a ConsoleSession."""
    return ConsoleSession(driver, server).sign_in()


@pytest.fixture
def console_session(driver, orchard_server):
    """A fresh gateway (the `orchard_server` factory's defaults) with its console signed in in `driver`."""
    return console_sign_in(driver, orchard_server())


class WebhookReceiver:
    """A merchant's webhook endpoint on 127.0.0.1: records each delivery (headers, raw body, parsed JSON) and
    answers `status` (200 unless set)."""

    def __init__(self):
        deliveries = self.deliveries = []
        receiver = self
        self.status = 200

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                deliveries.append({"headers": dict(self.headers), "raw": raw, "body": json.loads(raw or b"null")})
                self.send_response(receiver.status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *arguments):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/orchard/webhooks"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def received(self, event_type=None, object_id=None):
        return [d for d in self.deliveries
                if (event_type is None or d["body"]["type"] == event_type)
                and (object_id is None or d["body"]["data"].get("id") == object_id)]

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def webhook_receiver():
    """A local webhook endpoint (`.url`, `.deliveries`, `.received(type, object_id)`)."""
    receiver = WebhookReceiver()
    yield receiver
    receiver.stop()
