import CSQLite
import Foundation
import Gateway
import OrchardBase

/// The embedded default ``Store``: one SQLite file in WAL mode with foreign keys, `synchronous=FULL`
/// (a committed payment survives power loss), a busy timeout for other processes, and versioned migrations.
///
/// Writes use group commit: concurrent ``write(_:)`` calls join one SQLite transaction (one `fdatasync` of
/// the WAL), each body in its own `SAVEPOINT`, so a body that throws rolls back only its own changes. Every
/// caller returns only after its batch's `COMMIT` is durable. Reads run on a small pool of reader connections
/// (WAL snapshots of committed data) and never wait behind the writer. Processor calls happen outside
/// transactions.
// Unchecked: its SQLite connections (not Sendable) are used by one thread at a time: the writer by the batch leader, a reader by the transaction that took it from the pool.
public final class SQLiteStore: Store, @unchecked Sendable {
    /// The database file.
    public let path: String
    /// The writer: only the batch leader of the moment uses it.
    let connection: SQLiteConnection
    /// Queues writes and elects the batch leader (see ``GroupCommit``).
    private let batches: GroupCommit
    /// Idle reader connections; read transactions take one (a new one when all are busy, up to a bound).
    private let idleReaderConnections = Locked<[SQLiteConnection]>([])
    /// Write transactions committed with at least one changed row, the batch commits (fsyncs) that held
    /// them, and how many of the transactions were the sandbox acquirer's books.
    private let counts = Locked((transactions: 0, batches: 0, acquirer: 0))
    private let busyTimeoutMilliseconds: Int32
    /// Merchant records by the stored text they were decoded from. Every request reads its merchant, and the
    /// same text always decodes to the same record, so a changed row (new text) is simply decoded anew.
    private let decodedMerchants = Locked<[String: MerchantRecord]>([:])
    /// The most records ``decodedMerchants`` keeps before it starts over.
    static let decodedMerchantLimit = 256
    // Stored format: the JSON columns of the store's rows, read back by `decoder`.
    let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .millisecondsSince1970
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()
    let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        return decoder
    }()

    /// The most write bodies one batch (one SQLite transaction) holds.
    public static let maximumBatch = 256
    /// Reader connections kept open when idle (opening one parses the schema again and its statement cache
    /// starts empty, so about as many as there are concurrent requests are kept).
    static let idleReaders = 64

    /// The single-instance lock on the file, when the store was given one: held for the store's lifetime.
    private let instanceLock: SQLiteInstanceLock?

    /// Opens (creating and migrating when needed) the database at `path`. The store keeps sealed data sealed:
    /// it opens nothing. With `instanceLock` (taken on `path` before, by the one `orchard serve` on the file), the
    /// store holds the lock until ``releaseInstanceLock()`` or until it goes.
    public init(path: String, busyTimeoutMilliseconds: Int32 = 5000, instanceLock: SQLiteInstanceLock? = nil) throws {
        self.path = path
        self.instanceLock = instanceLock
        self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
        connection = try SQLiteConnection(path: path)
        sqlite3_busy_timeout(connection.handle, busyTimeoutMilliseconds)
        _ = try connection.query("PRAGMA journal_mode=WAL") { $0.text(0) }
        // temp_store=MEMORY: a batch's savepoints journal the pages their bodies change; in memory, not in a
        // temporary file (SQLite spills one to disk past 64 KiB, which a batch of payments passes).
        try connection.execute("PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON; PRAGMA temp_store=MEMORY;")
        try Self.migrate(connection)
        batches = GroupCommit(connection: connection, maximumBatch: Self.maximumBatch)
        let first = try openReader()
        idleReaderConnections.withLock { $0.append(first) }
    }

    deinit { instanceLock?.release() }

    /// Lets another instance start on the file (this one has stopped serving): gives the single-instance lock up.
    public func releaseInstanceLock() { instanceLock?.release() }

    private func openReader() throws -> SQLiteConnection {
        let reader = try SQLiteConnection(path: path)
        sqlite3_busy_timeout(reader.handle, busyTimeoutMilliseconds)
        try reader.execute("PRAGMA foreign_keys=ON; PRAGMA query_only=ON;")
        return reader
    }

    /// The versions of the applied migrations.
    public func appliedMigrations() throws -> [Int] {
        try transaction("BEGIN") { tx in
            try tx.db.query("SELECT version FROM schema_migrations ORDER BY version") { Int($0.int(0)) }
        }
    }

    private static func migrate(_ connection: SQLiteConnection) throws {
        try connection.execute("BEGIN IMMEDIATE")
        do {
            try connection.execute(
                """
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)
                """)
            let applied = Set(try connection.query("SELECT version FROM schema_migrations") { Int($0.int(0)) })
            for migration in Migrations.all where !applied.contains(migration.version) {
                try migration.apply(connection)
                try connection.run(
                    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                    [SQLValue(migration.version), .text(migration.name), SQLValue(Date())])
            }
            try connection.execute("COMMIT")
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    /// Runs `body` in a transaction: with `BEGIN IMMEDIATE`, as one write of a group-committed batch; with
    /// `BEGIN`, as a read transaction on a reader connection. `acquirer` marks the sandbox acquirer's writes
    /// (counted apart: they stand for another system's books).
    @discardableResult
    func transaction<T>(_ begin: String, acquirer: Bool = false, _ body: (SQLiteTransaction) throws -> T) throws -> T {
        begin == "BEGIN" ? try readTransaction(body) : try writeTransaction(acquirer: acquirer, body)
    }

    private func writeTransaction<T>(acquirer: Bool, _ body: (SQLiteTransaction) throws -> T) throws -> T {
        // The batch's leader may run this body on its own thread: it reads nothing of the caller's thread (the
        // audit actor is in the body, from the request's scope).
        let outcome = try batches.run { db in try body(SQLiteTransaction(store: self, db: db)) }
        if outcome.changed || outcome.batchChanged {
            counts.withLock { counts in
                if outcome.changed { counts.transactions += 1 }
                if outcome.changed, acquirer { counts.acquirer += 1 }
                if outcome.batchChanged { counts.batches += 1 }
            }
        }
        return outcome.value
    }

    private func readTransaction<T>(_ body: (SQLiteTransaction) throws -> T) throws -> T {
        let reader = try idleReaderConnections.withLock { $0.popLast() } ?? openReader()
        defer {
            idleReaderConnections.withLock { idle in
                if idle.count < Self.idleReaders { idle.append(reader) }
            }
        }
        try reader.execute("BEGIN")
        do {
            let result = try body(SQLiteTransaction(store: self, db: reader))
            try reader.execute("COMMIT")
            return result
        } catch {
            try? reader.execute("ROLLBACK")
            throw error
        }
    }

    /// How many write transactions committed a change since the store opened. Each was durable
    /// (`synchronous=FULL`) before its caller returned; with group commit several share one `fdatasync`
    /// (``durableBatchCount``). A write transaction that changed nothing writes no WAL frame.
    package var durableCommitCount: Int { counts.current.transactions }

    /// How many batch commits wrote a change since the store opened: each is one `fdatasync` of the WAL
    /// under `synchronous=FULL`, shared by the write transactions of its batch.
    package var durableBatchCount: Int { counts.current.batches }

    /// Runs right after each batch commit that changed rows, before its callers return (set it before the
    /// store is shared; crash tests use it to stop the process between the commit and the answers).
    package var afterBatchCommit: (@Sendable () -> Void)? {
        get { batches.afterCommit }
        set { batches.afterCommit = newValue }
    }

    /// Writes waiting for the running batch to commit before they form the next one.
    package var queuedWriteCount: Int { batches.queuedCount }

    /// Since the store opened, read together: write transactions committed with a change (all of them, the
    /// sandbox acquirer's included), batch commits (each one `fdatasync`), and the sandbox acquirer's
    /// transactions among the first.
    public var commitCounts: (transactions: Int, batches: Int, acquirer: Int) { counts.current }

    public func write<T>(_ body: (any StoreTransaction) throws -> T) throws -> T {
        try transaction("BEGIN IMMEDIATE") { try body($0) }
    }

    public func read<T>(_ body: (any StoreTransaction) throws -> T) throws -> T {
        try transaction("BEGIN") { try body($0) }
    }

    func json<T: Encodable>(_ value: T) throws -> String { String(decoding: try encoder.encode(value), as: UTF8.self) }
    func decode<T: Decodable>(_ type: T.Type, _ text: String) throws -> T {
        try decoder.decode(type, from: Data(text.utf8))
    }

    /// The merchant record stored as `text`, decoded once per distinct text (``decodedMerchants``).
    func merchantRecord(_ text: String) throws -> MerchantRecord {
        if let known = decodedMerchants.withLock({ $0[text] }) { return known }
        let record = try decode(MerchantRecord.self, text)
        decodedMerchants.withLock { known in
            if known.count >= Self.decodedMerchantLimit { known.removeAll() }
            known[text] = record
        }
        return record
    }
}

// MARK: - Webhook outbox

extension SQLiteStore {
    /// Claims the due events for `lease`'s owner, leased to it until `now + lease.seconds`, in one immediate
    /// transaction (one instance serves a SQLite file; the lease keeps the stores alike and a pass honest).
    public func dueWebhookRows(now: Date, limit: Int, lease: WebhookLease) throws -> [DueWebhookRow] {
        try transaction("BEGIN IMMEDIATE") { tx in
            let rows = try tx.db.query(
                """
                SELECT e.id, e.merchant_id, e.type, e.payload, e.created_at, e.attempts,
                    COALESCE(e.delivery_url, m.webhook_url), m.body
                FROM webhook_events e JOIN merchants m ON m.id = e.merchant_id
                WHERE e.state = 'pending' AND e.next_attempt_at <= ?
                    AND (e.delivery_url IS NOT NULL OR (m.webhook_url IS NOT NULL AND m.webhook_enabled = 1))
                ORDER BY e.next_attempt_at, e.created_at, e.rowid LIMIT ?
                """, [SQLValue(now), SQLValue(limit)]
            ) { row in
                DueWebhookRow(
                    event: WebhookEvent(row: row), url: row.text(6),
                    sealedSecrets: try merchantRecord(row.text(7)).webhookSecretsSealed,
                    attempts: Int(row.int(5)))
            }
            for row in rows {
                try tx.db.run(
                    "UPDATE webhook_events SET next_attempt_at = ?, lease_owner = ? WHERE id = ?",
                    [SQLValue(now.addingTimeInterval(lease.seconds)), .text(lease.owner), .text(row.event.id)])
            }
            return rows
        }
    }

    public func beginWebhookAttempt(eventID: String, now: Date, lease: WebhookLease) throws -> Int? {
        try transaction("BEGIN IMMEDIATE") { tx in try tx.beginWebhookAttempt(eventID: eventID, now: now, lease: lease) }
    }

    public func recordWebhookAttempt(_ attempt: WebhookAttempt, lease: WebhookLease) throws {
        try transaction("BEGIN IMMEDIATE") { tx in try tx.recordWebhookAttempt(attempt, lease: lease) }
    }
}

// MARK: - Sandbox acquirer ledger

extension SQLiteStore {
    public func insertAcquirerAuthorization(_ a: SandboxAuthorization) throws {
        try transaction("BEGIN IMMEDIATE", acquirer: true) { tx in
            try tx.db.run(
                "INSERT INTO sandbox_acquirer_authorizations (\(SandboxAuthorization.storeColumns)) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                [
                    .text(a.reference), .text(a.merchantReference), .text(a.merchantID), .integer(a.amount),
                    .text(a.currency), .text(a.lastFour), .text(a.status.rawValue), SQLValue(a.declineCode),
                    .text(a.authCode), .integer(a.capturedAmount), .integer(a.refundedAmount), SQLValue(a.voided),
                    SQLValue(a.createdAt), SQLValue(a.resolvesAt),
                ])
        }
    }

    public func approvePendingAcquirerAuthorization(reference: String) throws -> Bool {
        try transaction("BEGIN IMMEDIATE", acquirer: true) { try $0.approvePendingAcquirerAuthorization(reference: reference) }
    }

    public func acquirerAuthorizations(merchantReference: String) throws -> [SandboxAuthorization] {
        try transaction("BEGIN") { tx in
            try tx.db.query(
                "SELECT \(SandboxAuthorization.storeColumns) FROM sandbox_acquirer_authorizations WHERE merchant_reference = ? ORDER BY created_at, rowid",
                [.text(merchantReference)]
            ) { SandboxAuthorization(row: $0) }
        }
    }

    public func acquirerAuthorization(reference: String) throws -> SandboxAuthorization? {
        try transaction("BEGIN") { tx in
            try tx.db.query(
                "SELECT \(SandboxAuthorization.storeColumns) FROM sandbox_acquirer_authorizations WHERE reference = ?",
                [.text(reference)]
            ) { SandboxAuthorization(row: $0) }.first
        }
    }

    public func acquirerOperation(id: String) throws -> SandboxOperation? {
        try transaction("BEGIN") { try $0.acquirerOperationRow(id: id) }
    }

    public func bookAcquirerOperation(
        _ operation: SandboxOperation, entry: SandboxBookEntry?, declineCode: String
    ) throws -> SandboxOperation {
        try transaction("BEGIN IMMEDIATE", acquirer: true) {
            try $0.bookAcquirerOperation(operation, entry: entry, declineCode: declineCode)
        }
    }
}
