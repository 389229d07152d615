import OrchardBase
import Foundation

/// What an ``ApplePayContext`` asks and reports (PayerMax's `PMApplePayContextDelegate`).
public protocol ApplePayContextDelegate: AnyObject {
    /// The customer authorized: return the order token (`ot_…`) the merchant's server got from
    /// `POST /v1/sessions`. The SDK then pays `POST /v1/sessions/{order_token}/pay` with the token. Throwing
    /// completes the payment with `.error` (code `order_token_failed`).
    func applePayContext(
        _ c: ApplePayContext, didCreatePaymentMethod m: PaymentMethod, payment: Payment
    ) async throws
        -> String
    /// The payment is over: `.success` (the gateway charged), `.error` with a ``CheckoutError`` carrying the
    /// gateway's code (`card_declined`, `amount_mismatch`, `session_expired` …) or the SDK's
    /// (`network_error` …), or `.userCancellation` (the customer closed the sheet before authorizing; never
    /// while the payment is in flight). Called exactly once, after the sheet is gone.
    func applePayContext(_ c: ApplePayContext, didCompleteWith status: ApplePayContext.PaymentStatus, error: Error?)
    /// The customer chose or edited a shipping contact (redacted before authorization): answer the sheet's new
    /// summary (items, total, shipping methods) and errors such as `.shippingAddressUnserviceable`. `request` is
    /// the request as the sheet shows it. The session's amount must match the total when the token is paid:
    /// a merchant that changes it creates the session for the new total when asked for the order token. Answer
    /// within the sheet's budget, or the sheet keeps its summary. Optional: the default keeps it.
    func applePayContext(
        _ c: ApplePayContext, didSelectShippingContact contact: Contact, paymentRequest request: PaymentRequest
    ) async -> PaymentRequestUpdate
    /// The customer entered or changed a coupon code (`PaymentRequest.supportsCouponCode`): answer the new
    /// summary (a discount item and its total) or errors such as `.couponCodeInvalid`. As for a shipping
    /// contact, the order session must then be for the total shown. Optional: the default keeps the summary.
    func applePayContext(
        _ c: ApplePayContext, didChangeCouponCode couponCode: String, paymentRequest request: PaymentRequest
    ) async -> PaymentRequestUpdate
}

extension ApplePayContextDelegate {
    /// Keeps the summary.
    public func applePayContext(
        _ c: ApplePayContext, didSelectShippingContact contact: Contact, paymentRequest request: PaymentRequest
    ) async -> PaymentRequestUpdate {
        .unchanged(request)
    }

    /// Keeps the summary.
    public func applePayContext(
        _ c: ApplePayContext, didChangeCouponCode couponCode: String, paymentRequest request: PaymentRequest
    ) async -> PaymentRequestUpdate {
        .unchanged(request)
    }
}

/// The session flow (PayerMax's `PMApplePayContext`): the merchant's server fixes the amount in an order
/// session, the app shows the sheet for it, and the SDK pays the session with the token.
///
/// ```swift
/// var request = ApplePayContext.paymentRequest(merchantIdentifier: session.merchantIdentifier,
///                                              country: "TW", currency: "TWD")
/// request.total = SummaryItem(label: "Orchard Tea", amount: try Money("250.00", currency: .twd))
/// let context = ApplePayContext(paymentRequest: request, delegate: self)
/// await context.present()
/// ```
///
/// The pay request's `Idempotency-Key` is the token's `transactionIdentifier`, so a retry after a lost answer
/// is answered from the gateway's idempotency store and charges once.
// Unchecked: all mutable state is in `state` (a Locked), whose delegate and continuations are not Sendable values.
public final class ApplePayContext: PaymentSheetDelegate, @unchecked Sendable {
    /// The outcome of a payment.
    public enum PaymentStatus: String, Hashable, Sendable {
        /// The gateway charged the session.
        case success
        /// The payment failed; the error says why.
        case error
        /// The customer closed the sheet before authorizing.
        case userCancellation
    }

    /// The request shown.
    public let paymentRequest: PaymentRequest
    /// The sheet shown.
    public let sheet: any PaymentSheet
    /// Where the delegate is called: the main actor unless the context was made with `.background`.
    public let callbacks: DelegateCallbacks

    private enum Phase { case idle, presenting, authorizing, completed }

    private struct State {
        var phase: Phase = .idle
        var delegate: (any ApplePayContextDelegate)?
        var sheetClosed = false
        var outcome: (PaymentStatus, CheckoutError?)?
        var reported = false
        var handler: (@Sendable (PaymentAuthorizationResult) -> Void)?
        var waiters: [CheckedContinuation<Void, Never>] = []
        /// `didCompleteWith` has returned: `present()` may return.
        var delivered = false
        var payment: SessionPayment?
        /// The app asked to close the sheet (``ApplePayContext/abort()``).
        var aborted = false
        /// The request as the sheet shows it, with the accepted updates.
        var shown: PaymentRequest
    }

