import Foundation
import OrchardBase

/// Why a webhook request got no HTTP answer, with a stable code.
///
/// Equality compares codes only. Reasons never contain a secret or the body.
public struct WebhookTransportError: CodedError, Sendable {
    /// A stable, documented error code.
    public struct Code: Hashable, Sendable, RawRepresentable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The URL is not an absolute `http` or `https` URL with a host; nothing was sent.
        public static let urlRefused = Code(rawValue: "url_refused")
        /// There is no signing secret for the endpoint; nothing was sent.
        public static let noSigningSecret = Code(rawValue: "no_signing_secret")
        /// The host could not be resolved or did not accept the connection.
        public static let connectFailed = Code(rawValue: "connect_failed")
        /// The TLS handshake or the server's certificate failed.
        public static let tlsFailed = Code(rawValue: "tls_failed")
        /// No complete answer within the timeout.
        public static let timeout = Code(rawValue: "timeout")
        /// Any other failure while sending or receiving.
        public static let transportFailed = Code(rawValue: "transport_failed")
    }

    /// What went wrong, as a stable code.
    public var code: Code
    /// A short reason (no secret, no body).
    public var reason: String

    public init(code: Code, reason: String = "") {
        self.code = code
        self.reason = reason
    }
}

/// The outcome of sending one webhook request.
public enum WebhookSendResult: Sendable, Hashable {
    /// The endpoint answered with this HTTP status and body (read up to the sender's cap).
    case answered(status: Int, body: Data = Data())
    /// The request got no answer.
    case failed(WebhookTransportError)

    /// Whether the endpoint answered with a 2xx status, which ends delivery.
    public var isSuccess: Bool {
        if case .answered(let status, _) = self { return (200...299).contains(status) }
        return false
    }
}

/// Sends one webhook request: an HTTP POST of `body` with `headers` to `url`.
///
/// Implementations must not follow redirects, must give up after `timeout` seconds, must speak only
/// http and https, and must never log the body or the headers' values.
public protocol WebhookSender: Sendable {
    /// POSTs `body` to `url` and reports the status answered or why there was none.
    func send(url: String, body: Data, headers: [(String, String)], timeout: TimeInterval) -> WebhookSendResult
}

/// One delivery attempt as the dispatcher logs it: never the secret, never the body.
public struct WebhookDeliveryLogRecord: Sendable, Hashable, CustomStringConvertible {
    public var eventID: String
    public var eventType: String
    public var merchantID: String
    /// The attempt's number, 1 for the first.
    public var attempt: Int
    /// The endpoint as `scheme://host[:port]/path`, without credentials or query.
    public var endpoint: String
    public var attemptedAt: Date
    /// The HTTP status answered, if any.
    public var httpStatus: Int?
    /// Why there was no answer (a ``WebhookTransportError`` code and reason), if so.
    public var error: String?
    /// The event's state after this attempt.
    public var state: WebhookDeliveryState
    /// The next attempt's time, for `pending`.
    public var nextAttemptAt: Date?
    /// How long the request took, in milliseconds.
    public var durationMilliseconds: Int

    public init(
        eventID: String, eventType: String, merchantID: String, attempt: Int, endpoint: String, attemptedAt: Date,
        httpStatus: Int?, error: String?, state: WebhookDeliveryState, nextAttemptAt: Date?, durationMilliseconds: Int
    ) {
        self.eventID = eventID
        self.eventType = eventType
        self.merchantID = merchantID
        self.attempt = attempt
        self.endpoint = endpoint
        self.attemptedAt = attemptedAt
        self.httpStatus = httpStatus
        self.error = error
        self.state = state
        self.nextAttemptAt = nextAttemptAt
        self.durationMilliseconds = durationMilliseconds
    }

    /// The record's fields in a stable order, as `(key, value)` pairs for a structured logger.
    public var fields: [(String, String)] {
        var fields: [(String, String)] = [
            ("event", "webhook_attempt"), ("event_id", eventID), ("event_type", eventType),
            ("merchant_id", merchantID), ("attempt", String(attempt)), ("endpoint", endpoint),
            ("attempted_at", Self.timestamp(attemptedAt)),
        ]
        if let httpStatus { fields.append(("http_status", String(httpStatus))) }
        if let error { fields.append(("error", error)) }
        fields.append(("state", state.rawValue))
        if let nextAttemptAt { fields.append(("next_attempt_at", Self.timestamp(nextAttemptAt))) }
        fields.append(("duration_ms", String(durationMilliseconds)))
        return fields
    }

