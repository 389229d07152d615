import ApplePayModel
import Foundation
import Gateway
import GatewayAssembly
import GatewayCurl
import GatewayHTTP
import OrchardHTTP

/// The gateway part of `orchard demo`: the whole flow over real HTTP against a running server, each step
/// printed and checked.
///
/// The runtime opens the server's database: the demo reads the sandbox merchant's keys from it and mints tokens
/// with its sandbox PKI; everything else goes over HTTP.
final class GatewayDemo {
    /// A step that went wrong so that the flow cannot go on.
    struct Stop: Error, CustomStringConvertible {
        var description: String
    }

    let api: APICaller
    let runtime: GatewayRuntime
    let io: CLIOutput
    /// The checks that failed, in order.
    private(set) var failures: [String] = []
    private(set) var checks = 0
    /// Makes the demo's order numbers unique per run, so it can run again against the same database.
    let runID: String
    private var client: [(String, String)] = []
    private var server: [(String, String)] = []
    private var stepNumber = 0

    init(baseURL: String, runtime: GatewayRuntime, io: CLIOutput) {
        self.api = APICaller(baseURL: baseURL)
        self.runtime = runtime
        self.io = io
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        runID = formatter.string(from: Date()) + "-" + String(UInt16.random(in: 0...UInt16.max), radix: 16)
    }

    // MARK: Output and checks

    private func step(_ title: String) {
        stepNumber += 1
        io.out("")
        io.out("\(stepNumber). \(title)")
    }

    private func line(_ text: String) { io.out("   \(text)") }

    private func show(_ reply: APICaller.Reply, _ request: String) {
        line("\(request) -> \(reply.summary)")
    }

    @discardableResult
    private func check(_ condition: Bool, _ what: String) -> Bool {
        checks += 1
        if condition {
            io.out("   ok    \(what)")
        } else {
            failures.append(what)
            io.out("   FAIL  \(what)")
        }
        return condition
    }

    private func require(_ condition: Bool, _ what: String) throws {
        guard check(condition, what) else { throw Stop(description: what) }
    }

    private static func masked(_ secret: String) -> String {
        guard let underscore = secret.firstIndex(of: "_"), secret.count > 8 else { return "****" }
        return String(secret[...underscore]) + "…" + String(secret.suffix(4))
    }

    // MARK: The flow

    /// Runs every step; returns true when all checks passed.
    func run(serverNote: String) -> Bool {
        io.out("== The gateway over HTTP: prime flow, webhooks, refunds, sessions, errors ==")
        let inbox = WebhookInbox()
        var receiver: HTTPServer?
        do {
            receiver = try inbox.start()
            try flow(serverNote: serverNote, inbox: inbox)
        } catch let stop as Stop {
            io.out("")
            io.out("stopped: \(stop)")
        } catch {
            checks += 1
            failures.append("\(error)")
            io.out("")
            io.out("stopped: \(error)")
        }
        receiver?.stop(timeoutSeconds: 1)
        io.out("")
        if failures.isEmpty {
            io.out("demo: all \(checks) checks passed")
            return true
        }
        io.err("orchard demo: \(failures.count) of \(checks) checks failed:")
        for failure in failures { io.err("  - \(failure)") }
        return false
    }

    private func flow(serverNote: String, inbox: WebhookInbox) throws {
        let health = try api.call(.get, "/healthz")
        io.out("server     \(api.baseURL) (\(serverNote))")
        try require(health.status == 200, "GET /healthz answers 200")
        guard let merchant = runtime.sandboxMerchant else {
            throw Stop(description: "the database has no sandbox merchant")
        }
        let credentials = try runtime.gateway.merchants.credentials(merchantID: merchant.id)
        client = APICaller.appHeaders(appID: credentials.appID, appKey: credentials.appKey)
        server = APICaller.secretHeaders(credentials.secretKey)
        io.out("merchant   \(merchant.name) \(merchant.id), \(merchant.merchantIdentifiers.first ?? "")")
        io.out(
            "keys       app_id \(credentials.appID), app_key \(Self.masked(credentials.appKey)), "
                + "secret_key \(Self.masked(credentials.secretKey)) (orchard merchant show prints them in full)")

        let secret = try webhookEndpoint(inbox: inbox)
        let cart = PaymentRequestExamples.twdCartWithDebitDiscount
        let (payment, prime, token) = try primeFlow(cart: cart)
        try webhook(for: payment, secret: secret, inbox: inbox)
        try refund(payment)
        try sessionFlow()
        try decline()
        try reuse(prime: prime, token: token, amount: cart.total.amount)
        try allWebhooks(secret: secret, inbox: inbox)
    }

