import Foundation
import OrchardPay

/// A tea shop's checkout with OrchardPay, as an app writes it: the prime flow (TapPay style: the app gets a prime,
/// the backend pays it) with per-address shipping, a coupon and a debit discount, and the session flow (PayerMax
/// style: the backend fixes the amount first). The sheet is injected: `PassKitPaymentSheet()` on a device,
/// `SimulatedPaymentSheet` in the sandbox without one.
@MainActor
public final class TeaShopCheckout {
    /// How a payment ended.
    public struct Outcome: Sendable {
        /// `prime` or `session`.
        public var flow: String
        /// Whether it was charged.
        public var succeeded: Bool
        /// The failure's stable code (`card_declined`, `aborted`, `user_cancelled` …).
        public var code: String?
        /// The amount the customer authorized.
        public var amount: Decimal?
        /// The payment, when charged.
        public var paymentID: String?
    }

    let backend: MerchantBackend
    let merchantIdentifier: String
    let makeSheet: @MainActor () -> any PaymentSheet

    /// A checkout paying through `backend` as `merchantIdentifier`, on the sheets `makeSheet` makes.
    public init(
        backend: MerchantBackend, merchantIdentifier: String, makeSheet: @escaping @MainActor () -> any PaymentSheet
    ) {
        self.backend = backend
        self.merchantIdentifier = merchantIdentifier
        self.makeSheet = makeSheet
    }

    /// The networks the shop takes.
    public static let networks: [PaymentNetwork] = [.visa, .masterCard, .jcb, .amex]

    /// Which Apple Pay button to show (`PKPaymentButton` of `kind.passKitButtonType(callToAction: .buy)`).
    public static func button() -> ApplePayButtonKind {
        OrchardPaySDK.paymentButton(networks: networks, capabilities: [.supports3DS, .supportsCredit, .supportsDebit])
    }

    /// The prime flow for a box of tea.
    public func payByPrime(orderNumber: String) async -> Outcome {
        let merchant = Merchant(
            name: "Orchard Tea", merchantIdentifier: merchantIdentifier, countryCode: "TW", currencyCode: "TWD",
            supportedNetworks: Self.networks, capabilities: [.supports3DS, .supportsCredit, .supportsDebit])
        let consumer = Consumer(requiredShippingContactFields: [.name, .email, .postalAddress])
        var cart = Cart(
            items: [PaymentItem(label: "Oolong, 2 boxes", amount: Decimal(string: "480.00")!)],
            shippingMethods: [ShippingMethod(identifier: "home", label: "Home delivery", amount: Self.twd("60.00"))])
        cart.supportsCouponCode = true
        let delegate = PrimeDelegate(backend: backend, orderNumber: orderNumber)
        do {
            let checkout = try ApplePayCheckout(
                merchant: merchant, consumer: consumer, cart: cart, delegate: delegate, sheet: makeSheet())
            return await withCheckedContinuation { continuation in
                delegate.finished = { continuation.resume(returning: $0) }
                checkout.start()
            }
        } catch {
            return Outcome(flow: "prime", succeeded: false, code: error.code)
        }
    }

    /// The session flow: the backend creates the session, the app pays it.
    public func payOrderSession(outTradeNo: String) async -> Outcome {
        do {
            let session = try await backend.session(amount: "250.00", currency: "TWD", outTradeNo: outTradeNo)
            var request = ApplePayContext.paymentRequest(
                merchantIdentifier: session.merchantIdentifier, country: session.country, currency: session.currency)
            request.total = SummaryItem(
                label: "Orchard Tea", amount: try Money(session.amount, currency: try Currency(code: session.currency)))
            let delegate = SessionDelegate(orderToken: session.orderToken)
            let context = ApplePayContext(paymentRequest: request, delegate: delegate, sheet: makeSheet())
            await context.present()
            let paid = context.sessionPayment
            return Outcome(
                flow: "session", succeeded: delegate.status == .success, code: delegate.code, amount: paid?.amount,
                paymentID: paid?.paymentID)
        } catch {
            return Outcome(flow: "session", succeeded: false, code: "\(error)")
        }
    }

    nonisolated static func twd(_ text: String) -> Money { try! Money(text, currency: .twd) }
}

