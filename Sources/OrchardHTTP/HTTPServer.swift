import CMicroHTTPD
import Foundation
import OrchardBase

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why the server could not start.
public struct HTTPServerError: CodedError, Sendable {
    /// A stable error code.
    public struct Code: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
        /// The code string.
        public let rawValue: String
        /// A code from its string.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// A code from a literal.
        public init(stringLiteral value: String) { self.rawValue = value }
        /// The code string.
        public var description: String { rawValue }

        /// The host is not an IP address.
        public static let invalidAddress: Code = "invalid_address"
        /// A setting is out of range.
        public static let invalidConfiguration: Code = "invalid_configuration"
        /// TLS was asked for but libmicrohttpd was built without it.
        public static let tlsUnsupported: Code = "tls_unsupported"
        /// The TLS certificate or key file could not be read.
        public static let tlsFileUnreadable: Code = "tls_file_unreadable"
        /// libmicrohttpd refused to start (address in use, bad TLS material …).
        public static let startFailed: Code = "start_failed"
        /// `start()` was called on a running or stopped server.
        public static let alreadyStarted: Code = "already_started"
    }

    /// The code.
    public var code: Code
    /// What happened.
    public var reason: String

    /// An error.
    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    /// `code: reason`
    public var description: String { "\(code): \(reason)" }
}

/// An HTTP/1.1 server on libmicrohttpd: an internal thread pool (poll(2); `start()` says why not epoll),
/// keep-alive, connection limits (total and per IP), an inactivity timeout, optional TLS, and a graceful stop.
///
/// Slow clients cannot exhaust it: a request head and a request body each have a deadline however steadily they
/// arrive, idle keep-alive connections are closed early when many connections are open, and a share of the slots
/// is kept free of idle and slow connections for new clients (see ``ServerConfiguration`` and
/// ``ConnectionShedReason``).
///
/// Each request's body is collected up to ``ServerConfiguration/maxBodyBytes``, then the responder is called
/// synchronously on the worker thread. A larger body is answered 413 `body_too_large` through
/// ``HTTPResponder/respond(to:rejectedWith:)`` and the connection is closed: at once, without reading the body,
/// when `Content-Length` announces it; for a body without a length (chunked), at its end, discarding what exceeds
/// the cap, or by closing the connection once more than 1 MiB past the cap has arrived.
// Unchecked: `state` holds libmicrohttpd's daemon pointer (not Sendable), used only under that lock or by the daemon's own thread-safe calls.
public final class HTTPServer: @unchecked Sendable {
    /// The configuration the server was made with.
    public let configuration: ServerConfiguration
    private let core: ServerCore
    private struct State {
        var daemon: OpaquePointer?
        var started = false
        var accepting = false
        var boundPort = 0
    }
    private let state = Locked(State())

    /// A server answering with `responder`. Call ``start()`` to listen. `messages` receives libmicrohttpd's own
    /// diagnostics (bind failures, TLS handshake errors …), standard error by default.
    ///
    /// `bodyLimit` may raise or lower the body cap for some requests (by method and raw path), e.g. a bulk upload
    /// route; `nil` from it (or no closure) keeps ``ServerConfiguration/maxBodyBytes``.
    public init(
        configuration: ServerConfiguration, responder: any HTTPResponder,
        bodyLimit: (@Sendable (HTTPMethod, String) -> Int?)? = nil,
        messages: @escaping @Sendable (String) -> Void = { message in
            FileHandle.standardError.write(Data("microhttpd: \(message)\n".utf8))
        }
    ) {
        self.configuration = configuration
        self.core = ServerCore(
            responder: responder, maxBodyBytes: configuration.maxBodyBytes, bodyLimit: bodyLimit,
            connections: ConnectionGuard(policy: ConnectionGuard.Policy(configuration), report: messages),
            usesTLS: configuration.usesTLS, trustedProxies: configuration.trustedProxies, messages: messages)
    }

    deinit {
        if let daemon = state.current.daemon {
            MHD_stop_daemon(daemon)
            core.connections.stopSweeping()
        }
    }

    /// The port the server listens on (the one picked when configured with port 0); 0 before ``start()``.
    public var port: Int { state.withLock { $0.boundPort } }

