import Foundation
import OrchardBase
import OrchardHTTP

/// How many failed authentications one client address may make on the API (a wrong app key or secret key):
/// a token bucket per address. Past it, every request from that address that presents credentials is answered
/// `429 rate_limited` with `Retry-After`, the right key included, until the bucket refills; guessing keys gains
/// nothing, and a client with a stale key is told to stop.
public struct APIAuthenticationLimit: Sendable {
    /// Failed authentications an address may make at once. Default 20.
    public var burst = 20
    /// Failed authentications an address regains per second once the burst is spent. Default one per 3 seconds;
    /// 0 turns the limit off (`orchard serve --auth-failure-refill-seconds 0`).
    public var ratePerSecond = 1.0 / 3

    /// The defaults.
    public init() {}
}

/// Failed authentications per client address (``GatewayAPI/clientAddress(_:)``), for the API's credentials and
/// the console's sign-in alike: checked before the credentials are, counted only when they fail, and logged once
/// when an address starts being refused (its address, the scope and the wait; never a key).
final class AuthenticationThrottle: Sendable {
    /// Where the refusals apply, as logged: `api` or `console`.
    let scope: String
    /// The buckets; `nil` when the limit is off (a rate of 0).
    let limiter: TokenBucketRateLimiter?
    /// The addresses refused now, each logged once when its refusal began.
    private let refusing = Locked<Set<String>>([])
    /// Receives the log lines; the API's access log once its application is made.
    private let sink = Locked<(@Sendable (String) -> Void)?>(nil)
    private let now: @Sendable () -> Date

    /// A throttle of `burst` failures at once and `ratePerSecond` after, on the clock `now`; none with a rate of 0.
    init(scope: String, burst: Int, ratePerSecond: Double, now: @escaping @Sendable () -> Date) {
        self.scope = scope
        self.now = now
        limiter =
            ratePerSecond > 0
            ? TokenBucketRateLimiter(ratePerSecond: ratePerSecond, burst: max(burst, 1)) { now().timeIntervalSince1970 }
            : nil
    }

    /// Sends the log lines to `log`.
    func logging(to log: @escaping @Sendable (String) -> Void) { sink.withLock { $0 = log } }

    /// The bucket of `address`: requests without a known address share one.
    static func key(_ address: String?) -> String { address ?? "unknown" }

    /// Throws `429 rate_limited` (with `Retry-After`) when `address` has spent its failures.
    func check(_ address: String?) throws {
        guard let limiter else { return }
        let address = Self.key(address)
        switch limiter.peek(address) {
        case .allowed:
            _ = refusing.withLock { $0.remove(address) }
        case .limited(let retryAfter):
            throw HTTPAPIError(
                status: .tooManyRequests, type: .rateLimit, code: .rateLimited,
                message: "too many failed authentications from this address; retry after \(retryAfter) s",
                headers: ["Retry-After": String(retryAfter)])
        }
    }

    /// Counts a failed authentication from `address`; logs the start of its refusal when this one spent the last.
    func failed(_ address: String?) {
        guard let limiter else { return }
        let address = Self.key(address)
        _ = limiter.acquire(address)
        guard case .limited(let retryAfter) = limiter.peek(address) else { return }
        let started = refusing.withLock { refusing in
            // Addresses whose refusal ended without another request are forgotten in bulk, never kept unbounded.
            if refusing.count >= 100_000 { refusing.removeAll() }
            return refusing.insert(address).inserted
        }
        guard started, let log = sink.withLock({ $0 }) else { return }
        let fields: [(String, String)] = [
            ("time", JSONString.literal(now().formatted(.iso8601))), ("level", JSONString.literal("warning")),
            ("event", JSONString.literal("authentication_throttled")), ("scope", JSONString.literal(scope)),
            ("remote", JSONString.literal(address)), ("failures", String(limiter.burst)),
            ("retry_after_seconds", String(retryAfter)),
        ]
        log("{" + fields.map { "\(JSONString.literal($0.0)):\($0.1)" }.joined(separator: ",") + "}")
    }
}
