import ApplePayModel
import Foundation

/// The rules for an amount that a request charges, captures or refunds, owned here once: openapi.yaml's
/// `PositiveAmount` (a test compares the two).
public enum AmountRules {
    /// The most digits before the decimal point, in the currency's major unit.
    public static let maximumIntegerDigits = 12

    /// The amount `text` (a decimal string in the major unit) in minor units of `currency`.
    ///
    /// - Throws: `invalid_amount` for anything but plain digits with an optional fraction, for leading zeros
    ///   (`"00100.00"`) and for zero; `negative_amount`; `too_many_decimals`; `amount_out_of_range` past
    ///   ``maximumIntegerDigits`` integer digits.
    public static func minorUnits(_ text: String, currency: Currency, param: String) throws(MoneyError) -> Int64 {
        let money = try Money(text, currency: currency)
        if money.isNegative { throw MoneyError(.negativeAmount, "\(param) must not be negative") }
        let integerDigits = text.utf8.prefix { $0 != UInt8(ascii: ".") }
        guard integerDigits.count == 1 || integerDigits.first != UInt8(ascii: "0") else {
            throw MoneyError(.invalidAmount, "\(param) must not have leading zeros")
        }
        guard integerDigits.count <= maximumIntegerDigits else {
            throw MoneyError(
                .amountOutOfRange, "\(param) has more than \(maximumIntegerDigits) digits before the decimal point")
        }
        guard money.isPositive else { throw MoneyError(.invalidAmount, "\(param) must be more than zero") }
        return try money.minorUnits
    }

    /// Whether `minorUnits` of `currency` is a positive amount within ``maximumIntegerDigits``.
    public static func contains(_ minorUnits: Int64, currency: Currency) -> Bool {
        var limit: Int64 = 1
        for _ in 0..<(maximumIntegerDigits + currency.minorUnitExponent) { limit *= 10 }
        return minorUnits > 0 && minorUnits < limit
    }
}