    /// The base URL, e.g. `http://127.0.0.1:8080`.
    public var baseURL: String {
        let scheme = configuration.usesTLS ? "https" : "http"
        let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        return "\(scheme)://\(host == "0.0.0.0" ? "127.0.0.1" : host):\(port)"
    }

    /// Whether the server accepts new connections: true from ``start()`` until ``stop()`` has stopped listening.
    public var isAcceptingConnections: Bool { state.withLock { $0.accepting } }

    /// The number of requests being handled now (received but not yet fully answered).
    public var requestsInFlight: Int { core.inFlightCount }

    /// The number of open connections (idle keep-alive ones included); 0 when not running.
    public var openConnections: Int {
        state.withLock { $0.daemon.map { Int(orchard_mhd_daemon_current_connections($0)) } ?? 0 }
    }

    /// How many connections the server has closed to protect itself since it was made, by reason.
    public var shedConnections: [ConnectionShedReason: Int] { core.connections.shedCounts }

    /// Registers gauges for this server in `registry`: `orchard_http_requests_in_flight`,
    /// `orchard_http_open_connections` and `orchard_http_connections_shed` (by `reason`).
    public func registerMetrics(in registry: MetricsRegistry) {
        registry.gauge("orchard_http_requests_in_flight", help: "HTTP requests being handled.") { [weak self] in
            Double(self?.requestsInFlight ?? 0)
        }
        registry.gauge("orchard_http_open_connections", help: "Open HTTP connections.") { [weak self] in
            Double(self?.openConnections ?? 0)
        }
        registry.gauge(
            "orchard_http_connections_shed", help: "Connections closed to protect the server, by reason, since start.",
            labels: ["reason"]
        ) { [weak self] in
            let counts = self?.shedConnections ?? [:]
            return ConnectionShedReason.allCases.map { ([$0.rawValue], Double(counts[$0] ?? 0)) }
        }
    }

    /// Binds and starts the worker threads.
    public func start() throws(HTTPServerError) {
        try state.withLock { state throws(HTTPServerError) in
            guard !state.started else { throw HTTPServerError(.alreadyStarted, "the server was already started") }
            let daemon = try startDaemon()
            state.daemon = daemon
            state.started = true
            state.accepting = true
            state.boundPort = Int(orchard_mhd_daemon_bind_port(daemon))
            core.connections.startSweeping(interval: Self.sweepInterval)
        }
    }

    /// How often deadlines, the keep-alive trim and the reserve are checked, in seconds.
    static let sweepInterval = 0.1

