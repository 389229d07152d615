import OrchardBase
import Foundation

/// What an ``ApplePayCheckout`` reports (TapPay's `TPDApplePayDelegate`), in TapPay's order:
/// ``checkoutDidStart(_:)``, the selection callbacks, ``checkout(_:canAuthorizeWith:)``,
/// ``checkout(_:didReceivePrime:expiryMillis:cardInfo:merchantReferenceInfo:)`` (send the prime to the
/// merchant's server, which pays it, then call ``ApplePayCheckout/showPaymentResult(_:)``),
/// ``checkout(_:didSucceed:)`` or ``checkout(_:didFail:)``, and ``checkoutDidFinish(_:)`` exactly once.
/// ``checkoutDidCancel(_:)`` replaces the outcome when the customer closes the sheet before authorizing.
///
/// Callbacks are made one at a time on the main actor (``DelegateCallbacks/mainActor``, the default), or off the
/// main thread with ``DelegateCallbacks/background``.
public protocol ApplePayCheckoutDelegate: AnyObject {
    /// The gateway turned the token into a prime: give it to the merchant's server, which pays it with
    /// `POST /v1/payments` and its secret key, then call `showPaymentResult`. `expiryMillis` is Unix time in
    /// milliseconds: 90 s after tokenization, 30 days for a deferred cart.
    func checkout(
        _ c: ApplePayCheckout, didReceivePrime prime: String, expiryMillis: Int64, cardInfo: CardInfo,
        merchantReferenceInfo: MerchantReferenceInfo)
    /// The payment succeeded (`showPaymentResult(true)`).
    func checkout(_ c: ApplePayCheckout, didSucceed result: TransactionResult)
    /// The payment failed: the gateway refused the token (with its code), could not be reached, or the
    /// merchant called `showPaymentResult(false)`.
    func checkout(_ c: ApplePayCheckout, didFail result: TransactionResult)
    /// The sheet is opening. Optional.
    func checkoutDidStart(_ c: ApplePayCheckout)
    /// The customer chose a card: return the cart for it (TapPay's example adds a −1.00 "Discount" for a
    /// debit card). `cart` is the merchant's cart with the selected shipping method, before any change made
    /// for an earlier card. Answer within the sheet's budget, or the sheet keeps the current cart. Optional:
    /// the default returns `cart`.
    func checkout(_ c: ApplePayCheckout, didSelect paymentMethod: PaymentMethod, cart: Cart) -> Cart
    /// The customer chose a shipping method; the checkout recomputes the total with its amount. Optional.
    func checkout(_ c: ApplePayCheckout, didSelect shippingMethod: ShippingMethod)
    /// The customer chose or edited a shipping contact (PassKit's redacted form before authorization: city,
    /// postal code, country, no street): return the cart for that address — its shipping methods and their
    /// costs, its items — and any errors to show, e.g. `PaymentSheetError(.shippingAddressUnserviceable, …)`.
    /// `cart` is the merchant's cart before changes made for the card. Answer within the sheet's budget, or
    /// the sheet keeps the current cart. Optional: the default returns `cart` unchanged.
    func checkout(_ c: ApplePayCheckout, didSelectShippingContact contact: Contact, cart: Cart) -> CartUpdate
    /// The customer entered or changed a coupon code (``Cart/supportsCouponCode``): return the cart with its
    /// discount, or errors such as `PaymentSheetError(.couponCodeInvalid, …)` / `.couponCodeExpired`. `cart` is
    /// the merchant's cart before changes made for the card; the returned cart's ``Cart/couponCode`` becomes the
    /// code entered. Optional: the default returns `cart` unchanged.
    func checkout(_ c: ApplePayCheckout, didChangeCouponCode couponCode: String, cart: Cart) -> CartUpdate
    /// Whether the merchant accepts this shipping contact; false shows it as invalid on the sheet
    /// (`shippingContactInvalid`) and the customer may correct it. Optional: the default is true.
    func checkout(_ c: ApplePayCheckout, canAuthorizeWith shippingContact: Contact) -> Bool
    /// The customer closed the sheet before authorizing. Never called while a prime or a payment is in
    /// flight: then the real outcome is reported. Optional.
    func checkoutDidCancel(_ c: ApplePayCheckout)
    /// The checkout is over (after the outcome or the cancel). Called exactly once. Optional.
    func checkoutDidFinish(_ c: ApplePayCheckout)
}

