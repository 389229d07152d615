import Foundation

/// A payment request: everything PassKit's `PKPaymentRequest` and Apple Pay JS's
/// `ApplePayPaymentRequest` can say, as Swift values, shared by the merchant's server, the web
/// SDK and the iOS SDK.
///
/// The total's label is the merchant's name as the sheet shows it ("Pay Orchard Coffee").
/// Amounts are ``Money``; the total should be the sum of the line items, a discount is a
/// negative line item, and every amount is in ``currency``. ``PaymentRequestValidator`` checks
/// these rules; ``PaymentRequestCoder`` reads and writes the three JSON shapes.
public struct PaymentRequest: Hashable, Sendable {
    /// The Apple merchant identifier (`merchant.com.example`). Apple Pay JS's request does not carry
    /// it (it comes with merchant validation); the W3C form carries it in `data`; TapPay's
    /// `setupApplePay` supplies it.
    public var merchantIdentifier: String?
    /// The merchant's country (where the payment is processed).
    public var countryCode: CountryCode?
    /// The request's currency: the total's and every item's.
    public var currency: Currency?
    /// The accepted payment networks, in order of preference.
    public var supportedNetworks: [PaymentNetwork]
    /// What the payment processor supports; must include ``MerchantCapability/supports3DS``.
    /// Empty when the shape does not carry them (TapPay's `paymentRequest`).
    public var merchantCapabilities: [MerchantCapability]
    /// The card-issuing countries accepted; empty means all.
    public var supportedCountries: [CountryCode]
    /// The line items (Apple's `lineItems`, W3C/TapPay's `displayItems`).
    public var lineItems: [SummaryItem]
    /// The total; its label is the merchant's name. A ``SummaryItemType/pending`` total shows
    /// "amount pending" instead of an amount (TapPay's `isShowTotalAmount: false`).
    public var total: SummaryItem
    /// TapPay's deferred-authorization flag (`total.isAmountPending`, iOS `cart.isAmountPending`):
    /// the amount is decided later and the prime lives 30 days. `nil` when the shape does not carry
    /// it; then ``isDeferred`` is derived from the items.
    public var isAmountPending: Bool?
    /// The shipping methods offered.
    public var shippingMethods: [ShippingMethod]
    /// How the goods reach the customer; `nil` means shipping.
    public var shippingType: ShippingType?
    /// The billing contact fields the sheet must collect.
    public var requiredBillingContactFields: [ContactField]
    /// The shipping contact fields the sheet must collect.
    public var requiredShippingContactFields: [ContactField]
    /// A prefilled billing contact.
    public var billingContact: PaymentContact?
    /// A prefilled shipping contact.
    public var shippingContact: PaymentContact?
    /// Whether the shipping contact may be edited.
    public var shippingContactEditingMode: ShippingContactEditingMode?
    /// A recurring payment (subscription).
    public var recurringPaymentRequest: RecurringPaymentRequest?
    /// An automatic reload (top-up) payment.
    public var automaticReloadPaymentRequest: AutomaticReloadPaymentRequest?
    /// A deferred payment (charged at a later date, e.g. a hotel stay).
    public var deferredPaymentRequest: DeferredPaymentRequest?
    /// Payment tokens for several merchants (a marketplace).
    public var multiTokenContexts: [MultiTokenContext]
    /// Whether the sheet offers a coupon code field.
    public var supportsCouponCode: Bool?
    /// A prefilled coupon code.
    public var couponCode: String?
    /// Base64 data hashed into the payment token's `applicationData`.
    public var applicationData: String?
    /// The Apple Pay JS version the W3C form names; `nil` means the lowest that supports the
    /// request's features (``requiredVersion``).
    public var applePayVersion: Int?