    private func startDaemon() throws(HTTPServerError) -> OpaquePointer {
        let configuration = self.configuration
        guard (0...65_535).contains(configuration.port) else {
            throw HTTPServerError(.invalidConfiguration, "port \(configuration.port) is out of range")
        }
        guard configuration.maxBodyBytes >= 0, configuration.connectionLimit > 0,
            configuration.perIPConnectionLimit >= 0, configuration.connectionTimeoutSeconds >= 0,
            configuration.requestHeadTimeoutSeconds >= 0, configuration.requestBodyTimeoutSeconds >= 0,
            configuration.keepAliveTrimMinimumIdleMilliseconds >= 0, (1...100).contains(configuration.keepAliveTrimPercent),
            (0...50).contains(configuration.reservedConnectionPercent), configuration.threadPoolSize >= 1
        else {
            throw HTTPServerError(
                .invalidConfiguration,
                "limits must not be negative, percentages in range (trim 1-100, reserve 0-50) and the thread pool "
                    + "not empty")
        }
        // poll(2), not epoll: libmicrohttpd 0.9.75's quiesce races its epoll workers (both remove the listening
        // socket from a worker's epoll set; the loser aborts the process), and stop() must quiesce to drain.
        var flags = MHD_USE_POLL_INTERNAL_THREAD.rawValue | MHD_USE_ITC.rawValue | MHD_USE_ERROR_LOG.rawValue
        let address = try SocketAddress(host: configuration.host, port: configuration.port)
        if address.isIPv6 { flags |= MHD_USE_IPv6.rawValue }

        var certificate: [CChar] = []
        var key: [CChar] = []
        if configuration.usesTLS {
            guard MHD_is_feature_supported(.FEATURE_TLS) == .YES else {
                throw HTTPServerError(
                    .tlsUnsupported,
                    "this libmicrohttpd was built without TLS (GnuTLS); run behind a TLS proxy or install a build "
                        + "with TLS support")
            }
            guard let certificatePath = configuration.tlsCertificatePath, let keyPath = configuration.tlsKeyPath
            else {
                throw HTTPServerError(.invalidConfiguration, "TLS needs both a certificate and a key file")
            }
            certificate = try Self.readPEM(certificatePath, what: "certificate")
            key = try Self.readPEM(keyPath, what: "private key")
            flags |= MHD_USE_TLS.rawValue
        }
        defer {
            // The key was copied by GnuTLS during start; wipe our copy.
            for index in key.indices { key[index] = 0 }
        }

        let context = Unmanaged.passUnretained(core).toOpaque()
        let daemon: OpaquePointer? = address.withSockaddr { sockaddr in
            certificate.withUnsafeBufferPointer { certificatePointer in
                key.withUnsafeBufferPointer { keyPointer in
                    var options: [MHD_OptionItem] = [
                        orchard_mhd_option_logger(core.logger),
                        orchard_mhd_option_uint(.CONNECTION_LIMIT, UInt32(configuration.connectionLimit)),
                        orchard_mhd_option_uint(
                            .PER_IP_CONNECTION_LIMIT, UInt32(configuration.perIPConnectionLimit)),
                        orchard_mhd_option_uint(
                            .CONNECTION_TIMEOUT, UInt32(configuration.connectionTimeoutSeconds)),
                        orchard_mhd_option_pointer(.SOCK_ADDR, sockaddr),
                        orchard_mhd_option_notify_completed(requestCompleted, context),
                        orchard_mhd_option_notify_connection(connectionNotified, context),
                        orchard_mhd_option_uri_log(requestLineArrived, context),
                        orchard_mhd_option_keep_escapes(),
                    ]
                    if configuration.threadPoolSize > 1 {
                        options.append(
                            orchard_mhd_option_uint(.THREAD_POOL_SIZE, UInt32(configuration.threadPoolSize)))
                    }
                    if !certificate.isEmpty {
                        options.append(orchard_mhd_option_pointer(.HTTPS_MEM_CERT, certificatePointer.baseAddress))
                        options.append(orchard_mhd_option_pointer(.HTTPS_MEM_KEY, keyPointer.baseAddress))
                    }
                    options.append(orchard_mhd_option_end())
                    return options.withUnsafeMutableBufferPointer { items in
                        orchard_mhd_start_daemon(
                            flags, UInt16(configuration.port), nil, nil, accessHandler, context, items.baseAddress)
                    }
                }
            }
        }
        guard let daemon else {
            let detail = core.lastMessage.map { ": \($0)" } ?? ""
            throw HTTPServerError(
                .startFailed, "could not listen on \(configuration.host):\(configuration.port)\(detail)")
        }
        return daemon
    }

    private static func readPEM(_ path: String, what: String) throws(HTTPServerError) -> [CChar] {
        guard let data = FileManager.default.contents(atPath: path), !data.isEmpty else {
            throw HTTPServerError(.tlsFileUnreadable, "cannot read the TLS \(what) at \(path)")
        }
        return data.map { CChar(bitPattern: $0) } + [0]
    }

    /// Stops gracefully: stops accepting connections, waits up to ``ServerConfiguration/shutdownTimeoutSeconds``
    /// for requests in flight to be answered (responses then carry `Connection: close`), then closes every
    /// connection and joins the worker threads. Safe to call more than once.
    public func stop() {
        stop(timeoutSeconds: Double(configuration.shutdownTimeoutSeconds))
    }

    /// Stops gracefully, waiting at most `timeoutSeconds` for requests in flight.
    public func stop(timeoutSeconds: Double) {
        let taken = state.withLock { state -> OpaquePointer? in
            defer { state.daemon = nil }
            return state.daemon
        }
        guard let daemon = taken else { return }
        core.beginDraining()
        let listenSocket = MHD_quiesce_daemon(daemon)
        // The socket must stay open until the daemon is stopped; shutting it down stops the kernel from
        // queueing new connections, which are refused instead of waiting in the backlog.
        if listenSocket >= 0 { shutdown(listenSocket, Int32(SHUT_RDWR)) }
        state.withLock { $0.accepting = false }
        core.waitForInFlight(timeoutSeconds: timeoutSeconds)
        MHD_stop_daemon(daemon)
        core.connections.stopSweeping()
        if listenSocket >= 0 { close(listenSocket) }
    }
}