extension ApplePayCheckoutDelegate {
    /// Does nothing.
    public func checkoutDidStart(_ c: ApplePayCheckout) {}
    /// Returns `cart` unchanged.
    public func checkout(_ c: ApplePayCheckout, didSelect paymentMethod: PaymentMethod, cart: Cart) -> Cart { cart }
    /// Does nothing.
    public func checkout(_ c: ApplePayCheckout, didSelect shippingMethod: ShippingMethod) {}
    /// Returns `cart` unchanged.
    public func checkout(_ c: ApplePayCheckout, didSelectShippingContact contact: Contact, cart: Cart) -> CartUpdate {
        CartUpdate(cart: cart)
    }
    /// Returns `cart` unchanged.
    public func checkout(_ c: ApplePayCheckout, didChangeCouponCode couponCode: String, cart: Cart) -> CartUpdate {
        CartUpdate(cart: cart)
    }
    /// Accepts every contact.
    public func checkout(_ c: ApplePayCheckout, canAuthorizeWith shippingContact: Contact) -> Bool { true }
    /// Does nothing.
    public func checkoutDidCancel(_ c: ApplePayCheckout) {}
    /// Does nothing.
    public func checkoutDidFinish(_ c: ApplePayCheckout) {}
}

/// The prime flow (TapPay's `TPDApplePay`): shows the sheet for a cart, turns the authorized token into a
/// one-time prime with `POST /v1/tokens` (sending the cart as `payment_request`), hands the prime to the
/// delegate, and closes the sheet with the merchant's ``showPaymentResult(_:)``.
///
/// ```swift
/// let checkout = try ApplePayCheckout(merchant: merchant, consumer: consumer, cart: cart, delegate: self)
/// checkout.start()
/// ```
///
/// A customer's cancel while the prime or the merchant's payment is in flight is not reported as a cancel:
/// the checkout waits for the real outcome.
// Unchecked: its mutable state is in `state` (a Locked); the weak `delegate` (a weak reference cannot be a let) is written only in init.
public final class ApplePayCheckout: PaymentSheetDelegate, @unchecked Sendable {
    /// The merchant.
    public let merchant: Merchant
    /// The sheet shown.
    public let sheet: any PaymentSheet
    /// The delegate (held weakly).
    public private(set) weak var delegate: (any ApplePayCheckoutDelegate)?
    /// Where the delegate is called: the main actor unless the checkout was made with `.background`.
    public let callbacks: DelegateCallbacks

    private enum Phase {
        case idle, presenting, authorizing, awaitingResult, completing, completed
    }

    private struct State {
        var phase: Phase = .idle
        var cart: Cart
        /// The merchant's cart with the selected shipping method, before payment-method changes.
        var baseCart: Cart
        var consumer: Consumer
        var request: PaymentRequest
        var sheetClosed = false
        var outcome: TransactionResult?
        var finishReported = false
        var authorizationHandler: (@Sendable (PaymentAuthorizationResult) -> Void)?
        var amount: Decimal = 0
        var prime: PrimeResult?
        /// The app asked to close the sheet (``ApplePayCheckout/abort()``).
        var aborted = false
    }

    private let state: Locked<State>
    private let gatewayOverride: GatewayClient?

