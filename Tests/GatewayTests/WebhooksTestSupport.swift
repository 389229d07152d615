import Foundation
import Gateway

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An in-memory ``WebhookOutbox`` for the dispatcher's tests: events with their state, attempts and
/// next attempt time, and every attempt recorded. A manual redelivery keeps the attempt count, so a dead
/// event redelivered gets one attempt. One dispatcher uses it at a time: its claims hold nothing.
final class InMemoryWebhookOutbox: WebhookOutbox, @unchecked Sendable {
    struct Row {
        var event: WebhookEvent
        var url: String
        var secrets: [String]
        var state: WebhookDeliveryState
        var attempts: Int
        var nextAttemptAt: Date?
    }

    struct UnknownEvent: Error {}

    private let lock = NSLock()
    private var rows: [String: Row] = [:]
    private var order: [String] = []
    private var recorded: [WebhookAttempt] = []

    /// Adds a pending event due at `dueAt`.
    func add(_ event: WebhookEvent, url: String, secrets: [String], dueAt: Date) {
        lock.withLock {
            rows[event.id] = Row(
                event: event, url: url, secrets: secrets, state: .pending, attempts: 0, nextAttemptAt: dueAt)
            order.append(event.id)
        }
    }

    func row(_ id: String) -> Row? { lock.withLock { rows[id] } }

    func setURL(_ url: String, for id: String) { lock.withLock { rows[id]?.url = url } }

    var attempts: [WebhookAttempt] { lock.withLock { recorded } }

    func dueWebhooks(now: Date, limit: Int) throws -> [DueWebhook] {
        lock.withLock {
            order.compactMap { rows[$0] }
                .filter { $0.state == .pending && ($0.nextAttemptAt ?? .distantFuture) <= now }
                .sorted { $0.event.createdAt < $1.event.createdAt }
                .prefix(limit)
                .map { DueWebhook(event: $0.event, url: $0.url, secrets: $0.secrets, attempts: $0.attempts) }
        }
    }

    func beginWebhookAttempt(eventID: String, now: Date) throws -> Int? {
        lock.withLock {
            guard var row = rows[eventID], row.state == .pending else { return nil }
            row.attempts += 1
            rows[eventID] = row
            return row.attempts
        }
    }

    func recordWebhookAttempt(_ attempt: WebhookAttempt) throws {
        try lock.withLock {
            guard var row = rows[attempt.eventID] else { throw UnknownEvent() }
            row.state = attempt.state
            row.nextAttemptAt = attempt.nextAttemptAt
            rows[attempt.eventID] = row
            recorded.append(attempt)
        }
    }

    func scheduleRedelivery(eventID: String, merchantID: String, now: Date) throws {
        try lock.withLock {
            guard var row = rows[eventID], row.event.merchantID == merchantID else { throw UnknownEvent() }
            row.state = .pending
            row.nextAttemptAt = now
            rows[eventID] = row
        }
    }

    func pendingWebhookCount() throws -> Int { lock.withLock { rows.values.filter { $0.state == .pending }.count } }
}

/// A ``WebhookSender`` that answers from a script and records what it was asked, for tests that need no
/// network.
final class ScriptedWebhookSender: WebhookSender, @unchecked Sendable {
    struct Call {
        var url: String
        var body: Data
        var headers: [(String, String)]
        var timeout: TimeInterval
    }

    private let lock = NSLock()
    private var script: [WebhookSendResult]
    private let otherwise: WebhookSendResult
    private var recorded: [Call] = []

    init(_ script: [WebhookSendResult] = [], otherwise: WebhookSendResult = .answered(status: 200)) {
        self.script = script
        self.otherwise = otherwise
    }

    var calls: [Call] { lock.withLock { recorded } }

    func send(url: String, body: Data, headers: [(String, String)], timeout: TimeInterval) -> WebhookSendResult {
        lock.withLock {
            recorded.append(Call(url: url, body: body, headers: headers, timeout: timeout))
            return script.isEmpty ? otherwise : script.removeFirst()
        }
    }
}

/// Collects the dispatcher's log records.
final class LogCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var collected: [WebhookDeliveryLogRecord] = []

    var records: [WebhookDeliveryLogRecord] { lock.withLock { collected } }

    var sink: WebhookLogSink { { [self] record in lock.withLock { collected.append(record) } } }
}

/// A tiny HTTP/1.1 server on a loopback POSIX socket for tests: it records each request and answers
/// from a script of behaviours (then a default one), one connection at a time, closing each.
final class LoopbackHTTPReceiver: @unchecked Sendable {
    enum Behavior {
        /// Answer with `status`, extra headers and a body.
        case respond(status: Int, headers: [(String, String)] = [], body: Data = Data("ok".utf8))
        /// Read the request and never answer (the connection stays open until the receiver stops).
        case hang
        /// Read the request and close the connection without a word.
        case close

        static func status(_ status: Int) -> Behavior { .respond(status: status) }
    }

    struct ReceivedRequest {
        var method: String
        var path: String
        var headers: [(String, String)]
        var body: Data

        func header(_ name: String) -> String? {
            headers.first { $0.0.caseInsensitiveCompare(name) == .orderedSame }?.1
        }
    }

    struct SocketError: Error, CustomStringConvertible {
        var description: String
    }

    let port: UInt16
    private let listener: Int32
    private let condition = NSCondition()
    private var script: [Behavior]
    private var otherwise: Behavior
    private var received: [ReceivedRequest] = []
    private var hung: [Int32] = []
    private var beforeAnswer: (@Sendable () -> Void)?
    private var stopping = false
    private var finished = false

