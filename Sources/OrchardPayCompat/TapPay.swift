#if canImport(PassKit)
    @preconcurrency import PassKit
#else
    @preconcurrency import PassKitShim
#endif
import Foundation
import OrchardPay

// TapPay's iOS names (`import TPDirect`) over OrchardPay's prime flow: each type holds or builds the OrchardPay
// value it stands for, and `TPDApplePay` is an ``ApplePayCheckoutDelegate`` that relays ``ApplePayCheckout``'s
// callbacks under TapPay's names. No payment rule lives here (docs/ios.md, "Swift names").

// MARK: Set-up

/// TapPay's server type (`TPDServer_SandBox`, `TPDServer_Production`): OrchardPay's environment.
public enum TPDServerType: Int, Hashable, Sendable {
    /// The sandbox (`OrchardPaySDK.Environment.sandbox`).
    case sandBox = 0
    /// Production (`OrchardPaySDK.Environment.production`).
    case production = 1

    /// The OrchardPay environment.
    public var environment: OrchardPaySDK.Environment { self == .sandBox ? .sandbox : .production }
}

/// TapPay's set-up (`TPDSetup`): forwards to ``OrchardPaySDK/setup(appID:appKey:environment:gatewayURL:)`` with
/// ``OrchardCompat/gatewayURL``.
public final class TPDSetup: Sendable {
    /// The app id the SDK was set up with, as sent in `X-Orchard-App-Id`.
    public let appID: String
    /// The server type.
    public let serverType: TPDServerType

    private init(appID: String, serverType: TPDServerType) {
        self.appID = appID
        self.serverType = serverType
    }

    /// Sets the SDK up with the app id as text, as the seed's Swift sample passes it (`"APP_ID"`; Orchard's
    /// `app_…`).
    @discardableResult
    public class func setWithAppId(_ appId: String, withAppKey appKey: String, with serverType: TPDServerType) -> TPDSetup {
        OrchardCompat.setup(appID: appId, appKey: appKey, environment: serverType.environment)
        return TPDSetup(appID: appId, serverType: serverType)
    }

    /// Sets the SDK up with the app id as TapPay's integer (`setWithAppId(11340, …)`): sent as its decimal digits,
    /// the merchant's numeric app id.
    @discardableResult
    public class func setWithAppId(_ appId: Int32, withAppKey appKey: String, with serverType: TPDServerType) -> TPDSetup {
        setWithAppId(String(appId), withAppKey: appKey, with: serverType)
    }

    /// The same set-up in the argument order of the seed's Swift declaration (`setWithAppKey(_:withAppId:with:)`).
    @discardableResult
    public class func setWithAppKey(_ appKey: String, withAppId appId: Int32, with serverType: TPDServerType) -> TPDSetup {
        setWithAppId(appId, withAppKey: appKey, with: serverType)
    }
}

// MARK: What is paid

/// TapPay's error codes for a cart the deferred table refuses (OrchardPay's ``CheckoutError`` codes, reported as
/// ``TPDTransactionResult/status`` by `didFailurePayment`).
public enum TPDErrorCode {
    /// `isAmountPending` and `isShowTotalAmount` both false.
    public static let amountPendingAndTotalHidden = 88013
    /// Every item pending while the total is shown as an amount with `isAmountPending`.
    public static let allItemsPendingWithTotalShown = 88014
    /// Pending items without `isAmountPending`.
    public static let pendingItemsWithoutAmountPending = 88015
    /// The items' total is not greater than 0.
    public static let totalNotPositive = 88016
}

/// TapPay's merchant (`TPDMerchant`): builds OrchardPay's ``Merchant``. `countryCode` and `currencyCode` start as
/// TapPay's (`TW`, `TWD`).
public final class TPDMerchant {
    /// The name on the sheet (the total's label).
    public var merchantName: String = ""
    /// The processor's capabilities; must include 3-D Secure (`.capability3DS` / `.threeDSecure`).
    public var merchantCapability: PKMerchantCapability = .threeDSecure
    /// The Apple merchant identifier.
    public var applePayMerchantIdentifier: String = ""
    /// The merchant's country.
    public var countryCode: String = "TW"
    /// The currency of every amount.
    public var currencyCode: String = "TWD"
    /// The accepted networks.
    public var supportedNetworks: [PKPaymentNetwork] = []
    /// The shipping methods offered; the first is selected when the sheet opens.
    public var shippingMethods: [PKShippingMethod]?