    /// A checkout for `cart`, shown on `sheet`. Throws ``CheckoutError`` when the cart breaks TapPay's deferred
    /// table (`88013`…`88016`) or the payment request rules (`missing_supports_3ds`, `unknown_currency`,
    /// `too_many_decimals` …). `gateway` defaults to one for ``OrchardPaySDK/setup(appID:appKey:environment:gatewayURL:)``;
    /// `callbacks` says where the delegate is called (the main actor by default).
    public init(
        merchant: Merchant, consumer: Consumer, cart: Cart, delegate: any ApplePayCheckoutDelegate,
        sheet: any PaymentSheet, gateway: GatewayClient? = nil, callbacks: DelegateCallbacks = .mainActor
    ) throws(CheckoutError) {
        self.merchant = merchant
        self.sheet = sheet
        self.delegate = delegate
        self.callbacks = callbacks
        self.gatewayOverride = gateway
        let request = try Self.paymentRequest(merchant: merchant, consumer: consumer, cart: cart)
        try Self.validate(request)
        state = Locked(State(cart: cart, baseCart: cart, consumer: consumer, request: request))
    }

    #if canImport(PassKit)
        /// A checkout shown on PassKit's sheet.
        public convenience init(
            merchant: Merchant, consumer: Consumer, cart: Cart, delegate: any ApplePayCheckoutDelegate,
            callbacks: DelegateCallbacks = .mainActor
        ) throws(CheckoutError) {
            try self.init(
                merchant: merchant, consumer: consumer, cart: cart, delegate: delegate, sheet: PassKitPaymentSheet(),
                callbacks: callbacks)
        }
    #endif

    /// The cart as the sheet shows it now (with the selected shipping method and the card's changes).
    public var cart: Cart { state.withLock { $0.cart } }
    /// The consumer, with the contacts and the card the sheet collected.
    public var consumer: Consumer { state.withLock { $0.consumer } }
    /// The payment request the sheet shows now.
    public var paymentRequest: PaymentRequest { state.withLock { $0.request } }
    /// The prime and card information once `didReceivePrime` was called.
    public var prime: PrimeResult? { state.withLock { $0.prime } }
    /// The outcome once `didSucceed` or `didFail` was called.
    public var result: TransactionResult? { state.withLock { $0.outcome } }

    /// Opens the sheet (TapPay's `startPayment`). A checkout runs once: a second call does nothing.
    public func start() {
        let first = state.withLock { state -> Bool in
            guard state.phase == .idle else { return false }
            state.phase = .presenting
            return true
        }
        guard first else {
            OrchardPaySDK.log("checkout: start() called again; ignored")
            return
        }
        let request = paymentRequest
        Task {
            await callDelegate { $0.checkoutDidStart(self) }
            if await !sheet.present(request, delegate: self) {
                OrchardPaySDK.log("checkout: the sheet could not be shown")
                let result = TransactionResult(
                    status: -3, message: "the Apple Pay sheet could not be shown", code: CheckoutError.sheetUnavailable,
                    amount: cart.totalAmount, paymentMethod: nil)
                state.withLock {
                    $0.phase = .completed
                    $0.sheetClosed = true
                }
                await report(result)
                await finishOnce()
            }
        }
    }

    /// Closes the sheet with the merchant server's outcome (TapPay's `showPaymentResult`): true shows success
    /// and reports `didSucceed`, false shows failure and reports `didFail` (code `merchant_declined`). Only
    /// meaningful after `didReceivePrime`; other calls are ignored.
    public func showPaymentResult(_ success: Bool) {
        let snapshot = state.withLock { state -> (Decimal, PaymentMethod?)? in
            guard state.phase == .awaitingResult else { return nil }
            state.phase = .completing
            return (state.amount, state.consumer.paymentMethod)
        }
        guard let (amount, method) = snapshot else {
            OrchardPaySDK.log("checkout: showPaymentResult outside of a pending payment; ignored")
            return
        }
        let result =
            success
            ? TransactionResult(status: 0, message: "Success", code: nil, amount: amount, paymentMethod: method)
            : TransactionResult(
                status: -2, message: "the merchant's server did not complete the payment",
                code: CheckoutError.merchantDeclined, amount: amount, paymentMethod: method)
        Task { await complete(result) }
    }

