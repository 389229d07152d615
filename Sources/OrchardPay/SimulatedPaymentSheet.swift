import OrchardBase
import Foundation

/// A scripted payment sheet for tests and for development without a device: it plays ``Step``s as a customer
/// would, and at ``Step/authorize`` asks the gateway's sandbox wallet (`POST /v1/sandbox/wallet/tokens`) for a
/// real-format token of the total it shows, paid with ``card``. Sandbox only.
///
/// ```swift
/// let sheet = SimulatedPaymentSheet(steps: [.selectPaymentMethod(.debit), .authorize], card: .visaDebit)
/// let checkout = try ApplePayCheckout(merchant: m, consumer: c, cart: cart, delegate: self, sheet: sheet)
/// ```
///
/// Like PassKit's sheet it waits for every selection's update before the next step, shows the total as
/// `PaymentRequest.amountForApple`, closes after an authorization result without field errors, stays open
/// after one with errors (the next steps may correct and authorize again), and closes when the steps run out.
/// ``events`` records what it showed.
// Unchecked: its settings (`billingContact`, `handlerBudget`, `handlerTimer`) are set before presenting; what presenting changes is in `state` (a Locked).
public final class SimulatedPaymentSheet: PaymentSheet, @unchecked Sendable {
    /// What the simulated customer does.
    public enum Step: Hashable, Sendable {
        /// Chooses the shipping method with this identifier.
        case selectShippingMethod(String)
        /// Enters a shipping contact.
        case selectShippingContact(Contact)
        /// Chooses a card of this type (of ``SimulatedPaymentSheet/card``'s network).
        case selectPaymentMethod(PaymentMethodType)
        /// Enters a coupon code (the request should `PaymentRequest.supportsCouponCode`).
        case enterCouponCode(String)
        /// Authorizes with Face ID: a sandbox wallet token for the shown total.
        case authorize
        /// Closes the sheet.
        case cancel
        /// Closes the sheet while the authorization is still being handled (after ``authorize``).
        case cancelWhilePending
        /// Does nothing until the app dismisses the sheet from code (``SimulatedPaymentSheet/dismiss()``): a
        /// customer looking at the sheet.
        case idle
    }

    /// What the sheet showed and did, in order.
    public enum Event: Hashable, Sendable {
        /// The sheet opened showing this total (`PaymentRequest.amountForApple`).
        case presented(total: Money)
        /// A selection was answered; the sheet now shows this total.
        case updated(PaymentRequestUpdate, shownTotal: Money)
        /// The customer authorized a token of this amount.
        case authorized(amount: Money, transactionIdentifier: String)
        /// The authorization was answered.
        case authorizationResult(PaymentAuthorizationResult)
        /// A step could not be played (an unknown shipping method identifier …).
        case skipped(Step, reason: String)
        /// The sandbox wallet refused or could not be reached; the sheet closed.
        case walletFailed(CheckoutError)
        /// The app dismissed the sheet from code.
        case dismissed
        /// The sheet closed.
        case finished
    }

    /// Whether a device would offer Apple Pay: a fixed answer for ``OrchardPaySDK/sheetProvider``.
    public struct Availability: PaymentSheetProvider {
        /// Whether Apple Pay is supported.
        public var supported: Bool
        /// The networks of the cards in the simulated wallet.
        public var networks: [PaymentNetwork]
        /// The kinds of those cards (credit, debit …).
        public var cardTypes: [PaymentMethodType]
        /// Called when the "Set up Apple Pay" action opens the (simulated) Wallet.
        public var onOpenPaymentSetup: (@Sendable () -> Void)?
        /// A wallet holding cards of `networks`, of the kinds `cardTypes`.
        public init(
            supported: Bool = true, networks: [PaymentNetwork] = [.visa, .masterCard, .jcb, .amex],
            cardTypes: [PaymentMethodType] = [.credit, .debit]
        ) {
            self.supported = supported
            self.networks = networks
            self.cardTypes = cardTypes
        }
        /// ``supported``.
        public func canMakePayments() -> Bool { supported }
        /// Whether the wallet holds a card of one of `networks`.
        public func canMakePayments(usingNetworks networks: [PaymentNetwork]) -> Bool {
            supported && networks.contains(where: self.networks.contains)
        }
        /// Whether the wallet holds a card of one of `networks` whose kind `capabilities` accept: with
        /// `supportsCredit` or `supportsDebit`, a credit or debit card (PassKit's rule).
        public func canMakePayments(usingNetworks networks: [PaymentNetwork], capabilities: [MerchantCapability]) -> Bool {
            let credit = capabilities.contains(.supportsCredit)
            let debit = capabilities.contains(.supportsDebit)
            let kinds = !credit && !debit || cardTypes.contains { ($0 == .credit && credit) || ($0 == .debit && debit) }
            return canMakePayments(usingNetworks: networks) && kinds
        }
        /// Calls ``onOpenPaymentSetup``; false without Apple Pay.
        @MainActor
        public func openPaymentSetup() -> Bool {
            guard supported else { return false }
            onOpenPaymentSetup?()
            return true
        }
    }

