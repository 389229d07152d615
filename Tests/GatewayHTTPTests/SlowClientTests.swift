import Foundation
import GatewayHTTP
import GatewayTestSupport
import OrchardHTTP
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Raises the soft limit on open descriptors towards `wanted` (up to the hard limit) and returns the soft limit now
/// in force, so that an attack can be sized to fit.
func raiseDescriptorLimit(to wanted: Int) -> Int {
    var limit = rlimit()
    guard getrlimit(openFilesResource, &limit) == 0 else { return 1_024 }
    if limit.rlim_cur < rlim_t(wanted) {
        var raised = limit
        raised.rlim_cur = min(rlim_t(wanted), limit.rlim_max)
        if setrlimit(openFilesResource, &raised) == 0 { limit = raised }
    }
    return Int(limit.rlim_cur)
}

private let openFilesResource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)

/// Many slow connections from several loopback addresses, kept up by one thread in rounds: a connection the
/// server closes is opened again at the next round, as a determined attacker would.
final class SlowAttack: @unchecked Sendable {
    enum Kind {
        /// A request head sent one header line per round, never finished.
        case head
        /// A complete head announcing a 1,000-byte body, then one body byte per round.
        case body
        /// One complete request, then nothing: an idle keep-alive connection.
        case idle
    }

    let kind: Kind
    let port: Int
    let sources: [String]
    let perSource: Int
    let interval: Double
    private let lock = NSLock()
    private var running = true
    private var connects = 0
    private let finished = DispatchSemaphore(value: 0)

    /// `perSource` connections from each of 127.0.0.2 … 127.0.0.(1 + `addresses`), one round every `interval`
    /// seconds.
    init(_ kind: Kind, port: Int, addresses: Int, perSource: Int, interval: Double) {
        self.kind = kind
        self.port = port
        self.sources = (0..<addresses).map { "127.0.0.\(2 + $0)" }
        self.perSource = perSource
        self.interval = interval
    }

    var total: Int { sources.count * perSource }

    /// Successful connects so far (first ones and reconnects).
    var connectCount: Int { lock.withLock { connects } }

    func start() {
        Thread.detachNewThread { [self] in
            var sockets = [Int32](repeating: -1, count: total)
            var line = 0
            while lock.withLock({ running }) {
                let roundStart = Date()
                line += 1
                for index in sockets.indices where lock.withLock({ running }) {
                    if sockets[index] >= 0 && !alive(sockets[index]) {
                        close(sockets[index])
                        sockets[index] = -1
                    }
                    if sockets[index] < 0 {
                        sockets[index] = open(from: sources[index % sources.count])
                        continue
                    }
                    let more: String? =
                        switch kind {
                        case .head: "X-Slow-\(line): \(line)\r\n"
                        case .body: "7"
                        case .idle: nil
                        }
                    if let more, !send(sockets[index], more) {
                        close(sockets[index])
                        sockets[index] = -1
                    }
                }
                let rest = interval - Date().timeIntervalSince(roundStart)
                if rest > 0 { usleep(useconds_t(rest * 1e6)) }
            }
            for socket in sockets where socket >= 0 { close(socket) }
            finished.signal()
        }
    }

    /// Stops the rounds and closes every connection.
    func stop() {
        lock.withLock { running = false }
        finished.wait()
    }

    private func open(from source: String) -> Int32 {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return -1 }
        // A connect to a server that no longer accepts must not stall the rounds.
        var timeout = timeval(tv_sec: 0, tv_usec: 300_000)
        setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = inet_addr(source)
        var remote = sockaddr_in()
        remote.sin_family = sa_family_t(AF_INET)
        remote.sin_port = in_port_t(UInt16(port).bigEndian)
        remote.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &local) { localPointer in
            withUnsafePointer(to: &remote) { remotePointer in
                localPointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { localAddress in
                    remotePointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { remoteAddress in
                        bind(socket, localAddress, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                            && connect(socket, remoteAddress, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                    }
                }
            }
        }
        let first =
            switch kind {
            case .head: "GET /healthz HTTP/1.1\r\nHost: attack\r\n"
            case .body:
                "POST /v1/tokens HTTP/1.1\r\nHost: attack\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
            case .idle: "GET /healthz HTTP/1.1\r\nHost: attack\r\n\r\n"
            }
        guard connected, send(socket, first) else {
            close(socket)
            return -1
        }
        lock.withLock { connects += 1 }
        return socket
    }

    /// Reads what has arrived without waiting; false once the server has closed the connection.
    private func alive(_ socket: Int32) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4_096)
        while true {
            let count = recv(socket, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if count > 0 { continue }
            return count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)
        }
    }

    private func send(_ socket: Int32, _ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return Glibc.send(socket, bytes, bytes.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) == bytes.count
    }
}

