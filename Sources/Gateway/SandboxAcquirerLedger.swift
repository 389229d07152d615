import Foundation

/// An authorization as the sandbox acquirer records it (durably, so audits can count authorizations).
public struct SandboxAuthorization: Sendable, Hashable, Codable {
    /// Where the sandbox authorization stands.
    public enum Status: String, Sendable, Codable {
        case approved
        case declined
        /// The issuer "timed out": a query after the resolution delay reports it approved.
        case pending
    }
    public var reference: String
    public var merchantReference: String
    public var merchantID: String
    public var amount: Int64
    public var currency: String
    public var lastFour: String
    public var status: Status
    public var declineCode: String?
    public var authCode: String
    public var capturedAmount: Int64
    public var refundedAmount: Int64
    public var voided: Bool
    public var createdAt: Date
    public var resolvesAt: Date?

    public init(
        reference: String, merchantReference: String, merchantID: String, amount: Int64, currency: String,
        lastFour: String, status: Status, declineCode: String?, authCode: String, capturedAmount: Int64,
        refundedAmount: Int64, voided: Bool, createdAt: Date, resolvesAt: Date?
    ) {
        self.reference = reference
        self.merchantReference = merchantReference
        self.merchantID = merchantID
        self.amount = amount
        self.currency = currency
        self.lastFour = lastFour
        self.status = status
        self.declineCode = declineCode
        self.authCode = authCode
        self.capturedAmount = capturedAmount
        self.refundedAmount = refundedAmount
        self.voided = voided
        self.createdAt = createdAt
        self.resolvesAt = resolvesAt
    }
}

/// A capture, void or refund as the sandbox acquirer records it, keyed by the gateway's operation id.
public struct SandboxOperation: Sendable, Hashable, Codable {
    public var id: String
    public var reference: String
    /// `capture`, `void` or `refund`.
    public var kind: String
    public var amount: Int64
    public var succeeded: Bool
    public var declineCode: String?
    public var createdAt: Date

    public init(
        id: String, reference: String, kind: String, amount: Int64, succeeded: Bool, declineCode: String?,
        createdAt: Date
    ) {
        self.id = id
        self.reference = reference
        self.kind = kind
        self.amount = amount
        self.succeeded = succeeded
        self.declineCode = declineCode
        self.createdAt = createdAt
    }
}

/// Where the sandbox acquirer keeps its books (the SQLite store keeps them in its own tables, written in
/// their own transactions: the acquirer is "another system").
public protocol SandboxAcquirerLedger: Sendable {
    func insertAcquirerAuthorization(_ authorization: SandboxAuthorization) throws
    func updateAcquirerAuthorization(_ authorization: SandboxAuthorization) throws
    func acquirerAuthorizations(merchantReference: String) throws -> [SandboxAuthorization]
    func acquirerAuthorization(reference: String) throws -> SandboxAuthorization?
    func acquirerOperation(id: String) throws -> SandboxOperation?
    /// Records `operation` and, when given, the authorization's new state, atomically.
    func applyAcquirerOperation(_ operation: SandboxOperation, authorization: SandboxAuthorization?) throws
}