    /// The steps played.
    public let steps: [Step]
    /// The sandbox card the customer pays with.
    public let card: SandboxCard
    /// The billing contact the customer's card carries.
    public var billingContact: Contact?
    /// How long a selection may take to be answered, in seconds (default 30).
    public var handlerBudget: TimeInterval = 30
    /// What measures the budget (default: the system clock).
    public var handlerTimer: any HandlerTimer = SystemHandlerTimer()

    private struct State {
        var presented = false
        var events: [Event] = []
        var done = false
        var lateResultPending = false
        var waiters: [CheckedContinuation<Void, Never>] = []
        var request: PaymentRequest?
        var delegate: (any PaymentSheetDelegate)?
        /// The sheet is gone: its delegate got `paymentSheetDidFinish`.
        var closed = false
        /// An authorization is being handled (its result is awaited).
        var authorizing = false
        /// The ``Step/idle`` step waiting for the app's dismiss.
        var idle: CheckedContinuation<Void, Never>?
    }

    private let state = Locked(State())
    private let wallet: GatewayClient?

    /// A sheet playing `steps`, paying with `card`. `wallet` is the gateway to ask for tokens (default: the
    /// one of ``OrchardPaySDK/setup(appID:appKey:environment:gatewayURL:)``).
    public init(steps: [Step], card: SandboxCard = .visaCredit, wallet: GatewayClient? = nil) {
        self.steps = steps
        self.card = card
        self.wallet = wallet
    }

    /// What the sheet showed and did so far.
    public var events: [Event] { state.withLock { $0.events } }

    /// The payment request as the sheet shows it now (with the updates applied).
    public var shownRequest: PaymentRequest? { state.withLock { $0.request } }