/// An IPv4 or IPv6 socket address.
private struct SocketAddress {
    private var storage = sockaddr_storage()
    let isIPv6: Bool

    init(host: String, port: Int) throws(HTTPServerError) {
        let host = host == "localhost" ? "127.0.0.1" : host
        var ipv4 = in_addr()
        var ipv6 = in6_addr()
        if inet_pton(AF_INET, host, &ipv4) == 1 {
            isIPv6 = false
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr = ipv4
            store(address)
        } else if inet_pton(AF_INET6, host, &ipv6) == 1 {
            isIPv6 = true
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = in_port_t(UInt16(port).bigEndian)
            address.sin6_addr = ipv6
            store(address)
        } else {
            throw HTTPServerError(.invalidAddress, "\(host) is not an IPv4 or IPv6 address")
        }
    }

    /// Copies a `sockaddr_in` or `sockaddr_in6` into the storage.
    private mutating func store<Address>(_ address: Address) {
        withUnsafeMutableBytes(of: &storage) { target in
            withUnsafeBytes(of: address) { target.copyMemory(from: $0) }
        }
    }

    func withSockaddr<Result>(_ body: (UnsafeRawPointer) -> Result) -> Result {
        withUnsafeBytes(of: storage) { body($0.baseAddress!) }
    }
}

/// The text form of a peer address.
private func addressText(_ address: UnsafePointer<sockaddr>) -> String? {
    switch Int32(address.pointee.sa_family) {
    case AF_INET:
        return address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { ipv4 in
            var raw = ipv4.pointee.sin_addr
            return IPAddress.text(withUnsafeBytes(of: &raw) { Array($0) })
        }
    case AF_INET6:
        return address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { ipv6 in
            var raw = ipv6.pointee.sin6_addr
            return IPAddress.text(withUnsafeBytes(of: &raw) { Array($0) })
        }
    default:
        return nil
    }
}

/// The state of one request between libmicrohttpd's calls.
private final class RequestState {
    var method = HTTPMethod.get
    var path = "/"
    var queryItems: [QueryItem] = []
    var headers = HTTPHeaders()
    var body = Data()
    var remoteAddress: String?
    var forwardedHTTPS = false
    var answered = false
    var overflow = 0
    var bodyLimit = 0

    var request: HTTPRequest {
        var request = HTTPRequest(
            method: method, path: path, queryItems: queryItems, headers: headers, body: body,
            remoteAddress: remoteAddress)
        request.forwardedHTTPS = forwardedHTTPS
        return request
    }
}

/// Collects key/value pairs from `MHD_get_connection_values`.
private final class ValueCollector {
    var pairs: [(String, String?)] = []
}

private let collectValue: MHD_KeyValueIterator = { context, _, key, value in
    guard let context, let key else { return .YES }
    let collector = Unmanaged<ValueCollector>.fromOpaque(context).takeUnretainedValue()
    collector.pairs.append((String(cString: key), value.map { String(cString: $0) }))
    return .YES
}

/// What libmicrohttpd's callbacks reach through their context pointer; owned by the ``HTTPServer``, which stops
/// the daemon before releasing it.
// Unchecked: the daemon's threads share it; its counters wait on the condition variable `condition` (not a Locked), the rest is set in init.
private final class ServerCore: @unchecked Sendable {
    let responder: any HTTPResponder
    let maxBodyBytes: Int
    let bodyLimit: (@Sendable (HTTPMethod, String) -> Int?)?
    let messages: @Sendable (String) -> Void
    let connections: ConnectionGuard
    /// Whether answers go out over TLS (each then carries `Strict-Transport-Security`).
    let usesTLS: Bool
    /// The proxies whose forwarding headers name the client (``TrustedProxies``).
    let trustedProxies: TrustedProxies
    let logger: UnsafeMutablePointer<orchard_mhd_logger>
    private let condition = NSCondition()
    private var inFlight = 0
    private var draining = false
    private var lastLogMessage: String?

