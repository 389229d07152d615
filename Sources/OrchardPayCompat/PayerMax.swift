#if canImport(PassKit)
    @preconcurrency import PassKit
#else
    @preconcurrency import PassKitShim
#endif
import Foundation
import OrchardBase
import OrchardPay

// PayerMax's iOS names (`import PayerMaxApplePay`) over OrchardPay's session flow: `PMApplePayContext` is an
// ``ApplePayContextDelegate`` that relays ``ApplePayContext``'s callbacks under PayerMax's names, and the
// configuration builds ApplePayContext's request. No payment rule lives here (docs/ios.md, "Swift names").

/// PayerMax's client set-up (`PMAPIClient`): the publishable key is OrchardPay's client credentials.
public enum PMAPIClient {
    private static let state = Locked<(key: String?, environment: OrchardPaySDK.Environment)>((nil, .sandbox))

    /// The publishable key, `"<app id>:<app key>"` (`app_…:…`, the merchant's client credentials): setting it sets
    /// OrchardPay up (``OrchardPaySDK/setup(appID:appKey:environment:gatewayURL:)``) for ``environment`` and
    /// ``OrchardCompat/gatewayURL``. A key without `:` sets nothing up, so payments fail with `not_set_up`.
    public static var defaultPublishableKey: String? {
        get { state.withLock { $0.key } }
        set {
            state.withLock { $0.key = newValue }
            apply()
        }
    }

    /// The environment the key is for (default the sandbox); setting it sets OrchardPay up again.
    public static var environment: OrchardPaySDK.Environment {
        get { state.withLock { $0.environment } }
        set {
            state.withLock { $0.environment = newValue }
            apply()
        }
    }

    private static func apply() {
        let (key, environment) = state.withLock { ($0.key, $0.environment) }
        guard let key, let colon = key.firstIndex(of: ":") else { return }
        OrchardCompat.setup(
            appID: String(key[..<colon]), appKey: String(key[key.index(after: colon)...]), environment: environment)
    }
}

/// PayerMax's configuration (`PMApplePayConfiguration`).
public enum PMApplePayConfiguration {
    /// Whether the device has Apple Pay and a card of the networks ``paymentRequest(withMerchantIdentifier:country:currency:)``
    /// accepts (``OrchardPaySDK/canMakePayments(usingNetworks:)``).
    public static func canMakePayments() -> Bool {
        OrchardPaySDK.canMakePayments(
            usingNetworks: ApplePayContext.paymentRequest(merchantIdentifier: "", country: "", currency: "").supportedNetworks)
    }

    /// PassKit's request for a session (``ApplePayContext/paymentRequest(merchantIdentifier:country:currency:)``):
    /// 3-D Secure, Visa, Mastercard, American Express, JCB and UnionPay. Set its `paymentSummaryItems` (the last is
    /// the total: the session's amount). The country and currency stay as given, so an unknown one makes
    /// `PMApplePayContext(paymentRequest:delegate:)` nil.
    public static func paymentRequest(
        withMerchantIdentifier merchantIdentifier: String, country: String, currency: String
    ) -> PKPaymentRequest {
        let request = PassKitMapping.passKitRequest(
            ApplePayContext.paymentRequest(merchantIdentifier: merchantIdentifier, country: country, currency: currency))
        request.countryCode = country
        request.currencyCode = currency
        return request
    }
}

/// The card the customer chose, as PayerMax's delegate receives it (OrchardPay's ``PaymentMethod``).
public typealias PMPaymentMethod = PaymentMethod

/// PayerMax's delegate (`PMApplePayContextDelegate`), called on the main actor.
@MainActor
public protocol PMApplePayContextDelegate: AnyObject {
    /// The customer authorized: return the order token (`ot_…`) your server got from `POST /v1/sessions`
    /// (PayerMax's `/applyApplePaySession`); the SDK then pays the session with the token. Throwing completes the
    /// payment with `.error` (`order_token_failed`).
    func applePayContext(
        _ context: PMApplePayContext, didCreatePaymentMethod paymentMethod: PMPaymentMethod, paymentInformation: PKPayment
    ) async throws -> String
    /// The payment is over: `.success`, `.error` with a ``CheckoutError``, or `.userCancellation`. Exactly once.
    func applePayContext(_ context: PMApplePayContext, didCompleteWith status: PMApplePayContext.PaymentStatus, error: Error?)
}

/// PayerMax's context (`PMApplePayContext`): an ``ApplePayContext`` for PassKit's request, relaying its callbacks
/// to the ``PMApplePayContextDelegate``. It keeps itself and its delegate until the payment completes.
// Unchecked: `delegate` is written in init only and read on the main actor (where ApplePayContext, made with
// `.mainActor` callbacks, calls back); `context` is set once in init.
public final class PMApplePayContext: ApplePayContextDelegate, @unchecked Sendable {
    /// The outcome (``ApplePayContext/PaymentStatus``): `.success`, `.error`, `.userCancellation`.
    public typealias PaymentStatus = ApplePayContext.PaymentStatus

    /// The OrchardPay context.
    public private(set) var context: ApplePayContext!
    private let delegate: any PMApplePayContextDelegate

    /// A context for PassKit's request; nil when the request is not one OrchardPay can show (no merchant
    /// identifier or summary item, an unknown country or currency, an amount the currency cannot hold, a payment
    /// request rule: ``ApplePayContext``'s checks), when OrchardPay is not set up, or when there is no sheet
    /// (``OrchardCompat/makePaymentSheet``).
    public init?(paymentRequest: PKPaymentRequest, delegate: any PMApplePayContextDelegate) {
        guard OrchardPaySDK.configuration != nil, let request = FromPassKit.paymentRequest(paymentRequest),
            ApplePayContext.problem(of: request) == nil, let sheet = OrchardCompat.paymentSheet()
        else { return nil }
        self.delegate = delegate
        context = ApplePayContext(paymentRequest: request, delegate: self, sheet: sheet)
    }

    /// Shows the sheet (``ApplePayContext/present()``) and returns at once; the delegate hears the outcome. The
    /// sheet is PassKit's controller, which needs no view controller: `viewController` is taken for PayerMax's
    /// shape.
    public func presentApplePay(on viewController: AnyObject) {
        Task { await self.context.present() }
    }

    /// Relays `didCreatePaymentMethod` with PassKit's payment.
    public func applePayContext(
        _ c: ApplePayContext, didCreatePaymentMethod m: PaymentMethod, payment: Payment
    ) async throws -> String {
        try await relayCreatePaymentMethod(m, PassKitObjects.payment(payment))
    }

    @MainActor
    private func relayCreatePaymentMethod(_ method: PaymentMethod, _ payment: PKPayment) async throws -> String {
        try await delegate.applePayContext(self, didCreatePaymentMethod: method, paymentInformation: payment)
    }

    /// Relays `didCompleteWith`.
    public func applePayContext(_ c: ApplePayContext, didCompleteWith status: ApplePayContext.PaymentStatus, error: Error?) {
        MainActor.assumeIsolated { delegate.applePayContext(self, didCompleteWith: status, error: error) }
    }
}