    /// Returns when the sheet has closed and any authorization answered after closing has arrived.
    public func waitUntilDone() async {
        await withCheckedContinuation { continuation in
            let done = state.withLock { state -> Bool in
                if state.done && !state.lateResultPending { return true }
                state.waiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    /// Starts playing the steps; false when this sheet was already presented.
    public func present(_ request: PaymentRequest, delegate: any PaymentSheetDelegate) async -> Bool {
        let first = state.withLock { state -> Bool in
            guard !state.presented else { return false }
            state.presented = true
            state.request = request
            state.delegate = delegate
            return true
        }
        guard first else { return false }
        record(.presented(total: request.amountForApple))
        Task { await play(request, delegate: delegate) }
        return true
    }

    /// Closes the sheet from code (an app's `dismiss`): the delegate gets `paymentSheetDidFinish` now, the steps
    /// stop, and an authorization being handled is answered to the closed sheet (``waitUntilDone()`` waits for
    /// it). Nothing happens once the sheet is gone.
    public func dismiss() {
        let taken = state.withLock { state -> ((any PaymentSheetDelegate), CheckedContinuation<Void, Never>?)? in
            guard state.presented, !state.closed, let delegate = state.delegate else { return nil }
            if state.authorizing { state.lateResultPending = true }
            defer { state.idle = nil }
            return (delegate, state.idle)
        }
        guard let (delegate, idle) = taken else { return }
        record(.dismissed)
        finish(delegate)
        idle?.resume()
    }

    private var isClosed: Bool { state.withLock { $0.closed } }

    private func play(_ initial: PaymentRequest, delegate: any PaymentSheetDelegate) async {
        var request = initial
        var contact: Contact?
        var index = 0
        while index < steps.count, !isClosed {
            let step = steps[index]
            index += 1
            switch step {
            case .selectShippingMethod(let identifier):
                guard let method = request.shippingMethods.first(where: { $0.identifier == identifier }) else {
                    record(.skipped(step, reason: "no shipping method '\(identifier)'"))
                    continue
                }
                request.shippingMethods = request.shippingMethods.map { other in
                    var other = other
                    other.selected = other.identifier == identifier ? true : nil
                    return other
                }
                let update = await withCheckedContinuation { continuation in
                    delegate.paymentSheet(self, didSelectShippingMethod: method) { continuation.resume(returning: $0) }
                }
                if isClosed { return }
                apply(update, to: &request)
            case .selectShippingContact(let selected):
                contact = selected
                let update = await withCheckedContinuation { continuation in
                    delegate.paymentSheet(self, didSelectShippingContact: selected) {
                        continuation.resume(returning: $0)
                    }
                }
                if isClosed { return }
                apply(update, to: &request)
            case .selectPaymentMethod(let type):
                let method = PaymentMethod(type: type, network: card.network, displayName: card.network.rawValue)
                let update = await withCheckedContinuation { continuation in
                    delegate.paymentSheet(self, didSelectPaymentMethod: method) { continuation.resume(returning: $0) }
                }
                if isClosed { return }
                apply(update, to: &request)
            case .enterCouponCode(let code):
                guard request.supportsCouponCode == true else {
                    record(.skipped(step, reason: "the request offers no coupon code field"))
                    continue
                }
                request.couponCode = code
                let update = await withCheckedContinuation { continuation in
                    delegate.paymentSheet(self, didChangeCouponCode: code) { continuation.resume(returning: $0) }
                }
                if isClosed { return }
                apply(update, to: &request)
            case .authorize:
                let amount = request.amountForApple
                let token: PaymentToken
                do throws(CheckoutError) {
                    token = try await OrchardPaySDK.gatewayClient(wallet).sandboxWalletToken(amount: amount, card: card)
                } catch {
                    record(.walletFailed(error))
                    return finish(delegate)
                }
                record(.authorized(amount: amount, transactionIdentifier: token.transactionIdentifier))
                let payment = Payment(
                    token: token, billingContact: billingContact, shippingContact: contact,
                    shippingMethod: request.shippingMethods.first { $0.selected == true })
                if index < steps.count, steps[index] == .cancelWhilePending {
                    state.withLock { $0.lateResultPending = true }
                    delegate.paymentSheet(self, didAuthorizePayment: payment) { result in
                        self.record(.authorizationResult(result))
                        self.state.withLock { $0.lateResultPending = false }
                        self.wakeIfDone()
                    }
                    return finish(delegate)
                }
                state.withLock { $0.authorizing = true }
                let result = await withCheckedContinuation { continuation in
                    delegate.paymentSheet(self, didAuthorizePayment: payment) { continuation.resume(returning: $0) }
                }
                record(.authorizationResult(result))
                let closed = state.withLock { state -> Bool in
                    state.authorizing = false
                    state.lateResultPending = false
                    return state.closed
                }
                if closed { return wakeIfDone() }
                if result.status == .success || result.errors.isEmpty { return finish(delegate) }
            case .cancel, .cancelWhilePending:
                return finish(delegate)
            case .idle:
                await withCheckedContinuation { continuation in
                    let closed = state.withLock { state -> Bool in
                        if !state.closed { state.idle = continuation }
                        return state.closed
                    }
                    if closed { continuation.resume() }
                }
                return
            }
        }
        finish(delegate)
    }

    private func apply(_ update: PaymentRequestUpdate, to request: inout PaymentRequest) {
        request.lineItems = update.lineItems
        request.total = update.total
        if let methods = update.shippingMethods { request.shippingMethods = methods }
        let shown = request
        state.withLock { $0.request = shown }
        record(.updated(update, shownTotal: request.amountForApple))
    }

    private func record(_ event: Event) { state.withLock { $0.events.append(event) } }

    /// Closes the sheet once: records it and tells the delegate.
    private func finish(_ delegate: any PaymentSheetDelegate) {
        let first = state.withLock { state -> Bool in
            defer { state.closed = true }
            return !state.closed
        }
        guard first else { return }
        record(.finished)
        delegate.paymentSheetDidFinish(self)
        state.withLock { $0.done = true }
        wakeIfDone()
    }

    private func wakeIfDone() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard state.done, !state.lateResultPending else { return [] }
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

extension SandboxCard {
    /// The card's network.
    public var network: PaymentNetwork {
        switch self {
        case .visaCredit, .visaDebit, .declined: .visa
        case .mastercard: .masterCard
        case .jcb: .jcb
        case .amex: .amex
        }
    }

    /// The card's type.
    public var type: PaymentMethodType { self == .visaDebit ? .debit : .credit }
}