    /// Step: the merchant's webhook endpoint set to the local receiver.
    private func webhookEndpoint(inbox: WebhookInbox) throws -> String {
        step("Webhook endpoint: a receiver on this machine, set with PUT /v1/webhook-endpoint (secret key)")
        let url = "http://127.0.0.1:\(inbox.port)/webhooks"
        line("the demo's receiver listens at \(url)")
        let reply = try api.call(.put, "/v1/webhook-endpoint", headers: server, json: ["url": url])
        show(reply, "PUT /v1/webhook-endpoint {url}")
        let secret = reply.string("secret") ?? ""
        line("signing secret \(Self.masked(secret)) (answered once; the receiver keeps it)")
        try require(reply.status == 200 && reply.string("url") == url, "the endpoint is set to the receiver")
        try require(secret.hasPrefix("whsec_"), "a whsec_ signing secret came back")
        return secret
    }

    /// Mints a sandbox token for `amount` and returns it as JSON, with its transaction identifier.
    private func mint(_ amount: Money) throws -> (json: Any, transactionIdentifier: String, size: Int) {
        let data = try runtime.mintSandboxToken(amount: amount.minorUnits, currency: amount.currency)
        // The demo is a client of the API: it reads the minted token to send it on.
        let object = try JSONSerialization.jsonObject(with: data)
        let identifier = (object as? [String: Any])?["transactionIdentifier"] as? String ?? ""
        return (object, identifier, data.count)
    }

    /// Steps: a token for the TWD cart, tokenize, pay by prime.
    private func primeFlow(cart: PaymentRequest) throws -> (payment: String, prime: String, token: Any) {
        step("A sandbox Apple Pay token for the TWD cart (\(cart.total.label), \(cart.total.amount))")
        let token = try mint(cart.total.amount)
        line("minted \(token.size) bytes: EC_v1, signed now by the database's sandbox PKI, encrypted for the")
        line(
            "sandbox merchant's processing certificate; transactionIdentifier \(token.transactionIdentifier.prefix(16))…"
        )

        step("Tokenize: POST /v1/tokens {token} (app id + app key, as the app or web page does)")
        let tokenized = try api.call(.post, "/v1/tokens", headers: client, json: ["token": token.json])
        show(tokenized, "POST /v1/tokens")
        let body = tokenized.json
        let prime = body["prime"] as? String ?? ""
        let card = body["card_info"] as? [String: Any] ?? [:]
        let expiry = (body["prime_expiry_millis"] as? NSNumber)?.int64Value ?? 0
        let lifetime = Int((Double(expiry) / 1000 - Date().timeIntervalSince1970).rounded())
        line("prime \(prime), good for one payment within \(lifetime) s")
        line(
            "card_info bin_code \(card["bin_code"] ?? "?"), last_four \(card["last_four"] ?? "?"), "
                + "type \(card["type"] ?? "?") (1 Visa), funding \(card["funding"] ?? "?") (0 credit)")
        line("total_amount \(body["total_amount"] ?? "?") \(body["currency"] ?? "?")")
        try require(tokenized.status == 200 && prime.hasPrefix("prm_"), "a prime came back")
        check(
            body["total_amount"] as? String == cart.total.amount.decimalString && body["currency"] as? String == "TWD",
            "the prime carries the token's amount, \(cart.total.amount)")
        check((card["last_four"] as? String)?.count == 4, "card info shows the last four digits only")

        step("Pay by prime: POST /v1/payments {prime, amount, currency, capture now} (secret key)")
        let orderNumber = "DEMO-\(runID)-1"
        let paid = try api.call(
            .post, "/v1/payments", headers: server + [("Idempotency-Key", "\(orderNumber)-pay")],
            json: [
                "prime": prime, "amount": cart.total.amount.decimalString, "currency": "TWD",
                "order_number": orderNumber, "details": "Pour-over coffee x2, croissant",
                "capture": ["mode": "now"],
            ] as [String: Any])
        show(paid, "POST /v1/payments")
        let payment = paid.json
        let id = payment["id"] as? String ?? ""
        let path = ((payment["transitions"] as? [[String: Any]]) ?? []).compactMap { $0["to"] as? String }
        line("payment \(id), order_number \(orderNumber), auth_code \(payment["auth_code"] ?? "?")")
        line("status \(payment["status"] ?? "?"): \(path.joined(separator: " -> "))")
        line("captured_amount \(payment["captured_amount"] ?? "?") \(payment["currency"] ?? "")")
        try require(paid.status == 200 && id.hasPrefix("pay_"), "the payment was created")
        check(path.contains("authorized") && payment["status"] as? String == "captured", "authorized, then captured")
        check(
            payment["captured_amount"] as? String == cart.total.amount.decimalString,
            "captured the full \(cart.total.amount)")
        return (id, prime, token.json)
    }