    /// A merchant with TapPay's defaults.
    public init() {}

    /// OrchardPay's merchant.
    public var merchant: Merchant {
        Merchant(
            name: merchantName, merchantIdentifier: applePayMerchantIdentifier, countryCode: countryCode,
            currencyCode: currencyCode, supportedNetworks: supportedNetworks.map(PassKitMapping.network),
            capabilities: FromPassKit.capabilities(merchantCapability))
    }
}

/// TapPay's consumer (`TPDConsumer`): the address fields to collect, and what the sheet collected (filled in
/// before each callback).
public final class TPDConsumer {
    /// The shipping fields the sheet must collect (none by default).
    public var requiredShippingAddressFields: PKAddressField = []
    /// The billing fields the sheet must collect (none by default).
    public var requiredBillingAddressFields: PKAddressField = []
    /// The shipping contact the customer chose.
    public var shippingContact: PKContact?
    /// The billing contact of the authorized payment.
    public var billingContact: PKContact?
    /// The card the customer chose.
    public var paymentMethod: PKPaymentMethod!
    /// The customer's address as the gateway saw it: empty, since `POST /v1/tokens` does not answer it.
    public var clientIP: String! = ""

    /// A consumer that requires no field.
    public init() {}

    /// The address fields as OrchardPay's contact fields.
    static let fields: [(PKAddressField, ContactField)] = [
        (.email, .email), (.name, .name), (.phone, .phone), (.postalAddress, .postalAddress),
    ]

    /// OrchardPay's consumer.
    public var consumer: Consumer {
        func contactFields(_ set: PKAddressField) -> [ContactField] { Self.fields.filter { set.contains($0.0) }.map(\.1) }
        return Consumer(
            requiredShippingContactFields: contactFields(requiredShippingAddressFields),
            requiredBillingContactFields: contactFields(requiredBillingAddressFields))
    }

    /// Takes what the checkout collected.
    func load(_ consumer: Consumer) {
        shippingContact = consumer.shippingContact.map(PassKitMapping.passKitContact)
        billingContact = consumer.billingContact.map(PassKitMapping.passKitContact)
        paymentMethod = PassKitObjects.paymentMethod(consumer.paymentMethod)
    }
}

/// TapPay's item (`TPDPaymentItem`): OrchardPay's ``PaymentItem``, with an exact amount or a pending one.
public final class TPDPaymentItem {
    /// OrchardPay's item.
    public let item: PaymentItem

    /// Wraps an OrchardPay item.
    public init(item: PaymentItem) { self.item = item }

    /// An item with an exact amount (`paymentItemWithItemName:withAmount:`); NaN counts as zero.
    public convenience init(itemName: String, withAmount amount: NSDecimalNumber) {
        self.init(item: PaymentItem(label: itemName, amount: OrchardCompat.decimal(amount)))
    }

    /// An item whose amount is pending, shown as "…" (`pendingPaymentItemWithItemName:`).
    public class func pendingPaymentItem(withItemName itemName: String) -> TPDPaymentItem {
        TPDPaymentItem(item: .pending(label: itemName))
    }

    /// The label.
    public var itemName: String { item.label }
    /// The amount (zero for a pending item).
    public var amount: NSDecimalNumber { NSDecimalNumber(decimal: item.amount) }
    /// Whether the amount is pending.
    public var isPending: Bool { item.isPending }
}

/// TapPay's cart (`TPDCart`): OrchardPay's ``Cart``, whose deferred table (88013–88016) and total apply.
public final class TPDCart {
    /// OrchardPay's cart: the items and the deferred flags.
    public var cart = Cart(items: [])
    /// The currency of the shipping method's amount in ``totalAmount``: the merchant's once the cart is paid.
    var currencyCode = "TWD"