    /// One logfmt line: `event=webhook_attempt event_id=evt_… … state=pending`.
    public var description: String {
        fields.map { key, value in
            let needsQuotes = value.isEmpty || value.contains { $0 == " " || $0 == "\"" || $0 == "=" }
            let escaped = value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(
                of: "\"", with: "\\\"")
            return "\(key)=\(needsQuotes ? "\"\(escaped)\"" : escaped)"
        }.joined(separator: " ")
    }

    private static func timestamp(_ date: Date) -> String {
        date.ISO8601Format()
    }
}

/// Where the dispatcher writes one record per attempt (a logger, a metrics hook, a test's array).
public typealias WebhookLogSink = @Sendable (WebhookDeliveryLogRecord) -> Void

/// What one pass of the dispatcher did.
public struct WebhookDispatchSummary: Sendable, Hashable {
    /// Attempts made (including refused URLs).
    public var attempted = 0
    /// Events a 2xx answer delivered.
    public var delivered = 0
    /// Events left pending for a later attempt.
    public var retrying = 0
    /// Events that became dead.
    public var dead = 0
    /// Claimed events not sent because another instance took them over after the lease ended.
    public var skipped = 0

    public init(attempted: Int = 0, delivered: Int = 0, retrying: Int = 0, dead: Int = 0, skipped: Int = 0) {
        self.attempted = attempted
        self.delivered = delivered
        self.retrying = retrying
        self.dead = dead
        self.skipped = skipped
    }
}

/// Delivers due webhooks from a ``WebhookOutbox``: signs each body, POSTs it through a ``WebhookSender``,
/// and records every attempt (2xx, and for a PayerMax notification also a `{"code":"SUCCESS"}` body → `delivered`; anything else → `pending` with the next attempt from the
/// ``WebhookRetrySchedule``; after the schedule's last attempt → `dead`).
///
/// Tests call ``runOnce(now:)``; the server calls ``start()`` and ``stop()``. Passes never overlap: a
/// ``runOnce(now:)`` while the loop is delivering waits for it.
///
/// Each request carries `Content-Type: application/json`, `Orchard-Signature` (PayerMax's `sign` instead for a
/// ``WebhookForm/payerMax(sign:)`` notification), `Orchard-Event-Id`, `Orchard-Event-Type`,
/// `Orchard-Delivery-Attempt` and `User-Agent: Orchard/<version>`.
// Unchecked: the loop's thread and flags are guarded by the condition variable `state` (a wait, so not a Locked).
public final class WebhookDispatcher: @unchecked Sendable {
    /// How the dispatcher behaves.
    public struct Configuration: Sendable {
        /// When failed deliveries are tried again.
        public var retrySchedule: WebhookRetrySchedule = .default
        /// How long one request may take, in seconds (default 10).
        public var timeout: TimeInterval = 10
        /// How many due events one pass claims from the outbox (default 10). Each is sent only after its lease
        /// is renewed, so a slow receiver never lets a claim run out under a batch; a small batch leaves the rest
        /// to other instances meanwhile.
        public var batchSize: Int = 10
        /// How long the background loop sleeps when nothing is due, in seconds (default 1);
        /// ``WebhookDispatcher/wake()`` cuts the sleep short.
        public var pollInterval: TimeInterval = 1
        /// How long the loop waits after the outbox failed before it tries again, in seconds (default 5).
        public var errorBackoff: TimeInterval = 5
        /// The `User-Agent` sent.
        public var userAgent: String = WebhookDispatcher.defaultUserAgent

        /// The defaults.
        public init() {}
    }

    /// `Orchard/<version>`.
    public static let defaultUserAgent = "Orchard/\(OrchardVersion.number)"

    private let outbox: any WebhookOutbox
    private let sender: any WebhookSender
    private let clock: any GatewayClock
    private let log: WebhookLogSink
    /// The configuration in force.
    public let configuration: Configuration

    /// Serializes passes (the loop's and ``runOnce(now:)``'s), so one event is never sent twice at once.
    private let passes = Locked()
    /// Guards `thread`, `stopRequested`, `wakeRequested`; the loop sleeps on it.
    private let state = NSCondition()
    private var thread: Thread?
    private var stopRequested = false
    private var wakeRequested = false
    private var loopFinished = true

