@_exported import ApplePayModel
import Foundation

/// A contact the sheet collected or the app prefilled (PassKit's `PKContact`): name, email, phone and
/// postal address fields, ApplePayModel's `PaymentContact`.
public typealias Contact = PaymentContact

/// Who is paid (TapPay's `TPDMerchant`): the name on the sheet, the Apple merchant identifier, where and in
/// which currency the payment is processed, and what the processor accepts.
public struct Merchant: Hashable, Sendable {
    /// The name the sheet shows as the total's label ("Pay Orchard Coffee").
    public var name: String
    /// The Apple merchant identifier (`merchant.com.example`), as in the app's Apple Pay entitlement.
    public var merchantIdentifier: String
    /// The merchant's country, ISO 3166-1 alpha-2 (`"TW"`).
    public var countryCode: String
    /// The currency of every amount, ISO 4217 (`"TWD"`).
    public var currencyCode: String
    /// The accepted payment networks, in order of preference.
    public var supportedNetworks: [PaymentNetwork]
    /// What the processor supports; must include `MerchantCapability.supports3DS`.
    public var capabilities: [MerchantCapability]

    /// Creates a merchant.
    public init(
        name: String, merchantIdentifier: String, countryCode: String, currencyCode: String,
        supportedNetworks: [PaymentNetwork], capabilities: [MerchantCapability] = [.supports3DS]
    ) {
        self.name = name
        self.merchantIdentifier = merchantIdentifier
        self.countryCode = countryCode
        self.currencyCode = currencyCode
        self.supportedNetworks = supportedNetworks
        self.capabilities = capabilities
    }
}

/// The customer (TapPay's `TPDConsumer`): which contact fields the sheet must collect, and what it collected.
public struct Consumer: Hashable, Sendable {
    /// The shipping contact fields the sheet must collect.
    public var requiredShippingContactFields: [ContactField]
    /// The billing contact fields the sheet must collect.
    public var requiredBillingContactFields: [ContactField]
    /// The shipping contact: set before ``ApplePayCheckout/start()``, the sheet opens prefilled with it
    /// (`PKPaymentRequest.shippingContact`); the checkout then sets the one the customer chose.
    public var shippingContact: Contact?
    /// The billing contact: set before `start()`, the sheet opens prefilled with it; the checkout then sets
    /// the authorized payment's.
    public var billingContact: Contact?
    /// Whether the customer may edit the shipping contact: `.storePickup` shows a prefilled pickup address that
    /// cannot be edited (`PKPaymentRequest.shippingContactEditingMode`); `nil` is PassKit's default (editable).
    public var shippingContactEditingMode: ShippingContactEditingMode?
    /// The card the customer chose (set by the checkout; TapPay's `consumer.paymentMethod`).
    public var paymentMethod: PaymentMethod?

    /// Creates a consumer; by default no contact field is required.
    public init(requiredShippingContactFields: [ContactField] = [], requiredBillingContactFields: [ContactField] = []) {
        self.requiredShippingContactFields = requiredShippingContactFields
        self.requiredBillingContactFields = requiredBillingContactFields
    }
}

/// A line of the cart (TapPay's `TPDPaymentItem`): a label and an exact amount in the merchant's currency,
/// or a pending amount ("…").
public struct PaymentItem: Hashable, Sendable {
    /// The label shown on the sheet.
    public var label: String
    /// The amount in major units (`100.00`); negative for a discount; zero for a pending item.
    public var amount: Decimal
    /// Whether the amount is pending (shown as "…"; TapPay's `pendingPaymentItem`).
    public var isPending: Bool

    /// An item with a known amount.
    public init(label: String, amount: Decimal) {
        self.label = label
        self.amount = amount
        self.isPending = false
    }

    /// An item whose amount is decided later (deferred authorization).
    public static func pending(label: String) -> PaymentItem {
        var item = PaymentItem(label: label, amount: 0)
        item.isPending = true
        return item
    }
}

/// What is bought (TapPay's `TPDCart`): the items, the deferred-authorization flags, and the shipping methods
/// with the one selected.
///
/// ``isAmountPending`` and ``isShowTotalAmount`` follow TapPay's deferred table: `ApplePayCheckout` refuses the
/// combinations it does not support with codes 88013–88016.
public struct Cart: Hashable, Sendable {
    /// The items, in the order the sheet lists them.
    public var items: [PaymentItem]
    /// Deferred authorization: the amount is decided later and the prime lives 30 days (default false).
    public var isAmountPending: Bool
    /// Whether the total shows the amount (true) or "amount pending" (default true).
    public var isShowTotalAmount: Bool
    /// The shipping methods offered.
    public var shippingMethods: [ShippingMethod]
    /// The shipping method selected: the one marked `selected`, else the first; changed by the sheet.
    public var shippingMethod: ShippingMethod?
    /// Whether the sheet offers a coupon code field (`PKPaymentRequest.supportsCouponCode`, iOS 15); an entered
    /// code reaches ``ApplePayCheckoutDelegate/checkout(_:didChangeCouponCode:cart:)``.
    public var supportsCouponCode: Bool = false
    /// The coupon code the sheet starts with (`PKPaymentRequest.couponCode`); the code the customer entered
    /// once the sheet changed it.
    public var couponCode: String?

