import Foundation
import GatewayCurl
import Testing

@testable import Gateway

/// The dispatcher against a real loopback HTTP receiver through libcurl, with a manual clock.
@Suite("Webhook dispatcher")
struct WebhooksDispatcherTests {
    static let secret = "whsec_dispatch_secret"

    struct Fixture {
        let clock = ManualClock(WebhookFixtures.start)
        let outbox = InMemoryWebhookOutbox()
        let logs = LogCollector()
        let receiver: LoopbackHTTPReceiver
        let dispatcher: WebhookDispatcher

        init(
            _ script: [LoopbackHTTPReceiver.Behavior] = [], otherwise: LoopbackHTTPReceiver.Behavior = .status(200),
            configure: (inout WebhookDispatcher.Configuration) -> Void = { _ in }
        ) throws {
            receiver = try LoopbackHTTPReceiver(script, otherwise: otherwise)
            var configuration = WebhookDispatcher.Configuration()
            configuration.timeout = 20
            configure(&configuration)
            dispatcher = WebhookDispatcher(
                outbox: outbox, sender: CurlWebhookSender(), clock: clock, configuration: configuration,
                log: logs.sink)
        }

        func addEvent(_ id: String = "evt_1", secrets: [String] = [WebhooksDispatcherTests.secret], url: String? = nil)
        {
            outbox.add(
                WebhookFixtures.event(id), url: url ?? receiver.url(), secrets: secrets, dueAt: clock.now())
        }

        @discardableResult
        func run() throws -> WebhookDispatchSummary { try dispatcher.runOnce(now: clock.now()) }
    }

    @Test("a 2xx answer ends delivery; the request carries the body and the headers", arguments: [200, 201, 204, 299])
    func delivered(status: Int) throws {
        let fixture = try Fixture(otherwise: .status(status))
        defer { fixture.receiver.stop() }
        fixture.addEvent()
        let summary = try fixture.run()
        #expect(summary == WebhookDispatchSummary(attempted: 1, delivered: 1))
        #expect(fixture.outbox.row("evt_1")?.state == .delivered)
        #expect(fixture.outbox.attempts.first?.httpStatus == status)
        #expect(fixture.outbox.attempts.first?.nextAttemptAt == nil)

        let request = try #require(fixture.receiver.requests.first)
        #expect(request.method == "POST")
        #expect(request.path == "/hooks")
        #expect(request.body == WebhookFixtures.event().payload)
        #expect(request.header("Content-Type") == "application/json")
        #expect(request.header("Orchard-Event-Id") == "evt_1")
        #expect(request.header("Orchard-Event-Type") == "payment.succeeded")
        #expect(request.header("Orchard-Delivery-Attempt") == "1")
        #expect(request.header("User-Agent") == "Orchard/0.1.0")
        #expect(request.header("Expect") == nil)
        #expect(request.header("Orchard-Signature")?.hasPrefix("t=1800000000,v1=") == true)

        #expect(try fixture.run() == WebhookDispatchSummary())
        #expect(try fixture.outbox.pendingWebhookCount() == 0)
        #expect(fixture.receiver.requests.count == 1)
    }