/// One probe's outcome: what was asked, whether it was answered as expected, and how long it took.
struct Probe: CustomStringConvertible {
    var what: String
    var answered: Bool
    var seconds: Double

    var description: String { "\(what): \(answered ? "answered" : "failed") in \(String(format: "%.3f", seconds)) s" }
}

@Suite("HTTP server: slow clients cannot exhaust it", .serialized)
struct SlowClientTests {
    /// The bound the issue sets on `/healthz` and a tokenize+pay during an attack.
    static let answerBound = 1.0

    /// The harness for an attack: production's connection limits (1,000 connections, 64 per address), with the
    /// deadlines shortened so the attack is short.
    static func harness() throws -> APIHarness {
        try APIHarness(transport: .loopback) { configuration in
            configuration.connectionLimit = 1_000
            configuration.perIPConnectionLimit = 64
            configuration.connectionTimeoutSeconds = 30
            configuration.requestHeadTimeoutSeconds = 3
            configuration.requestBodyTimeoutSeconds = 3
            configuration.threadPoolSize = 4
        }
    }

    /// Times one request; a failure (refused, timed out, wrong status) counts as not answered.
    static func probe(_ what: String, _ request: () throws -> Bool) -> Probe {
        let start = Date()
        let answered = (try? request()) ?? false
        return Probe(what: what, answered: answered, seconds: Date().timeIntervalSince(start))
    }

    /// `GET /healthz`, then a fresh sandbox token tokenized and paid (minting is not timed: only the requests).
    static func probes(_ h: APIHarness, amount: String) throws -> [Probe] {
        let client = CurlClient()
        client.timeoutSeconds = 3
        var probes = [probe("GET /healthz") { try client.request("GET", h.base + "/healthz").status == 200 }]
        let body = try JSONSerialization.data(withJSONObject: ["token": try h.token(amount)])
        var prime: String?
        probes.append(
            probe("POST /v1/tokens") {
                let response = try client.request(
                    "POST", h.base + "/v1/tokens",
                    headers: h.appHeaders.merging(["Content-Type": "application/json"]) { $1 }, body: body)
                prime = response.json["prime"] as? String
                return response.status == 200 && prime != nil
            })
        guard let prime else { return probes }
        let payment = try JSONSerialization.data(withJSONObject: [
            "prime": prime, "amount": amount, "currency": "TWD", "capture": ["mode": "now"],
        ])
        probes.append(
            probe("POST /v1/payments") {
                let response = try client.request(
                    "POST", h.base + "/v1/payments",
                    headers: h.serverHeaders.merging(["Content-Type": "application/json"]) { $1 }, body: payment)
                return response.status == 200
            })
        return probes
    }

