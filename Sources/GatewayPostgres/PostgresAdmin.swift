import Foundation

/// Creating and dropping whole databases, for tests and `orchard migrate`'s target checks. Database names are
/// identifiers (they cannot be bound), so only names of ASCII letters, digits and underscores are accepted.
package enum PostgresAdmin {
    /// Whether `name` is safe to put in a statement as an identifier.
    package static func isPlainIdentifier(_ name: String) -> Bool {
        !name.isEmpty && name.count <= 63
            && name.utf8.allSatisfy { $0 == 95 || (48...57).contains($0) || (97...122).contains($0) }
    }

    /// Runs `CREATE DATABASE name` through the server at `url` (a role that may create databases).
    package static func createDatabase(_ name: String, url: String) throws {
        guard isPlainIdentifier(name) else { throw PostgresError(sqlState: "42602", message: "invalid database name") }
        let connection = try PGConnection(keywords: ["dbname"], values: [url])
        try connection.execute("CREATE DATABASE \(name)")
    }

    /// Runs `DROP DATABASE IF EXISTS name WITH (FORCE)` through the server at `url`.
    package static func dropDatabase(_ name: String, url: String) throws {
        guard isPlainIdentifier(name) else { throw PostgresError(sqlState: "42602", message: "invalid database name") }
        let connection = try PGConnection(keywords: ["dbname"], values: [url])
        try connection.execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
    }

    /// `url` with its database (the URL's path) replaced by `name`.
    package static func url(_ url: String, database name: String) -> String? {
        guard var components = URLComponents(string: url) else { return nil }
        components.path = "/" + name
        return components.string
    }
}

extension PostgresStore {
    /// Every row of every table in the schema, as text (`bytea` in hex): what someone reading the database would
    /// see, for tests that look for secrets in plaintext.
    package func textDump() throws -> String {
        try transaction(.readOnly) { tx in
            let tables = try tx.db.query(
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename"
            ) { $0.text(0) }
            var dump = ""
            for table in tables where PostgresAdmin.isPlainIdentifier(table) {
                for line in try tx.db.query("SELECT t::text FROM \(table) t", [], { $0.text(0) }) {
                    dump += table + " " + line + "\n"
                }
            }
            return dump
        }
    }
}
