import CSQLite
import Foundation
import Gateway

/// The embedded default ``Store``: one SQLite file in WAL mode with foreign keys, `synchronous=FULL`
/// (a committed payment survives power loss), a busy timeout for other processes, and versioned migrations.
/// Writers are serialized (`BEGIN IMMEDIATE`); processor calls happen outside transactions.
public final class SQLiteStore: Store, @unchecked Sendable {
    /// The database file.
    public let path: String
    /// The writer: every write transaction, serialized by `lock`.
    let connection: SQLiteConnection
    let lock = NSRecursiveLock()
    /// The reader: read transactions run here (WAL lets them proceed while a write is in progress).
    let reader: SQLiteConnection
    let readLock = NSRecursiveLock()
    /// Write transactions committed with at least one changed row (guarded by `lock`).
    private var changingCommits = 0
    let cipher: EnvelopeCipher?
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

    /// Opens (creating and migrating when needed) the database at `path`. `cipher` opens the webhook secrets
    /// for ``dueWebhooks(now:limit:)``; without it due webhooks carry no secrets.
    public init(path: String, cipher: EnvelopeCipher?, busyTimeoutMilliseconds: Int32 = 5000) throws {
        self.path = path
        self.cipher = cipher
        connection = try SQLiteConnection(path: path)
        sqlite3_busy_timeout(connection.handle, busyTimeoutMilliseconds)
        _ = try connection.query("PRAGMA journal_mode=WAL") { $0.text(0) }
        try connection.execute("PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;")
        try Self.migrate(connection)
        reader = try SQLiteConnection(path: path)
        sqlite3_busy_timeout(reader.handle, busyTimeoutMilliseconds)
        try reader.execute("PRAGMA foreign_keys=ON; PRAGMA query_only=ON;")
    }