/// The prime flow's delegate: called on the main actor (OrchardPay's default), so it may touch the UI directly.
@MainActor
final class PrimeDelegate: ApplePayCheckoutDelegate {
    let backend: MerchantBackend
    let orderNumber: String
    var finished: ((TeaShopCheckout.Outcome) -> Void)?
    private var outcome = TeaShopCheckout.Outcome(flow: "prime", succeeded: false)

    init(backend: MerchantBackend, orderNumber: String) {
        self.backend = backend
        self.orderNumber = orderNumber
    }

    // Shipping to Japan is by air mail; the shop cannot deliver to postal code 999.
    nonisolated func checkout(_ c: ApplePayCheckout, didSelectShippingContact contact: Contact, cart: Cart) -> CartUpdate {
        var cart = cart
        if contact.postalCode == "999" {
            return CartUpdate(cart: cart, errors: [PaymentSheetError(.shippingAddressUnserviceable, message: "We cannot deliver there")])
        }
        if contact.countryCode == "JP" {
            cart.shippingMethods = [ShippingMethod(identifier: "air", label: "Air mail", amount: TeaShopCheckout.twd("400.00"))]
        }
        return CartUpdate(cart: cart)
    }

    // TEA10 takes 10 % off the tea.
    nonisolated func checkout(_ c: ApplePayCheckout, didChangeCouponCode couponCode: String, cart: Cart) -> CartUpdate {
        var cart = cart
        guard couponCode == "TEA10" else {
            return CartUpdate(cart: cart, errors: [PaymentSheetError(.couponCodeInvalid, message: "Unknown coupon")])
        }
        cart.add(PaymentItem(label: "Coupon TEA10", amount: Decimal(string: "-48.00")!))
        return CartUpdate(cart: cart)
    }

    // TapPay's example: a debit card takes 1.00 off.
    nonisolated func checkout(_ c: ApplePayCheckout, didSelect paymentMethod: PaymentMethod, cart: Cart) -> Cart {
        var cart = cart
        if paymentMethod.type == .debit { cart.add(PaymentItem(label: "Debit discount", amount: Decimal(string: "-1.00")!)) }
        return cart
    }

    nonisolated func checkout(
        _ c: ApplePayCheckout, didReceivePrime prime: String, expiryMillis: Int64, cardInfo: CardInfo,
        merchantReferenceInfo: MerchantReferenceInfo
    ) {
        let amount = c.cart.totalAmount
        Task { @MainActor in
            // The backend pays the prime with the secret key; the app only reports its answer.
            let order = try? await backend.pay(prime: prime, amount: amount, currency: "TWD", orderNumber: orderNumber)
            outcome.paymentID = order?.paymentID
            c.showPaymentResult(order?.paid ?? false)
        }
    }

    nonisolated func checkout(_ c: ApplePayCheckout, didSucceed result: TransactionResult) {
        MainActor.assumeIsolated {
            outcome.succeeded = true
            outcome.amount = result.amount
        }
    }

    nonisolated func checkout(_ c: ApplePayCheckout, didFail result: TransactionResult) {
        MainActor.assumeIsolated {
            outcome.code = result.code
            outcome.amount = result.amount
        }
    }

    nonisolated func checkoutDidCancel(_ c: ApplePayCheckout) {
        MainActor.assumeIsolated { outcome.code = "user_cancelled" }
    }

    nonisolated func checkoutDidFinish(_ c: ApplePayCheckout) {
        MainActor.assumeIsolated { finished?(outcome) }
    }
}

/// The session flow's delegate: hands the SDK the order token the backend created.
final class SessionDelegate: ApplePayContextDelegate, @unchecked Sendable {
    let orderToken: String
    var status: ApplePayContext.PaymentStatus?
    var code: String?

    init(orderToken: String) { self.orderToken = orderToken }

    func applePayContext(_ c: ApplePayContext, didCreatePaymentMethod m: PaymentMethod, payment: Payment) async throws
        -> String
    {
        orderToken
    }

    func applePayContext(_ c: ApplePayContext, didCompleteWith status: ApplePayContext.PaymentStatus, error: Error?) {
        self.status = status
        code = (error as? CheckoutError)?.code
    }
}