    /// Runs `attack` against a fresh server, probes it for `seconds` once the attack is in place, and checks every
    /// probe answered within the bound. Returns the server's shed counts.
    static func withstand(
        _ kind: SlowAttack.Kind, addresses: Int, perSource: Int, interval: Double, seconds: Double
    ) throws -> [ConnectionShedReason: Int] {
        let available = raiseDescriptorLimit(to: 16_384)
        // Each connection costs two descriptors here (client and server side), plus room for the rest of the tests.
        let perSource = min(perSource, max(1, (available - 1_024) / (2 * addresses)))
        let h = try harness()
        let attack = SlowAttack(
            kind, port: h.server.port, addresses: addresses, perSource: perSource, interval: interval)
        attack.start()
        defer { attack.stop() }
        // Let the first round open every connection and the server take them in.
        usleep(1_500_000)
        let opened = attack.connectCount
        var results: [Probe] = []
        var round = 0
        let end = Date(timeIntervalSinceNow: seconds)
        while Date() < end {
            round += 1
            results += try probes(h, amount: "\(100 + round).00")
            usleep(300_000)
        }
        let slow = results.filter { !$0.answered || $0.seconds >= answerBound }
        #expect(opened >= attack.total * 9 / 10, "the attack should have opened its connections (\(opened))")
        #expect(results.count >= 9)
        #expect(
            slow.isEmpty,
            "\(slow.count) of \(results.count) probes failed or took 1 s or more during the attack: \(slow.prefix(5))")
        return h.server.shedConnections
    }

    @Test("1,000 connections sending a header line every second: /healthz and tokenize+pay answer within 1 s")
    func headTrickle() throws {
        let shed = try Self.withstand(.head, addresses: 25, perSource: 40, interval: 1, seconds: 6)
        #expect((shed[.headTimeout] ?? 0) > 0, "\(shed)")
    }

    @Test("1,200 connections trickling bodies: /healthz and tokenize+pay answer within 1 s")
    func bodyTrickle() throws {
        let shed = try Self.withstand(.body, addresses: 25, perSource: 48, interval: 1, seconds: 6)
        // More connections than may be held: the reserve closes the oldest before their body deadline comes.
        #expect((shed[.bodyTimeout] ?? 0) + (shed[.reserve] ?? 0) > 0, "\(shed)")
    }

    @Test("1,200 idle keep-alive connections: /healthz and tokenize+pay answer within 1 s")
    func idleKeepAlive() throws {
        let shed = try Self.withstand(.idle, addresses: 25, perSource: 48, interval: 1, seconds: 6)
        #expect((shed[.keepAliveTrim] ?? 0) + (shed[.reserve] ?? 0) > 0, "\(shed)")
    }

    /// One request on a kept-alive raw connection: its status and JSON body, or `nil` when the connection was
    /// closed or reset instead of answering.
    static func keepAliveCall(
        _ connection: RawConnection, _ path: String, headers: [String: String], body: Any
    ) throws -> (status: Int, json: [String: Any])? {
        let data = try JSONSerialization.data(withJSONObject: body)
        var head = "POST \(path) HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "Content-Length: \(data.count)\r\n\r\n"
        guard connection.send(Data(head.utf8) + data) else { return nil }
        let text = connection.readResponse()
        guard text.hasPrefix("HTTP/1.1 "), let status = Int(text.dropFirst(9).prefix(3)),
            let bodyStart = text.range(of: "\r\n\r\n")
        else { return nil }
        let json = try? JSONSerialization.jsonObject(with: Data(text[bodyStart.upperBound...].utf8)) as? [String: Any]
        return (status, json ?? [:])
    }

    @Test("a keep-alive tokenize+pay client during a slow-connection flood never gets its connection reset")
    func keepAliveClientSurvivesFlood() throws {
        _ = raiseDescriptorLimit(to: 4_096)
        // 45 connections may be held; the flood keeps 60 heads trickling, so the reserve closes one at every
        // connect. A connection that has just answered is the only idle one: it must not be the one to go.
        let h = try APIHarness(transport: .loopback) { configuration in
            configuration.connectionLimit = 60
            configuration.perIPConnectionLimit = 0
            configuration.reservedConnectionPercent = 25
            configuration.requestHeadTimeoutSeconds = 3
            configuration.threadPoolSize = 4
        }
        // Minted before the connection opens: a new connection that has sent nothing yet is one the reserve may
        // rightly close, so the first request follows the connect at once.
        let tokens = try (0..<25).map { try h.token("\(200 + $0).00") }
        let attack = SlowAttack(.head, port: h.server.port, addresses: 5, perSource: 12, interval: 0.05)
        attack.start()
        defer { attack.stop() }
        usleep(500_000)
        let connection = try RawConnection(port: h.server.port, receiveTimeoutSeconds: 5)
        var failures: [String] = []
        var paid = 0
        for round in 0..<25 where failures.isEmpty {
            let amount = "\(200 + round).00"
            guard
                let tokenized = try Self.keepAliveCall(
                    connection, "/v1/tokens", headers: h.appHeaders, body: ["token": tokens[round]]),
                tokenized.status == 200, let prime = tokenized.json["prime"] as? String
            else {
                failures.append("round \(round): POST /v1/tokens was not answered on the kept-alive connection")
                break
            }
            guard
                let payment = try Self.keepAliveCall(
                    connection, "/v1/payments", headers: h.serverHeaders,
                    body: ["prime": prime, "amount": amount, "currency": "TWD", "capture": ["mode": "now"]]),
                payment.status == 200
            else {
                failures.append("round \(round): POST /v1/payments was not answered on the kept-alive connection")
                break
            }
            paid += 1
            usleep(30_000)
        }
        let shed = h.server.shedConnections
        #expect(failures.isEmpty, "\(failures) after \(paid) payments; shed \(shed)")
        #expect(paid == 25)
        #expect((shed[.reserve] ?? 0) > 25, "the flood should have kept the reserve closing connections: \(shed)")
    }

    /// A server with its own routes: `/healthz`, and `POST /v1/echo`, which counts the requests it handles.
    final class Plain {
        let server: HTTPServer
        let handled = Box<Int>()
        let messages = LineCollector()
        private let counter = NSLock()
        private var count = 0

        init(_ configure: (inout ServerConfiguration) -> Void) throws {
            var configuration = ServerConfiguration()
            configuration.host = "127.0.0.1"
            configuration.port = 0
            configuration.threadPoolSize = 4
            configure(&configuration)
            var router = Router()
            router.get("/healthz") { _, _ in .text("ok") }
            let handled = self.handled
            let counter = self.counter
            nonisolated(unsafe) var count = 0
            router.post("/v1/echo") { request, _ in
                handled.set(
                    counter.withLock {
                        count += 1
                        return count
                    })
                return HTTPResponse(status: .ok, headers: ["Content-Type": "text/plain"], body: request.body)
            }
            let messages = self.messages
            server = HTTPServer(
                configuration: configuration, responder: HTTPApplication(router: router, middlewares: []),
                messages: { messages.append($0) })
            try server.start()
        }

        deinit { server.stop(timeoutSeconds: 2) }

        var port: Int { server.port }
        var base: String { "http://127.0.0.1:\(server.port)" }
    }

    /// Opens a connection, sends `opening`, then `piece(step)` every `every` seconds, and expects the server to
    /// close it for `reason` about 2 s in (the deadline each test sets), though it is never inactive for long.
    static func expectClosedAtDeadline(
        _ plain: Plain, opening: String, every: Double, reason: ConnectionShedReason,
        afterOpening: (RawConnection) -> Void = { _ in }, piece: (Int) -> Data
    ) throws {
        let connection = try RawConnection(port: plain.port)
        connection.send(opening)
        afterOpening(connection)
        let start = Date()
        var step = 0
        var closedAfter: Double?
        while closedAfter == nil && Date().timeIntervalSince(start) < 8 {
            step += 1
            if !connection.send(piece(step)) || connection.isClosed(waiting: every) {
                closedAfter = Date().timeIntervalSince(start)
            }
        }
        let seconds = try #require(closedAfter, "the connection was never closed")
        #expect(seconds >= 1.5 && seconds < 3.5, "closed after \(seconds) s")
        #expect(plain.server.shedConnections[reason] == 1)
    }

    @Test("a request head sent one line every 0.4 s is closed at the head deadline, not kept alive by its activity")
    func headDeadline() throws {
        let plain = try Plain {
            $0.connectionTimeoutSeconds = 30
            $0.requestHeadTimeoutSeconds = 2
        }
        try Self.expectClosedAtDeadline(
            plain, opening: "GET /healthz HTTP/1.1\r\nHost: test\r\n", every: 0.4, reason: .headTimeout
        ) { Data("X-Line-\($0): \($0)\r\n".utf8) }
        #expect(try CurlClient().request("GET", plain.base + "/healthz").status == 200)
    }

    @Test("a body sent one byte every 0.3 s is closed at the body deadline and never reaches its handler")
    func bodyDeadline() throws {
        let plain = try Plain {
            $0.connectionTimeoutSeconds = 30
            $0.requestBodyTimeoutSeconds = 2
        }
        // 30 bytes at one per 0.3 s would take 9 s; the last one would complete the body and run the handler.
        try Self.expectClosedAtDeadline(
            plain, opening: "POST /v1/echo HTTP/1.1\r\nHost: test\r\nContent-Length: 30\r\n\r\n", every: 0.3,
            reason: .bodyTimeout
        ) { _ in Data("7".utf8) }
        #expect(plain.handled.value == nil, "the handler must not run for a body past its deadline")
        let echoed = try CurlClient().request("POST", plain.base + "/v1/echo", body: Data("fast".utf8))
        #expect(echoed.status == 200 && echoed.text == "fast")
    }

    @Test(
        "a keep-alive connection trickling its next request line is closed connection-timeout seconds after its answer")
    func idleDeadline() throws {
        let plain = try Plain { $0.connectionTimeoutSeconds = 2 }
        // One byte every 0.3 s never leaves the connection inactive for 2 s; the request line would take 7 s.
        let line = Array("GET /healthz HTTP/1.1\r\nHost: test\r\nX-Slow: 1\r\n".utf8)
        try Self.expectClosedAtDeadline(
            plain, opening: "GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n", every: 0.3, reason: .idleTimeout,
            afterOpening: { #expect($0.readResponse().hasPrefix("HTTP/1.1 200")) }
        ) { Data([line[($0 - 1) % line.count]]) }
    }

    /// `count` connections opened one after the other (a few milliseconds apart, so their ages differ), each sent
    /// `request` and then passed to `then`.
    static func connect(
        _ count: Int, to port: Int, sending request: String, then: (RawConnection) -> Void = { _ in }
    ) throws -> [RawConnection] {
        try (0..<count).map { _ in
            let connection = try RawConnection(port: port)
            connection.send(request)
            then(connection)
            usleep(10_000)
            return connection
        }
    }

    @Test("above the trim threshold, idle keep-alive connections are closed oldest first")
    func keepAliveTrim() throws {
        let plain = try Plain {
            $0.connectionLimit = 40
            $0.keepAliveTrimPercent = 50
            $0.reservedConnectionPercent = 0
        }
        let connections = try Self.connect(30, to: plain.port, sending: "GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n") {
            #expect($0.readResponse().hasPrefix("HTTP/1.1 200"))
        }
        var open = plain.server.openConnections
        for _ in 0..<50 where open > 20 {
            usleep(50_000)
            open = plain.server.openConnections
        }
        #expect(open == 20)
        usleep(300_000)
        let closed = connections.map { $0.isClosed(waiting: 0) }
        #expect(closed == Array(repeating: true, count: 10) + Array(repeating: false, count: 20), "\(closed)")
        #expect(plain.server.shedConnections[.keepAliveTrim] == 10)
        let registry = MetricsRegistry()
        plain.server.registerMetrics(in: registry)
        #expect(registry.render().contains("orchard_http_connections_shed{reason=\"keep_alive_trim\"} 10\n"))
    }

    @Test("when slow connections would take the reserved slots, the oldest is closed and a new client is answered")
    func reserve() throws {
        let plain = try Plain {
            $0.connectionLimit = 20
            $0.perIPConnectionLimit = 0
            $0.reservedConnectionPercent = 25
        }
        // 15 slow connections may be held; the 16th, 17th and 18th each push out the oldest.
        let connections = try Self.connect(18, to: plain.port, sending: "GET /healthz HTTP/1.1\r\nHost: test\r\n")
        usleep(500_000)
        let closed = connections.map { $0.isClosed(waiting: 0) }
        #expect(closed == Array(repeating: true, count: 3) + Array(repeating: false, count: 15), "\(closed)")
        let client = CurlClient()
        client.timeoutSeconds = 3
        let start = Date()
        #expect(try client.request("GET", plain.base + "/healthz").status == 200)
        #expect(Date().timeIntervalSince(start) < Self.answerBound)
        #expect((plain.server.shedConnections[.reserve] ?? 0) >= 4)
    }

    @Test("closing connections while others open and close never shuts down a reused descriptor (stress)")
    func stressTeardownRaces() throws {
        _ = raiseDescriptorLimit(to: 4_096)
        let plain = try Plain {
            $0.connectionLimit = 64
            $0.perIPConnectionLimit = 0
            $0.requestHeadTimeoutSeconds = 1
            $0.connectionTimeoutSeconds = 1
            $0.keepAliveTrimPercent = 25
            $0.reservedConnectionPercent = 0
        }
        let port = plain.port
        let stop = Box<Bool>()
        let failures = LineCollector()
        let fastRequests = Box<Int>()
        let group = DispatchGroup()
        // Slow clients: heads that hit the deadline, and idle keep-alive connections that get trimmed.
        for kind in [SlowAttack.Kind.head, .idle] {
            let attack = SlowAttack(kind, port: port, addresses: 4, perSource: 8, interval: 0.05)
            attack.start()
            group.enter()
            Thread.detachNewThread {
                while stop.value == nil { usleep(20_000) }
                attack.stop()
                group.leave()
            }
        }
        // Fast clients: one request per connection (descriptors reused all the time, on both sides); the guard
        // never has a reason to close them, so each must be answered.
        let counter = NSLock()
        nonisolated(unsafe) var answered = 0
        for _ in 0..<3 {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                while stop.value == nil {
                    do {
                        let connection = try RawConnection(port: port, receiveTimeoutSeconds: 5)
                        connection.send("GET /healthz HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
                        let (data, closed) = connection.readUntilClosed()
                        if closed, String(decoding: data, as: UTF8.self).hasPrefix("HTTP/1.1 200") {
                            counter.withLock { answered += 1 }
                        } else {
                            failures.append("fast request: \(data.count) bytes, closed \(closed)")
                        }
                    } catch {
                        failures.append("fast connect: \(error)")
                    }
                }
            }
        }
        // Descriptors that are not connections at all: socket pairs that must keep working.
        group.enter()
        Thread.detachNewThread {
            defer { group.leave() }
            while stop.value == nil {
                var pair: [Int32] = [0, 0]
                guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else { continue }
                var byte: UInt8 = 42
                for _ in 0..<20 {
                    if Glibc.send(pair[0], &byte, 1, Int32(MSG_NOSIGNAL)) != 1 || recv(pair[1], &byte, 1, 0) != 1 {
                        failures.append("a socket pair stopped working")
                        break
                    }
                    usleep(500)
                }
                close(pair[0])
                close(pair[1])
            }
        }
        usleep(8_000_000)
        stop.set(true)
        group.wait()
        fastRequests.set(counter.withLock { answered })
        let shed = plain.server.shedConnections
        #expect(failures.lines.isEmpty, "\(failures.lines.count) failures: \(failures.lines.prefix(5))")
        #expect(plain.messages.lines.filter { $0.contains("connection guard") }.isEmpty, "\(plain.messages.lines)")
        #expect((fastRequests.value ?? 0) > 200)
        #expect((shed[.headTimeout] ?? 0) > 20 && (shed[.keepAliveTrim] ?? 0) > 20, "\(shed)")
        plain.server.stop(timeoutSeconds: 2)
        #expect(plain.server.openConnections == 0)
    }
}

extension RawConnection {
    /// Whether the peer closes the connection within `seconds` (data that arrives meanwhile is read and dropped).
    func isClosed(waiting seconds: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while true {
            let (data, closed) = readAvailable(timeout: max(0, deadline.timeIntervalSinceNow))
            if closed { return true }
            if data.isEmpty && Date() >= deadline { return false }
        }
    }
}
