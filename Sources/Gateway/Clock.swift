import OrchardBase
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
public final class ManualClock: GatewayClock, Sendable {
    private let current: Locked<Date>

    /// A clock reading `start`.
    public init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) { current = Locked(start) }

    public func now() -> Date { current.current }

    /// Moves the clock forward by `interval` seconds.
    public func advance(by interval: TimeInterval) { current.withLock { $0 += interval } }

    /// Sets the clock to `date`.
    public func set(_ date: Date) { current.withLock { $0 = date } }
}

extension Date {
    /// Milliseconds since 1970 (UTC), rounded: how cursors and the store keep times.
    package var unixMilliseconds: Int64 { Int64((timeIntervalSince1970 * 1000).rounded()) }

    /// The date `milliseconds` after 1970 (UTC).
    package init(unixMilliseconds milliseconds: Int64) {
        self.init(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}
