import Foundation
import OrchardPay
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Whether code runs on the main actor's queue (the main dispatch queue): marked with a queue-specific value,
/// since `Thread.isMainThread` does not say it reliably on Linux.
enum MainQueue {
    static let key = DispatchSpecificKey<Bool>()
    static let marked: Bool = {
        DispatchQueue.main.setSpecific(key: key, value: true)
        return true
    }()
    /// True on the main actor.
    static var isCurrent: Bool { marked && DispatchQueue.getSpecific(key: key) == true }
}

/// A value behind a lock, for the tests' recorders.
final class Guarded<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()
    init(_ value: Value) { self.value = value }
    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
    var current: Value { withLock { $0 } }
}

/// A one-shot signal a test awaits.
final class Signal: @unchecked Sendable {
    private let state = Guarded<(fired: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))
    func fire() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.fired = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
    func wait() async {
        await withCheckedContinuation { continuation in
            let fired = state.withLock { state -> Bool in
                if !state.fired { state.waiters.append(continuation) }
                return state.fired
            }
            if fired { continuation.resume() }
        }
    }
}

/// The Orchard Coffee merchant of the tests (the sandbox gateway's merchant identifier).
func coffeeMerchant(_ gateway: LiveGateway) -> Merchant {
    Merchant(
        name: "Orchard Coffee", merchantIdentifier: gateway.merchantIdentifier, countryCode: "TW", currencyCode: "TWD",
        supportedNetworks: [.visa, .masterCard, .jcb, .amex],
        capabilities: [.supports3DS, .supportsCredit, .supportsDebit])
}

/// A configuration for `gateway` with quick retries.
func configuration(_ gateway: LiveGateway, url: URL? = nil, appKey: String? = nil) -> OrchardPaySDK.Configuration {
    var configuration = OrchardPaySDK.Configuration(
        appID: gateway.appID, appKey: appKey ?? gateway.appKey, environment: .sandbox, gatewayURL: url ?? gateway.url)
    configuration.retryDelay = 0.02
    configuration.requestTimeout = 10
    return configuration
}

/// A gateway client for `gateway` (optionally over `transport`).
func client(_ gateway: LiveGateway, transport: (any HTTPTransport)? = nil) -> GatewayClient {
    GatewayClient(configuration: configuration(gateway), transport: transport ?? URLSessionTransport())
}

/// Records an ``ApplePayCheckout``'s callbacks and plays the merchant: on a prime, its server pays it by prime
/// and the app calls `showPaymentResult` with the answer.
final class CheckoutRecorder: ApplePayCheckoutDelegate, @unchecked Sendable {
    let gateway: LiveGateway
    let events = Guarded<[String]>([])
    let prime = Guarded<(prime: String, expiry: Int64, card: CardInfo, reference: MerchantReferenceInfo)?>(nil)
    let result = Guarded<TransactionResult?>(nil)
    let payment = Guarded<LiveGateway.Answer?>(nil)
    let finished = Signal()
    /// The cart for a card (TapPay's example by default: −1.00 for a debit card).
    var cartForMethod: @Sendable (PaymentMethod, Cart) -> Cart = { method, cart in
        var cart = cart
        if method.type == .debit { cart.add(PaymentItem(label: "Discount", amount: Decimal(string: "-1.00")!)) }
        return cart
    }
    var accepts: Bool = true
    /// Pays the prime as a deferred payment of this amount instead of the token's amount.
    var deferredAmount: String?
    /// Called instead of paying, when set.
    var onPrime: (@Sendable (ApplePayCheckout, String) -> Void)?
    /// Called when `didSelect paymentMethod` starts (before `cartForMethod`).
    var onSelectMethod: (@Sendable () -> Void)?
    /// The answer to a shipping contact (default: the cart unchanged).
    var cartForContact: (@Sendable (Contact, Cart) -> CartUpdate)?
    /// The answer to a coupon code (default: the cart unchanged).
    var cartForCoupon: (@Sendable (String, Cart) -> CartUpdate)?

    init(_ gateway: LiveGateway) { self.gateway = gateway }

    /// Each callback with whether it ran on the main thread.
    let threads = Guarded<[(event: String, onMain: Bool)]>([])

    private func record(_ event: String) {
        events.withLock { $0.append(event) }
        if event != "showPaymentResult" { threads.withLock { $0.append((event, MainQueue.isCurrent)) } }
    }

    func checkoutDidStart(_ c: ApplePayCheckout) { record("didStart") }

    func checkout(_ c: ApplePayCheckout, didSelect paymentMethod: PaymentMethod, cart: Cart) -> Cart {
        record("didSelectPaymentMethod:\(paymentMethod.type.rawValue)")
        onSelectMethod?()
        return cartForMethod(paymentMethod, cart)
    }