    private let state: Locked<State>
    private let gatewayOverride: GatewayClient?

    /// A context for `paymentRequest` on `sheet`. The delegate is held until the payment completes.
    /// `gateway` defaults to one for ``OrchardPaySDK/setup(appID:appKey:environment:gatewayURL:)``; `callbacks`
    /// says where the delegate is called (the main actor by default; its async methods are started there, and an
    /// implementation isolated to the main actor runs there).
    public init(
        paymentRequest: PaymentRequest, delegate: some ApplePayContextDelegate, sheet: any PaymentSheet,
        gateway: GatewayClient? = nil, callbacks: DelegateCallbacks = .mainActor
    ) {
        self.paymentRequest = paymentRequest
        self.sheet = sheet
        self.callbacks = callbacks
        self.gatewayOverride = gateway
        state = Locked(State(delegate: delegate, shown: paymentRequest))
    }

    #if canImport(PassKit)
        /// A context shown on PassKit's sheet.
        public convenience init(
            paymentRequest: PaymentRequest, delegate: some ApplePayContextDelegate,
            callbacks: DelegateCallbacks = .mainActor
        ) {
            self.init(
                paymentRequest: paymentRequest, delegate: delegate, sheet: PassKitPaymentSheet(), callbacks: callbacks)
        }
    #endif

    /// The gateway's answer once the session is paid.
    public var sessionPayment: SessionPayment? { state.withLock { $0.payment } }

    /// The request as the sheet shows it now: ``paymentRequest`` with the summaries the delegate answered to a
    /// shipping contact or a coupon code (the total the order session must charge).
    public var shownPaymentRequest: PaymentRequest { state.withLock { $0.shown } }

    /// A payment request for a session (PayerMax's `PMApplePayConfiguration.paymentRequest`): the merchant
    /// identifier, country and currency from the session, 3-D Secure, Visa, Mastercard, American Express, JCB
    /// and UnionPay, and an empty total to fill in. An unknown country or currency leaves that field `nil`,
    /// and ``present()`` then completes with `.error` (`invalid_country_code` / `unknown_currency`).
    public static func paymentRequest(merchantIdentifier: String, country: String, currency: String) -> PaymentRequest {
        let currencyValue = try? Currency(code: currency.uppercased())
        var request = PaymentRequest(
            merchantIdentifier: merchantIdentifier, countryCode: try? CountryCode(country.uppercased()),
            currency: currencyValue, supportedNetworks: [.visa, .masterCard, .amex, .jcb, .chinaUnionPay],
            merchantCapabilities: [.supports3DS],
            total: SummaryItem(label: "", amount: .zero(currencyValue ?? .usd)))
        if currencyValue == nil { request.currency = nil }
        return request
    }

    /// The payment request for a session read with ``GatewayClient/session(orderToken:)``: its merchant
    /// identifier, country, networks and capabilities, and its amount as the total labelled with the merchant's
    /// name.
    public static func paymentRequest(session: OrderSession) -> PaymentRequest {
        var request = paymentRequest(
            merchantIdentifier: session.merchantIdentifier, country: session.country,
            currency: session.amount.currency.code)
        if !session.supportedNetworks.isEmpty { request.supportedNetworks = session.supportedNetworks }
        if !session.merchantCapabilities.isEmpty { request.merchantCapabilities = session.merchantCapabilities }
        request.total = SummaryItem(label: session.merchantName, amount: session.amount)
        return request
    }

