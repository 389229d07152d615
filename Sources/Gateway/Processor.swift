import Foundation
import OrchardCrypto

/// What an authorization sends to the processor. The account number and cryptogram are secrets in
/// ``SecureBytes``; the gateway erases them once the call returns. Its description, debug description and
/// mirror show neither them nor the ECI or expiry.
public struct AuthorizationRequest: Sendable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// The device account number (DPAN), ASCII digits.
    public var accountNumber: SecureBytes
    /// `YYMMDD`.
    public var expirationDate: String
    /// The online payment cryptogram of a `3DSecure` token (its bytes as the token gives them, base64 text); nil
    /// for a token that has none (an `EMV` token).
    public var cryptogram: SecureBytes?
    public var eci: String?
    /// Minor units.
    public var amount: Int64
    /// ISO 4217 alphabetic code.
    public var currency: String
    /// The gateway's payment id: the processor's key for queries.
    public var merchantReference: String
    public var merchantID: String
    /// The gateway's id of this authorization (``GatewayService/authorizationOperationID(_:)``): the idempotency key
    /// the processor gets, the same on every resend of it, so the processor answers a resend with its first outcome.
    public var operationID: String
    /// Whether the payment is captured at once (capture mode now). A processor that captures with the authorization
    /// does so and says how in ``ProcessorApproval/capture``; one that does not ignores it, and the gateway captures
    /// right after the approval.
    public var captureNow: Bool

    public init(
        accountNumber: SecureBytes, expirationDate: String, cryptogram: SecureBytes?, eci: String?, amount: Int64,
        currency: String, merchantReference: String, merchantID: String, operationID: String? = nil,
        captureNow: Bool = false
    ) {
        self.accountNumber = accountNumber
        self.expirationDate = expirationDate
        self.cryptogram = cryptogram
        self.eci = eci
        self.amount = amount
        self.currency = currency
        self.merchantReference = merchantReference
        self.merchantID = merchantID
        self.operationID = operationID ?? GatewayService.authorizationOperationID(merchantReference)
        self.captureNow = captureNow
    }

    /// The amount, currency and references; no card data.
    public var description: String {
        "AuthorizationRequest(\(merchantReference) \(amount) \(currency) merchant \(merchantID))"
    }

    /// Same as ``description``.
    public var debugDescription: String { description }

    /// Only the amount, currency and references.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "amount": amount, "currency": currency, "merchantReference": merchantReference,
                "merchantID": merchantID, "operationID": operationID,
            ])
    }
}

/// What became of a capture asked together with the authorization (``AuthorizationRequest/captureNow``).
public enum CaptureWithAuthorization: String, Sendable, Hashable, Codable {
    /// The processor captured the amount with the authorization.
    case captured
    /// The processor accepted the capture; its outcome follows (a notification, or a query).
    case accepted
}

/// An approved authorization.
public struct ProcessorApproval: Sendable, Hashable, Codable {
    /// The processor's reference, used for capture, void and refund.
    public var reference: String
    public var authCode: String
    /// When the processor captured with the authorization (or accepted to): how. Nil when it did not, and the
    /// gateway captures the payment itself when its capture mode says now.
    public var capture: CaptureWithAuthorization?

    public init(reference: String, authCode: String, capture: CaptureWithAuthorization? = nil) {
        self.reference = reference
        self.authCode = authCode
        self.capture = capture
    }
}

/// The typed outcome of an authorization.
public enum AuthorizationOutcome: Sendable, Hashable {
    case approved(ProcessorApproval)
    /// The issuer or acquirer declined, with Orchard's code (`do_not_honor`, `insufficient_funds` …) and the
    /// processor's own code as it answered it (kept on the payment as `processor_code`).
    case declined(code: String, processorCode: String? = nil)
    /// No answer in time: the authorization may or may not have happened.
    case timeout
    /// An answer that does not say whether the authorization happened.
    case unknown
}

/// The typed outcome of a capture, void or refund.
public enum ProcessorOperationOutcome: Sendable, Hashable {
    case succeeded
    /// The processor took the operation and answers its outcome later (a notification, or a query): the payment
    /// waits in `capture_pending`, `void_pending` or `refund_pending`. `reference` is the processor's for the
    /// operation, when it gave one.
    case accepted(reference: String?)
    case declined(code: String)
    case timeout
    case unknown
}

/// The operations a processor may answer later (``ProcessorOperationOutcome/accepted(reference:)``).
public enum ProcessorOperationKind: String, Sendable, Hashable, Codable {
    case capture
    case void
    case refund
}

/// What a query by merchant reference says about an authorization.
public enum ProcessorQueryResult: Sendable, Hashable {
    case approved(ProcessorApproval)
    case declined(code: String, processorCode: String? = nil)
    /// The issuer has not answered yet.
    case pending
    /// The processor never received the authorization.
    case notFound
    /// The processor has no lookup by merchant reference: only a resend of the authorization (with its
    /// idempotency key) tells (``AuthorizationRecovery/resend``).
    case unsupported
}

/// How the gateway learns the outcome of an authorization whose answer was lost (a timeout, a crash, an answer
/// it could not read).
public enum AuthorizationRecovery: Sendable, Hashable {
    /// ``Processor/query(merchantReference:)`` tells; an authorization it does not know was never received. The card
    /// data is dropped when the authorization is sent.
    case query
    /// The same request with the same idempotency key (``AuthorizationRequest/operationID``) is answered with the
    /// first outcome, or processed now when it never arrived: the gateway keeps the card data sealed until the
    /// outcome is known, queries first when the processor can, and otherwise (or when the query finds nothing)
    /// sends the authorization again.
    case resend
}

/// An acquirer or payment processor. Every call carries the gateway's operation id as its idempotency key: the
/// processor must answer a repeated id with the first outcome, so retries after a timeout or crash are safe.
public protocol Processor: Sendable {
    /// The name recorded on payments (`sandbox` …).
    var name: String { get }
    /// How an authorization whose answer was lost is settled (``AuthorizationRecovery/query`` unless it says).
    var authorizationRecovery: AuthorizationRecovery { get }
    /// Refuses, before anything is sent, an authorization the processor cannot take (an `EMV` token, a currency or
    /// amount it cannot express …), with a stable code (`payment_data_type_unsupported` …). By default it takes all.
    func check(_ request: AuthorizationRequest) throws(GatewayError)
    func authorize(_ request: AuthorizationRequest) -> AuthorizationOutcome
    func capture(reference: String, amount: Int64, currency: String, operationID: String) -> ProcessorOperationOutcome
    func void(reference: String, operationID: String) -> ProcessorOperationOutcome
    func refund(reference: String, amount: Int64, currency: String, operationID: String) -> ProcessorOperationOutcome
    /// What the processor knows about the authorization for `merchantReference`.
    func query(merchantReference: String) -> ProcessorQueryResult
    /// What became of an operation the processor accepted (``ProcessorOperationOutcome/accepted(reference:)``):
    /// `reference` is the authorization's, `operationID` the operation's id. By default the processor cannot tell
    /// (`accepted`): its notification settles it.
    func operationStatus(
        _ kind: ProcessorOperationKind, reference: String, operationID: String, amount: Int64
    ) -> ProcessorOperationOutcome
}

extension Processor {
    public var authorizationRecovery: AuthorizationRecovery { .query }

    public func check(_ request: AuthorizationRequest) throws(GatewayError) {}

    public func operationStatus(
        _ kind: ProcessorOperationKind, reference: String, operationID: String, amount: Int64
    ) -> ProcessorOperationOutcome {
        .accepted(reference: nil)
    }
}