    func checkout(_ c: ApplePayCheckout, didSelect shippingMethod: ShippingMethod) {
        record("didSelectShippingMethod:\(shippingMethod.identifier)")
    }

    func checkout(_ c: ApplePayCheckout, didSelectShippingContact contact: Contact, cart: Cart) -> CartUpdate {
        record("didSelectShippingContact:\(contact.countryCode ?? "")")
        return cartForContact?(contact, cart) ?? CartUpdate(cart: cart)
    }

    func checkout(_ c: ApplePayCheckout, didChangeCouponCode couponCode: String, cart: Cart) -> CartUpdate {
        record("didChangeCouponCode:\(couponCode)")
        return cartForCoupon?(couponCode, cart) ?? CartUpdate(cart: cart)
    }

    func checkout(_ c: ApplePayCheckout, canAuthorizeWith shippingContact: Contact) -> Bool {
        record("canAuthorize")
        return accepts
    }

    func checkout(
        _ c: ApplePayCheckout, didReceivePrime prime: String, expiryMillis: Int64, cardInfo: CardInfo,
        merchantReferenceInfo: MerchantReferenceInfo
    ) {
        record("didReceivePrime")
        self.prime.withLock { $0 = (prime, expiryMillis, cardInfo, merchantReferenceInfo) }
        if let onPrime { return onPrime(c, prime) }
        let amount = deferredAmount ?? "\(c.cart.totalAmount)"
        let deferred = deferredAmount != nil
        let gateway = self.gateway
        Task {
            let answer = try? await gateway.payPrime(prime, amount: amount, deferred: deferred)
            self.payment.withLock { $0 = answer }
            self.record("showPaymentResult")
            c.showPaymentResult(answer?.status == 200)
        }
    }

    func checkout(_ c: ApplePayCheckout, didSucceed result: TransactionResult) {
        record("didSucceed")
        self.result.withLock { $0 = result }
    }

    func checkout(_ c: ApplePayCheckout, didFail result: TransactionResult) {
        record("didFail:\(result.code ?? "")")
        self.result.withLock { $0 = result }
    }

    func checkoutDidCancel(_ c: ApplePayCheckout) { record("didCancel") }

    func checkoutDidFinish(_ c: ApplePayCheckout) {
        record("didFinish")
        finished.fire()
    }
}

/// Records an ``ApplePayContext``'s outcome; returns the order token it is given.
final class ContextRecorder: ApplePayContextDelegate, @unchecked Sendable {
    let orderToken: String
    let outcomes = Guarded<[(ApplePayContext.PaymentStatus, CheckoutError?)]>([])
    /// Whether each `didCompleteWith` ran on the main thread.
    let completedOnMain = Guarded<[Bool]>([])
    let methods = Guarded<[PaymentMethod]>([])
    /// The summary for a coupon code, when set (default: unchanged).
    var summaryForCoupon: (@Sendable (String, PaymentRequest) -> PaymentRequestUpdate)?
    /// The summary for a shipping contact, when set (default: unchanged).
    var summaryForContact: (@Sendable (Contact, PaymentRequest) -> PaymentRequestUpdate)?
    /// The total of the shown request when the order token was asked for.
    let shownTotalAtAuthorization = Guarded<String?>(nil)

    init(orderToken: String) { self.orderToken = orderToken }

    func applePayContext(
        _ c: ApplePayContext, didChangeCouponCode couponCode: String, paymentRequest request: PaymentRequest
    ) async -> PaymentRequestUpdate {
        summaryForCoupon?(couponCode, request) ?? .unchanged(request)
    }

    func applePayContext(
        _ c: ApplePayContext, didSelectShippingContact contact: Contact, paymentRequest request: PaymentRequest
    ) async -> PaymentRequestUpdate {
        summaryForContact?(contact, request) ?? .unchanged(request)
    }

    func applePayContext(
        _ c: ApplePayContext, didCreatePaymentMethod m: PaymentMethod, payment: Payment
    ) async throws
        -> String
    {
        methods.withLock { $0.append(m) }
        shownTotalAtAuthorization.withLock { $0 = c.shownPaymentRequest.total.amount.decimalString }
        return orderToken
    }

    func applePayContext(_ c: ApplePayContext, didCompleteWith status: ApplePayContext.PaymentStatus, error: Error?) {
        outcomes.withLock { $0.append((status, error as? CheckoutError)) }
        completedOnMain.withLock { $0.append(MainQueue.isCurrent) }
    }
}