    /// A dispatcher reading due events from `outbox` and sending them with `sender`.
    ///
    /// - Parameters:
    ///   - clock: the time of each attempt in the background loop and in ``runOnce()``.
    ///   - log: receives one record per attempt (and nothing else).
    public init(
        outbox: any WebhookOutbox, sender: any WebhookSender, clock: any GatewayClock = SystemClock(),
        configuration: Configuration = Configuration(), log: @escaping WebhookLogSink = { _ in }
    ) {
        self.outbox = outbox
        self.sender = sender
        self.clock = clock
        self.configuration = configuration
        self.log = log
    }

    deinit { stop() }

    // MARK: Passes

    /// Delivers the events due at `now`, using `now` as every attempt's time (deterministic tests).
    ///
    /// - Throws: what the outbox throws; attempts made before the failure stay recorded.
    @discardableResult
    public func runOnce(now: Date) throws -> WebhookDispatchSummary {
        try pass(dueAt: now, attemptTime: { now }, shouldContinue: { true })
    }

    /// Delivers the events due at the clock's now, reading the clock again for each attempt.
    @discardableResult
    public func runOnce() throws -> WebhookDispatchSummary {
        try pass(dueAt: clock.now(), attemptTime: { [clock] in clock.now() }, shouldContinue: { true })
    }

    private func pass(
        dueAt now: Date, attemptTime: () -> Date, shouldContinue: () -> Bool
    ) throws -> WebhookDispatchSummary {
        try passes.withLock {
            var summary = WebhookDispatchSummary()
            for due in try outbox.dueWebhooks(now: now, limit: max(configuration.batchSize, 1)) {
                guard shouldContinue() else { break }
                guard let attempt = try deliver(due, at: attemptTime()) else {
                    summary.skipped += 1
                    continue
                }
                summary.attempted += 1
                switch attempt.state {
                case .delivered: summary.delivered += 1
                case .pending: summary.retrying += 1
                case .dead: summary.dead += 1
                }
            }
            return summary
        }
    }

    /// Makes one attempt to deliver `due` at `date`, records it in the outbox and logs it. The outbox first
    /// renews its lease on the event and numbers the attempt; an event whose lease another instance took over
    /// (or that is no longer pending) is not sent.
    ///
    /// - Returns: the attempt as recorded, or `nil` when the event was not this dispatcher's to send.
    /// - Throws: what the outbox throws (the request may have been sent: delivery is at least once, and the
    ///   event stays due).
    @discardableResult
    public func deliver(_ due: DueWebhook, at date: Date) throws -> WebhookAttempt? {
        guard let number = try outbox.beginWebhookAttempt(eventID: due.event.id, now: date) else { return nil }
        let started = DispatchTime.now().uptimeNanoseconds
        let result: WebhookSendResult
        if !Self.isDeliverableURL(due.url) {
            result = .failed(WebhookTransportError(code: .urlRefused, reason: "only http and https URLs are delivered"))
        } else if case .payerMax(let sign) = due.form {
            let headers: [(String, String)] = [
                ("Content-Type", "application/json"), ("sign", sign), ("Orchard-Event-Id", due.event.id),
                ("Orchard-Event-Type", due.event.type), ("Orchard-Delivery-Attempt", String(number)),
                ("User-Agent", configuration.userAgent),
            ]
            result = sender.send(
                url: due.url, body: due.event.payload, headers: headers, timeout: configuration.timeout)
        } else if due.secrets.allSatisfy(\.isEmpty) {
            result = .failed(
                WebhookTransportError(code: .noSigningSecret, reason: "the endpoint has no signing secret"))
        } else {
            let signature = WebhookSignature.header(
                secrets: due.secrets.filter { !$0.isEmpty }, at: date, body: due.event.payload)
            let headers: [(String, String)] = [
                ("Content-Type", "application/json"),
                (WebhookSignature.headerName, signature.description),
                ("Orchard-Event-Id", due.event.id),
                ("Orchard-Event-Type", due.event.type),
                ("Orchard-Delivery-Attempt", String(number)),
                ("User-Agent", configuration.userAgent),
            ]
            result = sender.send(
                url: due.url, body: due.event.payload, headers: headers, timeout: configuration.timeout)
        }
        let elapsed = Int((DispatchTime.now().uptimeNanoseconds &- started) / 1_000_000)

        let attempt: WebhookAttempt
        switch result {
        case .answered(let status, let body) where due.form.acknowledges(status: status, body: body):
            attempt = WebhookAttempt(
                eventID: due.event.id, attemptedAt: date, httpStatus: status, error: nil, state: .delivered,
                nextAttemptAt: nil, latencyMilliseconds: elapsed)
        case .answered(let status, _):
            let next = configuration.retrySchedule.nextAttempt(afterAttempt: number, at: date)
            attempt = WebhookAttempt(
                eventID: due.event.id, attemptedAt: date, httpStatus: status, error: nil,
                state: next == nil ? .dead : .pending, nextAttemptAt: next, latencyMilliseconds: elapsed)
        case .failed(let error):
            let next = configuration.retrySchedule.nextAttempt(afterAttempt: number, at: date)
            attempt = WebhookAttempt(
                eventID: due.event.id, attemptedAt: date, httpStatus: nil, error: String(error.description.prefix(500)),
                state: next == nil ? .dead : .pending, nextAttemptAt: next, latencyMilliseconds: elapsed)
        }
        try outbox.recordWebhookAttempt(attempt)
        log(
            WebhookDeliveryLogRecord(
                eventID: due.event.id, eventType: due.event.type, merchantID: due.event.merchantID, attempt: number,
                endpoint: Self.redactedEndpoint(due.url), attemptedAt: date, httpStatus: attempt.httpStatus,
                error: attempt.error, state: attempt.state, nextAttemptAt: attempt.nextAttemptAt,
                durationMilliseconds: elapsed))
        return attempt
    }