    /// Closes the sheet from code, e.g. when the app's own timer runs out (PassKit's `dismiss`). Before the
    /// customer authorizes, the checkout fails with `aborted` (status -4) and no authorization that arrives
    /// after this call is tokenized. Once the customer has authorized, the sheet closes and the payment in flight
    /// is reported with its real outcome — the prime, then the merchant's `showPaymentResult` — never as a cancel
    /// or `aborted`. After the outcome, or before ``start()``, it does nothing.
    public func abort() {
        sheet.dismissFromCode(flow: "checkout") {
            state.withLock { state in
                guard state.phase != .idle, state.phase != .completed, !state.sheetClosed else { return false }
                state.aborted = true
                return true
            }
        }
    }

    // MARK: PaymentSheetDelegate

    /// Recomputes the total with the shipping method and tells the delegate.
    public func paymentSheet(
        _ sheet: any PaymentSheet, didSelectShippingMethod method: ShippingMethod,
        handler: @escaping @Sendable (PaymentRequestUpdate) -> Void
    ) {
        let update: PaymentRequestUpdate
        do {
            update = try state.withLock { state throws(CheckoutError) -> PaymentRequestUpdate in
                var cart = state.cart
                var base = state.baseCart
                cart.shippingMethod = method
                base.shippingMethod = method
                let request = try Self.paymentRequest(merchant: merchant, consumer: state.consumer, cart: cart)
                state.cart = cart
                state.baseCart = base
                state.request = request
                return PaymentRequestUpdate(
                    lineItems: request.lineItems, total: request.total, shippingMethods: request.shippingMethods)
            }
        } catch {
            handler(
                PaymentRequestUpdate(status: .failure, lineItems: paymentRequest.lineItems, total: paymentRequest.total)
            )
            return
        }
        let answer = BudgetedAnswer(handler)
        answer.arm(budget: sheet.handlerBudget, timer: sheet.handlerTimer) { update }
        callbacks.run { [weak self] in
            if let self, let delegate = self.delegate { delegate.checkout(self, didSelect: method) }
            answer.answer(update)
        }
    }

    /// Asks the delegate for the cart at this address (per-address shipping costs, "cannot ship here"), within
    /// the sheet's budget. The contact is remembered; its fields are checked when the customer authorizes
    /// (PassKit redacts the address until then).
    public func paymentSheet(
        _ sheet: any PaymentSheet, didSelectShippingContact contact: Contact,
        handler: @escaping @Sendable (PaymentRequestUpdate) -> Void
    ) {
        state.withLock { $0.consumer.shippingContact = contact }
        answerWithCart(sheet, handler: handler, listShippingMethods: true) { delegate, base in
            delegate.checkout(self, didSelectShippingContact: contact, cart: base)
        }
    }

    /// Asks the delegate for the cart with this coupon code (its discount, or why it is refused), within the
    /// sheet's budget.
    public func paymentSheet(
        _ sheet: any PaymentSheet, didChangeCouponCode couponCode: String,
        handler: @escaping @Sendable (PaymentRequestUpdate) -> Void
    ) {
        answerWithCart(sheet, handler: handler, listShippingMethods: true) { delegate, base in
            var update = delegate.checkout(self, didChangeCouponCode: couponCode, cart: base)
            update.cart.couponCode = couponCode
            return update
        }
    }

    /// Asks the delegate for the card's cart, within the sheet's budget.
    public func paymentSheet(
        _ sheet: any PaymentSheet, didSelectPaymentMethod method: PaymentMethod,
        handler: @escaping @Sendable (PaymentRequestUpdate) -> Void
    ) {
        state.withLock { $0.consumer.paymentMethod = method }
        answerWithCart(sheet, handler: handler, listShippingMethods: false, changesBase: false) { delegate, base in
            CartUpdate(cart: delegate.checkout(self, didSelect: method, cart: base))
        }
    }

