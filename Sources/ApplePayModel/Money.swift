import Foundation

/// An exact amount of a currency, on `Decimal` (never floating point).
///
/// Amounts are parsed from and formatted to the plain decimal strings Apple Pay JS uses
/// (`"12.75"`), converted to and from minor units (`1275`), and added exactly
/// (`0.1 + 0.2 == 0.3`). An amount never has more decimals than its currency allows.
public struct Money: Hashable, Sendable, CustomStringConvertible {
    /// The amount in major units (`12.75`).
    public let amount: Decimal
    /// The currency.
    public let currency: Currency

    /// The largest number of significant digits an amount may have.
    public static let maximumDigits = 30

    /// Parses a plain decimal string: an optional `-`, one or more ASCII digits, and optionally a
    /// `.` followed by one or more digits, no more than the currency's exponent.
    ///
    /// Refuses exponents (`"1e3"`), commas (`"12,5"`), spaces, a leading `+`, `"NaN"` and
    /// infinities (`invalid_amount`); more decimals than the currency allows
    /// (`too_many_decimals`; nothing is rounded); more than ``maximumDigits`` digits
    /// (`amount_out_of_range`). Negative amounts parse: whether one is allowed is a rule of
    /// where it is used (a discount item may be negative, a total may not).
    public init(_ text: String, currency: Currency) throws(MoneyError) {
        let bytes = Array(text.utf8)
        var index = 0
        let negative = bytes.first == UInt8(ascii: "-")
        if negative { index = 1 }
        let digitStart = index
        while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 { index += 1 }
        let integerDigits = index - digitStart
        var fractionDigits = 0
        var hasPoint = false
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            hasPoint = true
            index += 1
            let fractionStart = index
            while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 { index += 1 }
            fractionDigits = index - fractionStart
        }
        let shown = text.count > 24 ? String(text.prefix(24)) + "…" : text
        guard integerDigits > 0, index == bytes.count, !hasPoint || fractionDigits > 0 else {
            throw MoneyError(.invalidAmount, "'\(shown)' is not a decimal amount like \"12.75\"")
        }
        guard fractionDigits <= currency.minorUnitExponent else {
            throw MoneyError(
                .tooManyDecimals,
                "'\(shown)' has \(fractionDigits) decimals; \(currency.code) allows \(currency.minorUnitExponent)")
        }
        let significant = text.drop(while: { $0 == "-" || $0 == "0" || $0 == "." }).filter(\.isASCIIDigit).count
        guard significant <= Money.maximumDigits, integerDigits + fractionDigits <= Money.maximumDigits + 8 else {
            throw MoneyError(.amountOutOfRange, "'\(shown)' has more than \(Money.maximumDigits) digits")
        }
        guard let value = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
            throw MoneyError(.invalidAmount, "'\(shown)' is not a decimal amount")
        }
        self.amount = value.isZero ? 0 : value
        self.currency = currency
    }

    /// The amount `minorUnits / 10^exponent` (`1275` TWD is 12.75).
    public init(minorUnits: Int64, currency: Currency) {
        self.amount = Decimal(sign: .plus, exponent: -currency.minorUnitExponent, significand: Decimal(minorUnits))
        self.currency = currency
    }

    /// Zero of `currency`.
    public static func zero(_ currency: Currency) -> Money { Money(minorUnits: 0, currency: currency) }

    private init(exact amount: Decimal, currency: Currency) {
        self.amount = amount.isZero ? 0 : amount
        self.currency = currency
    }

    /// The amount in minor units (`12.75` TWD is `1275`); `amount_out_of_range` beyond `Int64`.
    public var minorUnits: Int64 {
        get throws(MoneyError) {
            let digits = minorUnitDigits
            guard let value = Int64(digits) else {
                throw MoneyError(
                    .amountOutOfRange, "\(decimalString) \(currency.code) does not fit in 64-bit minor units")
            }
            return value
        }
    }

    /// The minor units as an integer string, e.g. `"-1275"`.
    private var minorUnitDigits: String {
        let scaled = Decimal(sign: .plus, exponent: currency.minorUnitExponent, significand: amount)
        var rounded = Decimal()
        var source = scaled
        NSDecimalRound(&rounded, &source, 0, .plain)
        return rounded.description
    }

    /// The canonical decimal string with exactly the currency's number of decimals:
    /// `"12.75"` for USD, `"100"` for JPY, `"1.234"` for KWD, `"-5.00"` for a USD discount.
    public var decimalString: String {
        var digits = minorUnitDigits
        let negative = digits.hasPrefix("-")
        if negative { digits.removeFirst() }
        let exponent = currency.minorUnitExponent
        guard exponent > 0 else { return (negative ? "-" : "") + digits }
        if digits.count <= exponent {
            digits = String(repeating: "0", count: exponent - digits.count + 1) + digits
        }
        let split = digits.index(digits.endIndex, offsetBy: -exponent)
        return (negative ? "-" : "") + digits[..<split] + "." + digits[split...]
    }

    /// `"12.75 TWD"`.
    public var description: String { "\(decimalString) \(currency.code)" }

    /// Whether the amount is below zero.
    public var isNegative: Bool { amount < 0 }
    /// Whether the amount is zero.
    public var isZero: Bool { amount.isZero }
    /// Whether the amount is above zero.
    public var isPositive: Bool { amount > 0 }

    /// The exact sum; `currency_mismatch` when the currencies differ.
    public static func + (lhs: Money, rhs: Money) throws(MoneyError) -> Money {
        try lhs.adding(rhs)
    }

    /// The exact difference; `currency_mismatch` when the currencies differ.
    public static func - (lhs: Money, rhs: Money) throws(MoneyError) -> Money {
        try lhs.adding(-rhs)
    }

    /// The amount with its sign flipped.
    public static prefix func - (value: Money) -> Money {
        Money(exact: -value.amount, currency: value.currency)
    }

    /// The exact sum; `currency_mismatch` when the currencies differ.
    public func adding(_ other: Money) throws(MoneyError) -> Money {
        guard currency == other.currency else {
            throw MoneyError(.currencyMismatch, "cannot add \(other.currency.code) to \(currency.code)")
        }
        return Money(exact: amount + other.amount, currency: currency)
    }

    /// The exact sum of `amounts`, zero of `currency` when empty; `currency_mismatch` when any differs.
    public static func sum(_ amounts: some Sequence<Money>, currency: Currency) throws(MoneyError) -> Money {
        var total = Money.zero(currency)
        for amount in amounts { total = try total.adding(amount) }
        return total
    }

    /// Whether `self` is less than `other`; `currency_mismatch` when the currencies differ.
    public func isLess(than other: Money) throws(MoneyError) -> Bool {
        guard currency == other.currency else {
            throw MoneyError(.currencyMismatch, "cannot compare \(other.currency.code) with \(currency.code)")
        }
        return amount < other.amount
    }
}
