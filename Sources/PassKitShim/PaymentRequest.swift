// PKPaymentRequest and what it holds: summary items (and the recurring, deferred and automatic-reload kinds),
// shipping methods, contacts, and the recurring, automatic-reload, deferred and multi-token requests.

import Foundation

/// A line of the sheet's summary, the last one being the total (PassKit's `PKPaymentSummaryItem`).
open class PKPaymentSummaryItem: NSObject {
    /// The label shown.
    open var label: String
    /// The amount (negative for a discount).
    open var amount: NSDecimalNumber
    /// Final or pending.
    open var type: PKPaymentSummaryItemType

    /// An item of `type`.
    public init(label: String, amount: NSDecimalNumber, type: PKPaymentSummaryItemType) {
        self.label = label
        self.amount = amount
        self.type = type
        super.init()
    }

    /// A final item.
    public convenience init(label: String, amount: NSDecimalNumber) {
        self.init(label: label, amount: amount, type: .final)
    }
}

/// A summary item charged on a schedule (PassKit's `PKRecurringPaymentSummaryItem`).
@available(iOS 15.0, macOS 12.0, *)
open class PKRecurringPaymentSummaryItem: PKPaymentSummaryItem {
    /// The first payment's date; `nil` means the transaction's date.
    open var startDate: Date?
    /// The interval's calendar unit (default a month).
    open var intervalUnit: NSCalendar.Unit = .month
    /// How many units between payments (default 1).
    open var intervalCount: Int = 1
    /// The last payment's date; `nil` means no end.
    open var endDate: Date?
}

/// A summary item charged on a later date (PassKit's `PKDeferredPaymentSummaryItem`).
@available(iOS 15.0, macOS 12.0, *)
open class PKDeferredPaymentSummaryItem: PKPaymentSummaryItem {
    /// When the payment is charged; set it (it starts at the reference date, 2001-01-01).
    open var deferredDate = Date(timeIntervalSinceReferenceDate: 0)
}

/// A summary item charged when a balance falls below a threshold (PassKit's
/// `PKAutomaticReloadPaymentSummaryItem`).
@available(iOS 15.0, macOS 12.0, *)
open class PKAutomaticReloadPaymentSummaryItem: PKPaymentSummaryItem {
    /// The balance below which the reload is charged.
    open var thresholdAmount: NSDecimalNumber = .zero
}

/// A delivery window (PassKit's `PKDateComponentsRange`).
@available(iOS 15.0, macOS 12.0, *)
public final class PKDateComponentsRange: NSObject {
    /// The earliest date.
    public let startDateComponents: DateComponents
    /// The latest date.
    public let endDateComponents: DateComponents

    /// A window; `nil` when either end has no calendar date (PassKit refuses those too).
    public init?(start startDateComponents: DateComponents, end endDateComponents: DateComponents) {
        guard startDateComponents.year != nil || startDateComponents.day != nil,
            endDateComponents.year != nil || endDateComponents.day != nil
        else { return nil }
        self.startDateComponents = startDateComponents
        self.endDateComponents = endDateComponents
        super.init()
    }
}

/// A shipping method (PassKit's `PKShippingMethod`, a summary item with an identifier).
open class PKShippingMethod: PKPaymentSummaryItem {
    /// The merchant's identifier of the method.
    open var identifier: String?
    /// A description shown under the label.
    open var detail: String?
    /// The delivery window.
    @available(iOS 15.0, macOS 12.0, *)
    open var dateComponentsRange: PKDateComponentsRange? {
        get { range as? PKDateComponentsRange }
        set { range = newValue }
    }
    private var range: AnyObject?
}

/// A billing or shipping contact (PassKit's `PKContact`).
open class PKContact: NSObject {
    /// The name (and its phonetic form).
    open var name: PersonNameComponents?
    /// The postal address.
    open var postalAddress: CNPostalAddress?
    /// The email address.
    open var emailAddress: String?
    /// The phone number.
    open var phoneNumber: CNPhoneNumber?

    /// An empty contact.
    public override init() { super.init() }
}

/// A subscription (PassKit's `PKRecurringPaymentRequest`).
@available(iOS 16.0, macOS 13.0, *)
open class PKRecurringPaymentRequest: NSObject {
    /// What the subscription is.
    open var paymentDescription: String
    /// The regular charge.
    open var regularBilling: PKRecurringPaymentSummaryItem
    /// A trial period's charge.
    open var trialBilling: PKRecurringPaymentSummaryItem?
    /// The terms shown.
    open var billingAgreement: String?
    /// Where the customer manages the subscription.
    open var managementURL: URL
    /// Where Apple sends merchant token notifications.
    open var tokenNotificationURL: URL?

    /// A recurring payment request.
    public init(paymentDescription: String, regularBilling: PKRecurringPaymentSummaryItem, managementURL: URL) {
        self.paymentDescription = paymentDescription
        self.regularBilling = regularBilling
        self.managementURL = managementURL
        super.init()
    }
}

/// A top-up (PassKit's `PKAutomaticReloadPaymentRequest`).
@available(iOS 16.0, macOS 13.0, *)
open class PKAutomaticReloadPaymentRequest: NSObject {
    /// What is reloaded.
    open var paymentDescription: String
    /// The reload charge and its threshold.
    open var automaticReloadBilling: PKAutomaticReloadPaymentSummaryItem
    /// The terms shown.
    open var billingAgreement: String?
    /// Where the customer manages the reloads.
    open var managementURL: URL
    /// Where Apple sends merchant token notifications.
    open var tokenNotificationURL: URL?

