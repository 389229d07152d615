import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why the server closed a connection to protect itself (see ``ConnectionGuard``).
public enum ConnectionShedReason: String, Sendable, CaseIterable {
    /// The request head was not complete within ``ServerConfiguration/requestHeadTimeoutSeconds``.
    case headTimeout = "head_timeout"
    /// The request body was not complete within ``ServerConfiguration/requestBodyTimeoutSeconds``.
    case bodyTimeout = "body_timeout"
    /// A keep-alive connection stayed idle (no complete request line) for
    /// ``ServerConfiguration/connectionTimeoutSeconds`` after its last answer.
    case idleTimeout = "idle_timeout"
    /// A keep-alive connection idle for at least ``ServerConfiguration/keepAliveTrimMinimumIdleMilliseconds``
    /// closed, longest idle first, because more than ``ServerConfiguration/keepAliveTrimPercent`` of the
    /// connection limit was open.
    case keepAliveTrim = "keep_alive_trim"
    /// A connection closed to keep ``ServerConfiguration/reservedConnectionPercent`` of the slots free for new
    /// clients: one idle for at least the minimum idle age, longest idle first, else the slowest request.
    case reserve = "reserve"
}

/// Deadlines and slot sharing for the server's connections, on top of libmicrohttpd's inactivity timeout, which a
/// client sending a byte now and then never reaches.
///
/// libmicrohttpd reports each connection's life through callbacks on the worker thread that owns it: started,
/// request line arrived, head complete (first access-handler call), answering, request completed, closed. The
/// guard keeps one entry per connection with its phase and since when, and closes a connection by
/// `shutdown(2)` of its socket, which the owning worker then sees as the client leaving: libmicrohttpd itself
/// closes the connection, calls the completion callbacks and frees it.
///
/// Races with teardown and descriptor reuse: libmicrohttpd calls the "closed" notification before it closes a
/// connection's socket, and the notification removes the entry under the guard's lock. Every `shutdown(2)` is
/// made under that same lock, on an entry still present, so the descriptor is still that connection's socket (it
/// cannot have been closed, and so cannot have been reused by another connection or file). A connection whose
/// handler has started (phase "busy") is never closed; a connection closed while its body was arriving never
/// reaches its handler, because ``beginAnswer(_:)`` refuses it under the lock.
// Unchecked: its tables are guarded by the condition variable `lock`, which the sweeper waits on (not a Locked).
final class ConnectionGuard: @unchecked Sendable {
    /// The limits the guard enforces, in seconds and connection counts; 0 seconds means no deadline.
    struct Policy: Sendable, Equatable {
        /// Seconds from the connection's start (first request) or from the request line (later requests on a
        /// keep-alive connection) to a complete head.
        var headTimeout: Double
        /// Seconds from a complete head to a complete body.
        var bodyTimeout: Double
        /// Seconds a keep-alive connection may wait for its next request line after an answer.
        var idleTimeout: Double
        /// Above this many open connections, idle keep-alive ones are closed, oldest idle first.
        var trimThreshold: Int
        /// The most connections that may be idle or still sending a request (head or body) at once; beyond it the
        /// longest idle one is closed (if idle for ``minimumIdle``), else the oldest slow one.
        var heldLimit: Int
        /// Seconds a keep-alive connection must have been idle before trimming or the reserve may close it: a
        /// client that has just read its answer is about to send its next request on the connection.
        var minimumIdle: Double

        /// The policy `configuration` describes.
        init(_ configuration: ServerConfiguration) {
            headTimeout = Double(configuration.requestHeadTimeoutSeconds)
            bodyTimeout = Double(configuration.requestBodyTimeoutSeconds)
            idleTimeout = Double(configuration.connectionTimeoutSeconds)
            let limit = configuration.connectionLimit
            trimThreshold =
                configuration.keepAliveTrimPercent >= 100 ? Int.max : limit * configuration.keepAliveTrimPercent / 100
            let reserved =
                configuration.reservedConnectionPercent > 0
                ? max(1, limit * configuration.reservedConnectionPercent / 100) : 0
            // At least one connection may always be held, or a tiny limit would close every connection at once.
            heldLimit = reserved > 0 ? max(1, limit - reserved) : Int.max
            minimumIdle = Double(configuration.keepAliveTrimMinimumIdleMilliseconds) / 1_000
        }
    }

    /// Where a connection is in its current request.
    enum Phase {
        /// Waiting for a request line: the first (head deadline) or a later one (idle keep-alive).
        case waiting
        /// The request line has arrived, the headers are arriving.
        case head
        /// The head is complete, the body is arriving.
        case body
        /// The handler runs or the answer is being sent; never closed by the guard.
        case busy
    }