    /// Step: the payment's webhook reaches the local receiver; its signature is checked.
    private func webhook(for payment: String, secret: String, inbox: WebhookInbox) throws {
        step("Webhook: the gateway POSTs the payment's events to the receiver, signed with Orchard-Signature")
        let deliveries = inbox.wait(timeout: 20) { $0.contains { $0.mentions(payment) } }.filter {
            $0.mentions(payment)
        }
        guard let first = deliveries.first else {
            check(false, "a webhook for \(payment) arrived within 20 s")
            return
        }
        for delivery in deliveries {
            line("received \(delivery.type) \(delivery.eventID) (\(delivery.body.count) bytes)")
        }
        line("Orchard-Signature: \(first.signature.prefix(28))…")
        var verified = true
        for delivery in deliveries {
            do {
                try WebhookSignature.verify(header: delivery.signature, body: delivery.body, secret: secret)
            } catch {
                line("\(delivery.eventID): \(error)")
                verified = false
            }
        }
        check(verified, "WebhookSignature.verify accepts the signature with the endpoint's secret")
        var tampered = first.body
        tampered.append(contentsOf: Array(" ".utf8))
        do {
            try WebhookSignature.verify(header: first.signature, body: tampered, secret: secret)
            check(false, "a body changed by one byte is refused")
        } catch {
            line("the same header over the body plus one space: \(error.code)")
            check(error.code == .signatureMismatch, "a body changed by one byte is refused (signature_mismatch)")
        }
    }

    /// Step: a partial refund, then the payment read back.
    private func refund(_ payment: String) throws {
        step("Partial refund: POST /v1/payments/{id}/refunds {amount: \"100.00\"} (secret key)")
        let refunded = try api.call(
            .post, "/v1/payments/\(payment)/refunds", headers: server + [("Idempotency-Key", "\(payment)-refund-1")],
            json: ["amount": "100.00", "reason": "one coffee returned"])
        show(refunded, "POST /v1/payments/\(payment)/refunds")
        let refund = refunded.json
        line("refund \(refund["id"] ?? "?"), \(refund["amount"] ?? "?") TWD, status \(refund["status"] ?? "?")")
        check(refunded.status == 200 && (refund["id"] as? String)?.hasPrefix("re_") == true, "the refund was accepted")
        let read = try api.call(.get, "/v1/payments/\(payment)", headers: server)
        let body = read.json
        show(read, "GET /v1/payments/\(payment)")
        line(
            "status \(body["status"] ?? "?"), captured \(body["captured_amount"] ?? "?"), "
                + "refunded \(body["refunded_amount"] ?? "?")")
        check(
            body["status"] as? String == "partially_refunded" && body["refunded_amount"] as? String == "100.00",
            "the payment is partially_refunded, 100.00 of 400.50")
    }

    /// The payments the gateway holds for `outTradeNo` (over HTTP).
    private func paymentCount(outTradeNo: String) throws -> Int {
        let reply = try api.call(.get, "/v1/payments?out_trade_no=\(outTradeNo)&limit=100", headers: server)
        return (reply.json["data"] as? [Any])?.count ?? -1
    }