    /// A request with the given essentials; everything else empty.
    public init(
        merchantIdentifier: String? = nil, countryCode: CountryCode? = nil, currency: Currency? = nil,
        supportedNetworks: [PaymentNetwork] = [], merchantCapabilities: [MerchantCapability] = [.supports3DS],
        lineItems: [SummaryItem] = [], total: SummaryItem, isAmountPending: Bool? = nil,
        shippingMethods: [ShippingMethod] = [], shippingType: ShippingType? = nil
    ) {
        self.merchantIdentifier = merchantIdentifier
        self.countryCode = countryCode
        self.currency = currency ?? total.amount.currency
        self.supportedNetworks = supportedNetworks
        self.merchantCapabilities = merchantCapabilities
        self.supportedCountries = []
        self.lineItems = lineItems
        self.total = total
        self.isAmountPending = isAmountPending
        self.shippingMethods = shippingMethods
        self.shippingType = shippingType
        self.requiredBillingContactFields = []
        self.requiredShippingContactFields = []
        self.multiTokenContexts = []
    }

    /// Whether the amount is decided after the sheet (TapPay's 延後授權, deferred authorization):
    /// ``isAmountPending`` when the shape said it, otherwise true when the total or any item is
    /// pending, an item is charged later, or there is a ``deferredPaymentRequest``.
    public var isDeferred: Bool {
        if let isAmountPending { return isAmountPending }
        return total.type == .pending || lineItems.contains { $0.type == .pending || $0.paymentTiming == .deferred }
            || deferredPaymentRequest != nil
    }

    /// Whether the sheet shows the total's amount (TapPay's `isShowTotalAmount`).
    public var showsTotalAmount: Bool { total.type == .final }

    /// The lowest Apple Pay JS version that supports every feature the request uses.
    public var requiredVersion: Int {
        var version = 3
        if recurringPaymentRequest != nil || automaticReloadPaymentRequest != nil || !multiTokenContexts.isEmpty
            || supportsCouponCode != nil || couponCode != nil || shippingContactEditingMode != nil
            || lineItems.contains(where: { $0.paymentTiming != nil })
        {
            version = 12
        }
        if deferredPaymentRequest != nil { version = 14 }
        return version
    }

    /// The amount handed to Apple: the total's amount, except that a pending total whose items are
    /// all pending, or whose shown items sum to zero or less, or whose own amount is not above zero,
    /// becomes 1 (one major unit) — older iOS and macOS refuse a zero total. The request itself
    /// keeps the merchant's amount.
    public var amountForApple: Money {
        guard total.type == .pending else { return total.amount }
        let currency = total.amount.currency
        let shown = lineItems.filter { $0.type == .final }.map(\.amount)
        let allPending = !lineItems.isEmpty && shown.isEmpty
        let shownSum = try? Money.sum(shown, currency: currency)
        let shownSumNotPositive = !lineItems.isEmpty && !(shownSum?.isPositive ?? true)
        if allPending || shownSumNotPositive || !total.amount.isPositive {
            return Money(minorUnits: Int64(pow10(currency.minorUnitExponent)), currency: currency)
        }
        return total.amount
    }
}

private func pow10(_ exponent: Int) -> Int { (0..<exponent).reduce(1) { value, _ in value * 10 } }

/// Whether a summary item's amount is known (`final`) or pending.
public enum SummaryItemType: String, Hashable, Sendable, Codable, CaseIterable {
    /// The amount is final and shown.
    case final
    /// The amount is not known yet: the sheet shows "amount pending" (TapPay's `isAmountPending`).
    case pending
}

/// A line item or the total (`ApplePayLineItem`, `PKPaymentSummaryItem` and its recurring,
/// deferred and automatic-reload subclasses).
public struct SummaryItem: Hashable, Sendable {
    /// The label shown on the sheet.
    public var label: String
    /// The amount; negative for a discount.
    public var amount: Money
    /// Final or pending.
    public var type: SummaryItemType
    /// When the item is charged; `nil` means immediately.
    public var paymentTiming: PaymentTiming?
    /// A recurring item's first payment date (ISO 8601).
    public var recurringPaymentStartDate: String?
    /// A recurring item's interval unit.
    public var recurringPaymentIntervalUnit: RecurringIntervalUnit?
    /// A recurring item's number of units between payments.
    public var recurringPaymentIntervalCount: Int?
    /// A recurring item's last payment date (ISO 8601).
    public var recurringPaymentEndDate: String?
    /// A deferred item's payment date (ISO 8601).
    public var deferredPaymentDate: String?
    /// An automatic-reload item's balance threshold.
    public var automaticReloadPaymentThresholdAmount: Money?