    /// Creates a cart.
    public init(
        items: [PaymentItem], isAmountPending: Bool = false, isShowTotalAmount: Bool = true,
        shippingMethods: [ShippingMethod] = []
    ) {
        self.items = items
        self.isAmountPending = isAmountPending
        self.isShowTotalAmount = isShowTotalAmount
        self.shippingMethods = shippingMethods
        self.shippingMethod = shippingMethods.first { $0.selected == true } ?? shippingMethods.first
    }

    /// Adds an item at the end (TapPay's `cart.add`).
    public mutating func add(_ item: PaymentItem) { items.append(item) }

    /// The cart with a shipping method that is one of its methods: the one chosen when still offered (its
    /// new cost), else the one marked `selected`, else the first.
    func withSelectedShippingMethod() -> Cart {
        var cart = self
        cart.shippingMethod =
            shippingMethods.first { $0.identifier == shippingMethod?.identifier }
            ?? shippingMethods.first { $0.selected == true } ?? shippingMethods.first
        return cart
    }

    /// The sum of the items whose amounts are known, plus the selected shipping method's amount. Exact
    /// (`Decimal`).
    public var totalAmount: Decimal {
        items.filter { !$0.isPending }.reduce(shippingMethod?.amount.amount ?? 0) { $0 + $1.amount }
    }
}

/// A merchant's answer to a shipping contact or a coupon code: the cart to show and the errors to show with it
/// (PassKit's `PKPaymentRequestShippingContactUpdate` / `PKPaymentRequestCouponCodeUpdate`).
public struct CartUpdate: Hashable, Sendable {
    /// The cart: its items, shipping methods (with their costs at this address) and selected method.
    public var cart: Cart
    /// What the sheet shows next to the field: `.shippingAddressUnserviceable`, `.shippingContactInvalid`
    /// with a field, `.couponCodeInvalid`, `.couponCodeExpired` ….
    public var errors: [PaymentSheetError]

    /// An update.
    public init(cart: Cart, errors: [PaymentSheetError] = []) {
        self.cart = cart
        self.errors = errors
    }
}

/// The kind of card (PassKit's `PKPaymentMethodType`).
public enum PaymentMethodType: String, Hashable, Sendable, CaseIterable {
    /// Not known.
    case unknown
    /// A debit card.
    case debit
    /// A credit card.
    case credit
    /// A prepaid card.
    case prepaid
    /// A store card.
    case store
    /// An electronic money card.
    case eMoney

    /// The type named by a token's `paymentMethod.type` (`"credit"`); unknown names are ``unknown``.
    public init(name: String) { self = PaymentMethodType(rawValue: name) ?? .unknown }
}

/// The card the customer chose (PassKit's `PKPaymentMethod`); never carries the card number.
public struct PaymentMethod: Hashable, Sendable {
    /// Debit, credit, prepaid ….
    public var type: PaymentMethodType
    /// The card's network.
    public var network: PaymentNetwork?
    /// The network and the last four digits of the device account number ("Visa 0492").
    public var displayName: String?

    /// Creates a payment method.
    public init(type: PaymentMethodType, network: PaymentNetwork? = nil, displayName: String? = nil) {
        self.type = type
        self.network = network
        self.displayName = displayName
    }
}

/// An Apple Pay payment token (PassKit's `PKPaymentToken`). Its payment data is encrypted for the merchant's
/// processing key; the SDK passes it to the gateway unchanged and never prints it: ``description`` and the
/// mirror show only the transaction identifier and the size.
public struct PaymentToken: Hashable, Sendable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// The token's `paymentData` as JSON (`{"version", "data", "signature", "header"}`).
    public var paymentData: Data
    /// The card used.
    public var paymentMethod: PaymentMethod
    /// Apple's transaction identifier (hex); the session flow's `Idempotency-Key`.
    public var transactionIdentifier: String

    /// Creates a token.
    public init(paymentData: Data, paymentMethod: PaymentMethod, transactionIdentifier: String) {
        self.paymentData = paymentData
        self.paymentMethod = paymentMethod
        self.transactionIdentifier = transactionIdentifier
    }

    /// `PaymentToken(<transaction identifier>, <n> bytes of payment data)`: never the data itself.
    public var description: String {
        "PaymentToken(\(transactionIdentifier), \(paymentData.count) bytes of payment data)"
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// A mirror without the payment data, so `dump` does not print it.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "transactionIdentifier": transactionIdentifier, "paymentMethod": paymentMethod,
                "paymentData": "\(paymentData.count) bytes",
            ])
    }
}