    /// Steps: create a session, read it as the client, pay it, retry the payment.
    private func sessionFlow() throws {
        step("Session flow: POST /v1/sessions fixes the amount on the server first (secret key)")
        let outTradeNo = "DEMO-\(runID)-2"
        let amount = Money(minorUnits: 25_000, currency: .twd)
        let created = try api.call(
            .post, "/v1/sessions", headers: server + [("Idempotency-Key", "\(outTradeNo)-session")],
            json: [
                "out_trade_no": outTradeNo, "amount": amount.decimalString, "currency": "TWD", "country": "TW",
                "subject": "Orchard tea, 2 boxes", "user_id": "demo-user",
            ])
        show(created, "POST /v1/sessions")
        let orderToken = created.string("order_token") ?? ""
        line("order_token \(orderToken), out_trade_no \(outTradeNo), expires_at \(created.json["expires_at"] ?? "?")")
        try require(created.status == 200 && orderToken.hasPrefix("ot_"), "the session was created")

        let read = try api.call(.get, "/v1/sessions/\(orderToken)", headers: client)
        show(read, "GET /v1/sessions/{order_token} (app key)")
        let session = read.json
        let networks = (session["supported_networks"] as? [String] ?? []).joined(separator: ", ")
        line(
            "the app builds its request from: \(session["amount"] ?? "?") \(session["currency"] ?? "?"), "
                + "\(session["merchant_identifier"] ?? "?"), networks \(networks)")
        check(
            read.status == 200 && session["amount"] as? String == amount.decimalString, "the client reads the session")

        step("Pay the session: POST /v1/sessions/{order_token}/pay {token} with a second token (app key)")
        let token = try mint(amount)
        let key = token.transactionIdentifier
        line("a second sandbox token for \(amount); Idempotency-Key: its transactionIdentifier \(key.prefix(16))…")
        let before = try paymentCount(outTradeNo: outTradeNo)
        let first = try api.call(
            .post, "/v1/sessions/\(orderToken)/pay", headers: client + [("Idempotency-Key", key)],
            json: ["token": token.json])
        show(first, "POST /v1/sessions/{order_token}/pay")
        let payment = first.string("payment_id") ?? ""
        line("payment \(payment), status \(first.json["status"] ?? "?")")
        try require(first.status == 200 && payment.hasPrefix("pay_"), "the session was paid")
        check(first.string("status") == "captured", "the session payment is captured")
        let afterFirst = try paymentCount(outTradeNo: outTradeNo)
        line("payments for \(outTradeNo): \(before) before, \(afterFirst) after")

        step("A retry of the same request (a lost answer, a double tap): answered from the idempotency store")
        let retry = try api.call(
            .post, "/v1/sessions/\(orderToken)/pay", headers: client + [("Idempotency-Key", key)],
            json: ["token": token.json])
        show(retry, "POST /v1/sessions/{order_token}/pay again, same Idempotency-Key and body")
        line("Idempotent-Replayed: \(retry.header("Idempotent-Replayed") ?? "(absent)")")
        line("Request-Id: \(first.header("Request-Id") ?? "?") first, \(retry.header("Request-Id") ?? "?") retry")
        let afterRetry = try paymentCount(outTradeNo: outTradeNo)
        line("payments for \(outTradeNo) after the retry: \(afterRetry)")
        check(
            retry.status == first.status && retry.body == first.body,
            "both answers are identical (\(first.body.count) bytes, same payment \(payment))")
        check(retry.header("Idempotent-Replayed") == "true", "the retry is marked Idempotent-Replayed: true")
        check(afterFirst == before + 1 && afterRetry == afterFirst, "no second charge: one payment for the session")
        let paidSession = try api.call(.get, "/v1/sessions/\(orderToken)", headers: client)
        line(
            "the session now: status \(paidSession.json["status"] ?? "?"), payment_id \(paidSession.json["payment_id"] ?? "?")"
        )
        check(paidSession.string("payment_id") == payment, "the session records its one payment")
    }

    /// Step: a declined card (the sandbox acquirer declines amounts ending in 05).
    private func decline() throws {
        let amount = Money(minorUnits: 10_005, currency: .twd)
        step("A declined card: the sandbox acquirer declines amounts whose minor units end in 05")
        let token = try mint(amount)
        let tokenized = try api.call(.post, "/v1/tokens", headers: client, json: ["token": token.json])
        let prime = tokenized.string("prime") ?? ""
        show(tokenized, "POST /v1/tokens (a token for \(amount))")
        try require(tokenized.status == 200 && prime.hasPrefix("prm_"), "the token is valid: a prime came back")
        let paid = try api.call(
            .post, "/v1/payments", headers: server + [("Idempotency-Key", "DEMO-\(runID)-3-pay")],
            json: [
                "prime": prime, "amount": amount.decimalString, "currency": "TWD", "order_number": "DEMO-\(runID)-3",
            ])
        show(paid, "POST /v1/payments")
        let paymentID = paid.string("error.payment_id") ?? ""
        line("error.decline_code \(paid.string("error.decline_code") ?? "?"), error.payment_id \(paymentID)")
        line("error.message \"\(paid.string("error.message") ?? "")\"")
        check(
            paid.status == 402 && paid.string("error.code") == "card_declined"
                && paid.string("error.decline_code") == "do_not_honor",
            "402 card_declined, decline_code do_not_honor")
        if !paymentID.isEmpty {
            let read = try api.call(.get, "/v1/payments/\(paymentID)", headers: server)
            line("GET /v1/payments/\(paymentID) -> status \(read.json["status"] ?? "?")")
            check(read.string("status") == "failed", "the declined payment is recorded as failed")
        }
    }

