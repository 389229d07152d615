import Foundation

/// Realistic requests, for the demo, the documentation and tests of every module.
public enum PaymentRequestExamples {
    /// A Taiwanese coffee shop's cart in TWD with a debit-card discount (a negative item):
    /// 360.00 + 85.00 − 44.50 = 400.50.
    public static var twdCartWithDebitDiscount: PaymentRequest {
        var request = PaymentRequest(
            merchantIdentifier: "merchant.tw.orchard.coffee", countryCode: .tw, currency: .twd,
            supportedNetworks: [.visa, .masterCard, .jcb],
            merchantCapabilities: [.supports3DS, .supportsCredit, .supportsDebit],
            lineItems: [
                SummaryItem(label: "Pour-over coffee x2", amount: Money(minorUnits: 36_000, currency: .twd)),
                SummaryItem(label: "Croissant", amount: Money(minorUnits: 8_500, currency: .twd)),
                SummaryItem(label: "Debit card discount", amount: Money(minorUnits: -4_450, currency: .twd)),
            ],
            total: SummaryItem(label: "Orchard Coffee", amount: Money(minorUnits: 40_050, currency: .twd)))
        request.requiredBillingContactFields = [.postalAddress]
        return request
    }

    /// A US outdoor shop's cart in USD with three shipping methods; the selected one is a line item.
    public static var usCartWithShipping: PaymentRequest {
        func usd(_ cents: Int64) -> Money { Money(minorUnits: cents, currency: .usd) }
        var request = PaymentRequest(
            merchantIdentifier: "merchant.com.example.outdoors", countryCode: .us, currency: .usd,
            supportedNetworks: [.amex, .discover, .masterCard, .visa],
            merchantCapabilities: [.supports3DS],
            lineItems: [
                SummaryItem(label: "Hiking boots", amount: usd(12_999)),
                SummaryItem(label: "Wool socks", amount: usd(1_450)),
                SummaryItem(label: "Ground shipping", amount: usd(599)),
                SummaryItem(label: "Estimated tax", amount: usd(1_201)),
            ],
            total: SummaryItem(label: "Orchard Outdoors", amount: usd(16_249)),
            shippingMethods: [
                ShippingMethod(
                    identifier: "ground", label: "Ground", detail: "Arrives in 3-5 days", amount: usd(599),
                    dateComponentsRange: ShippingDateRange(start: .init(days: 3), end: .init(days: 5)), selected: true),
                ShippingMethod(
                    identifier: "express", label: "Express", detail: "Arrives in 2 days", amount: usd(1_499),
                    dateComponentsRange: ShippingDateRange(start: .init(days: 2), end: .init(days: 2))),
                ShippingMethod(identifier: "pickup", label: "Store pickup", detail: "Ready today", amount: usd(0)),
            ],
            shippingType: .shipping)
        request.requiredShippingContactFields = [.postalAddress, .name, .email, .phone]
        request.requiredBillingContactFields = [.postalAddress]
        return request
    }

    /// A taxi ride in TWD whose fare is known only at the end: the flag fall is shown, the per-mile
    /// fare is pending, and the total shows "amount pending" (a deferred payment: the prime lives
    /// 30 days).
    public static var deferredTaxiFare: PaymentRequest {
        PaymentRequest(
            merchantIdentifier: "merchant.tw.orchard.taxi", countryCode: .tw, currency: .twd,
            supportedNetworks: [.visa, .masterCard, .jcb, .amex],
            merchantCapabilities: [.supports3DS],
            lineItems: [
                SummaryItem(label: "Flag fall", amount: Money(minorUnits: 8_500, currency: .twd)),
                SummaryItem(label: "Per-mile fare", amount: Money(minorUnits: 0, currency: .twd), type: .pending),
            ],
            total: SummaryItem(
                label: "Orchard Taxi", amount: Money(minorUnits: 8_500, currency: .twd), type: .pending))
    }

    /// The three examples with short names.
    public static var all: [(name: String, request: PaymentRequest)] {
        [
            ("twd-cart-debit-discount", twdCartWithDebitDiscount), ("us-cart-shipping", usCartWithShipping),
            ("deferred-taxi-fare", deferredTaxiFare),
        ]
    }
}