    /// Runs a merchant callback that answers a cart (for a shipping contact, a coupon code, a card) within the
    /// sheet's budget, from the merchant's cart before card changes. A valid cart becomes the sheet's, with the
    /// callback's errors; when `changesBase`, it also becomes the merchant's cart, and the card's cart is asked
    /// again from it if it changed (so a card's discount is neither lost nor taken twice). An invalid cart, or
    /// none in time, leaves the sheet as it is.
    private func answerWithCart(
        _ sheet: any PaymentSheet, handler: @escaping @Sendable (PaymentRequestUpdate) -> Void,
        listShippingMethods: Bool, changesBase: Bool = true,
        _ ask: @escaping @Sendable (any ApplePayCheckoutDelegate, Cart) -> CartUpdate
    ) {
        let (base, current, method) = state.withLock { ($0.baseCart, $0.request, $0.consumer.paymentMethod) }
        let answer = BudgetedAnswer(handler)
        answer.arm(budget: sheet.handlerBudget, timer: sheet.handlerTimer) { .unchanged(current) }
        callbacks.run { [weak self] in
            guard let self, let delegate = self.delegate else {
                answer.answer(.unchanged(current))
                return
            }
            let update = ask(delegate, base)
            let newBase = update.cart.withSelectedShippingMethod()
            var cart = newBase
            if changesBase, newBase != base, let method {
                cart = delegate.checkout(self, didSelect: method, cart: newBase).withSelectedShippingMethod()
            }
            let consumer = self.consumer
            guard let request = try? Self.paymentRequest(merchant: self.merchant, consumer: consumer, cart: cart),
                (try? Self.validate(request)) != nil
            else {
                OrchardPaySDK.log("checkout: the cart the delegate returned is invalid; the sheet keeps the current one")
                answer.answer(.unchanged(current))
                return
            }
            let shown = PaymentRequestUpdate(
                status: update.errors.isEmpty ? .success : .failure, lineItems: request.lineItems,
                total: request.total, shippingMethods: listShippingMethods ? request.shippingMethods : nil,
                errors: update.errors)
            answer.answer(shown) {
                self.state.withLock {
                    $0.cart = cart
                    $0.request = request
                    if changesBase { $0.baseCart = newBase }
                }
            }
        }
    }

    /// Checks the contacts, asks `canAuthorize`, tokenizes and hands the prime to the delegate.
    public func paymentSheet(
        _ sheet: any PaymentSheet, didAuthorizePayment payment: Payment,
        handler: @escaping @Sendable (PaymentAuthorizationResult) -> Void
    ) {
        enum Start {
            case refuse([PaymentSheetError])
            case go(Contact, PaymentRequest, Decimal)
        }
        let start = state.withLock { state -> Start in
            guard state.phase == .presenting, !state.aborted else { return .refuse([]) }
            let shipping = payment.shippingContact ?? state.consumer.shippingContact ?? Contact()
            if let problem = shipping.problem(required: state.consumer.requiredShippingContactFields) {
                return .refuse([problem])
            }
            if let problem = (payment.billingContact ?? Contact()).problem(
                required: state.consumer.requiredBillingContactFields, as: .billingContactInvalid)
            {
                return .refuse([problem])
            }
            state.phase = .authorizing
            state.authorizationHandler = handler
            state.consumer.shippingContact = payment.shippingContact ?? state.consumer.shippingContact
            state.consumer.billingContact = payment.billingContact
            state.consumer.paymentMethod = payment.token.paymentMethod
            state.amount = state.cart.totalAmount
            return .go(shipping, state.request, state.amount)
        }
        switch start {
        case .refuse(let errors):
            OrchardPaySDK.log("checkout: authorization refused: \(errors.map(\.description).joined(separator: "; "))")
            handler(PaymentAuthorizationResult(status: .failure, errors: errors))
        case .go(let contact, let request, let amount):
            OrchardPaySDK.log("checkout: authorized; tokenizing")
            Task { await tokenize(payment, contact: contact, request: request, amount: amount) }
        }
    }

    /// The sheet is gone: a cancel (or the app's abort) before authorizing, otherwise the outcome follows (or
    /// has been reported).
    public func paymentSheetDidFinish(_ sheet: any PaymentSheet) {
        let closedBeforeAuthorizing = state.withLock { state -> Bool? in
            state.sheetClosed = true
            switch state.phase {
            case .idle, .presenting:
                state.phase = .completed
                return true
            case .authorizing, .awaitingResult, .completing:
                return nil
            case .completed:
                return false
            }
        }
        guard let closedBeforeAuthorizing else {
            OrchardPaySDK.log("checkout: the sheet closed while the payment is in flight; waiting for its outcome")
            return
        }
        Task {
            if closedBeforeAuthorizing { await reportClosedBeforeAuthorizing() }
            await finishOnce()
        }
    }

