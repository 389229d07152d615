import CPostgres
import Foundation
import Gateway
import OrchardBase

/// A ``Store`` on PostgreSQL through libpq, for several gateway instances sharing one database.
///
/// Write transactions run `SERIALIZABLE`, so concurrent instances see the serial order SQLite's single writer
/// gives; a serialization failure or deadlock runs the transaction again, unseen by the caller. A lost
/// connection (the server restarted) is replaced and the transaction run again, as long as its `COMMIT` was
/// not sent; a connection lost during `COMMIT` is reported (`08007`), since its outcome is unknown.
/// Statements are prepared per connection and take bound parameters only. Migrations run under an advisory
/// lock, so instances starting together do not race.
public final class PostgresStore: Store, Sendable {
    /// How the store connects and retries.
    public struct Configuration: Sendable {
        /// A `postgres://` or `postgresql://` URL (libpq's URI syntax: `sslmode` and the other libpq options go
        /// in its query). The password may instead come from `PGPASSWORD` or `~/.pgpass`, as libpq reads them.
        public var url: String
        /// The most connections the store opens (default 10).
        public var poolSize: Int = 10
        /// The server cancels a statement running longer than this, in seconds (default 30).
        public var statementTimeout: TimeInterval = 30
        /// How long connecting may take, in seconds, unless the URL sets `connect_timeout` (default 5).
        public var connectTimeout: Int = 5
        /// How many times a transaction that lost a serialization race or a deadlock runs again (default 50).
        public var serializationRetries: Int = 50
        /// How long a transaction keeps trying to reach an unreachable server, in seconds (default 15).
        public var reconnectWindow: TimeInterval = 15

        /// The defaults for `url`.
        public init(url: String) { self.url = url }
    }

