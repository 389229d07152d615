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

/// A change to an authorization's books, made by one conditional statement that holds the acquirer's rule, so
/// instances booking the same authorization at once cannot lose or exceed one another's changes.
public enum SandboxBookEntry: Sendable, Hashable {
    /// Captures `amount` of an approved authorization in its currency: once, never after a void, at most the
    /// amount authorized.
    case capture(amount: Int64, currency: String)
    /// Voids an approved authorization not captured yet, once.
    case void
    /// Refunds `amount` of a captured authorization in its currency: the refunds never above the capture.
    case refund(amount: Int64, currency: String)

    /// The conditional `UPDATE` that books the entry on authorization `reference`; it changes no row when the
    /// rule does not allow it (`?` parameters, as ``StoreStatements`` takes them).
    package func update(reference: String) -> (sql: String, values: [StoreValue]) {
        let table = "UPDATE sandbox_acquirer_authorizations SET"
        switch self {
        case .capture(let amount, let currency):
            return (
                "\(table) captured_amount = ? WHERE reference = ? AND status = 'approved' AND voided = ? "
                    + "AND captured_amount = 0 AND currency = ? AND ? <= amount",
                [.integer(amount), .text(reference), .bool(false), .text(currency), .integer(amount)]
            )
        case .void:
            return (
                "\(table) voided = ? WHERE reference = ? AND status = 'approved' AND voided = ? AND captured_amount = 0",
                [.bool(true), .text(reference), .bool(false)]
            )
        case .refund(let amount, let currency):
            return (
                "\(table) refunded_amount = refunded_amount + ? WHERE reference = ? AND currency = ? "
                    + "AND captured_amount > 0 AND refunded_amount + ? <= captured_amount",
                [.integer(amount), .text(reference), .text(currency), .integer(amount)]
            )
        }
    }
}

/// Where the sandbox acquirer keeps its books (the stores keep them in their own tables, written in their own
/// transactions: the acquirer is "another system"). Every change is one conditional statement, so the books
/// hold across instances sharing a database.
public protocol SandboxAcquirerLedger: Sendable {
    func insertAcquirerAuthorization(_ authorization: SandboxAuthorization) throws
    /// Moves a `pending` authorization to `approved` (the issuer's late answer); false when it was not pending.
    func approvePendingAcquirerAuthorization(reference: String) throws -> Bool
    func acquirerAuthorizations(merchantReference: String) throws -> [SandboxAuthorization]
    func acquirerAuthorization(reference: String) throws -> SandboxAuthorization?
    func acquirerOperation(id: String) throws -> SandboxOperation?
    /// Records `operation` and, when it succeeds, books `entry` on its authorization, atomically. When the entry's
    /// conditional update changes nothing (another instance got there first), the operation is recorded declined
    /// with `declineCode` instead. An operation id already recorded changes nothing: that operation is returned.
    func bookAcquirerOperation(
        _ operation: SandboxOperation, entry: SandboxBookEntry?, declineCode: String
    ) throws -> SandboxOperation
}

extension StoreStatements {
    /// The recorded operation `id`, in the caller's transaction.
    package func acquirerOperationRow(id: String) throws -> SandboxOperation? {
        try query(
            shared: """
                SELECT id, reference, kind, amount, succeeded, decline_code, created_at FROM sandbox_acquirer_operations
                WHERE id = ?
                """, [.text(id)]
        ) { row in
            SandboxOperation(
                id: row.text(0), reference: row.text(1), kind: row.text(2), amount: row.int(3),
                succeeded: row.bool(4), declineCode: row.optionalText(5), createdAt: row.date(6))
        }.first
    }

    /// ``SandboxAcquirerLedger/bookAcquirerOperation(_:entry:declineCode:)`` in the caller's transaction: the
    /// operation's row first (its id is unique: a second booking of one id waits for the first and changes
    /// nothing), then the entry's conditional update.
    package func bookAcquirerOperation(
        _ operation: SandboxOperation, entry: SandboxBookEntry?, declineCode: String
    ) throws -> SandboxOperation {
        let inserted = try change(
            shared: """
                INSERT INTO sandbox_acquirer_operations (id, reference, kind, amount, succeeded, decline_code, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING
                """,
            [
                .text(operation.id), .text(operation.reference), .text(operation.kind), .integer(operation.amount),
                .bool(operation.succeeded), .text(operation.declineCode), .date(operation.createdAt),
            ])
        guard inserted == 1 else { return try acquirerOperationRow(id: operation.id) ?? operation }
        guard operation.succeeded, let entry else { return operation }
        let update = entry.update(reference: operation.reference)
        if try change(shared: update.sql, update.values) == 1 { return operation }
        var declined = operation
        declined.succeeded = false
        declined.declineCode = declineCode
        _ = try change(
            shared: "UPDATE sandbox_acquirer_operations SET succeeded = ?, decline_code = ? WHERE id = ?",
            [.bool(false), .text(declineCode), .text(operation.id)])
        return declined
    }

    /// ``SandboxAcquirerLedger/approvePendingAcquirerAuthorization(reference:)`` in the caller's transaction.
    package func approvePendingAcquirerAuthorization(reference: String) throws -> Bool {
        try change(
            shared: "UPDATE sandbox_acquirer_authorizations SET status = 'approved' WHERE reference = ? AND status = 'pending'",
            [.text(reference)]) == 1
    }
}