    init(
        responder: any HTTPResponder, maxBodyBytes: Int, bodyLimit: (@Sendable (HTTPMethod, String) -> Int?)? = nil,
        connections: ConnectionGuard, usesTLS: Bool = false, trustedProxies: TrustedProxies = TrustedProxies(),
        messages: @escaping @Sendable (String) -> Void
    ) {
        self.responder = responder
        self.trustedProxies = trustedProxies
        self.connections = connections
        self.usesTLS = usesTLS
        self.maxBodyBytes = maxBodyBytes
        self.bodyLimit = bodyLimit
        self.messages = messages
        logger = .allocate(capacity: 1)
        logger.initialize(to: orchard_mhd_logger(function: logMessage, context: nil))
        logger.pointee.context = Unmanaged.passUnretained(self).toOpaque()
    }

    deinit {
        logger.deinitialize(count: 1)
        logger.deallocate()
    }

    var lastMessage: String? { condition.withLock { lastLogMessage } }

    var inFlightCount: Int { condition.withLock { inFlight } }

    func log(_ message: String) {
        let trimmed = message.trimmingCharacters(in: .whitespacesAndNewlines)
        condition.withLock { lastLogMessage = trimmed }
        messages(trimmed)
    }

    func beginDraining() { condition.withLock { draining = true } }

    func waitForInFlight(timeoutSeconds: Double) {
        let deadline = Date(timeIntervalSinceNow: timeoutSeconds)
        condition.lock()
        while inFlight > 0 && condition.wait(until: deadline) {}
        condition.unlock()
    }

    func requestStarted() { condition.withLock { inFlight += 1 } }

    func requestFinished() {
        condition.withLock {
            inFlight -= 1
            condition.broadcast()
        }
    }