    /// Starts listening on 127.0.0.1 on a free port.
    init(_ script: [Behavior] = [], otherwise: Behavior = .status(200)) throws {
        self.script = script
        self.otherwise = otherwise
        #if canImport(Glibc)
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw SocketError(description: "socket: errno \(errno)") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            _ = closeDescriptor(fd)
            throw SocketError(description: "bind/listen: errno \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = UInt16(bigEndian: address.sin_port)
        let thread = Thread { [self] in serve() }
        thread.name = "test.loopback-receiver"
        thread.start()
    }

    deinit { stop() }

    /// `http://127.0.0.1:<port><path>`.
    func url(_ path: String = "/hooks") -> String { "http://127.0.0.1:\(port)\(path)" }

    /// The requests received so far.
    var requests: [ReceivedRequest] { condition.withLock { received } }

    /// Replaces the default behaviour (after the script runs out).
    func setDefault(_ behavior: Behavior) { condition.withLock { otherwise = behavior } }

    /// Runs `work` after each request is read and before it is answered (a slow receiver: advance an injected
    /// clock, sleep).
    func beforeAnswering(_ work: @escaping @Sendable () -> Void) { condition.withLock { beforeAnswer = work } }

    /// Waits until `count` requests arrived, or `timeout` seconds passed (a bound against hanging, not a
    /// measurement); returns whether they arrived.
    func waitForRequests(_ count: Int, timeout: TimeInterval = 60) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while received.count < count {
            if !condition.wait(until: deadline) { return received.count >= count }
        }
        return true
    }

    /// Stops accepting, closes held connections and waits for the serving thread.
    func stop() {
        condition.lock()
        if stopping {
            condition.unlock()
            return
        }
        stopping = true
        while !finished { condition.wait() }
        for fd in hung { _ = closeDescriptor(fd) }
        hung = []
        condition.unlock()
        _ = closeDescriptor(listener)
    }

    private func serve() {
        defer {
            condition.withLock {
                finished = true
                condition.broadcast()
            }
        }
        while !condition.withLock({ stopping }) {
            var descriptor = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 50) > 0 else { continue }
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { continue }
            handle(connection)
        }
    }

    private func handle(_ fd: Int32) {
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard let request = readRequest(fd) else {
            _ = closeDescriptor(fd)
            return
        }
        let (behavior, work) = condition.withLock {
            received.append(request)
            condition.broadcast()
            return (script.isEmpty ? otherwise : script.removeFirst(), beforeAnswer)
        }
        work?()
        switch behavior {
        case .respond(let status, let headers, let body):
            var head = "HTTP/1.1 \(status) Status\r\nContent-Length: \(body.count)\r\nConnection: close\r\n"
            for (name, value) in headers { head += "\(name): \(value)\r\n" }
            head += "\r\n"
            writeAll(fd, Data(head.utf8) + body)
            _ = closeDescriptor(fd)
        case .hang:
            condition.withLock { hung.append(fd) }
        case .close:
            _ = closeDescriptor(fd)
        }
    }

    private func readRequest(_ fd: Int32) -> ReceivedRequest? {
        var buffer = Data()
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        let separator = Data("\r\n\r\n".utf8)
        while true {
            if let end = buffer.range(of: separator) {
                let head = String(decoding: buffer[..<end.lowerBound], as: UTF8.self)
                var lines = head.components(separatedBy: "\r\n")
                let requestLine = lines.removeFirst().split(separator: " ")
                guard requestLine.count >= 2 else { return nil }
                let headers: [(String, String)] = lines.compactMap { line in
                    guard let colon = line.firstIndex(of: ":") else { return nil }
                    return (
                        String(line[..<colon]),
                        String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
                    )
                }
                let length =
                    headers.first { $0.0.caseInsensitiveCompare("Content-Length") == .orderedSame }
                    .flatMap { Int($0.1) } ?? 0
                let bodyStart = end.upperBound
                if buffer.count - bodyStart >= length {
                    return ReceivedRequest(
                        method: String(requestLine[0]), path: String(requestLine[1]), headers: headers,
                        body: Data(buffer[bodyStart..<(bodyStart + length)]))
                }
            }
            let count = recv(fd, &chunk, chunk.count, 0)
            guard count > 0 else { return nil }
            buffer.append(contentsOf: chunk[0..<count])
            guard buffer.count < 4 * 1024 * 1024 else { return nil }
        }
    }

    private func writeAll(_ fd: Int32, _ data: Data) {
        var offset = 0
        let bytes = [UInt8](data)
        while offset < bytes.count {
            #if canImport(Glibc)
                let written = bytes[offset...].withUnsafeBytes {
                    send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                }
            #else
                let written = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
            #endif
            guard written > 0 else { return }
            offset += written
        }
    }
}

private func closeDescriptor(_ fd: Int32) -> Int32 {
    #if canImport(Glibc)
        Glibc.close(fd)
    #else
        Darwin.close(fd)
    #endif
}

/// Test fixtures shared by the webhook suites.
enum WebhookFixtures {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    static func event(
        _ id: String = "evt_1", type: String = WebhookEventType.paymentSucceeded.rawValue, merchantID: String = "mer_1",
        createdAt: Date = start
    ) -> WebhookEvent {
        let envelope = try! WebhookEventEnvelope(
            id: id, type: type, createdAt: createdAt, data: ["id": "pay_1", "amount": "12.75", "currency": "TWD"])
        return envelope.event(merchantID: merchantID)
    }
}
