import OrchardBase
import Foundation

/// Token buckets per key: each key may make `burst` requests at once and `ratePerSecond` on average.
public final class TokenBucketRateLimiter: Sendable {
    /// The outcome of taking a token.
    public enum Decision: Sendable, Equatable {
        /// A token was taken.
        case allowed
        /// No token left; one will be there in `retryAfter` whole seconds (at least 1).
        case limited(retryAfter: Int)
    }

    private struct Bucket {
        var tokens: Double
        var updated: Double
    }

    /// Tokens added per second.
    public let ratePerSecond: Double
    /// The bucket's capacity.
    public let burst: Int
    private let monotonicSeconds: @Sendable () -> Double
    private let maxKeys: Int
    private let buckets = Locked<[String: Bucket]>([:])

    /// A limiter; `monotonicSeconds` is its clock (injected in tests). At most `maxKeys` buckets are kept: beyond
    /// that, full buckets (idle keys) are dropped.
    public init(
        ratePerSecond: Double, burst: Int, maxKeys: Int = 100_000,
        monotonicSeconds: @escaping @Sendable () -> Double = HTTPClock.system.monotonicSeconds
    ) {
        precondition(ratePerSecond > 0 && burst >= 1, "a rate limit needs a positive rate and a burst of at least 1")
        self.ratePerSecond = ratePerSecond
        self.burst = burst
        self.maxKeys = maxKeys
        self.monotonicSeconds = monotonicSeconds
    }

    /// Whether `key`'s bucket has a token now, without taking it (a limit on failures checks before the attempt
    /// and takes a token only when the attempt fails).
    public func peek(_ key: String) -> Decision {
        let now = monotonicSeconds()
        return buckets.withLock { buckets in
            guard let bucket = buckets[key] else { return .allowed }
            let tokens = min(Double(burst), bucket.tokens + max(0, now - bucket.updated) * ratePerSecond)
            if tokens >= 1 { return .allowed }
            return .limited(retryAfter: max(1, Int(((1 - tokens) / ratePerSecond).rounded(.up))))
        }
    }

    /// Takes a token from `key`'s bucket.
    public func acquire(_ key: String) -> Decision {
        let now = monotonicSeconds()
        return buckets.withLock { buckets in
            var bucket = buckets[key] ?? Bucket(tokens: Double(burst), updated: now)
            bucket.tokens = min(Double(burst), bucket.tokens + max(0, now - bucket.updated) * ratePerSecond)
            bucket.updated = now
            let decision: Decision
            if bucket.tokens >= 1 {
                bucket.tokens -= 1
                decision = .allowed
            } else {
                decision = .limited(retryAfter: max(1, Int(((1 - bucket.tokens) / ratePerSecond).rounded(.up))))
            }
            buckets[key] = bucket
            if buckets.count > maxKeys {
                buckets = buckets.filter { _, bucket in
                    bucket.tokens + max(0, now - bucket.updated) * ratePerSecond < Double(burst)
                }
            }
            return decision
        }
    }
}