    /// `didCancel` for the customer's close, `didFail` with `aborted` for the app's.
    private func reportClosedBeforeAuthorizing() async {
        let (aborted, amount, method) = state.withLock { ($0.aborted, $0.cart.totalAmount, $0.consumer.paymentMethod) }
        guard aborted else { return await callDelegate { $0.checkoutDidCancel(self) } }
        await report(
            TransactionResult(
                status: -4, message: "the app dismissed the sheet before the customer authorized",
                code: CheckoutError.aborted, amount: amount, paymentMethod: method))
    }

    // MARK: Flow

    private func tokenize(_ payment: Payment, contact: Contact, request: PaymentRequest, amount: Decimal) async {
        let accepted = await callDelegate(default: true) { $0.checkout(self, canAuthorizeWith: contact) }
        guard accepted else {
            let handler = state.withLock { state -> (@Sendable (PaymentAuthorizationResult) -> Void)? in
                state.phase = state.sheetClosed ? .completed : .presenting
                defer { state.authorizationHandler = nil }
                return state.authorizationHandler
            }
            handler?(
                PaymentAuthorizationResult(
                    status: .failure,
                    errors: [
                        PaymentSheetError(.shippingContactInvalid, message: "The merchant cannot accept this contact")
                    ]))
            if state.withLock({ $0.sheetClosed }) {
                await reportClosedBeforeAuthorizing()
                await finishOnce()
            }
            return
        }
        do throws(CheckoutError) {
            let gateway = try OrchardPaySDK.gatewayClient(gatewayOverride)
            let prime = try await gateway.createPrime(
                token: payment.token, paymentRequest: PaymentRequestCoder.encode(request, as: .tapPayWeb))
            OrchardPaySDK.log("checkout: prime issued; waiting for the merchant's result")
            state.withLock {
                $0.phase = .awaitingResult
                $0.prime = prime
            }
            await callDelegate {
                $0.checkout(
                    self, didReceivePrime: prime.prime, expiryMillis: prime.expiryMillis, cardInfo: prime.cardInfo,
                    merchantReferenceInfo: prime.merchantReferenceInfo)
            }
        } catch {
            OrchardPaySDK.log("checkout: tokenizing failed: \(error.code)")
            let completing = state.withLock { state -> Bool in
                guard state.phase == .authorizing else { return false }
                state.phase = .completing
                return true
            }
            guard completing else { return }
            await complete(
                TransactionResult(
                    status: error.httpStatus ?? -1, message: error.message, code: error.code, amount: amount,
                    paymentMethod: payment.token.paymentMethod))
        }
    }

    /// Reports the outcome, then closes the sheet with it (or finishes when the sheet is already gone).
    private func complete(_ result: TransactionResult) async {
        await report(result)
        let (handler, closed) = state.withLock { state -> ((@Sendable (PaymentAuthorizationResult) -> Void)?, Bool) in
            state.phase = .completed
            defer { state.authorizationHandler = nil }
            return (state.authorizationHandler, state.sheetClosed)
        }
        // An open sheet closes on this result and then finishes; a closed one records it.
        handler?(PaymentAuthorizationResult(status: result.isSuccess ? .success : .failure))
        if closed { await finishOnce() }
    }

    private func report(_ result: TransactionResult) async {
        state.withLock { $0.outcome = result }
        if result.isSuccess {
            await callDelegate { $0.checkout(self, didSucceed: result) }
        } else {
            await callDelegate { $0.checkout(self, didFail: result) }
        }
    }

    private func finishOnce() async {
        let first = state.withLock { state -> Bool in
            defer { state.finishReported = true }
            return !state.finishReported
        }
        guard first else { return }
        OrchardPaySDK.log("checkout: finished")
        await callDelegate { $0.checkoutDidFinish(self) }
    }

