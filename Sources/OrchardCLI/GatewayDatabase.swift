import Foundation
import Gateway
import GatewayAssembly
import GatewayPostgres
import GatewaySQLite

/// The `--database` option: `sqlite:PATH` (or a bare path), or a `postgres://` / `postgresql://` URL.
enum GatewayDatabase {
    /// Whether `option` names a PostgreSQL database.
    static func isPostgres(_ option: String) -> Bool {
        option.hasPrefix("postgres://") || option.hasPrefix("postgresql://")
    }

    /// The file path of a `sqlite:PATH` database option.
    static func sqlitePath(_ option: String) throws(UsageError) -> String {
        if option.hasPrefix("sqlite:") {
            let path = String(option.dropFirst("sqlite:".count))
            guard !path.isEmpty else { throw UsageError("--database sqlite:PATH needs a path") }
            return path
        }
        if isPostgres(option) { throw UsageError("this command takes only sqlite:PATH databases") }
        if option.contains("://") {
            throw UsageError("--database must be sqlite:PATH or postgres://…, not \(redactedDatabaseURL(option))")
        }
        return option
    }

    /// The runtime options for `option`: a SQLite file, or a PostgreSQL database (whose master key must then be
    /// given: every instance on the database shares it).
    static func options(_ option: String) throws(UsageError) -> GatewayRuntime.Options {
        var options: GatewayRuntime.Options
        if isPostgres(option) {
            guard URLComponents(string: option)?.host != nil else {
                throw UsageError("--database \(redactedDatabaseURL(option)) is not a postgres://USER@HOST/DB URL")
            }
            options = GatewayRuntime.Options(databasePath: "")
            options.postgres = PostgresStore.Configuration(url: option)
        } else {
            options = GatewayRuntime.Options(databasePath: try sqlitePath(option))
        }
        options.variables = ProcessEnvironment.variables
        return options
    }

    /// The database as it may be shown: a path, or the URL without its password.
    static func display(_ options: GatewayRuntime.Options) -> String {
        options.postgres.map { redactedDatabaseURL($0.url) } ?? "sqlite:" + options.databasePath
    }

    /// Opens the store `option` names without a master key (`orchard audit`: sealed data stays sealed).
    static func openWithoutKey(_ option: String) throws -> any Store {
        if isPostgres(option) { return try PostgresStore(PostgresStore.Configuration(url: option)) }
        let path = try sqlitePath(option)
        guard FileManager.default.fileExists(atPath: path) else { throw UsageError("no database at \(path)") }
        return try SQLiteStore(path: path)
    }
}

/// Counts the durable commits of a store (`SQLiteStore`, `PostgresStore`).
package protocol DurableCommitCounting {
    var durableCommitCount: Int { get }
}

extension SQLiteStore: DurableCommitCounting {}
extension PostgresStore: DurableCommitCounting {}

extension Store {
    /// The store's durable commits since it opened, for a store that counts them (both of Orchard's do).
    package var durableCommitCount: Int { (self as? any DurableCommitCounting)?.durableCommitCount ?? 0 }
}

extension Arguments {
    /// The master key's hex as every command that opens a database takes it: `--master-key`, else
    /// `ORCHARD_MASTER_KEY`.
    var masterKeyHex: String? { value("master-key") ?? ProcessEnvironment.value("ORCHARD_MASTER_KEY") }
}