    /// An item charged now.
    public init(label: String, amount: Money, type: SummaryItemType = .final) {
        self.label = label
        self.amount = amount
        self.type = type
    }
}

/// A calendar offset (`ApplePayDateComponents`): years, months, days and hours from today.
public struct DateComponentsValue: Hashable, Sendable {
    /// Years.
    public var years: Int?
    /// Months.
    public var months: Int?
    /// Days.
    public var days: Int?
    /// Hours.
    public var hours: Int?
    /// Creates an offset.
    public init(years: Int? = nil, months: Int? = nil, days: Int? = nil, hours: Int? = nil) {
        self.years = years
        self.months = months
        self.days = days
        self.hours = hours
    }
}

/// A shipping method's delivery window (`ApplePayDateComponentsRange`).
public struct ShippingDateRange: Hashable, Sendable {
    /// The earliest delivery.
    public var start: DateComponentsValue
    /// The latest delivery.
    public var end: DateComponentsValue
    /// Creates a window.
    public init(start: DateComponentsValue, end: DateComponentsValue) {
        self.start = start
        self.end = end
    }
}

/// A shipping method (`ApplePayShippingMethod`, `PKShippingMethod`; W3C/TapPay `shippingOptions`).
public struct ShippingMethod: Hashable, Sendable {
    /// Unique within the request.
    public var identifier: String
    /// The name shown.
    public var label: String
    /// A description shown under the name.
    public var detail: String?
    /// The cost.
    public var amount: Money
    /// The delivery window.
    public var dateComponentsRange: ShippingDateRange?
    /// Whether it is preselected.
    public var selected: Bool?
    /// Creates a shipping method.
    public init(
        identifier: String, label: String, detail: String? = nil, amount: Money,
        dateComponentsRange: ShippingDateRange? = nil, selected: Bool? = nil
    ) {
        self.identifier = identifier
        self.label = label
        self.detail = detail
        self.amount = amount
        self.dateComponentsRange = dateComponentsRange
        self.selected = selected
    }
}

/// A prefilled contact (`ApplePayPaymentContact`).
public struct PaymentContact: Hashable, Sendable {
    /// Phone number.
    public var phoneNumber: String?
    /// Email address.
    public var emailAddress: String?
    /// Given name.
    public var givenName: String?
    /// Family name.
    public var familyName: String?
    /// Phonetic given name.
    public var phoneticGivenName: String?
    /// Phonetic family name.
    public var phoneticFamilyName: String?
    /// Street address lines.
    public var addressLines: [String]?
    /// Sub-locality.
    public var subLocality: String?
    /// City.
    public var locality: String?
    /// Postal code.
    public var postalCode: String?
    /// Sub-administrative area.
    public var subAdministrativeArea: String?
    /// State or province.
    public var administrativeArea: String?
    /// Country name.
    public var country: String?
    /// Country code.
    public var countryCode: String?
    /// An empty contact.
    public init() {}

    static var stringKeys: [(String, WritableKeyPath<PaymentContact, String?>)] {
        [
            ("phoneNumber", \.phoneNumber), ("emailAddress", \.emailAddress), ("givenName", \.givenName),
            ("familyName", \.familyName), ("phoneticGivenName", \.phoneticGivenName),
            ("phoneticFamilyName", \.phoneticFamilyName), ("subLocality", \.subLocality), ("locality", \.locality),
            ("postalCode", \.postalCode), ("subAdministrativeArea", \.subAdministrativeArea),
            ("administrativeArea", \.administrativeArea), ("country", \.country), ("countryCode", \.countryCode),
        ]
    }
}