    /// Calls the delegate where ``callbacks`` says and waits for it to return.
    private func callDelegate(_ body: @escaping @Sendable (any ApplePayCheckoutDelegate) -> Void) async {
        _ = await callDelegate(default: ()) { body($0) }
    }

    private func callDelegate<R: Sendable>(
        default value: R, _ body: @escaping @Sendable (any ApplePayCheckoutDelegate) -> R
    ) async -> R {
        let box = DelegateBox(delegate)
        return await withCheckedContinuation { continuation in
            callbacks.run { continuation.resume(returning: box.delegate.map(body) ?? value) }
        }
    }

    // MARK: The payment request

    /// The payment request for a cart: the merchant's name as the total's label, the items (pending ones as
    /// pending items), the selected shipping method as an item when it costs something, and the total as
    /// "amount pending" when ``Cart/isShowTotalAmount`` is false.
    public static func paymentRequest(
        merchant: Merchant, consumer: Consumer, cart: Cart
    ) throws(CheckoutError) -> PaymentRequest {
        let currency: Currency
        let country: CountryCode
        do {
            currency = try Currency(code: merchant.currencyCode)
            country = try CountryCode(merchant.countryCode)
        } catch {
            throw CheckoutError(code: error.code.rawValue, message: error.reason, param: "merchant")
        }
        var items = try cart.items.map { item throws(CheckoutError) in
            SummaryItem(
                label: item.label, amount: try money(item.amount, currency), type: item.isPending ? .pending : .final)
        }
        if let method = cart.shippingMethod, !method.amount.isZero {
            items.append(SummaryItem(label: method.label, amount: method.amount))
        }
        let total = SummaryItem(
            label: merchant.name, amount: try money(cart.totalAmount, currency),
            type: cart.isShowTotalAmount ? .final : .pending)
        var request = PaymentRequest(
            merchantIdentifier: merchant.merchantIdentifier, countryCode: country, currency: currency,
            supportedNetworks: merchant.supportedNetworks, merchantCapabilities: merchant.capabilities,
            lineItems: items, total: total, isAmountPending: cart.isAmountPending,
            shippingMethods: cart.shippingMethods.map { method in
                var method = method
                method.selected = method.identifier == cart.shippingMethod?.identifier ? true : nil
                return method
            })
        request.requiredShippingContactFields = consumer.requiredShippingContactFields
        request.requiredBillingContactFields = consumer.requiredBillingContactFields
        request.shippingContact = consumer.shippingContact
        request.billingContact = consumer.billingContact
        request.shippingContactEditingMode = consumer.shippingContactEditingMode
        if cart.supportsCouponCode { request.supportsCouponCode = true }
        request.couponCode = cart.couponCode
        return request
    }

    /// Refuses a request the sheet or the gateway would refuse: TapPay's deferred table first (88013–88016),
    /// then the first other rule, with every issue attached.
    static func validate(_ request: PaymentRequest) throws(CheckoutError) {
        var issues = PaymentRequestValidator.validate(request, as: .applePayJS).issues
        for issue in PaymentRequestValidator.validate(request, as: .tapPayWeb).issues
        where !issues.contains(where: { $0.code == issue.code }) {
            issues.append(issue)
        }
        guard !issues.isEmpty else { return }
        let primary = issues.first { ["88013", "88014", "88015", "88016"].contains($0.code) } ?? issues[0]
        throw CheckoutError(code: primary.code, message: primary.message, param: primary.path, issues: issues)
    }

    static func money(_ amount: Decimal, _ currency: Currency) throws(CheckoutError) -> Money {
        do {
            return try Money("\(amount)", currency: currency)
        } catch {
            throw CheckoutError(code: error.code.rawValue, message: error.reason)
        }
    }
}

/// Carries a weakly held delegate to the thread that calls it.
// Unchecked: the delegate protocol is not Sendable; the box only carries the weak reference to the queue that calls it.
private struct DelegateBox: @unchecked Sendable {
    let delegate: (any ApplePayCheckoutDelegate)?
    init(_ delegate: (any ApplePayCheckoutDelegate)?) { self.delegate = delegate }
}