    /// An automatic reload request.
    public init(
        paymentDescription: String, automaticReloadBilling: PKAutomaticReloadPaymentSummaryItem, managementURL: URL
    ) {
        self.paymentDescription = paymentDescription
        self.automaticReloadBilling = automaticReloadBilling
        self.managementURL = managementURL
        super.init()
    }
}

/// A payment charged later, such as a hotel stay (PassKit's `PKDeferredPaymentRequest`).
@available(iOS 16.4, macOS 13.3, *)
open class PKDeferredPaymentRequest: NSObject {
    /// What is paid later.
    open var paymentDescription: String
    /// The later charge.
    open var deferredBilling: PKDeferredPaymentSummaryItem
    /// The terms shown.
    open var billingAgreement: String?
    /// Where the customer manages the payment.
    open var managementURL: URL
    /// Where Apple sends merchant token notifications.
    open var tokenNotificationURL: URL?
    /// Until when the customer may cancel for free.
    open var freeCancellationDate: Date?
    /// The time zone of `freeCancellationDate`.
    open var freeCancellationDateTimeZone: TimeZone?

    /// A deferred payment request.
    public init(paymentDescription: String, deferredBilling: PKDeferredPaymentSummaryItem, managementURL: URL) {
        self.paymentDescription = paymentDescription
        self.deferredBilling = deferredBilling
        self.managementURL = managementURL
        super.init()
    }
}

/// One merchant's token of a multi-merchant payment (PassKit's `PKPaymentTokenContext`).
@available(iOS 16.0, macOS 13.0, *)
open class PKPaymentTokenContext: NSObject {
    /// That merchant's identifier.
    open var merchantIdentifier: String
    /// The merchant's own reference.
    open var externalIdentifier: String
    /// That merchant's name.
    open var merchantName: String
    /// That merchant's domain.
    open var merchantDomain: String?
    /// The amount authorized for this token.
    open var amount: NSDecimalNumber

    /// A token context.
    public init(
        merchantIdentifier: String, externalIdentifier: String, merchantName: String, merchantDomain: String?,
        amount: NSDecimalNumber
    ) {
        self.merchantIdentifier = merchantIdentifier
        self.externalIdentifier = externalIdentifier
        self.merchantName = merchantName
        self.merchantDomain = merchantDomain
        self.amount = amount
        super.init()
    }
}

/// A request for payment (PassKit's `PKPaymentRequest`): every property starts as PassKit's does.
open class PKPaymentRequest: NSObject {
    /// The merchant identifier (of the app's entitlement).
    open var merchantIdentifier = ""
    /// The merchant's country, ISO 3166-1 alpha-2.
    open var countryCode = ""
    /// The currency, ISO 4217.
    open var currencyCode = ""
    /// The accepted networks.
    open var supportedNetworks: [PKPaymentNetwork] = []
    /// The merchant's capabilities.
    open var merchantCapabilities: PKMerchantCapability = []
    /// The summary: the line items, then the total.
    open var paymentSummaryItems: [PKPaymentSummaryItem] = []
    /// The shipping methods; the first is the one selected when the sheet opens.
    open var shippingMethods: [PKShippingMethod]?
    /// How the goods reach the customer.
    open var shippingType: PKShippingType = .shipping
    /// The shipping contact fields the sheet collects.
    open var requiredShippingContactFields: Set<PKContactField> = []
    /// The billing contact fields the sheet collects.
    open var requiredBillingContactFields: Set<PKContactField> = []
    /// A prefilled billing contact.
    open var billingContact: PKContact?
    /// A prefilled shipping contact.
    open var shippingContact: PKContact?
    /// The card-issuing countries accepted; `nil` means all.
    open var supportedCountries: Set<String>?
    /// Data hashed into the token.
    open var applicationData: Data?

    /// Whether the shipping contact may be edited.
    @available(iOS 15.0, macOS 12.0, *)
    open var shippingContactEditingMode: PKShippingContactEditingMode {
        get { editingMode.flatMap(PKShippingContactEditingMode.init(rawValue:)) ?? .available }
        set { editingMode = newValue.rawValue }
    }
    private var editingMode: UInt?

    /// Whether the sheet offers a coupon code field.
    @available(iOS 15.0, macOS 12.0, *)
    open var supportsCouponCode: Bool {
        get { couponField }
        set { couponField = newValue }
    }
    private var couponField = false

    /// The coupon code the sheet starts with.
    @available(iOS 15.0, macOS 12.0, *)
    open var couponCode: String? {
        get { coupon }
        set { coupon = newValue }
    }
    private var coupon: String?

    /// A subscription.
    @available(iOS 16.0, macOS 13.0, *)
    open var recurringPaymentRequest: PKRecurringPaymentRequest? {
        get { special["recurring"] as? PKRecurringPaymentRequest }
        set { special["recurring"] = newValue }
    }

    /// A top-up.
    @available(iOS 16.0, macOS 13.0, *)
    open var automaticReloadPaymentRequest: PKAutomaticReloadPaymentRequest? {
        get { special["reload"] as? PKAutomaticReloadPaymentRequest }
        set { special["reload"] = newValue }
    }

    /// A payment charged later.
    @available(iOS 16.4, macOS 13.3, *)
    open var deferredPaymentRequest: PKDeferredPaymentRequest? {
        get { special["deferred"] as? PKDeferredPaymentRequest }
        set { special["deferred"] = newValue }
    }

    /// One token per merchant of a multi-merchant payment.
    @available(iOS 16.0, macOS 13.0, *)
    open var multiTokenContexts: [PKPaymentTokenContext] {
        get { special["contexts"] as? [PKPaymentTokenContext] ?? [] }
        set { special["contexts"] = newValue }
    }

    // Kept untyped so the class itself needs no availability beyond PassKit's.
    private var special: [String: Any] = [:]

    /// An empty request.
    public override init() { super.init() }
}
