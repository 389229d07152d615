#!/usr/bin/env python3
"""A stand-in for Apple's merchant-session endpoint, for tests: HTTPS that requires a client certificate.

usage:
  python3 Tests/Support/apple-pay-standin.py --cert SERVER_PEM --key SERVER_KEY --client-ca CA_PEM
          [--host 127.0.0.1] [--port 0] [--status 200] [--record FILE]

  --cert, --key   the server's certificate (PEM, for 127.0.0.1) and its key
  --client-ca     PEM CA certificates; a client must present a certificate they issued, or the TLS
                  handshake fails (the merchant identity certificate, issued by the test CA standing in
                  for Apple)
  --host, --port  where to listen (port 0, the default, picks a free one)
  --status N      answer every request with HTTP N and an error body instead of a session (default 200)
  --record FILE   append each answered body to FILE, one line per request, exactly as sent

Once it accepts connections it prints the port, alone on one line of standard output. It speaks TLS 1.2
or later. `POST /paymentservices/startSession` (any path under /paymentservices/) takes Apple's request
body {merchantIdentifier, displayName, initiative: "web", initiativeContext} and answers a merchant
session in Apple's shape that echoes `merchantIdentifier`, `displayName` and `initiativeContext` (as
`domainName`), and names the client certificate's subject CN in `clientCertificateSubject`. A body with
a field missing or `initiative` other than "web" answers 400; another method or path, 404. The answer
is compact JSON on one line. SIGTERM or SIGINT stops it.

The gateway reaches it with `orchard serve --apple-pay-extra-validation-host 127.0.0.1:PORT
--apple-pay-ca-file CA_PEM` and the validation URL https://127.0.0.1:PORT/paymentservices/startSession.

Python 3 standard library only.
"""

import argparse
import hashlib
import http.server
import json
import signal
import ssl
import sys
import threading
import time

REQUIRED = ("merchantIdentifier", "displayName", "initiative", "initiativeContext")
MAXIMUM_BODY = 64 * 1024


def session_for(request, subject):
    """A merchant session in Apple's shape for `request`, its opaque fields derived from the request."""
    seed = hashlib.sha256(json.dumps(request, sort_keys=True).encode()).hexdigest()
    now = int(time.time() * 1000)
    return {
        "epochTimestamp": now,
        "expiresAt": now + 3_600_000,
        "merchantSessionIdentifier": "SSH" + seed[:32].upper(),
        "nonce": seed[32:40],
        "merchantIdentifier": request["merchantIdentifier"],
        "domainName": request["initiativeContext"],
        "displayName": request["displayName"],
        "signature": seed * 4,
        "operationalAnalyticsIdentifier": request["displayName"] + ":" + seed[:16].upper(),
        "retries": 0,
        "pspId": seed[:16].upper(),
        "clientCertificateSubject": subject,
    }


def make_handler(options, record_lock):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = 10

        def log_message(self, format, *args):  # noqa: A002 - the base class's name
            pass

        def answer(self, status, body):
            data = json.dumps(body, separators=(",", ":")).encode()
            if options.record:
                with record_lock, open(options.record, "ab") as record:
                    record.write(data + b"\n")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):  # noqa: N802 - the base class's name
            self.answer(404, {"statusMessage": "not found", "statusCode": "404"})

        def do_POST(self):  # noqa: N802 - the base class's name
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAXIMUM_BODY:
                self.answer(413, {"statusMessage": "body too large", "statusCode": "413"})
                return
            raw = self.rfile.read(length)
            if not self.path.startswith("/paymentservices/"):
                self.answer(404, {"statusMessage": "not found", "statusCode": "404"})
                return
            if options.status != 200:
                self.answer(options.status, {"statusMessage": "stand-in error", "statusCode": str(options.status)})
                return
            try:
                request = json.loads(raw)
            except ValueError:
                request = None
            if (
                not isinstance(request, dict)
                or any(not isinstance(request.get(name), str) for name in REQUIRED)
                or request["initiative"] != "web"
            ):
                self.answer(400, {"statusMessage": "bad merchant session request", "statusCode": "400"})
                return
            certificate = self.connection.getpeercert() or {}
            subject = ""
            for entry in certificate.get("subject", ()):
                for key, value in entry:
                    if key == "commonName":
                        subject = value
            self.answer(200, session_for(request, subject))

    return Handler


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # A client without an acceptable certificate fails the handshake: one line, no traceback.
        error = sys.exc_info()[1]
        print(f"apple-pay-standin: {client_address[0]}: {error}", file=sys.stderr, flush=True)


def main():
    parser = argparse.ArgumentParser(description="A stand-in for Apple's merchant-session endpoint (mutual TLS).")
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--client-ca", required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--status", type=int, default=200)
    parser.add_argument("--record")
    options = parser.parse_args()

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(options.cert, options.key)
    context.load_verify_locations(options.client_ca)
    context.verify_mode = ssl.CERT_REQUIRED

    server = Server((options.host, options.port), make_handler(options, threading.Lock()))
    # The handshake happens in each request's thread (on the first read), so a stalled client blocks no one.
    server.socket = context.wrap_socket(server.socket, server_side=True, do_handshake_on_connect=False)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown, daemon=True).start())
    signal.signal(signal.SIGINT, lambda *_: threading.Thread(target=server.shutdown, daemon=True).start())
    print(server.server_address[1], flush=True)
    server.serve_forever()
    server.server_close()


if __name__ == "__main__":
    main()