/// A ``HandlerTimer`` the test ends by hand: `wait` returns only after ``expire()``.
final class ManualTimer: HandlerTimer, @unchecked Sendable {
    private let state = Guarded<(expired: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))
    let armed = Signal()

    func wait(_ budget: TimeInterval) async {
        await withCheckedContinuation { continuation in
            let expired = state.withLock { state -> Bool in
                if !state.expired { state.waiters.append(continuation) }
                return state.expired
            }
            if expired { continuation.resume() }
            armed.fire()
        }
    }

    /// Ends every budget being measured, and the later ones at once.
    func expire() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.expired = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

/// Sends over URLSession and keeps every request and answer.
final class RecordingTransport: HTTPTransport, @unchecked Sendable {
    let inner = URLSessionTransport()
    let exchanges = Guarded<[(request: URLRequest, status: Int?, headers: [AnyHashable: Any])]>([])
    /// Paths whose first answer is dropped after the gateway handled the request (a lost answer).
    let dropFirstAnswer: (String) -> Bool
    private let dropped = Guarded<Set<String>>([])

    init(dropFirstAnswer: @escaping @Sendable (String) -> Bool = { _ in false }) {
        self.dropFirstAnswer = dropFirstAnswer
    }

    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let (data, response) = try await inner.send(request)
        exchanges.withLock { $0.append((request, response.statusCode, response.allHeaderFields)) }
        let path = request.url?.path ?? ""
        if dropFirstAnswer(path), dropped.withLock({ $0.insert(path).inserted }) {
            throw URLError(.networkConnectionLost)
        }
        return (data, response)
    }

    /// The requests to paths ending in `suffix`.
    func requests(endingIn suffix: String) -> [URLRequest] {
        exchanges.current.map(\.request).filter { $0.url?.path.hasSuffix(suffix) ?? false }
    }

    /// The answers' `Idempotent-Replayed` headers for paths ending in `suffix`.
    func replayed(endingIn suffix: String) -> [Bool] {
        exchanges.current.filter { $0.request.url?.path.hasSuffix(suffix) ?? false }.map {
            ($0.headers["Idempotent-Replayed"] as? String) == "true"
        }
    }
}

/// The shown totals of a simulated sheet's updates, in order.
func shownTotals(_ sheet: SimulatedPaymentSheet) -> [String] {
    sheet.events.compactMap { event in
        switch event {
        case .presented(let total): total.decimalString
        case .updated(_, let total): total.decimalString
        default: nil
        }
    }
}

/// The amounts the simulated customer authorized.
func authorizedAmounts(_ sheet: SimulatedPaymentSheet) -> [String] {
    sheet.events.compactMap { event in
        if case .authorized(let amount, _) = event { return amount.decimalString }
        return nil
    }
}

/// The authorization results a simulated sheet got.
func authorizationResults(_ sheet: SimulatedPaymentSheet) -> [PaymentAuthorizationResult] {
    sheet.events.compactMap { event in
        if case .authorizationResult(let result) = event { return result }
        return nil
    }
}

/// Decimal from a literal string.
func dec(_ text: String) -> Decimal { Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))! }

/// Sends over URLSession, holding requests to paths ending in `suffix` until ``release`` fires.
final class GatedTransport: HTTPTransport, @unchecked Sendable {
    let inner = URLSessionTransport()
    let suffix: String
    /// Fired when a held request arrives.
    let reached = Signal()
    /// Lets the held requests go.
    let release = Signal()

    init(holding suffix: String) { self.suffix = suffix }

    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        if request.url?.path.hasSuffix(suffix) == true {
            reached.fire()
            await release.wait()
        }
        return try await inner.send(request)
    }
}

/// A sheet the test drives by hand: it records `present` and `dismiss` and calls the delegate only when told.
final class ManualSheet: PaymentSheet, @unchecked Sendable {
    let handlerBudget: TimeInterval = 30
    let handlerTimer: any HandlerTimer = SystemHandlerTimer()
    let delegate = Guarded<(any PaymentSheetDelegate)?>(nil)
    let dismissals = Guarded(0)
    let presented = Signal()

    func present(_ request: PaymentRequest, delegate: any PaymentSheetDelegate) async -> Bool {
        self.delegate.withLock { $0 = delegate }
        presented.fire()
        return true
    }

    func dismiss() { dismissals.withLock { $0 += 1 } }

    /// Plays the customer's authorization of `token`; returns the sheet's result.
    func authorize(_ token: PaymentToken) async -> PaymentAuthorizationResult {
        let delegate = try! #require(self.delegate.current)
        return await withCheckedContinuation { continuation in
            delegate.paymentSheet(self, didAuthorizePayment: Payment(token: token)) { continuation.resume(returning: $0) }
        }
    }

    /// The sheet is gone.
    func finish() { delegate.current?.paymentSheetDidFinish(self) }
}