/// An authorized payment (PassKit's `PKPayment`): the token and what the sheet collected.
public struct Payment: Hashable, Sendable {
    /// The encrypted token.
    public var token: PaymentToken
    /// The billing contact, when requested.
    public var billingContact: Contact?
    /// The shipping contact, when requested.
    public var shippingContact: Contact?
    /// The shipping method chosen.
    public var shippingMethod: ShippingMethod?

    /// Creates a payment.
    public init(
        token: PaymentToken, billingContact: Contact? = nil, shippingContact: Contact? = nil,
        shippingMethod: ShippingMethod? = nil
    ) {
        self.token = token
        self.billingContact = billingContact
        self.shippingContact = shippingContact
        self.shippingMethod = shippingMethod
    }
}

/// The card information the gateway derived from the token (TapPay's `TPDCardInfo`). Text the gateway's BIN
/// table does not know is empty; numbers are -1 when unknown.
public struct CardInfo: Hashable, Sendable {
    /// The first six digits of the device account number.
    public var bincode: String
    /// The last four digits of the device account number.
    public var lastFour: String
    /// The issuing bank.
    public var issuer: String
    /// The issuing bank's name in Traditional Chinese (empty when the BIN table has none).
    public var issuerZhTW: String
    /// The bank's code.
    public var bankID: String
    /// -1 unknown, 0 credit, 1 debit, 2 prepaid.
    public var funding: Int
    /// -1 unknown, 1 VISA, 2 MasterCard, 3 JCB, 4 UnionPay, 5 AMEX.
    public var type: Int
    /// The card level (`CLASSIC`, `PLATINUM` …).
    public var level: String
    /// The issuer's country (`TAIWAN`).
    public var country: String
    /// The issuer's country code (`TW`).
    public var countryCode: String

    /// Creates card information.
    public init(
        bincode: String, lastFour: String, issuer: String, issuerZhTW: String = "", bankID: String, funding: Int,
        type: Int, level: String, country: String, countryCode: String
    ) {
        self.bincode = bincode
        self.lastFour = lastFour
        self.issuer = issuer
        self.issuerZhTW = issuerZhTW
        self.bankID = bankID
        self.funding = funding
        self.type = type
        self.level = level
        self.country = country
        self.countryCode = countryCode
    }
}

/// The co-brand codes of the merchant's affiliate table that match the card (TapPay's
/// `merchantReferenceInfo`).
public struct MerchantReferenceInfo: Hashable, Sendable {
    /// The matching affiliate codes; empty when none.
    public var affiliateCodes: [String]
    /// Creates reference information.
    public init(affiliateCodes: [String]) { self.affiliateCodes = affiliateCodes }
}

/// The outcome reported by `didSucceed` and `didFail` (TapPay's `TPDTransactionResult`).
///
/// ``status`` is 0 on success. Otherwise it is the gateway's HTTP status (400–599) when the gateway refused,
/// -1 when the gateway could not be reached or answered something unreadable, -2 when the merchant reported a
/// failure with `showPaymentResult(false)`, -3 when the sheet could not be shown, and -4 when the app closed the
/// sheet with `abort()` before the customer authorized.
public struct TransactionResult: Hashable, Sendable {
    /// 0 on success; see the type's documentation for the other values.
    public var status: Int
    /// A human-readable message (the gateway's message on a gateway error).
    public var message: String
    /// The stable error code (the gateway's, e.g. `card_declined`, or the SDK's); `nil` on success.
    public var code: String?
    /// The amount of the payment (the total the customer authorized), in major units.
    public var amount: Decimal
    /// The card used, once known.
    public var paymentMethod: PaymentMethod?

    /// Creates a result.
    public init(status: Int, message: String, code: String?, amount: Decimal, paymentMethod: PaymentMethod?) {
        self.status = status
        self.message = message
        self.code = code
        self.amount = amount
        self.paymentMethod = paymentMethod
    }

    /// Whether the payment succeeded (status 0).
    public var isSuccess: Bool { status == 0 }
}

/// The sandbox wallet's test cards, for ``SimulatedPaymentSheet``.
public enum SandboxCard: String, Hashable, Sendable, CaseIterable {
    /// A Visa credit card.
    case visaCredit = "visa_credit"
    /// A Visa debit card.
    case visaDebit = "visa_debit"
    /// A Mastercard credit card.
    case mastercard
    /// A JCB credit card.
    case jcb
    /// An American Express card.
    case amex
    /// A card the sandbox acquirer declines (`402 card_declined` when charged).
    case declined

    /// The name the sandbox wallet route takes (`"visa_credit"`).
    public var walletName: String { rawValue }
}
