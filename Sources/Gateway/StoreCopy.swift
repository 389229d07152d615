import Foundation
import OrchardBase

/// A value of a row in the portable form stores copy through: times are Unix milliseconds (UTC), flags 0 or 1,
/// documents JSON text, sealed secrets the sealed bytes as stored (never opened).
public enum PortableValue: Sendable, Hashable {
    /// SQL NULL.
    case null
    /// An integer: an amount in minor units, a count, a time in Unix milliseconds, a flag.
    case integer(Int64)
    /// Text, JSON documents included.
    case text(String)
    /// Bytes: sealed secrets, event payloads, stored answers.
    case blob(Data)
}

/// One row of a gateway table in the portable form: column name to value.
public typealias PortableRow = [String: PortableValue]

/// The gateway tables of a store, with their row counts.
public protocol StoreTableCounting: Store {
    /// The gateway's tables in this store (the migration bookkeeping excluded).
    func gatewayTables() throws -> [String]
    /// How many rows each gateway table holds, read in one transaction.
    func rowCounts() throws -> [String: Int]
}

/// A store whose rows can be read out in the portable form (the SQLite store).
public protocol StoreExporting: StoreTableCounting {
    /// Calls `row` for every row of every table of ``StoreCopy/tables``, in that order and each table in the
    /// order its rows were written, all in one read transaction. The columns are those of the current SQLite
    /// schema (a prime's card information in its `card_*` columns, a merchant's sealed secrets in its document).
    func exportRows(_ row: (_ table: String, _ row: PortableRow) throws -> Void) throws
}

/// A store that can take the rows of another in the portable form (the PostgreSQL store).
public protocol StoreImporting: StoreTableCounting {
    /// In one transaction: fails with ``StoreCopyError/Code/targetNotEmpty`` when any gateway table has a row,
    /// then inserts every row `feed` hands to its `insert`, then calls `verify` with the transaction and the
    /// row counts it now sees. Any error (from `feed`, an insert or `verify`) rolls everything back.
    func importRows(
        _ feed: (_ insert: (_ table: String, _ row: PortableRow) throws -> Void) throws -> Void,
        verify: (any StoreTransaction, [String: Int]) throws -> Void
    ) throws
}

/// Why a copy between stores stopped. The target is left as it was (no row written).
public struct StoreCopyError: CodedError, Sendable {
    /// A stable code.
    public struct Code: Hashable, Sendable, RawRepresentable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The target already holds gateway rows.
        public static let targetNotEmpty = Code(rawValue: "target_not_empty")
        /// A store has a gateway table the copy does not know, or lacks one it copies.
        public static let schemaMismatch = Code(rawValue: "schema_mismatch")
        /// A table of the target does not hold as many rows as were read from the source.
        public static let rowCountMismatch = Code(rawValue: "row_count_mismatch")
        /// The ledger audit found broken invariants in the copy.
        public static let auditFailed = Code(rawValue: "audit_failed")
        /// A row could not be read or written (the reason says which table).
        public static let copyFailed = Code(rawValue: "copy_failed")
    }

    /// Which failure it is.
    public var code: Code
    /// What went wrong, for an operator (never a row's values).
    public var reason: String

    /// An error with `code` and `reason`.
    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }
}

/// Copies a whole gateway database from one store to another, table by table, in one transaction of the target.
public enum StoreCopy {
    /// Every gateway table, parents before the tables that reference them.
    public static let tables = [
        "settings", "merchants", "processing_keys", "bin_entries", "cobrand_ranges", "seen_transactions",
        "order_sessions", "payments", "primes", "payment_card_data", "payment_transitions", "refunds",
        "webhook_events", "webhook_attempts", "idempotency_keys", "stored_responses",
        "sandbox_acquirer_authorizations", "sandbox_acquirer_operations", "audit_log", "console_sessions",
        "processor_settings", "processor_notifications",
    ]

    /// What a copy did.
    public struct Report: Sendable {
        /// The rows copied per table, in ``StoreCopy/tables`` order (each equal in source and target).
        public var rows: [(table: String, count: Int)]
        /// The ledger audit of the target, run before the copy committed.
        public var audit: LedgerAudit.Report
    }

    /// Copies every row of `source` into the empty `target`. Before committing, checks that each table of the
    /// target holds as many rows as were read from the source and runs the ledger audit on the target; any
    /// failure leaves the target empty, so the copy can be run again.
    public static func copy(from source: any StoreExporting, to target: any StoreImporting) throws -> Report {
        try checkTables(of: source, "source")
        try checkTables(of: target, "target")
        var rows: [(table: String, count: Int)]?
        var audit: LedgerAudit.Report?
        try target.importRows(
            { insert in
                var read: [String: Int] = [:]
                try source.exportRows { table, row in
                    read[table, default: 0] += 1
                    do {
                        try insert(table, row)
                    } catch let error as StoreCopyError {
                        throw error
                    } catch {
                        throw StoreCopyError(.copyFailed, "a row of \(table) could not be written: \(error)")
                    }
                }
                rows = tables.map { ($0, read[$0] ?? 0) }
            },
            verify: { tx, counts in
                guard let rows else { throw StoreCopyError(.copyFailed, "the target verified before copying") }
                for (table, count) in rows where counts[table] != count {
                    throw StoreCopyError(
                        .rowCountMismatch, "\(table): \(count) rows read, \(counts[table] ?? 0) in the target")
                }
                let report = LedgerAudit.check(try tx.auditRows())
                guard report.holds else {
                    throw StoreCopyError(
                        .auditFailed,
                        "the audit found \(report.findings.count) finding(s): "
                            + report.findings.prefix(5).map(\.description).joined(separator: "; "))
                }
                audit = report
            })
        guard let rows, let audit else { throw StoreCopyError(.copyFailed, "the target did not run the copy") }
        return Report(rows: rows, audit: audit)
    }

    private static func checkTables(of store: any StoreTableCounting, _ role: String) throws {
        let present = Set(try store.gatewayTables())
        if let unknown = present.subtracting(tables).sorted().first {
            throw StoreCopyError(.schemaMismatch, "the \(role) has a table the copy does not know: \(unknown)")
        }
        if let missing = Set(tables).subtracting(present).sorted().first {
            throw StoreCopyError(.schemaMismatch, "the \(role) has no table \(missing)")
        }
    }
}