    /// Step: the first token and the first prime used again.
    private func reuse(prime: String, token: Any, amount: Money) throws {
        step("Reuse: the first prime and the first token once more")
        let paid = try api.call(
            .post, "/v1/payments", headers: server + [("Idempotency-Key", "DEMO-\(runID)-4-pay")],
            json: [
                "prime": prime, "amount": amount.decimalString, "currency": "TWD", "order_number": "DEMO-\(runID)-4",
            ])
        show(paid, "POST /v1/payments {the first prime}")
        line("error.message \"\(paid.string("error.message") ?? "")\"")
        check(paid.status == 409 && paid.string("error.code") == "prime_already_used", "409 prime_already_used")
        let tokenized = try api.call(.post, "/v1/tokens", headers: client, json: ["token": token])
        show(tokenized, "POST /v1/tokens {the first token}")
        check(tokenized.status == 409 && tokenized.string("error.code") == "token_replayed", "409 token_replayed")
    }

    /// Step: every delivery the receiver got during the demo, verified.
    private func allWebhooks(secret: String, inbox: WebhookInbox) throws {
        step("Every webhook the receiver got during the demo")
        // The session and refund events are queued by now; give the dispatcher a moment to send them.
        let deliveries = inbox.wait(timeout: 10) { list in
            Set(list.map(\.type)).isSuperset(of: [
                "payment.captured", "payment.refunded", "payment.failed", "session.completed",
            ])
        }
        var counts: [String: Int] = [:]
        var bad = 0
        for delivery in deliveries {
            counts[delivery.type, default: 0] += 1
            if (try? WebhookSignature.verify(header: delivery.signature, body: delivery.body, secret: secret)) == nil {
                bad += 1
            }
        }
        line(counts.sorted { $0.key < $1.key }.map { "\($0.key) x\($0.value)" }.joined(separator: ", "))
        check(!deliveries.isEmpty && bad == 0, "\(deliveries.count) deliveries, every signature valid")
        line("note: the sandbox merchant's webhook endpoint still names this receiver, which stops with the demo;")
        line("set your own with PUT /v1/webhook-endpoint")
    }
}

/// The demo's webhook receiver: a libmicrohttpd server on a free loopback port that keeps each delivery.
// Unchecked: the deliveries are guarded by the condition variable `condition` (waited on, so not a Locked); the server is set in init.
final class WebhookInbox: @unchecked Sendable {
    /// One POST received.
    struct Delivery: Sendable {
        var body: Data
        var signature: String

        // The demo's webhook receiver reads the bodies it was sent, as a merchant would.
        var json: [String: Any] { ((try? JSONSerialization.jsonObject(with: body)) as? [String: Any]) ?? [:] }
        var type: String { json["type"] as? String ?? "?" }
        var eventID: String { json["id"] as? String ?? "?" }
        func mentions(_ id: String) -> Bool { String(decoding: body, as: UTF8.self).contains("\"\(id)\"") }
    }

    private let condition = NSCondition()
    private var deliveries: [Delivery] = []
    private(set) var port = 0

    /// Starts listening; the caller stops the returned server.
    func start() throws -> HTTPServer {
        var router = Router()
        router.post("/webhooks") { [self] request, _ in
            condition.withLock {
                deliveries.append(
                    Delivery(body: request.body, signature: request.headers[WebhookSignature.headerName] ?? ""))
                condition.broadcast()
            }
            return .text("ok")
        }
        var configuration = ServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.threadPoolSize = 2
        let server = HTTPServer(
            configuration: configuration, responder: HTTPApplication(router: router), messages: { _ in })
        try server.start()
        port = server.port
        return server
    }

    /// Waits until `done` holds for the deliveries so far, or `timeout` seconds; returns the deliveries.
    func wait(timeout: TimeInterval, until done: ([Delivery]) -> Bool) -> [Delivery] {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while !done(deliveries), condition.wait(until: deadline) {}
        return deliveries
    }
}
