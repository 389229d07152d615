#if canImport(PassKit)
    @preconcurrency import PassKit
#else
    @preconcurrency import PassKitShim
#endif
import Foundation
import OrchardBase
import OrchardPay

/// What the TapPay and PayerMax names need beyond their own calls: the gateway they talk to and the sheet they
/// show. TapPay's `TPDSetup` and PayerMax's `PMAPIClient` take only credentials; Orchard also needs its gateway's
/// address (the merchant runs it), which is the one line a migrated app adds.
public enum OrchardCompat {
    private struct Settings {
        var gatewayURL: URL?
        var makePaymentSheet: (@Sendable () -> any PaymentSheet)?
    }

    private static let settings = Locked(Settings())

    /// The gateway `TPDSetup.setWithAppId` and `PMAPIClient.defaultPublishableKey` set the SDK up for: required in
    /// production, ``OrchardPaySDK/defaultSandboxURL`` in the sandbox when `nil`. Set it before them.
    public static var gatewayURL: URL? {
        get { settings.withLock { $0.gatewayURL } }
        set { settings.withLock { $0.gatewayURL = newValue } }
    }

    /// Makes the sheet `TPDApplePay` and `PMApplePayContext` show: PassKit's (``PassKitPaymentSheet``) where PassKit
    /// exists when `nil`. Elsewhere it must be set, e.g. to a ``SimulatedPaymentSheet`` in tests; without one,
    /// `startPayment()` fails with `sheet_unavailable` and `PMApplePayContext(paymentRequest:delegate:)` is `nil`.
    public static var makePaymentSheet: (@Sendable () -> any PaymentSheet)? {
        get { settings.withLock { $0.makePaymentSheet } }
        set { settings.withLock { $0.makePaymentSheet = newValue } }
    }

    /// The sheet for a new payment: ``makePaymentSheet``'s, else PassKit's where it exists.
    static func paymentSheet() -> (any PaymentSheet)? {
        if let make = makePaymentSheet { return make() }
        #if canImport(PassKit)
            return PassKitPaymentSheet()
        #else
            return nil
        #endif
    }

    /// Sets OrchardPay up with these client credentials for ``gatewayURL``.
    static func setup(appID: String, appKey: String, environment: OrchardPaySDK.Environment) {
        OrchardPaySDK.setup(appID: appID, appKey: appKey, environment: environment, gatewayURL: gatewayURL)
    }

    /// The exact decimal of an `NSDecimalNumber` (nil and NaN are zero).
    static func decimal(_ number: NSDecimalNumber?) -> Decimal {
        guard let number, number != .notANumber else { return 0 }
        return number.decimalValue
    }
}

/// What PassKit's values say in OrchardPay's terms, derived from ``PassKitMapping``'s translation the other way.
enum FromPassKit {
    /// The capabilities whose PassKit bits are all set.
    static func capabilities(_ passKit: PKMerchantCapability) -> [MerchantCapability] {
        MerchantCapability.known.filter { capability in
            let bits = PassKitMapping.passKitCapabilities([capability])
            return !bits.isEmpty && passKit.isSuperset(of: bits)
        }
    }

    /// The contact fields in `passKit`.
    static func contactFields(_ passKit: Set<PKContactField>) -> [ContactField] {
        ContactField.known.filter { passKit.contains(PassKitMapping.passKitField($0)) }
    }

    /// An exact amount in `currency`; nil when the currency cannot hold it (too many decimals, NaN).
    static func money(_ amount: NSDecimalNumber, _ currency: Currency) -> Money? {
        guard amount != .notANumber else { return nil }
        return try? Money("\(amount.decimalValue)", currency: currency)
    }

    /// A shipping method in `currency` (its identifier, else its label, names it).
    static func shippingMethod(_ method: PKShippingMethod, _ currency: Currency) -> ShippingMethod? {
        guard let amount = money(method.amount, currency) else { return nil }
        return ShippingMethod(
            identifier: method.identifier ?? method.label, label: method.label, detail: method.detail, amount: amount)
    }

    /// The payment request PassKit's request says: its merchant, country, currency, networks, capabilities,
    /// summary items (the last is the total), shipping methods and contact fields. Nil when it has no merchant
    /// identifier, no summary item, an unknown country or currency, or an amount the currency cannot hold.
    static func paymentRequest(_ passKit: PKPaymentRequest) -> PaymentRequest? {
        guard !passKit.merchantIdentifier.isEmpty, let last = passKit.paymentSummaryItems.last,
            let currency = try? Currency(code: passKit.currencyCode.uppercased()),
            let country = try? CountryCode(passKit.countryCode.uppercased())
        else { return nil }
        func item(_ item: PKPaymentSummaryItem) -> SummaryItem? {
            money(item.amount, currency).map { SummaryItem(label: item.label, amount: $0, type: item.type == .pending ? .pending : .final) }
        }
        let lines = passKit.paymentSummaryItems.dropLast().map(item)
        let methods = (passKit.shippingMethods ?? []).map { shippingMethod($0, currency) }
        guard let total = item(last), !lines.contains(where: { $0 == nil }), !methods.contains(where: { $0 == nil }) else {
            return nil
        }
        var request = PaymentRequest(
            merchantIdentifier: passKit.merchantIdentifier, countryCode: country, currency: currency,
            supportedNetworks: passKit.supportedNetworks.map(PassKitMapping.network),
            merchantCapabilities: capabilities(passKit.merchantCapabilities), lineItems: lines.compactMap { $0 },
            total: total, shippingMethods: methods.compactMap { $0 })
        request.requiredShippingContactFields = contactFields(passKit.requiredShippingContactFields)
        request.requiredBillingContactFields = contactFields(passKit.requiredBillingContactFields)
        return request
    }
}