    /// An empty cart.
    public init() {}

    /// Deferred authorization (default false): the prime lives 30 days.
    public var isAmountPending: Bool {
        get { cart.isAmountPending }
        set { cart.isAmountPending = newValue }
    }
    /// Whether the total shows the amount (default true) or "amount pending".
    public var isShowTotalAmount: Bool {
        get { cart.isShowTotalAmount }
        set { cart.isShowTotalAmount = newValue }
    }
    /// The shipping method the customer chose (or the merchant's first).
    public var shippingMethod: PKShippingMethod!

    /// Adds an item at the end (`addPaymentItem:`).
    public func add(_ item: TPDPaymentItem!) { cart.add(item.item) }

    /// The items.
    public var paymentItems: [TPDPaymentItem] { cart.items.map(TPDPaymentItem.init(item:)) }

    /// ``Cart/totalAmount``: the known items plus the shipping method.
    public var totalAmount: NSDecimalNumber! {
        NSDecimalNumber(decimal: orchardCart(merchantShippingMethods: nil, currencyCode: currencyCode).totalAmount)
    }

    /// OrchardPay's cart with the merchant's shipping methods (TapPay keeps them on `TPDMerchant`) and the
    /// selected one.
    func orchardCart(merchantShippingMethods: [PKShippingMethod]?, currencyCode: String) -> Cart {
        var cart = cart
        let offered = merchantShippingMethods ?? (shippingMethod.map { [$0] } ?? [])
        if let currency = try? Currency(code: currencyCode) {
            cart.shippingMethods = offered.compactMap { FromPassKit.shippingMethod($0, currency) }
        }
        let selected = shippingMethod?.identifier ?? shippingMethod?.label
        cart.shippingMethod = cart.shippingMethods.first { $0.identifier == selected } ?? cart.shippingMethods.first
        return cart
    }

    /// Takes the checkout's cart (its items and the selected shipping method).
    func load(_ cart: Cart) {
        var items = cart
        items.shippingMethods = []
        items.shippingMethod = nil
        self.cart = items
        shippingMethod = cart.shippingMethod.map(PassKitMapping.passKitShippingMethod)
    }
}

// MARK: What is reported

/// TapPay's card information (`TPDCardInfo`): OrchardPay's ``CardInfo`` under TapPay's names.
public final class TPDCardInfo: Sendable {
    /// OrchardPay's card information.
    public let cardInfo: CardInfo
    /// Wraps OrchardPay's card information.
    public init(_ cardInfo: CardInfo) { self.cardInfo = cardInfo }

    /// The first six digits of the device account number.
    public var bincode: String! { cardInfo.bincode }
    /// Its last four digits.
    public var lastFour: String! { cardInfo.lastFour }
    /// The issuing bank.
    public var issuer: String! { cardInfo.issuer }
    /// The issuing bank's name in Traditional Chinese (the seed's spelling).
    public var issuerZhTW: String! { cardInfo.issuerZhTW }
    /// The same, as TapPay's header spells it.
    public var issuerZhTw: String! { cardInfo.issuerZhTW }
    /// The bank's code.
    public var bankId: String! { cardInfo.bankID }
    /// -1 unknown, 0 credit, 1 debit, 2 prepaid.
    public var funding: Int { cardInfo.funding }
    /// -1 unknown, 1 VISA, 2 MasterCard, 3 JCB, 4 Union Pay, 5 AMEX.
    public var cardType: Int { cardInfo.type }
    /// The card level.
    public var level: String! { cardInfo.level }
    /// The issuer's country.
    public var country: String! { cardInfo.country }
    /// The issuer's country code.
    public var countryCode: String! { cardInfo.countryCode }
}

/// TapPay's outcome (`TPDTransactionResult`), from OrchardPay's ``TransactionResult``: `status` 0 on success,
/// otherwise OrchardPay's status (the gateway's HTTP status, -1 … -4); for a cart `startPayment()` could not show,
/// TapPay's code (88013–88016), or -1 for another payment request rule (``orchardCode`` names it).
public final class TPDTransactionResult {
    /// The message.
    public var message: String!
    /// 0 on success.
    public var status: Int
    /// The amount the customer authorized.
    public var amount: NSDecimalNumber!
    /// The card.
    public var paymentMethod: PKPaymentMethod!
    /// OrchardPay's stable code (`card_declined`, `88013` …); `nil` on success.
    public var orchardCode: String?