    @Test("the receiver verifies the signature with the helper, during a rotation with either secret")
    func receiverVerifies() throws {
        let fixture = try Fixture()
        defer { fixture.receiver.stop() }
        fixture.addEvent(secrets: ["whsec_old", "whsec_new"])
        fixture.clock.advance(by: 42.7)
        try fixture.run()
        let request = try #require(fixture.receiver.requests.first)
        let header = try #require(request.header(WebhookSignature.headerName))
        let now = fixture.clock.now()
        for secret in ["whsec_old", "whsec_new"] {
            let parsed = try WebhookSignature.verify(header: header, body: request.body, secret: secret, now: now)
            #expect(parsed.timestamp == 1_800_000_042)
            #expect(parsed.v1.count == 2)
        }
        #expect(throws: WebhookSignatureError(code: .signatureMismatch)) {
            try WebhookSignature.verify(header: header, body: request.body, secret: "whsec_other", now: now)
        }
        #expect(throws: WebhookSignatureError(code: .timestampOutOfTolerance)) {
            try WebhookSignature.verify(
                header: header, body: request.body, secret: "whsec_new", now: now.addingTimeInterval(301))
        }
    }

    @Test("500 then 200: pending, retried one minute later, then delivered")
    func retryAfterOneMinute() throws {
        let fixture = try Fixture([.status(500)], otherwise: .status(200))
        defer { fixture.receiver.stop() }
        fixture.addEvent()
        let start = fixture.clock.now()
        #expect(try fixture.run() == WebhookDispatchSummary(attempted: 1, retrying: 1))
        let first = try #require(fixture.outbox.attempts.first)
        #expect(first.httpStatus == 500)
        #expect(first.state == .pending)
        #expect(first.nextAttemptAt == start + 60)

        fixture.clock.advance(by: 59)
        #expect(try fixture.run() == WebhookDispatchSummary())
        fixture.clock.advance(by: 1)
        #expect(try fixture.run() == WebhookDispatchSummary(attempted: 1, delivered: 1))
        #expect(fixture.outbox.row("evt_1")?.state == .delivered)
        #expect(fixture.receiver.requests.map { $0.header("Orchard-Delivery-Attempt") } == ["1", "2"])
        #expect(
            fixture.receiver.requests.map(\.body) == [WebhookFixtures.event().payload, WebhookFixtures.event().payload])
    }

    @Test(
        "a non-2xx answer is a failure and redirects are not followed",
        arguments: [100, 199, 301, 302, 307, 400, 404, 410, 429, 500, 503])
    func nonSuccess(status: Int) throws {
        let fixture = try Fixture(
            otherwise: .respond(status: status, headers: [("Location", "/elsewhere")], body: Data("no".utf8)))
        defer { fixture.receiver.stop() }
        fixture.addEvent()
        try fixture.run()
        let attempt = try #require(fixture.outbox.attempts.first)
        #expect(attempt.state == .pending)
        #expect(attempt.nextAttemptAt == WebhookFixtures.start + 60)
        #expect(fixture.receiver.requests.map(\.path) == ["/hooks"])
    }

    @Test("a receiver that always fails is tried on the whole schedule, then the event is dead")
    func wholeScheduleToDead() throws {
        let fixture = try Fixture(otherwise: .status(503))
        defer { fixture.receiver.stop() }
        fixture.addEvent()
        let start = fixture.clock.now()
        // Attempt times: 0, +1m, +5m, +30m, +2h, +6h, +12h, +24h after each previous one.
        var due = start
        for (index, delay) in ([0] + WebhookRetrySchedule.default.delays).enumerated() {
            due += delay
            if delay > 0 {
                fixture.clock.set(due - 1)
                #expect(try fixture.run() == WebhookDispatchSummary(), "attempt \(index + 1) ran early")
            }
            fixture.clock.set(due)
            let last = index == WebhookRetrySchedule.default.delays.count
            #expect(
                try fixture.run()
                    == WebhookDispatchSummary(attempted: 1, retrying: last ? 0 : 1, dead: last ? 1 : 0))
        }
        #expect(fixture.outbox.row("evt_1")?.state == .dead)
        #expect(fixture.outbox.attempts.count == 8)
        #expect(fixture.outbox.attempts.last?.nextAttemptAt == nil)
        #expect(fixture.outbox.attempts.allSatisfy { $0.httpStatus == 503 })
        #expect(fixture.receiver.requests.map { $0.header("Orchard-Delivery-Attempt") } == (1...8).map(String.init))
        #expect(due == start + 60 + 300 + 1800 + 7200 + 21600 + 43200 + 86400)

        fixture.clock.advance(by: 30 * 86400)
        #expect(try fixture.run() == WebhookDispatchSummary())
        #expect(fixture.receiver.requests.count == 8)
        #expect(fixture.logs.records.map(\.state) == Array(repeating: .pending, count: 7) + [.dead])
    }

    @Test("manual redelivery sends a dead event again, and replays a delivered one with the same event id")
    func manualRedelivery() throws {
        let fixture = try Fixture([.status(500), .status(500)], otherwise: .status(200)) {
            $0.retrySchedule = try! WebhookRetrySchedule(parsing: "1s")
        }
        defer { fixture.receiver.stop() }
        fixture.addEvent()
        try fixture.run()
        fixture.clock.advance(by: 1)
        #expect(try fixture.run() == WebhookDispatchSummary(attempted: 1, dead: 1))
        #expect(fixture.outbox.row("evt_1")?.state == .dead)

        fixture.clock.advance(by: 3600)
        #expect(try fixture.run() == WebhookDispatchSummary())
        try fixture.outbox.scheduleRedelivery(eventID: "evt_1", merchantID: "mer_1", now: fixture.clock.now())
        #expect(try fixture.run() == WebhookDispatchSummary(attempted: 1, delivered: 1))
        #expect(fixture.outbox.row("evt_1")?.state == .delivered)

        try fixture.outbox.scheduleRedelivery(eventID: "evt_1", merchantID: "mer_1", now: fixture.clock.now())
        #expect(try fixture.run() == WebhookDispatchSummary(attempted: 1, delivered: 1))
        let requests = fixture.receiver.requests
        #expect(requests.count == 4)
        #expect(Set(requests.map { $0.header("Orchard-Event-Id") }) == ["evt_1"])
        #expect(Set(requests.map(\.body)).count == 1)
    }

    @Test("a receiver that never answers times out; the attempt is recorded as a timeout and retried")
    func timeout() throws {
        let fixture = try Fixture(otherwise: .hang) { $0.timeout = 0.5 }
        defer { fixture.receiver.stop() }
        fixture.addEvent()
        #expect(try fixture.run() == WebhookDispatchSummary(attempted: 1, retrying: 1))
        let attempt = try #require(fixture.outbox.attempts.first)
        #expect(attempt.httpStatus == nil)
        #expect(attempt.error?.hasPrefix("timeout") == true)
        #expect(attempt.state == .pending)
        #expect(fixture.receiver.requests.count == 1)
    }

    @Test("a closed port and a dropped connection are transport failures")
    func transportFailures() throws {
        let closed = try LoopbackHTTPReceiver()
        let closedURL = closed.url()
        closed.stop()
        let fixture = try Fixture(otherwise: .close)
        defer { fixture.receiver.stop() }
        fixture.addEvent("evt_closed", url: closedURL)
        fixture.addEvent("evt_dropped")
        #expect(try fixture.run() == WebhookDispatchSummary(attempted: 2, retrying: 2))
        let errors = fixture.outbox.attempts.map { $0.error ?? "" }
        #expect(errors[0].hasPrefix("connect_failed"))
        #expect(errors[1].hasPrefix("transport_failed"))
    }

    @Test(
        "URLs other than http(s) are refused without sending, with a recorded error",
        arguments: [
            "ftp://127.0.0.1/hooks", "file:///etc/passwd", "gopher://127.0.0.1/", "javascript:alert(1)",
            "mailto:ops@example.com", "http://", "https:///path", "not a url", "", "//127.0.0.1/hooks",
            "http://exa mple.com/", "http://example.com/\r\nX-Injected: 1",
        ])
    func refusedURL(url: String) throws {
        let outbox = InMemoryWebhookOutbox()
        let sender = ScriptedWebhookSender()
        let logs = LogCollector()
        let dispatcher = WebhookDispatcher(outbox: outbox, sender: sender, log: logs.sink)
        outbox.add(WebhookFixtures.event(), url: url, secrets: [Self.secret], dueAt: WebhookFixtures.start)
        #expect(try dispatcher.runOnce(now: WebhookFixtures.start) == WebhookDispatchSummary(attempted: 1, retrying: 1))
        #expect(sender.calls.isEmpty)
        let attempt = try #require(outbox.attempts.first)
        #expect(attempt.error?.hasPrefix("url_refused") == true)
        #expect(attempt.nextAttemptAt == WebhookFixtures.start + 60)
        #expect(logs.records.first?.error?.hasPrefix("url_refused") == true)
    }

    @Test(
        "the libcurl sender refuses other schemes itself too",
        arguments: ["ftp://127.0.0.1/", "file:///etc/hosts", "dict://127.0.0.1/"])
    func curlRefusesSchemes(url: String) {
        let result = CurlWebhookSender().send(url: url, body: Data("{}".utf8), headers: [], timeout: 5)
        #expect(result == .failed(WebhookTransportError(code: .urlRefused)))
    }

    @Test("an endpoint without a signing secret is not sent to")
    func noSecret() throws {
        let outbox = InMemoryWebhookOutbox()
        let sender = ScriptedWebhookSender()
        let dispatcher = WebhookDispatcher(outbox: outbox, sender: sender)
        outbox.add(
            WebhookFixtures.event(), url: "https://merchant.example/hooks", secrets: [""], dueAt: WebhookFixtures.start)
        try dispatcher.runOnce(now: WebhookFixtures.start)
        #expect(sender.calls.isEmpty)
        #expect(outbox.attempts.first?.error?.hasPrefix("no_signing_secret") == true)
    }

    @Test("each attempt is logged with its outcome, never the secret, the body or the URL's credentials and query")
    func logging() throws {
        let outbox = InMemoryWebhookOutbox()
        let sender = ScriptedWebhookSender(
            [.answered(status: 500), .failed(WebhookTransportError(code: .timeout, reason: "after 10000 ms"))],
            otherwise: .answered(status: 200))
        let logs = LogCollector()
        let clock = ManualClock(WebhookFixtures.start)
        let dispatcher = WebhookDispatcher(outbox: outbox, sender: sender, clock: clock, log: logs.sink)
        let url = "https://user:hunter2@merchant.example:8443/hooks/orchard?token=query-secret#frag"
        outbox.add(WebhookFixtures.event(), url: url, secrets: [Self.secret], dueAt: clock.now())
        try dispatcher.runOnce()
        clock.advance(by: 60)
        try dispatcher.runOnce()
        clock.advance(by: 300)
        try dispatcher.runOnce()

        let records = logs.records
        #expect(records.map(\.attempt) == [1, 2, 3])
        #expect(records.map(\.httpStatus) == [500, nil, 200])
        #expect(records.map(\.state) == [.pending, .pending, .delivered])
        #expect(records[1].error == "timeout: after 10000 ms")
        #expect(records[0].nextAttemptAt == WebhookFixtures.start + 60)
        #expect(records.allSatisfy { $0.endpoint == "https://merchant.example:8443/hooks/orchard" })
        #expect(
            records.allSatisfy {
                $0.eventID == "evt_1" && $0.eventType == "payment.succeeded" && $0.merchantID == "mer_1"
            })
        let payload = String(decoding: WebhookFixtures.event().payload, as: UTF8.self)
        for record in records {
            let line = record.description
            #expect(line.hasPrefix("event=webhook_attempt event_id=evt_1 event_type=payment.succeeded"))
            for secret in [Self.secret, "hunter2", "query-secret", payload, "pay_1"] {
                #expect(!line.contains(secret))
                #expect(!record.fields.contains { $0.1.contains(secret) })
            }
        }
        #expect(records[0].description.contains("attempted_at=2027-01-15T08:00:00Z"))
        #expect(records[1].description.contains(#"error="timeout: after 10000 ms""#))
        // The sender was given the full URL and the signature.
        #expect(sender.calls.allSatisfy { $0.url == url })
        #expect(sender.calls.allSatisfy { call in call.headers.contains { $0.0 == "Orchard-Signature" } })
    }

    @Test("the outbox's failure surfaces from runOnce")
    func outboxFailure() {
        struct Broken: WebhookOutbox {
            struct Failure: Error {}
            func dueWebhooks(now: Date, limit: Int) throws -> [DueWebhook] { throw Failure() }
            func beginWebhookAttempt(eventID: String, now: Date) throws -> Int? { throw Failure() }
            func recordWebhookAttempt(_ attempt: WebhookAttempt) throws { throw Failure() }
            func scheduleRedelivery(eventID: String, merchantID: String, now: Date) throws { throw Failure() }
            func pendingWebhookCount() throws -> Int { throw Failure() }
        }
        let dispatcher = WebhookDispatcher(outbox: Broken(), sender: ScriptedWebhookSender())
        #expect(throws: Broken.Failure.self) { try dispatcher.runOnce(now: WebhookFixtures.start) }
    }

    @Test("the loop delivers due events, stops cleanly, and starts again")
    func startStop() throws {
        let fixture = try Fixture { $0.pollInterval = 0.05 }
        defer { fixture.receiver.stop() }
        fixture.addEvent("evt_1")
        #expect(!fixture.dispatcher.isRunning)
        fixture.dispatcher.start()
        fixture.dispatcher.start()
        #expect(fixture.dispatcher.isRunning)
        #expect(fixture.receiver.waitForRequests(1))
        fixture.dispatcher.stop()
        #expect(!fixture.dispatcher.isRunning)
        #expect(fixture.outbox.row("evt_1")?.state == .delivered)
        fixture.dispatcher.stop()

        fixture.addEvent("evt_2")
        #expect(try fixture.outbox.pendingWebhookCount() == 1)
        fixture.dispatcher.start()
        fixture.dispatcher.wake()
        #expect(fixture.receiver.waitForRequests(2))
        fixture.dispatcher.stop()
        #expect(fixture.outbox.row("evt_2")?.state == .delivered)
        #expect(fixture.receiver.requests.map { $0.header("Orchard-Event-Id") } == ["evt_1", "evt_2"])
    }

    @Test("stop waits for the attempt in flight, which is recorded before stop returns")
    func stopWaitsForInFlight() throws {
        let fixture = try Fixture(otherwise: .hang) {
            $0.timeout = 1
            $0.pollInterval = 0.05
        }
        defer { fixture.receiver.stop() }
        fixture.addEvent("evt_1")
        fixture.addEvent("evt_2")
        fixture.dispatcher.start()
        #expect(fixture.receiver.waitForRequests(1))
        fixture.dispatcher.stop()
        // The first attempt finished and was recorded; the second event was not started after stop.
        let attempts = fixture.outbox.attempts
        #expect(attempts.first?.eventID == "evt_1")
        #expect(attempts.first?.error?.hasPrefix("timeout") == true)
        #expect(attempts.count == fixture.receiver.requests.count)
    }
}