    /// The configuration in force.
    public let configuration: Configuration
    private let pool: PostgresPool
    private let counters = Locked((retries: 0, changingCommits: 0))
    let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        // Stored format: the JSON columns of the store's rows, read back by `decoder`.
        encoder.dateEncodingStrategy = .millisecondsSince1970
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()
    let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        return decoder
    }()

    /// Connects, and creates or migrates the schema. The store keeps sealed data sealed: it opens nothing.
    public init(_ configuration: Configuration) throws {
        self.configuration = configuration
        let statementTimeout = Int64((configuration.statementTimeout * 1000).rounded())
        let keywords = ["connect_timeout", "application_name", "dbname"]
        let values = [String(configuration.connectTimeout), "orchard", configuration.url]
        pool = PostgresPool(size: configuration.poolSize) {
            let connection = try PGConnection(keywords: keywords, values: values)
            try connection.run(
                "SELECT set_config('statement_timeout', $1, false)", [.text(String(max(statementTimeout, 0)))])
            return connection
        }
        try migrate()
    }

    /// The versions of the applied migrations.
    public func appliedMigrations() throws -> [Int] {
        try transaction(.readOnly) { tx in
            try tx.db.query("SELECT version FROM schema_migrations ORDER BY version") { Int($0.int(0)) }
        }
    }

    /// How many times a transaction ran again after a serialization failure, a deadlock or a lost connection.
    package var retriedTransactionCount: Int { counters.current.retries }

    /// How many transactions committed a change since the store opened (each one durable commit on the server).
    package var durableCommitCount: Int { counters.current.changingCommits }

    private func migrate() throws {
        try transaction(.readCommitted) { tx in
            // Held to the end of the transaction: a second instance starting now waits, then finds nothing to do.
            try tx.db.run("SELECT pg_advisory_xact_lock($1)", [.int8(PostgresMigrations.lockKey)])
            try tx.db.execute(
                """
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL)
                """)
            let applied = Set(try tx.db.query("SELECT version FROM schema_migrations") { Int($0.int(0)) })
            for migration in PostgresMigrations.all where !applied.contains(migration.version) {
                try tx.db.execute(migration.sql)
                try tx.db.run(
                    "INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, now())",
                    [PGValue(migration.version), .text(migration.name)])
            }
        }
    }

    /// How a transaction begins.
    enum Isolation: String {
        case serializable = "BEGIN ISOLATION LEVEL SERIALIZABLE"
        case readCommitted = "BEGIN ISOLATION LEVEL READ COMMITTED"
        case readOnly = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
    }

    /// Runs `body` in a transaction on a pooled connection, running it again after a serialization failure,
    /// a deadlock, or a connection lost before `COMMIT`.
    @discardableResult
    func transaction<T>(_ isolation: Isolation, _ body: (PostgresTransaction) throws -> T) throws -> T {
        let started = Date()
        var attempt = 0
        while true {
            attempt += 1
            let failure: PostgresError
            var committing = false
            var connection: PGConnection?
            do {
                let acquired = try pool.acquire()
                connection = acquired
                acquired.lastError = nil
                acquired.changedRows = false
                try acquired.execute(isolation.rawValue)
                let result = try body(PostgresTransaction(store: self, db: acquired))
                committing = true
                try acquired.execute("COMMIT")
                if acquired.changedRows { counters.withLock { $0.changingCommits += 1 } }
                pool.release(acquired)
                return result
            } catch {
                // The body may have wrapped the database's error in one of its own: the connection remembers it.
                guard let cause = (error as? PostgresError) ?? connection?.lastError else {
                    if let connection { finish(connection) }
                    throw error
                }
                failure = cause
                if let connection { finish(connection) }
                if !(failure.isSerializationFailure || failure.isConnectionFailure) { throw error }
            }
            if failure.isConnectionFailure {
                if committing {
                    throw PostgresError(
                        sqlState: "08007", message: "the connection was lost during COMMIT; the outcome is unknown")
                }
                pool.dropIdle()
                guard Date().timeIntervalSince(started) < configuration.reconnectWindow else { throw failure }
                Thread.sleep(forTimeInterval: min(0.05 * Double(attempt), 1))
            } else {
                guard attempt <= configuration.serializationRetries else { throw failure }
                Thread.sleep(forTimeInterval: Double.random(in: 0...0.002) * Double(min(attempt, 10)))
            }
            counters.withLock { $0.retries += 1 }
        }
    }

    /// Rolls back what is left open and gives the connection back to the pool.
    private func finish(_ connection: PGConnection) {
        if connection.isHealthy && connection.inTransaction { try? connection.execute("ROLLBACK") }
        pool.release(connection)
    }

    public func write<T>(_ body: (any StoreTransaction) throws -> T) throws -> T {
        try transaction(.serializable) { try body($0) }
    }

    public func read<T>(_ body: (any StoreTransaction) throws -> T) throws -> T {
        try transaction(.readOnly) { try body($0) }
    }

    /// One attempt to reach the server (no retries): `/readyz` answers at once when the database is down.
    public func isReachable() -> Bool {
        guard let connection = try? pool.acquire() else { return false }
        defer { pool.release(connection) }
        do {
            try connection.execute("SELECT 1")
            return true
        } catch {
            pool.dropIdle()
            return false
        }
    }

    /// Runs `body` only if no other instance is running the job `name` (a session advisory lock, released when
    /// `body` returns or the instance dies); nil when another instance holds it.
    public func runExclusively<T>(_ name: String, _ body: () throws -> T) throws -> T? {
        let connection = try pool.acquire()
        defer { pool.release(connection) }
        let key = try connection.query("SELECT hashtextextended($1, 0)", [.text("orchard:" + name)]) { $0.int(0) }
        let locked = try connection.query("SELECT pg_try_advisory_lock($1)", key.map { .int8($0) }) { $0.bool(0) }
        guard locked.first == true else { return nil }
        defer { _ = try? connection.run("SELECT pg_advisory_unlock($1)", key.map { .int8($0) }) }
        return try body()
    }

    func json<T: Encodable>(_ value: T) throws -> String { String(decoding: try encoder.encode(value), as: UTF8.self) }
    func decode<T: Decodable>(_ type: T.Type, _ text: String) throws -> T {
        try decoder.decode(type, from: Data(text.utf8))
    }
}

/// A URL shown to an operator: the password is replaced by `***`.
public func redactedDatabaseURL(_ url: String) -> String {
    guard var components = URLComponents(string: url) else { return "postgres://(unparsable URL)" }
    if components.password != nil { components.password = "***" }
    if var items = components.queryItems {
        for index in items.indices where items[index].name.lowercased() == "password" { items[index].value = "***" }
        components.queryItems = items
    }
    return components.string ?? "postgres://(unparsable URL)"
}