    /// The versions of the applied migrations.
    public func appliedMigrations() throws -> [Int] {
        try transaction("BEGIN") { tx in
            try connection.query("SELECT version FROM schema_migrations ORDER BY version") { Int($0.int(0)) }
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
                try connection.execute(migration.sql)
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

    /// Runs `body` in a transaction: `BEGIN IMMEDIATE` on the writer, or `BEGIN` on the reader.
    @discardableResult
    func transaction<T>(_ begin: String, _ body: (SQLiteTransaction) throws -> T) throws -> T {
        let writing = begin != "BEGIN"
        let connection = writing ? self.connection : reader
        let lock = writing ? self.lock : readLock
        lock.lock()
        defer { lock.unlock() }
        try connection.execute(begin)
        let changesBefore = writing ? sqlite3_total_changes(connection.handle) : 0
        do {
            let result = try body(SQLiteTransaction(store: self, db: connection))
            let changed = writing && sqlite3_total_changes(connection.handle) != changesBefore
            try connection.execute("COMMIT")
            if changed { changingCommits += 1 }
            return result
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    /// How many write transactions committed a change since the store opened: each is one `fdatasync` of
    /// the WAL under `synchronous=FULL` (a write transaction that changed nothing writes no WAL frame).
    package var durableCommitCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return changingCommits
    }

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
}

// MARK: - Webhook outbox

extension SQLiteStore {
    public func dueWebhooks(now: Date, limit: Int) throws -> [DueWebhook] {
        try transaction("BEGIN") { tx in
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
                (
                    WebhookEvent(
                        id: row.text(0), merchantID: row.text(1), type: row.text(2), payload: row.blob(3) ?? Data(),
                        createdAt: row.date(4)), Int(row.int(5)), row.text(6), row.text(7)
                )
            }
            var secretsByMerchant: [String: [String]] = [:]
            return try rows.map { event, attempts, url, body in
                if secretsByMerchant[event.merchantID] == nil {
                    let record = try decode(MerchantRecord.self, body)
                    var secrets: [String] = []
                    if let sealed = record.webhookSecretsSealed, let cipher {
                        let bytes = try cipher.open(
                            sealed, context: SealingContext.webhookSecrets(merchantID: record.id))
                        secrets = try WebhookSecretRing(plaintext: bytes.copyBytes()).secrets(at: now)
                    }
                    secretsByMerchant[event.merchantID] = secrets
                }
                return DueWebhook(
                    event: event, url: url, secrets: secretsByMerchant[event.merchantID] ?? [], attempts: attempts)
            }
        }
    }

    public func recordWebhookAttempt(_ attempt: WebhookAttempt) throws {
        try transaction("BEGIN IMMEDIATE") { tx in
            try tx.db.run(
                "INSERT INTO webhook_attempts (event_id, attempted_at, http_status, error, state) VALUES (?, ?, ?, ?, ?)",
                [
                    .text(attempt.eventID), SQLValue(attempt.attemptedAt), SQLValue(attempt.httpStatus.map(Int64.init)),
                    SQLValue(attempt.error), .text(attempt.state.rawValue),
                ])
            try tx.db.run(
                "UPDATE webhook_events SET state = ?, attempts = attempts + 1, next_attempt_at = ? WHERE id = ?",
                [.text(attempt.state.rawValue), SQLValue(attempt.nextAttemptAt), .text(attempt.eventID)])
        }
    }

    public func scheduleRedelivery(eventID: String, merchantID: String, now: Date) throws {
        let changed = try transaction("BEGIN IMMEDIATE") { tx in
            let url = try tx.db.query(
                """
                SELECT COALESCE(e.delivery_url, m.webhook_url) FROM webhook_events e
                JOIN merchants m ON m.id = e.merchant_id WHERE e.id = ? AND e.merchant_id = ?
                """, [.text(eventID), .text(merchantID)]
            ) { $0.optionalText(0) }
            guard let found = url.first else { return 0 }
            guard found != nil else {
                throw GatewayError(.webhookEndpointNotConfigured, "no webhook endpoint nor notify_url for this event")
            }
            return try tx.db.run(
                "UPDATE webhook_events SET state = 'pending', next_attempt_at = ? WHERE id = ? AND merchant_id = ?",
                [SQLValue(now), .text(eventID), .text(merchantID)])
        }
        guard changed == 1 else { throw GatewayError(.notFound, "no such event", param: "event_id") }
    }

    public func pendingWebhookCount() throws -> Int {
        try transaction("BEGIN") { tx in
            try tx.db.query("SELECT COUNT(*) FROM webhook_events WHERE state = 'pending'") { Int($0.int(0)) }
                .first ?? 0
        }
    }

    /// The recorded delivery attempts of an event, oldest first.
    public func webhookAttempts(eventID: String) throws -> [WebhookAttempt] {
        try transaction("BEGIN") { tx in
            try tx.db.query(
                "SELECT attempted_at, http_status, error, state FROM webhook_attempts WHERE event_id = ? ORDER BY seq",
                [.text(eventID)]
            ) { row in
                WebhookAttempt(
                    eventID: eventID, attemptedAt: row.date(0), httpStatus: row.optionalInt(1).map(Int.init),
                    error: row.optionalText(2), state: WebhookDeliveryState(rawValue: row.text(3)) ?? .pending,
                    nextAttemptAt: nil)
            }
        }
    }

    /// An event's delivery state and attempt count.
    public func webhookState(eventID: String) throws -> (state: WebhookDeliveryState, attempts: Int)? {
        try transaction("BEGIN") { tx in
            try tx.db.query("SELECT state, attempts FROM webhook_events WHERE id = ?", [.text(eventID)]) {
                (WebhookDeliveryState(rawValue: $0.text(0)) ?? .pending, Int($0.int(1)))
            }.first
        }
    }
}

// MARK: - Sandbox acquirer ledger

extension SQLiteStore {
    private static let authorizationColumns = """
        reference, merchant_reference, merchant_id, amount, currency, last_four, status, decline_code, auth_code,
        captured_amount, refunded_amount, voided, created_at, resolves_at
        """

    private func authorization(_ row: Row) -> SandboxAuthorization {
        SandboxAuthorization(
            reference: row.text(0), merchantReference: row.text(1), merchantID: row.text(2), amount: row.int(3),
            currency: row.text(4), lastFour: row.text(5),
            status: SandboxAuthorization.Status(rawValue: row.text(6)) ?? .declined, declineCode: row.optionalText(7),
            authCode: row.text(8), capturedAmount: row.int(9), refundedAmount: row.int(10), voided: row.bool(11),
            createdAt: row.date(12), resolvesAt: row.optionalDate(13))
    }

    public func insertAcquirerAuthorization(_ a: SandboxAuthorization) throws {
        try transaction("BEGIN IMMEDIATE") { tx in
            try tx.db.run(
                "INSERT INTO sandbox_acquirer_authorizations (\(Self.authorizationColumns)) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                [
                    .text(a.reference), .text(a.merchantReference), .text(a.merchantID), .integer(a.amount),
                    .text(a.currency), .text(a.lastFour), .text(a.status.rawValue), SQLValue(a.declineCode),
                    .text(a.authCode), .integer(a.capturedAmount), .integer(a.refundedAmount), SQLValue(a.voided),
                    SQLValue(a.createdAt), SQLValue(a.resolvesAt),
                ])
        }
    }

    public func updateAcquirerAuthorization(_ a: SandboxAuthorization) throws {
        try transaction("BEGIN IMMEDIATE") { tx in try updateAuthorizationRow(a, in: tx) }
    }

    private func updateAuthorizationRow(_ a: SandboxAuthorization, in tx: SQLiteTransaction) throws {
        try tx.db.run(
            """
            UPDATE sandbox_acquirer_authorizations SET status = ?, decline_code = ?, captured_amount = ?,
                refunded_amount = ?, voided = ? WHERE reference = ?
            """,
            [
                .text(a.status.rawValue), SQLValue(a.declineCode), .integer(a.capturedAmount),
                .integer(a.refundedAmount), SQLValue(a.voided), .text(a.reference),
            ])
    }

    public func acquirerAuthorizations(merchantReference: String) throws -> [SandboxAuthorization] {
        try transaction("BEGIN") { tx in
            try tx.db.query(
                "SELECT \(Self.authorizationColumns) FROM sandbox_acquirer_authorizations WHERE merchant_reference = ? ORDER BY created_at, rowid",
                [.text(merchantReference)], authorization)
        }
    }

    public func acquirerAuthorization(reference: String) throws -> SandboxAuthorization? {
        try transaction("BEGIN") { tx in
            try tx.db.query(
                "SELECT \(Self.authorizationColumns) FROM sandbox_acquirer_authorizations WHERE reference = ?",
                [.text(reference)], authorization
            ).first
        }
    }

    public func acquirerOperation(id: String) throws -> SandboxOperation? {
        try transaction("BEGIN") { tx in
            try tx.db.query(
                "SELECT id, reference, kind, amount, succeeded, decline_code, created_at FROM sandbox_acquirer_operations WHERE id = ?",
                [.text(id)]
            ) { row in
                SandboxOperation(
                    id: row.text(0), reference: row.text(1), kind: row.text(2), amount: row.int(3),
                    succeeded: row.bool(4), declineCode: row.optionalText(5), createdAt: row.date(6))
            }.first
        }
    }

    public func applyAcquirerOperation(_ operation: SandboxOperation, authorization: SandboxAuthorization?) throws {
        try transaction("BEGIN IMMEDIATE") { tx in
            try tx.db.run(
                """
                INSERT INTO sandbox_acquirer_operations (id, reference, kind, amount, succeeded, decline_code, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """,
                [
                    .text(operation.id), .text(operation.reference), .text(operation.kind), .integer(operation.amount),
                    SQLValue(operation.succeeded), SQLValue(operation.declineCode), SQLValue(operation.createdAt),
                ])
            if let authorization { try updateAuthorizationRow(authorization, in: tx) }
        }
    }
}