/// PassKit's objects for what the sheet reported. PassKit makes its own `PKPaymentMethod` and `PKPayment` and
/// gives them no public initializers, so on Apple platforms these are read-only subclasses that answer the
/// SDK's values; PassKitShim has the initializers.
enum PassKitObjects {
    static func paymentMethod(_ method: PaymentMethod?) -> PKPaymentMethod? {
        guard let method else { return nil }
        let type = PassKitMapping.methodTypes.first { $0.1 == method.type }?.0 ?? .unknown
        let network = method.network.map(PassKitMapping.passKitNetwork)
        #if canImport(PassKit)
            return ReportedPaymentMethod(displayName: method.displayName, network: network, type: type)
        #else
            return PKPaymentMethod(displayName: method.displayName, network: network, type: type)
        #endif
    }

    static func payment(_ payment: Payment) -> PKPayment {
        let method = paymentMethod(payment.token.paymentMethod) ?? PKPaymentMethod()
        let shipping = payment.shippingContact.map(PassKitMapping.passKitContact)
        let billing = payment.billingContact.map(PassKitMapping.passKitContact)
        let shippingMethod = payment.shippingMethod.map(PassKitMapping.passKitShippingMethod)
        #if canImport(PassKit)
            let token = ReportedPaymentToken(
                paymentMethod: method, transactionIdentifier: payment.token.transactionIdentifier,
                paymentData: payment.token.paymentData)
            return ReportedPayment(
                token: token, billingContact: billing, shippingContact: shipping, shippingMethod: shippingMethod)
        #else
            let token = PKPaymentToken(
                paymentMethod: method, transactionIdentifier: payment.token.transactionIdentifier,
                paymentData: payment.token.paymentData)
            return PKPayment(
                token: token, billingContact: billing, shippingContact: shipping, shippingMethod: shippingMethod)
        #endif
    }
}

#if canImport(PassKit)
    /// A `PKPaymentMethod` answering the card the SDK reported.
    final class ReportedPaymentMethod: PKPaymentMethod {
        private let reportedDisplayName: String?
        private let reportedNetwork: PKPaymentNetwork?
        private let reportedType: PKPaymentMethodType
        init(displayName: String?, network: PKPaymentNetwork?, type: PKPaymentMethodType) {
            reportedDisplayName = displayName
            reportedNetwork = network
            reportedType = type
            super.init()
        }
        override var displayName: String? { reportedDisplayName }
        override var network: PKPaymentNetwork? { reportedNetwork }
        override var type: PKPaymentMethodType { reportedType }
    }

    /// A `PKPaymentToken` answering the token the SDK reported.
    final class ReportedPaymentToken: PKPaymentToken {
        private let reportedMethod: PKPaymentMethod
        private let reportedIdentifier: String
        private let reportedData: Data
        init(paymentMethod: PKPaymentMethod, transactionIdentifier: String, paymentData: Data) {
            reportedMethod = paymentMethod
            reportedIdentifier = transactionIdentifier
            reportedData = paymentData
            super.init()
        }
        override var paymentMethod: PKPaymentMethod { reportedMethod }
        override var transactionIdentifier: String { reportedIdentifier }
        override var paymentData: Data { reportedData }
    }

    /// A `PKPayment` answering the payment the SDK reported.
    final class ReportedPayment: PKPayment {
        private let reportedToken: PKPaymentToken
        private let reportedBilling: PKContact?
        private let reportedShipping: PKContact?
        private let reportedShippingMethod: PKShippingMethod?
        init(token: PKPaymentToken, billingContact: PKContact?, shippingContact: PKContact?, shippingMethod: PKShippingMethod?) {
            reportedToken = token
            reportedBilling = billingContact
            reportedShipping = shippingContact
            reportedShippingMethod = shippingMethod
            super.init()
        }
        override var token: PKPaymentToken { reportedToken }
        override var billingContact: PKContact? { reportedBilling }
        override var shippingContact: PKContact? { reportedShipping }
        override var shippingMethod: PKShippingMethod? { reportedShippingMethod }
    }
#endif