    private struct Entry {
        var socket: Int32
        var phase: Phase = .waiting
        var since: Double
        var firstRequest = true
        var closing = false

        var isLive: Bool { !closing }
        var isIdle: Bool { !closing && phase == .waiting && !firstRequest }
        var isHeld: Bool { !closing && phase != .busy }
    }

    let policy: Policy
    private let clock: @Sendable () -> Double
    private let closeSocket: @Sendable (Int32) -> Int32
    private let report: @Sendable (String) -> Void
    private let lock = NSCondition()
    private var entries: [Int: Entry] = [:]
    private var live = 0
    private var idle = 0
    private var held = 0
    private var shed: [ConnectionShedReason: Int] = [:]
    private var sweeping = false
    private var sweeperRunning = false

    /// A guard enforcing `policy`. `clock` gives monotonic seconds; `closeSocket` ends a connection and returns 0 or
    /// an errno (in the server, `shutdown(fd, SHUT_RDWR)`), and is called with the guard's lock held. `report`
    /// receives a line if a descriptor turns out not to be an open socket, which the locking rules out.
    init(
        policy: Policy, clock: @escaping @Sendable () -> Double = ConnectionGuard.monotonicSeconds,
        closeSocket: @escaping @Sendable (Int32) -> Int32 = ConnectionGuard.shutdownSocket,
        report: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.policy = policy
        self.clock = clock
        self.closeSocket = closeSocket
        self.report = report
    }

    /// `shutdown(socket, SHUT_RDWR)`: 0, or the errno.
    static func shutdownSocket(_ socket: Int32) -> Int32 { shutdown(socket, Int32(SHUT_RDWR)) == 0 ? 0 : errno }

    /// Seconds on the monotonic clock.
    static func monotonicSeconds() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    /// How many connections were closed for each reason since the guard was made.
    var shedCounts: [ConnectionShedReason: Int] { lock.withLock { shed } }

    /// The connections tracked now (open, or closing and not yet freed by libmicrohttpd).
    var trackedCount: Int { lock.withLock { entries.count } }

    // MARK: - Events from libmicrohttpd's callbacks

    /// A connection was accepted (`MHD_CONNECTION_NOTIFY_STARTED`); `socket` is its descriptor (-1 if unknown:
    /// such a connection is tracked but never closed by the guard).
    func started(_ connection: Int, socket: Int32) {
        lock.withLock {
            let entry = Entry(socket: socket, since: clock())
            entries[connection] = entry
            count(entry, +1)
            keepSlotsFree(sparing: connection, now: entry.since)
        }
    }

    /// The request line arrived (the URI log callback).
    func requestLineArrived(_ connection: Int) {
        lock.withLock {
            update(connection) { entry in
                // The first request's head is timed from the connection's start; a later one from its request line.
                if !entry.firstRequest { entry.since = clock() }
                entry.phase = .head
            }
        }
    }

    /// The head is complete (the access handler's first call); the body, if any, follows.
    func headReceived(_ connection: Int) {
        lock.withLock {
            update(connection) { entry in
                entry.phase = .body
                entry.since = clock()
            }
        }
    }

    /// The request is about to be answered; false if the guard has already closed the connection, which must
    /// then not be answered (the access handler returns `MHD_NO`).
    func beginAnswer(_ connection: Int) -> Bool {
        lock.withLock {
            guard entries[connection]?.closing != true else { return false }
            update(connection) { $0.phase = .busy }
            return true
        }
    }

    /// The request is over (answered or abandoned); the connection waits for the next one.
    func requestCompleted(_ connection: Int) {
        lock.withLock {
            update(connection) { entry in
                entry.phase = .waiting
                entry.firstRequest = false
                entry.since = clock()
            }
        }
    }

    /// libmicrohttpd is about to close the connection's socket and free it (`MHD_CONNECTION_NOTIFY_CLOSED`).
    func closed(_ connection: Int) {
        lock.withLock {
            guard let entry = entries.removeValue(forKey: connection) else { return }
            count(entry, -1)
        }
    }

    // MARK: - Enforcement