/// A recurring payment (`ApplePayRecurringPaymentRequest`, `PKRecurringPaymentRequest`).
public struct RecurringPaymentRequest: Hashable, Sendable {
    /// What the subscription is.
    public var paymentDescription: String
    /// The regular charge (payment timing `recurring`).
    public var regularBilling: SummaryItem
    /// A trial period's charge.
    public var trialBilling: SummaryItem?
    /// The terms shown to the customer.
    public var billingAgreement: String?
    /// Where the customer manages the subscription.
    public var managementURL: String
    /// Where Apple sends merchant token life-cycle notifications.
    public var tokenNotificationURL: String?
    /// Creates a recurring payment.
    public init(
        paymentDescription: String, regularBilling: SummaryItem, trialBilling: SummaryItem? = nil,
        billingAgreement: String? = nil, managementURL: String, tokenNotificationURL: String? = nil
    ) {
        self.paymentDescription = paymentDescription
        self.regularBilling = regularBilling
        self.trialBilling = trialBilling
        self.billingAgreement = billingAgreement
        self.managementURL = managementURL
        self.tokenNotificationURL = tokenNotificationURL
    }
}

/// An automatic reload (`ApplePayAutomaticReloadPaymentRequest`, `PKAutomaticReloadPaymentRequest`).
public struct AutomaticReloadPaymentRequest: Hashable, Sendable {
    /// What is reloaded.
    public var paymentDescription: String
    /// The reload charge and its threshold (payment timing `automaticReload`).
    public var automaticReloadBilling: SummaryItem
    /// The terms shown to the customer.
    public var billingAgreement: String?
    /// Where the customer manages the reloads.
    public var managementURL: String
    /// Where Apple sends merchant token life-cycle notifications.
    public var tokenNotificationURL: String?
    /// Creates an automatic reload.
    public init(
        paymentDescription: String, automaticReloadBilling: SummaryItem, billingAgreement: String? = nil,
        managementURL: String, tokenNotificationURL: String? = nil
    ) {
        self.paymentDescription = paymentDescription
        self.automaticReloadBilling = automaticReloadBilling
        self.billingAgreement = billingAgreement
        self.managementURL = managementURL
        self.tokenNotificationURL = tokenNotificationURL
    }
}

/// A deferred payment (`ApplePayDeferredPaymentRequest`, `PKDeferredPaymentRequest`).
public struct DeferredPaymentRequest: Hashable, Sendable {
    /// What is paid later.
    public var paymentDescription: String
    /// The later charge (payment timing `deferred`).
    public var deferredBilling: SummaryItem
    /// The terms shown to the customer.
    public var billingAgreement: String?
    /// Where the customer manages the payment.
    public var managementURL: String
    /// Where Apple sends merchant token life-cycle notifications.
    public var tokenNotificationURL: String?
    /// Until when the customer may cancel for free (ISO 8601).
    public var freeCancellationDate: String?
    /// The time zone of ``freeCancellationDate`` (IANA name).
    public var freeCancellationDateTimeZone: String?
    /// Creates a deferred payment.
    public init(
        paymentDescription: String, deferredBilling: SummaryItem, billingAgreement: String? = nil,
        managementURL: String, tokenNotificationURL: String? = nil, freeCancellationDate: String? = nil,
        freeCancellationDateTimeZone: String? = nil
    ) {
        self.paymentDescription = paymentDescription
        self.deferredBilling = deferredBilling
        self.billingAgreement = billingAgreement
        self.managementURL = managementURL
        self.tokenNotificationURL = tokenNotificationURL
        self.freeCancellationDate = freeCancellationDate
        self.freeCancellationDateTimeZone = freeCancellationDateTimeZone
    }
}

/// One merchant's share of a multi-merchant payment (`ApplePayPaymentTokenContext`, `PKPaymentTokenContext`).
public struct MultiTokenContext: Hashable, Sendable {
    /// That merchant's Apple merchant identifier.
    public var merchantIdentifier: String
    /// The merchant's own reference for this share.
    public var externalIdentifier: String
    /// That merchant's name.
    public var merchantName: String
    /// That merchant's domain.
    public var merchantDomain: String?
    /// That merchant's amount.
    public var amount: Money
    /// Creates a token context.
    public init(
        merchantIdentifier: String, externalIdentifier: String, merchantName: String, merchantDomain: String? = nil,
        amount: Money
    ) {
        self.merchantIdentifier = merchantIdentifier
        self.externalIdentifier = externalIdentifier
        self.merchantName = merchantName
        self.merchantDomain = merchantDomain
        self.amount = amount
    }
}
