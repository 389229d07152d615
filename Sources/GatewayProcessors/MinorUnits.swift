import ApplePayModel
import Foundation
import Gateway

/// Amounts in each processor's minor units. Orchard keeps an amount in ISO 4217's minor units of its currency; a
/// processor may count some currencies with other exponents (Adyen's ISK has 2 decimals, its IDR none), so each
/// amount is converted by the processor's own table, exactly or not at all.
struct MinorUnits {
    /// The exponents that differ from ISO 4217's; every other currency has ISO's.
    let exceptions: [String: Int]
    /// Whether the last digit of a 3-decimal amount must be 0 (Checkout.com).
    let threeDecimalsEndInZero: Bool

    /// Adyen's currency table (docs.adyen.com, "Currency codes"): CLP and ISK with 2 decimals, CVE and IDR with
    /// none, the rest as ISO 4217.
    static let adyen = MinorUnits(exceptions: ["CLP": 2, "ISK": 2, "CVE": 0, "IDR": 0], threeDecimalsEndInZero: false)

    /// Checkout.com's ("Calculating the amount"): CLP with 2 decimals; BHD, IQD, JOD, KWD, LYD, OMR and TND with
    /// 3, whose last digit must be 0; the rest as ISO 4217.
    static let checkoutCom = MinorUnits(exceptions: ["CLP": 2], threeDecimalsEndInZero: true)

    /// The processor's exponent of `currency`; nil for a currency ISO 4217 does not know.
    func exponent(_ currency: String) -> Int? {
        if let exception = exceptions[currency] { return exception }
        return (try? Currency(code: currency))?.minorUnitExponent
    }

    /// `amount` (ISO minor units of `currency`) in the processor's minor units; nil when it cannot be said exactly
    /// (IDR 123.45 where the processor's IDR has no decimals) or the processor refuses its form.
    func processorAmount(_ amount: Int64, currency: String) -> Int64? {
        guard let iso = (try? Currency(code: currency))?.minorUnitExponent, let own = exponent(currency) else {
            return nil
        }
        var value = amount
        if own > iso {
            for _ in 0..<(own - iso) {
                let (product, overflow) = value.multipliedReportingOverflow(by: 10)
                if overflow { return nil }
                value = product
            }
        } else if own < iso {
            for _ in 0..<(iso - own) {
                guard value % 10 == 0 else { return nil }
                value /= 10
            }
        }
        if threeDecimalsEndInZero, own == 3, value % 10 != 0 { return nil }
        return value
    }

    /// A processor amount (a notification's) in ISO minor units; nil when it has no exact ISO form.
    func isoAmount(_ value: Int64, currency: String) -> Int64? {
        guard let iso = (try? Currency(code: currency))?.minorUnitExponent, let own = exponent(currency) else {
            return nil
        }
        var amount = value
        if own > iso {
            for _ in 0..<(own - iso) {
                guard amount % 10 == 0 else { return nil }
                amount /= 10
            }
        } else if own < iso {
            for _ in 0..<(iso - own) {
                let (product, overflow) = amount.multipliedReportingOverflow(by: 10)
                if overflow { return nil }
                amount = product
            }
        }
        return amount
    }

    /// `payment_data_type_unsupported` unless `amount` of `currency` has an exact form in this processor's units.
    func checked(_ amount: Int64, currency: String, processor: String) throws(GatewayError) -> Int64 {
        guard let value = processorAmount(amount, currency: currency) else {
            throw GatewayError(
                .paymentDataTypeUnsupported,
                "\(processor) cannot take this amount in \(currency): its \(currency) has \(exponent(currency) ?? 0) decimals"
                    + (threeDecimalsEndInZero && exponent(currency) == 3 ? " and the last one must be 0" : ""),
                param: "amount")
        }
        return value
    }
}
