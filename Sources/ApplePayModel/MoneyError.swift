import Foundation
import OrchardBase

/// A refused amount, currency or country code.
///
/// Equality and hashing use the ``code`` only, so callers compare against the static codes
/// (`error.code == .tooManyDecimals`) or against an error built from one.
public struct MoneyError: CodedError {
    /// A stable, documented, snake_case identifier of what went wrong.
    public struct Code: Hashable, Sendable, RawRepresentable, CustomStringConvertible {
        /// The stable string, e.g. `too_many_decimals`.
        public var rawValue: String
        /// Wraps a code string.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The code string.
        public var description: String { rawValue }

        /// The text is not an ISO 4217 alphabetic or numeric currency code.
        public static let unknownCurrency = Code(rawValue: "unknown_currency")
        /// The amount has more decimals than the currency's minor unit allows.
        public static let tooManyDecimals = Code(rawValue: "too_many_decimals")
        /// The text is not a plain decimal number (`-?digits(.digits)?`).
        public static let invalidAmount = Code(rawValue: "invalid_amount")
        /// A negative amount where only zero or more is allowed.
        public static let negativeAmount = Code(rawValue: "negative_amount")
        /// The amount has too many digits, or does not fit in 64-bit minor units.
        public static let amountOutOfRange = Code(rawValue: "amount_out_of_range")
        /// The text is not an ISO 3166-1 alpha-2 country code.
        public static let invalidCountryCode = Code(rawValue: "invalid_country_code")
        /// Arithmetic on amounts of two different currencies.
        public static let currencyMismatch = Code(rawValue: "currency_mismatch")
    }

    /// What went wrong, as a stable code.
    public var code: Code
    /// A human readable explanation.
    public var reason: String

    /// Creates an error with a code and a reason.
    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    /// `code: reason`.
    public var description: String { "\(code.rawValue): \(reason)" }
}
