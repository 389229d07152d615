/// An error with a stable code and a reason, as Orchard's modules throw them.
///
/// Conforming types get equality and hashing on ``code`` only, so callers match
/// `error == SomeError(code: .someCode)` whatever the reason, and a `code: reason` description
/// (just the code when the reason is empty). A type may still write its own ``description``.
public protocol CodedError: Error, Hashable, CustomStringConvertible {
    /// The type of the stable codes: static constants over snake_case strings.
    associatedtype Code: RawRepresentable, Hashable where Code.RawValue == String
    /// What went wrong, as a stable code.
    var code: Code { get }
    /// A human-readable reason, never a secret.
    var reason: String { get }
}

extension CodedError {
    /// `code: reason`, or `code` when the reason is empty.
    public var description: String { reason.isEmpty ? code.rawValue : "\(code.rawValue): \(reason)" }

    /// Errors are equal when their codes are.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }

    /// Hashes the code only.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