    /// Shows the sheet and returns when the payment is over, after
    /// ``ApplePayContextDelegate/applePayContext(_:didCompleteWith:error:)``. A context presents once: a
    /// second call completes nothing and returns at once.
    public func present() async {
        let first = state.withLock { state -> Bool in
            guard state.phase == .idle else { return false }
            state.phase = .presenting
            return true
        }
        guard first else {
            OrchardPaySDK.log("context: present() called again; ignored")
            return
        }
        if let error = Self.problem(of: shownPaymentRequest) {
            finish(.error, error)
        } else if await !sheet.present(shownPaymentRequest, delegate: self) {
            state.withLock { $0.sheetClosed = true }
            finish(
                .error,
                CheckoutError(code: CheckoutError.sheetUnavailable, message: "the Apple Pay sheet could not be shown"))
        }
        await withCheckedContinuation { continuation in
            let done = state.withLock { state -> Bool in
                if state.delivered { return true }
                state.waiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    /// Closes the sheet from code, e.g. when the app's own timer runs out. Before the customer authorizes, the
    /// payment completes with `.error` and code `aborted`, and no authorization arriving after this call is paid.
    /// Once the customer has authorized, the sheet closes and the payment in flight completes with its real
    /// outcome — never `.userCancellation` or `aborted`. Afterwards, or before ``present()``, it does nothing.
    public func abort() {
        sheet.dismissFromCode(flow: "context") {
            state.withLock { state in
                guard state.phase != .idle, state.phase != .completed, !state.sheetClosed else { return false }
                state.aborted = true
                return true
            }
        }
    }

    package static func problem(of request: PaymentRequest) -> CheckoutError? {
        guard request.currency != nil else {
            return CheckoutError(code: "unknown_currency", message: "the payment request has no known currency")
        }
        guard request.countryCode != nil else {
            return CheckoutError(code: "invalid_country_code", message: "the payment request has no known country")
        }
        guard request.merchantIdentifier != nil else {
            return CheckoutError(
                code: "missing_merchant_identifier", message: "the payment request has no merchant identifier")
        }
        let issues = PaymentRequestValidator.validate(request, as: .applePayJS).issues
        guard let first = issues.first else { return nil }
        return CheckoutError(code: first.code, message: first.message, param: first.path, issues: issues)
    }

    // MARK: PaymentSheetDelegate

    /// Keeps the summary (the amount is the session's).
    public func paymentSheet(
        _ sheet: any PaymentSheet, didSelectShippingMethod method: ShippingMethod,
        handler: @escaping @Sendable (PaymentRequestUpdate) -> Void
    ) {
        handler(.unchanged(shownPaymentRequest))
    }

    /// Asks the delegate for the summary at this address, within the sheet's budget; the contact's fields are
    /// checked when the customer authorizes.
    public func paymentSheet(
        _ sheet: any PaymentSheet, didSelectShippingContact contact: Contact,
        handler: @escaping @Sendable (PaymentRequestUpdate) -> Void
    ) {
        answerWithUpdate(sheet, handler: handler) { delegate, request in
            await delegate.applePayContext(self, didSelectShippingContact: contact, paymentRequest: request)
        }
    }

    /// Asks the delegate for the summary with this coupon code, within the sheet's budget.
    public func paymentSheet(
        _ sheet: any PaymentSheet, didChangeCouponCode couponCode: String,
        handler: @escaping @Sendable (PaymentRequestUpdate) -> Void
    ) {
        answerWithUpdate(sheet, handler: handler, couponCode: couponCode) { delegate, request in
            await delegate.applePayContext(self, didChangeCouponCode: couponCode, paymentRequest: request)
        }
    }

    /// Keeps the summary.
    public func paymentSheet(
        _ sheet: any PaymentSheet, didSelectPaymentMethod method: PaymentMethod,
        handler: @escaping @Sendable (PaymentRequestUpdate) -> Void
    ) {
        handler(.unchanged(shownPaymentRequest))
    }

    /// Runs a delegate method that answers a summary within the sheet's budget: a summary the rules accept
    /// becomes the shown request (with `couponCode` when given); one they refuse, or none in time, leaves the
    /// sheet as it is.
    private func answerWithUpdate(
        _ sheet: any PaymentSheet, handler: @escaping @Sendable (PaymentRequestUpdate) -> Void,
        couponCode: String? = nil,
        _ ask: @escaping @Sendable (any ApplePayContextDelegate, PaymentRequest) async -> PaymentRequestUpdate
    ) {
        let (current, box) = state.withLock { ($0.shown, ContextDelegateBox($0.delegate)) }
        let answer = BudgetedAnswer(handler)
        answer.arm(budget: sheet.handlerBudget, timer: sheet.handlerTimer) { .unchanged(current) }
        Task {
            let update = await callbacks.run { () async -> PaymentRequestUpdate in
                guard let delegate = box.delegate else { return .unchanged(current) }
                return await ask(delegate, current)
            }
            var shown = current
            shown.lineItems = update.lineItems
            shown.total = update.total
            if let methods = update.shippingMethods { shown.shippingMethods = methods }
            if let couponCode { shown.couponCode = couponCode }
            if let problem = Self.problem(of: shown) {
                OrchardPaySDK.log("context: the summary the delegate answered is invalid (\(problem.code)); kept")
                answer.answer(.unchanged(current))
                return
            }
            answer.answer(update) { self.state.withLock { $0.shown = shown } }
        }
    }

    /// Checks the contact, asks the delegate for the order token and pays the session.
    public func paymentSheet(
        _ sheet: any PaymentSheet, didAuthorizePayment payment: Payment,
        handler: @escaping @Sendable (PaymentAuthorizationResult) -> Void
    ) {
        let refusal = state.withLock { state -> [PaymentSheetError]? in
            guard state.phase == .presenting, !state.aborted else { return [] }
            if let problem = (payment.shippingContact ?? Contact()).problem(
                required: paymentRequest.requiredShippingContactFields)
            {
                return [problem]
            }
            if let problem = (payment.billingContact ?? Contact()).problem(
                required: paymentRequest.requiredBillingContactFields, as: .billingContactInvalid)
            {
                return [problem]
            }
            state.phase = .authorizing
            state.handler = handler
            return nil
        }
        if let refusal {
            handler(PaymentAuthorizationResult(status: .failure, errors: refusal))
            return
        }
        OrchardPaySDK.log("context: authorized; asking for the order token")
        Task { await pay(payment) }
    }

    /// The sheet is gone: a cancel before authorizing; otherwise the outcome is reported (now or when the
    /// payment in flight ends).
    public func paymentSheetDidFinish(_ sheet: any PaymentSheet) {
        let action = state.withLock { state -> (PaymentStatus, CheckoutError?)?? in
            state.sheetClosed = true
            switch state.phase {
            case .idle, .presenting:
                guard state.aborted else { return .some((.userCancellation, nil)) }
                return .some(
                    (
                        .error,
                        CheckoutError(
                            code: CheckoutError.aborted,
                            message: "the app dismissed the sheet before the customer authorized")
                    ))
            case .authorizing: return .none
            case .completed: return .some(state.outcome)
            }
        }
        switch action {
        case .none:
            OrchardPaySDK.log("context: the sheet closed while the payment is in flight; waiting for its outcome")
        case .some(.some(let (status, error))):
            finish(status, error)
        case .some(.none):
            break
        }
    }

    // MARK: Flow

    private func pay(_ payment: Payment) async {
        let box = state.withLock { ContextDelegateBox($0.delegate) }
        let orderToken: String
        do {
            let asked = await callbacks.run { () async -> Result<String, any Error> in
                guard let delegate = box.delegate else {
                    return .failure(CheckoutError(code: CheckoutError.orderTokenFailed, message: "no delegate"))
                }
                do {
                    return .success(
                        try await delegate.applePayContext(
                            self, didCreatePaymentMethod: payment.token.paymentMethod, payment: payment))
                } catch {
                    return .failure(error)
                }
            }
            orderToken = try asked.get()
        } catch {
            return completeAuthorization(
                .error,
                CheckoutError(
                    code: CheckoutError.orderTokenFailed,
                    message: "the order token handler failed: \(String(describing: error))"))
        }
        do throws(CheckoutError) {
            let gateway = try OrchardPaySDK.gatewayClient(gatewayOverride)
            let paid = try await gateway.paySession(orderToken: orderToken, token: payment.token)
            state.withLock { $0.payment = paid }
            OrchardPaySDK.log("context: the session is paid (\(paid.status)\(paid.wasReplayed ? ", replayed" : ""))")
            if ["captured", "authorized"].contains(paid.status) {
                completeAuthorization(.success, nil)
            } else {
                completeAuthorization(
                    .error,
                    CheckoutError(
                        code: CheckoutError.paymentOutcomeUnknown,
                        message: "the payment \(paid.paymentID) is \(paid.status); its outcome arrives by webhook"))
            }
        } catch {
            OrchardPaySDK.log("context: paying failed: \(error.code)")
            completeAuthorization(.error, error)
        }
    }

    private func completeAuthorization(_ status: PaymentStatus, _ error: CheckoutError?) {
        let (handler, closed) = state.withLock { state -> ((@Sendable (PaymentAuthorizationResult) -> Void)?, Bool) in
            state.phase = .completed
            state.outcome = (status, error)
            defer { state.handler = nil }
            return (state.handler, state.sheetClosed)
        }
        handler?(PaymentAuthorizationResult(status: status == .success ? .success : .failure))
        if closed { finish(status, error) }
    }

    /// Reports the outcome once and wakes `present()`.
    private func finish(_ status: PaymentStatus, _ error: CheckoutError?) {
        let taken = state.withLock { state -> (any ApplePayContextDelegate)?? in
            guard !state.reported else { return nil }
            state.reported = true
            state.phase = .completed
            defer { state.delegate = nil }
            return .some(state.delegate)
        }
        guard let delegate = taken else { return }
        OrchardPaySDK.log("context: completed with \(status.rawValue)\(error.map { " (\($0.code))" } ?? "")")
        let box = ContextDelegateBox(delegate)
        callbacks.run {
            box.delegate?.applePayContext(self, didCompleteWith: status, error: error)
            let waiters = self.state.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.delivered = true
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume() }
        }
    }
}

/// Carries the context's delegate to the task that calls it.
// Unchecked: the delegate protocol is not Sendable; the box only carries the reference to the task that calls it.
private struct ContextDelegateBox: @unchecked Sendable {
    let delegate: (any ApplePayContextDelegate)?
    init(_ delegate: (any ApplePayContextDelegate)?) { self.delegate = delegate }
}