    /// The access handler: first call (headers), body chunks, final call (answer).
    func handle(
        connection: OpaquePointer, url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?,
        uploadData: UnsafePointer<CChar>?, uploadSize: UnsafeMutablePointer<Int>,
        requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> MHD_Result {
        guard let stored = requestContext.pointee else {
            let state = RequestState()
            state.method = HTTPMethod(rawValue: method.map { String(cString: $0) } ?? "GET")
            state.path = url.map { String(cString: $0) } ?? "/"
            let collector = ValueCollector()
            let collectorPointer = Unmanaged.passUnretained(collector).toOpaque()
            MHD_get_connection_values(connection, .HEADER_KIND, collectValue, collectorPointer)
            state.headers = HTTPHeaders(collector.pairs.map { ($0.0, $0.1 ?? "") })
            collector.pairs.removeAll()
            MHD_get_connection_values(connection, .GET_ARGUMENT_KIND, collectValue, collectorPointer)
            state.queryItems = collector.pairs.map { name, value in
                QueryItem(
                    name: name.removingPercentEncoding ?? name,
                    value: value.map { $0.removingPercentEncoding ?? $0 })
            }
            let peer = orchard_mhd_connection_client_address(connection).flatMap(addressText)
            (state.remoteAddress, state.forwardedHTTPS) = trustedProxies.client(peer: peer, headers: state.headers)
            requestContext.pointee = Unmanaged.passRetained(state).toOpaque()
            requestStarted()
            connections.headReceived(Int(bitPattern: connection))
            state.bodyLimit = bodyLimit?(state.method, state.path) ?? maxBodyBytes
            if let declared = state.headers["Content-Length"].flatMap({ Int($0) }), declared > state.bodyLimit {
                return answer(connection, state, rejection: .bodyTooLarge(limit: state.bodyLimit))
            }
            return .YES
        }
        let state = Unmanaged<RequestState>.fromOpaque(stored).takeUnretainedValue()
        let size = uploadSize.pointee
        if state.answered {
            uploadSize.pointee = 0
            return .YES
        }
        if size > 0 {
            uploadSize.pointee = 0
            if state.overflow > 0 || state.body.count + size > state.bodyLimit {
                // libmicrohttpd cannot answer while a body is arriving: discard it (bounded), answer 413 at its end.
                state.body = Data()
                state.overflow += size
                return state.overflow > Self.maxDiscardedBytes ? .NO : .YES
            }
            if let uploadData {
                uploadData.withMemoryRebound(to: UInt8.self, capacity: size) { state.body.append($0, count: size) }
            }
            return .YES
        }
        return answer(connection, state, rejection: state.overflow > 0 ? .bodyTooLarge(limit: state.bodyLimit) : nil)
    }

    /// How much of a body past the cap (one without `Content-Length`, e.g. chunked) is read and discarded so that
    /// it can be answered 413; past this the connection is simply closed.
    static let maxDiscardedBytes = 1 << 20

    private func answer(_ connection: OpaquePointer, _ state: RequestState, rejection: HTTPAPIError?) -> MHD_Result {
        state.answered = true
        // The guard may have closed the connection (a body past its deadline): such a request is not handled.
        guard connections.beginAnswer(Int(bitPattern: connection)) else { return .NO }
        let request = state.request
        var response =
            if let rejection {
                responder.respond(to: request, rejectedWith: rejection)
            } else {
                responder.respond(to: request)
            }
        if rejection != nil || condition.withLock({ draining }) { response.headers["Connection"] = "close" }
        return queue(response, on: connection)
    }

    private func queue(_ response: HTTPResponse, on connection: OpaquePointer) -> MHD_Result {
        // An empty body is passed as NULL with size 0, which libmicrohttpd accepts.
        let mhdResponse: OpaquePointer? = response.body.withUnsafeBytes { bytes in
            MHD_create_response_from_buffer(
                bytes.count, bytes.baseAddress.map { UnsafeMutableRawPointer(mutating: $0) }, .RESPMEM_MUST_COPY)
        }
        guard let mhdResponse else { return .NO }
        defer { MHD_destroy_response(mhdResponse) }
        for field in response.headers {
            let name = field.name.lowercased()
            guard name != "content-length", name != "transfer-encoding", name != "date" else { continue }
            _ = MHD_add_response_header(mhdResponse, field.name, field.value)
        }
        // Over TLS every answer tells the browser to come back over TLS only.
        if usesTLS, !response.headers.contains("Strict-Transport-Security") {
            _ = MHD_add_response_header(
                mhdResponse, "Strict-Transport-Security", ServerConfiguration.strictTransportSecurity)
        }
        return MHD_queue_response(connection, UInt32(response.status.rawValue), mhdResponse)
    }
}

private let accessHandler: MHD_AccessHandlerCallback = {
    context, connection, url, method, _, uploadData, uploadSize, requestContext in
    guard let context, let connection, let uploadSize, let requestContext else { return .NO }
    let core = Unmanaged<ServerCore>.fromOpaque(context).takeUnretainedValue()
    return core.handle(
        connection: connection, url: url, method: method, uploadData: uploadData, uploadSize: uploadSize,
        requestContext: requestContext)
}

private let requestCompleted: MHD_RequestCompletedCallback = { context, connection, requestContext, _ in
    guard let context else { return }
    let core = Unmanaged<ServerCore>.fromOpaque(context).takeUnretainedValue()
    if let connection { core.connections.requestCompleted(Int(bitPattern: connection)) }
    guard let requestContext, let stored = requestContext.pointee else { return }
    requestContext.pointee = nil
    Unmanaged<RequestState>.fromOpaque(stored).release()
    core.requestFinished()
}

private let connectionNotified: MHD_NotifyConnectionCallback = { context, connection, _, event in
    guard let context, let connection else { return }
    let connections = Unmanaged<ServerCore>.fromOpaque(context).takeUnretainedValue().connections
    switch event {
    case .CONNECTION_NOTIFY_STARTED:
        connections.started(Int(bitPattern: connection), socket: orchard_mhd_connection_fd(connection))
    case .CONNECTION_NOTIFY_CLOSED:
        connections.closed(Int(bitPattern: connection))
    default:
        break
    }
}

/// Called once a request line has arrived, before its headers; the request's context stays empty.
private let requestLineArrived: orchard_mhd_uri_log_function = { context, _, connection in
    guard let context, let connection else { return nil }
    Unmanaged<ServerCore>.fromOpaque(context).takeUnretainedValue().connections.requestLineArrived(
        Int(bitPattern: connection))
    return nil
}

private let logMessage: orchard_mhd_log_function = { context, message in
    guard let context, let message else { return }
    Unmanaged<ServerCore>.fromOpaque(context).takeUnretainedValue().log(String(cString: message))
}