    /// A result from OrchardPay's.
    public init(_ result: TransactionResult) {
        message = result.message
        status = result.status
        amount = NSDecimalNumber(decimal: result.amount)
        paymentMethod = PassKitObjects.paymentMethod(result.paymentMethod)
        orchardCode = result.code
    }

    /// The result for a checkout that could not start: TapPay's number when the code is one (88013–88016),
    /// else -1.
    init(_ error: CheckoutError, amount: Decimal) {
        message = error.message
        status = Int(error.code) ?? -1
        self.amount = NSDecimalNumber(decimal: amount)
        orchardCode = error.code
    }
}

// MARK: The sheet

/// TapPay's delegate (`TPDApplePayDelegate`), called on the main actor in TapPay's order: `tpdApplePayDidStartPayment`,
/// the selections, `canAuthorizePaymentWithShippingContact`, `didReceivePrime` (pay it on your server, then
/// `showPaymentResult`), `didSuccessPayment` or `didFailurePayment`, and `tpdApplePayDidFinishPayment`;
/// `tpdApplePayDidCancelPayment` instead of the outcome when the customer closes the sheet first. The three first
/// methods are required, the others have default implementations (TapPay's optional ones).
@MainActor
public protocol TPDApplePayDelegate: AnyObject {
    /// The prime is ready (`expiryMillis`: Unix ms; 90 s, 30 days for a deferred cart); `merchantReferenceInfo`
    /// holds `affiliateCodes`.
    func tpdApplePay(
        _ applePay: TPDApplePay!, didReceivePrime prime: String!, withExpiryMillis expiryMillis: Int,
        withCardInfo cardInfo: TPDCardInfo, withMerchantReferenceInfo merchantReferenceInfo: [AnyHashable: Any]!)
    /// The payment succeeded (`showPaymentResult(true)`).
    func tpdApplePay(_ applePay: TPDApplePay!, didSuccessPayment result: TPDTransactionResult!)
    /// The payment failed, or the cart was refused (status 88013–88016).
    func tpdApplePay(_ applePay: TPDApplePay!, didFailurePayment result: TPDTransactionResult!)
    /// The sheet is opening.
    func tpdApplePayDidStartPayment(_ applePay: TPDApplePay!)
    /// The customer chose a card: return the cart for it.
    func tpdApplePay(_ applePay: TPDApplePay!, didSelect paymentMethod: PKPaymentMethod!, cart: TPDCart!) -> TPDCart!
    /// The customer chose a shipping method.
    func tpdApplePay(_ applePay: TPDApplePay!, didSelect shippingMethod: PKShippingMethod!)
    /// Whether the merchant accepts this shipping contact.
    func tpdApplePay(_ applePay: TPDApplePay!, canAuthorizePaymentWithShippingContact shippingContact: PKContact!) -> Bool
    /// The customer closed the sheet before authorizing.
    func tpdApplePayDidCancelPayment(_ applePay: TPDApplePay!)
    /// The payment is over (exactly once).
    func tpdApplePayDidFinishPayment(_ applePay: TPDApplePay!)
}

extension TPDApplePayDelegate {
    /// Does nothing.
    public func tpdApplePayDidStartPayment(_ applePay: TPDApplePay!) {}
    /// Returns `cart`.
    public func tpdApplePay(_ applePay: TPDApplePay!, didSelect paymentMethod: PKPaymentMethod!, cart: TPDCart!) -> TPDCart! {
        cart
    }
    /// Does nothing.
    public func tpdApplePay(_ applePay: TPDApplePay!, didSelect shippingMethod: PKShippingMethod!) {}
    /// Accepts every contact.
    public func tpdApplePay(_ applePay: TPDApplePay!, canAuthorizePaymentWithShippingContact shippingContact: PKContact!) -> Bool {
        true
    }
    /// Does nothing.
    public func tpdApplePayDidCancelPayment(_ applePay: TPDApplePay!) {}
    /// Does nothing.
    public func tpdApplePayDidFinishPayment(_ applePay: TPDApplePay!) {}
}

