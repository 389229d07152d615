import Foundation
import OrchardBase

/// Why a retry schedule's text was refused, with a stable code.
///
/// Equality compares codes only.
public struct WebhookRetryScheduleError: CodedError, Sendable {
    /// A stable, documented error code.
    public struct Code: Hashable, Sendable, RawRepresentable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The text is not a comma-separated list of durations such as `1m,5m,2h` (or `none`).
        public static let malformed = Code(rawValue: "retry_schedule_malformed")
        /// A delay is below ``WebhookRetrySchedule/minimumDelay`` or above ``WebhookRetrySchedule/maximumDelay``,
        /// or there are more than ``WebhookRetrySchedule/maximumRetries`` of them.
        public static let outOfRange = Code(rawValue: "retry_schedule_out_of_range")
    }

    /// What went wrong, as a stable code.
    public var code: Code
    /// A human-readable reason.
    public var reason: String

    public init(code: Code, reason: String = "") {
        self.code = code
        self.reason = reason
    }
}

/// When failed webhook deliveries are tried again.
///
/// The first attempt is made as soon as the event is due; after failed attempt *n* the next one waits
/// `delays[n-1]`; when attempt `delays.count + 1` fails too, the event is dead (only a manual redelivery
/// sends it again). The default, `1m,5m,30m,2h,6h,12h,24h`, makes 8 attempts over about 44½ hours.
///
/// The text form, for configuration files and the environment, is a comma-separated list of
/// durations, each an integer with a unit `ms`, `s`, `m`, `h` or `d` (`"1m,5m,30m,2h,6h,12h,24h"`),
/// or `none` for a single attempt.
public struct WebhookRetrySchedule: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The waits after each failed attempt, in seconds, in order.
    public var delays: [TimeInterval]

    /// A schedule of `delays` (seconds). Not validated: ``init(parsing:)`` and ``validate()`` check ranges.
    public init(delays: [TimeInterval]) { self.delays = delays }

    /// 1 m, 5 m, 30 m, 2 h, 6 h, 12 h, 24 h, then dead.
    public static let `default` = WebhookRetrySchedule(delays: [60, 300, 1800, 7200, 21600, 43200, 86400])

    /// The shortest delay accepted: 1 ms.
    public static let minimumDelay: TimeInterval = 0.001
    /// The longest delay accepted: 30 days.
    public static let maximumDelay: TimeInterval = 30 * 86400
    /// The most retries accepted: 64.
    public static let maximumRetries = 64

    /// The total number of attempts before an event is dead: `delays.count + 1`.
    public var maximumAttempts: Int { delays.count + 1 }

    /// The wait after failed attempt number `attempt` (1 for the first), or nil when that attempt was the last.
    public func delay(afterAttempt attempt: Int) -> TimeInterval? {
        guard attempt >= 1, attempt <= delays.count else { return nil }
        return delays[attempt - 1]
    }

    /// When to try again after failed attempt number `attempt` made at `date`, or nil when the event is dead.
    public func nextAttempt(afterAttempt attempt: Int, at date: Date) -> Date? {
        delay(afterAttempt: attempt).map { date.addingTimeInterval($0) }
    }

    /// Parses the text form, e.g. `"1m,5m,30m,2h,6h,12h,24h"` (whitespace around items is ignored) or `none`.
    ///
    /// - Throws: `retry_schedule_malformed` or `retry_schedule_out_of_range`.
    public init(parsing text: String) throws(WebhookRetryScheduleError) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.lowercased() == "none" {
            self.init(delays: [])
            return
        }
        guard !trimmed.isEmpty else {
            throw WebhookRetryScheduleError(code: .malformed, reason: "empty (write none for no retries)")
        }
        var delays: [TimeInterval] = []
        for item in trimmed.split(separator: ",", omittingEmptySubsequences: false) {
            delays.append(try Self.parseDuration(item.trimmingCharacters(in: .whitespaces)))
        }
        let schedule = WebhookRetrySchedule(delays: delays)
        try schedule.validate()
        self = schedule
    }

    /// Checks every delay is within ``minimumDelay``…``maximumDelay`` and there are at most ``maximumRetries``.
    public func validate() throws(WebhookRetryScheduleError) {
        guard delays.count <= Self.maximumRetries else {
            throw WebhookRetryScheduleError(code: .outOfRange, reason: "more than \(Self.maximumRetries) retries")
        }
        for delay in delays where !(delay >= Self.minimumDelay && delay <= Self.maximumDelay) {
            throw WebhookRetryScheduleError(code: .outOfRange, reason: "a delay is not between 1ms and 30d")
        }
    }

    /// The text form: each delay in the largest of `h`, `m`, `s`, `ms` that writes it as an integer.
    public var description: String {
        delays.isEmpty ? "none" : delays.map(Self.formatDuration).joined(separator: ",")
    }

    private static let units: [(suffix: String, seconds: TimeInterval)] = [
        ("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600), ("d", 86400),
    ]

    private static func parseDuration(_ item: String) throws(WebhookRetryScheduleError) -> TimeInterval {
        let digits = item.prefix { $0.isASCII && $0.isNumber }
        let suffix = item.dropFirst(digits.count).lowercased()
        guard !digits.isEmpty, digits.count <= 9, let count = Int(digits),
            let unit = units.first(where: { $0.suffix == suffix })
        else {
            throw WebhookRetryScheduleError(
                code: .malformed, reason: "\"\(item.prefix(32))\" is not an integer with a unit ms, s, m, h or d")
        }
        if unit.suffix == "ms" { return TimeInterval(count) / 1000 }
        return TimeInterval(count) * unit.seconds
    }

    private static func formatDuration(_ seconds: TimeInterval) -> String {
        let milliseconds = (seconds * 1000).rounded()
        if milliseconds.truncatingRemainder(dividingBy: 1000) != 0 { return "\(Int64(milliseconds))ms" }
        let whole = Int64(milliseconds / 1000)
        if whole != 0, whole % 3600 == 0 { return "\(whole / 3600)h" }
        if whole != 0, whole % 60 == 0 { return "\(whole / 60)m" }
        return "\(whole)s"
    }
}