    /// Closes every connection past its deadline, then trims idle keep-alive connections (those idle for the
    /// minimum idle age) and keeps the reserved slots free.
    func sweep() {
        lock.withLock {
            let now = clock()
            for (connection, entry) in entries where !entry.closing {
                let limit: Double
                let reason: ConnectionShedReason
                switch entry.phase {
                case .waiting:
                    (limit, reason) =
                        entry.firstRequest ? (policy.headTimeout, .headTimeout) : (policy.idleTimeout, .idleTimeout)
                case .head: (limit, reason) = (policy.headTimeout, .headTimeout)
                case .body: (limit, reason) = (policy.bodyTimeout, .bodyTimeout)
                case .busy: continue
                }
                if limit > 0 && now - entry.since >= limit { close(connection, reason) }
            }
            trimIdle(now: now)
            keepSlotsFree(sparing: nil, now: now)
        }
    }

    /// Sweeps every `interval` seconds on a thread of its own until ``stopSweeping()``.
    func startSweeping(interval: Double) {
        lock.withLock {
            guard !sweeperRunning else { return }
            sweeping = true
            sweeperRunning = true
        }
        let thread = Thread { [self] in
            lock.lock()
            while sweeping {
                lock.unlock()
                sweep()
                lock.lock()
                _ = lock.wait(until: Date(timeIntervalSinceNow: interval))
            }
            sweeperRunning = false
            lock.broadcast()
            lock.unlock()
        }
        thread.name = "orchard-http-connection-guard"
        thread.start()
    }

    /// Stops the sweeping thread and waits for it to end.
    func stopSweeping() {
        lock.lock()
        sweeping = false
        lock.broadcast()
        while sweeperRunning { lock.wait() }
        lock.unlock()
    }

    // MARK: - Under the lock

    private func count(_ entry: Entry, _ sign: Int) {
        if entry.isLive { live += sign }
        if entry.isIdle { idle += sign }
        if entry.isHeld { held += sign }
    }

    private func update(_ connection: Int, _ change: (inout Entry) -> Void) {
        guard var entry = entries[connection] else { return }
        count(entry, -1)
        change(&entry)
        count(entry, +1)
        entries[connection] = entry
    }

    private func close(_ connection: Int, _ reason: ConnectionShedReason) {
        guard let entry = entries[connection], !entry.closing, entry.socket >= 0 else { return }
        update(connection) { $0.closing = true }
        shed[reason, default: 0] += 1
        // ENOTCONN is a peer already gone; EBADF or ENOTSOCK would mean a descriptor that is no longer the socket.
        let error = closeSocket(entry.socket)
        if error == EBADF || error == ENOTSOCK {
            report("connection guard: descriptor \(entry.socket) was not an open socket (errno \(error))")
        }
    }

    /// Whether `entry` has been idle long enough at `now` to be trimmed: never one whose answer went out
    /// moments ago, whose client is about to send its next request.
    private func idleLongEnough(_ entry: Entry, now: Double) -> Bool {
        entry.isIdle && now - entry.since >= policy.minimumIdle
    }

    /// Keep-alive connections idle for the minimum idle age beyond the trim threshold, longest idle first.
    private func trimIdle(now: Double) {
        guard live > policy.trimThreshold, idle > 0 else { return }
        for connection in oldest(live - policy.trimThreshold, where: { idleLongEnough($0, now: now) }) {
            close(connection, .keepAliveTrim)
        }
    }

    /// Beyond the held limit: connections idle for the minimum idle age, longest idle first, then slow ones
    /// (still sending a request), oldest first; a connection idle for less than the minimum idle age is never
    /// closed for room. `sparing` is the connection just accepted, which is never the one to make room.
    private func keepSlotsFree(sparing: Int?, now: Double) {
        guard held > policy.heldLimit else { return }
        let excess = held - policy.heldLimit
        let idleVictims = oldest(min(excess, idle), where: { idleLongEnough($0, now: now) })
        for connection in idleVictims { close(connection, .reserve) }
        let slowVictims = oldest(excess - idleVictims.count, where: { $0.isHeld && !$0.isIdle }, sparing: sparing)
        for connection in slowVictims { close(connection, .reserve) }
    }

    /// Up to `count` connections the guard can close that match `predicate` (other than `sparing`), the longest in
    /// their phase first.
    private func oldest(_ count: Int, where predicate: (Entry) -> Bool, sparing: Int? = nil) -> [Int] {
        guard count > 0 else { return [] }
        func eligible(_ element: (key: Int, value: Entry)) -> Bool {
            element.key != sparing && element.value.socket >= 0 && predicate(element.value)
        }
        if count == 1 {
            // The common case, one more connection than allowed: a scan, not a sort.
            var best: (key: Int, value: Entry)?
            for element in entries where eligible(element) && element.value.since < best?.value.since ?? .infinity {
                best = element
            }
            return best.map { [$0.key] } ?? []
        }
        return entries.filter(eligible).sorted { $0.value.since < $1.value.since }.prefix(count).map(\.key)
    }
}
