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
    public var cryptogram: SecureBytes?
    public var eci: String?
    /// Minor units.
    public var amount: Int64
    /// ISO 4217 alphabetic code.
    public var currency: String
    /// The gateway's payment id: the processor's key for queries.
    public var merchantReference: String
    public var merchantID: String

    public init(
        accountNumber: SecureBytes, expirationDate: String, cryptogram: SecureBytes?, eci: String?, amount: Int64,
        currency: String, merchantReference: String, merchantID: String
    ) {
        self.accountNumber = accountNumber
        self.expirationDate = expirationDate
        self.cryptogram = cryptogram
        self.eci = eci
        self.amount = amount
        self.currency = currency
        self.merchantReference = merchantReference
        self.merchantID = merchantID
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
                "merchantID": merchantID,
            ])
    }
}

/// An approved authorization.
public struct ProcessorApproval: Sendable, Hashable, Codable {
    /// The processor's reference, used for capture, void and refund.
    public var reference: String
    public var authCode: String

    public init(reference: String, authCode: String) {
        self.reference = reference
        self.authCode = authCode
    }
}

/// The typed outcome of an authorization.
public enum AuthorizationOutcome: Sendable, Hashable {
    case approved(ProcessorApproval)
    /// The issuer or acquirer declined, with a code (`do_not_honor`, `insufficient_funds` …).
    case declined(code: String)
    /// No answer in time: the authorization may or may not have happened.
    case timeout
    /// An answer that does not say whether the authorization happened.
    case unknown
}

/// The typed outcome of a capture, void or refund.
public enum ProcessorOperationOutcome: Sendable, Hashable {
    case succeeded
    case declined(code: String)
    case timeout
    case unknown
}

/// What a query by merchant reference says about an authorization.
public enum ProcessorQueryResult: Sendable, Hashable {
    case approved(ProcessorApproval)
    case declined(code: String)
    /// The issuer has not answered yet.
    case pending
    /// The processor never received the authorization.
    case notFound
}

/// An acquirer or payment processor. Capture, void and refund carry an operation id: the processor
/// must answer a repeated id with the first outcome, so retries after a timeout or crash are safe.
public protocol Processor: Sendable {
    /// The name recorded on payments (`sandbox` …).
    var name: String { get }
    func authorize(_ request: AuthorizationRequest) -> AuthorizationOutcome
    func capture(reference: String, amount: Int64, currency: String, operationID: String) -> ProcessorOperationOutcome
    func void(reference: String, operationID: String) -> ProcessorOperationOutcome
    func refund(reference: String, amount: Int64, currency: String, operationID: String) -> ProcessorOperationOutcome
    /// What the processor knows about the authorization for `merchantReference`.
    func query(merchantReference: String) -> ProcessorQueryResult
}