    // MARK: Background loop

    /// Whether the background loop is running.
    public var isRunning: Bool { state.withLock { thread != nil } }

    /// Starts the background loop on its own thread; does nothing when it already runs.
    public func start() {
        state.lock()
        defer { state.unlock() }
        guard thread == nil else { return }
        stopRequested = false
        wakeRequested = false
        loopFinished = false
        let thread = Thread { [weak self] in self?.loop() }
        thread.name = "orchard.webhooks"
        self.thread = thread
        thread.start()
    }

    /// Stops the background loop and waits for it: an attempt in flight finishes and is recorded first.
    /// Does nothing when the loop is not running.
    public func stop() {
        state.lock()
        defer { state.unlock() }
        guard thread != nil else { return }
        stopRequested = true
        state.broadcast()
        while !loopFinished { state.wait() }
        thread = nil
    }

    /// Cuts the loop's sleep short, e.g. right after an event was written, so it is sent without waiting
    /// for the next poll.
    public func wake() {
        state.withLock {
            wakeRequested = true
            state.broadcast()
        }
    }

    private func loop() {
        defer {
            state.withLock {
                loopFinished = true
                state.broadcast()
            }
        }
        while !isStopRequested() {
            var pause = configuration.pollInterval
            do {
                let summary = try pass(
                    dueAt: clock.now(), attemptTime: { [clock] in clock.now() },
                    shouldContinue: { [weak self] in !(self?.isStopRequested() ?? true) })
                // A full batch means more may be due: go again at once.
                if summary.attempted + summary.skipped >= max(configuration.batchSize, 1) { pause = 0 }
            } catch {
                pause = configuration.errorBackoff
            }
            state.lock()
            let deadline = Date().addingTimeInterval(max(pause, 0))
            while !stopRequested, !wakeRequested, pause > 0, state.wait(until: deadline) {}
            wakeRequested = false
            state.unlock()
        }
    }

    private func isStopRequested() -> Bool { state.withLock { stopRequested } }

    // MARK: URLs

    /// Whether `url` is an absolute `http` or `https` URL with a host, at most 2048 bytes, without
    /// whitespace or control characters.
    public static func isDeliverableURL(_ url: String) -> Bool {
        guard url.utf8.count <= FieldLimits.url,
            !url.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7f }),
            let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty
        else { return false }
        return true
    }

    /// `url` as `scheme://host[:port]/path`, without user, password, query or fragment, for logs.
    public static func redactedEndpoint(_ url: String) -> String {
        guard let components = URLComponents(string: url), let scheme = components.scheme,
            let host = components.host
        else { return "(invalid url)" }
        let port = components.port.map { ":\($0)" } ?? ""
        let hostText = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return "\(scheme.lowercased())://\(hostText)\(port)\(components.percentEncodedPath)"
    }
}