/// TapPay's Apple Pay object (`TPDApplePay`): an ``ApplePayCheckout`` for the merchant, consumer and cart, whose
/// callbacks it relays to the ``TPDApplePayDelegate``. Before each callback it fills in the same `consumer` and
/// `cart` objects the app passed with what the sheet collected. Keep it (the app's `applePay` property); the
/// delegate is held weakly.
// Unchecked: its mutable state (the consumer, the cart, the checkout) is touched on the main actor only, where the
// app calls it and where ApplePayCheckout (made with `.mainActor` callbacks) calls it back.
public final class TPDApplePay: ApplePayCheckoutDelegate, @unchecked Sendable {
    /// The merchant.
    public let merchant: TPDMerchant!
    /// The consumer, with what the sheet collected.
    public let consumer: TPDConsumer!
    /// The cart, as the sheet shows it.
    public let cart: TPDCart!
    /// The delegate (held weakly).
    public private(set) weak var delegate: (any TPDApplePayDelegate)?
    /// The OrchardPay checkout, once ``startPayment()`` made it.
    public private(set) var checkout: ApplePayCheckout?

    private init(merchant: TPDMerchant!, consumer: TPDConsumer!, cart: TPDCart!, delegate: (any TPDApplePayDelegate)?) {
        self.merchant = merchant
        self.consumer = consumer
        self.cart = cart
        self.delegate = delegate
    }

    /// Whether the device can pay with Apple Pay (``OrchardPaySDK/canMakePayments()``).
    public class func canMakePayments() -> Bool { OrchardPaySDK.canMakePayments() }

    /// Whether the wallet holds a card of one of `networks` (``OrchardPaySDK/canMakePayments(usingNetworks:)``).
    public class func canMakePayments(usingNetworks networks: [PKPaymentNetwork]!) -> Bool {
        OrchardPaySDK.canMakePayments(usingNetworks: (networks ?? []).map(PassKitMapping.network))
    }

    /// Opens Wallet's add-card screen (``OrchardPaySDK/openPaymentSetup()``).
    @MainActor
    public class func showSetupView() { _ = OrchardPaySDK.openPaymentSetup() }

    /// The Apple Pay object for a payment (TapPay's spelling, `setupWthMerchant:withConsumer:withCart:withDelegate:`).
    /// `delegate` must be a ``TPDApplePayDelegate``.
    public class func setupWthMerchant(
        _ merchant: TPDMerchant!, with consumer: TPDConsumer!, with cart: TPDCart!, withDelegate delegate: Any!
    ) -> TPDApplePay {
        TPDApplePay(
            merchant: merchant ?? TPDMerchant(), consumer: consumer ?? TPDConsumer(), cart: cart ?? TPDCart(),
            delegate: delegate as? any TPDApplePayDelegate)
    }

    /// Opens the sheet (``ApplePayCheckout/start()``). A cart the checkout refuses is reported by
    /// `didFailurePayment` with TapPay's code as the status (88013–88016) and then `tpdApplePayDidFinishPayment`;
    /// a second call does nothing.
    public func startPayment() {
        guard checkout == nil else { return }
        cart.currencyCode = merchant.currencyCode
        let sheet = OrchardCompat.paymentSheet()
        do throws(CheckoutError) {
            guard let sheet else {
                throw CheckoutError(code: CheckoutError.sheetUnavailable, message: "no payment sheet on this platform")
            }
            let checkout = try ApplePayCheckout(
                merchant: merchant.merchant, consumer: consumer.consumer, cart: orchardCart, delegate: self,
                sheet: sheet)
            self.checkout = checkout
            checkout.start()
        } catch {
            let result = TPDTransactionResult(error, amount: orchardCart.totalAmount)
            Task { @MainActor in
                delegate?.tpdApplePay(self, didFailurePayment: result)
                delegate?.tpdApplePayDidFinishPayment(self)
            }
        }
    }

