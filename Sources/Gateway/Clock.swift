import Foundation

/// Where the gateway reads "now": the system clock in production, a manual one in tests.
public protocol GatewayClock: Sendable {
    /// The current time.
    func now() -> Date
}

/// The system's wall clock.
public struct SystemClock: GatewayClock {
    public init() {}
    public func now() -> Date { Date() }
}

/// A clock that stands still until told to move, for deterministic tests and replays.
public final class ManualClock: GatewayClock, @unchecked Sendable {
    private let lock = NSLock()
    private var current: Date

    /// A clock reading `start`.
    public init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) { current = start }

    public func now() -> Date { lock.withLock { current } }

    /// Moves the clock forward by `interval` seconds.
    public func advance(by interval: TimeInterval) { lock.withLock { current += interval } }

    /// Sets the clock to `date`.
    public func set(_ date: Date) { lock.withLock { current = date } }
}

extension Date {
    /// Milliseconds since 1970 (UTC), rounded: how cursors and the store keep times.
    package var unixMilliseconds: Int64 { Int64((timeIntervalSince1970 * 1000).rounded()) }

    /// The date `milliseconds` after 1970 (UTC).
    package init(unixMilliseconds milliseconds: Int64) {
        self.init(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}
