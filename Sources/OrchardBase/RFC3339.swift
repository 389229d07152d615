import Foundation

/// Dates as RFC 3339 text in UTC with whole seconds (`2026-11-30T03:20:05Z`), the form every Orchard
/// interface prints: API and webhook bodies, CLI output, error reasons.
package enum RFC3339 {
    /// `date` in UTC, whole seconds (the fraction is dropped).
    package static func string(_ date: Date) -> String {
        var style = Date.ISO8601FormatStyle()
        style.timeZone = TimeZone(identifier: "UTC")!
        return date.formatted(style)
    }
}