    /// Closes the sheet with the merchant server's outcome (``ApplePayCheckout/showPaymentResult(_:)``).
    public func showPaymentResult(_ result: Bool) { checkout?.showPaymentResult(result) }

    private var orchardCart: Cart {
        cart.orchardCart(merchantShippingMethods: merchant.shippingMethods, currencyCode: merchant.currencyCode)
    }

    /// Fills in the consumer and cart from the checkout, then calls the delegate on the main actor (where
    /// ApplePayCheckout calls back).
    private func relay<R: Sendable>(_ c: ApplePayCheckout, default value: R, _ body: @MainActor (any TPDApplePayDelegate) -> R) -> R {
        consumer.load(c.consumer)
        cart.load(c.cart)
        return MainActor.assumeIsolated { delegate.map(body) ?? value }
    }

    // MARK: ApplePayCheckoutDelegate

    /// Relays `didReceivePrime`.
    public func checkout(
        _ c: ApplePayCheckout, didReceivePrime prime: String, expiryMillis: Int64, cardInfo: CardInfo,
        merchantReferenceInfo: MerchantReferenceInfo
    ) {
        relay(c, default: ()) {
            $0.tpdApplePay(
                self, didReceivePrime: prime, withExpiryMillis: Int(expiryMillis), withCardInfo: TPDCardInfo(cardInfo),
                withMerchantReferenceInfo: ["affiliateCodes": merchantReferenceInfo.affiliateCodes])
        }
    }

    /// Relays `didSuccessPayment`.
    public func checkout(_ c: ApplePayCheckout, didSucceed result: TransactionResult) {
        relay(c, default: ()) { $0.tpdApplePay(self, didSuccessPayment: TPDTransactionResult(result)) }
    }

    /// Relays `didFailurePayment`.
    public func checkout(_ c: ApplePayCheckout, didFail result: TransactionResult) {
        relay(c, default: ()) { $0.tpdApplePay(self, didFailurePayment: TPDTransactionResult(result)) }
    }

    /// Relays `tpdApplePayDidStartPayment`.
    public func checkoutDidStart(_ c: ApplePayCheckout) {
        relay(c, default: ()) { $0.tpdApplePayDidStartPayment(self) }
    }

    /// Relays `didSelectPaymentMethod` with the ``cart`` object holding `cart`, and answers the cart it returns.
    public func checkout(_ c: ApplePayCheckout, didSelect paymentMethod: PaymentMethod, cart: Cart) -> Cart {
        consumer.load(c.consumer)
        self.cart.load(cart)
        let answer = MainActor.assumeIsolated {
            delegate?.tpdApplePay(self, didSelect: PassKitObjects.paymentMethod(paymentMethod), cart: self.cart)?
                .orchardCart(merchantShippingMethods: merchant.shippingMethods, currencyCode: merchant.currencyCode)
        }
        return answer ?? cart
    }

    /// Relays `didSelectShippingMethod`.
    public func checkout(_ c: ApplePayCheckout, didSelect shippingMethod: ShippingMethod) {
        relay(c, default: ()) { $0.tpdApplePay(self, didSelect: PassKitMapping.passKitShippingMethod(shippingMethod)) }
    }

    /// Relays `canAuthorizePaymentWithShippingContact`.
    public func checkout(_ c: ApplePayCheckout, canAuthorizeWith shippingContact: Contact) -> Bool {
        relay(c, default: true) {
            $0.tpdApplePay(self, canAuthorizePaymentWithShippingContact: PassKitMapping.passKitContact(shippingContact))
        }
    }

    /// Relays `tpdApplePayDidCancelPayment`.
    public func checkoutDidCancel(_ c: ApplePayCheckout) {
        relay(c, default: ()) { $0.tpdApplePayDidCancelPayment(self) }
    }

    /// Relays `tpdApplePayDidFinishPayment`.
    public func checkoutDidFinish(_ c: ApplePayCheckout) {
        relay(c, default: ()) { $0.tpdApplePayDidFinishPayment(self) }
    }
}
