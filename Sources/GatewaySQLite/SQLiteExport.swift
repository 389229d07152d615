import CSQLite
import Foundation
import Gateway

extension SQLiteStore: StoreExporting {
    public func gatewayTables() throws -> [String] {
        try transaction("BEGIN") { tx in try tx.gatewayTables() }
    }

    public func rowCounts() throws -> [String: Int] {
        try transaction("BEGIN") { tx in
            var counts: [String: Int] = [:]
            for table in try tx.gatewayTables() {
                let quoted = "\"" + table.replacingOccurrences(of: "\"", with: "\"\"") + "\""
                counts[table] = Int(try tx.db.query("SELECT count(*) FROM \(quoted)") { $0.int(0) }.first ?? 0)
            }
            return counts
        }
    }

    /// Reads each table with `SELECT *` in `rowid` order, the values as SQLite stores them (this schema is the
    /// portable form).
    public func exportRows(_ row: (_ table: String, _ row: PortableRow) throws -> Void) throws {
        try transaction("BEGIN") { tx in
            for table in StoreCopy.tables {
                _ = try tx.db.query("SELECT * FROM \"\(table)\" ORDER BY rowid") {
                    try row(table, try $0.portable(table))
                }
            }
        }
    }
}

extension SQLiteTransaction {
    /// The tables of the schema but SQLite's own and the migration bookkeeping.
    func gatewayTables() throws -> [String] {
        try db.query(
            """
            SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
                AND name <> 'schema_migrations' ORDER BY name
            """
        ) { $0.text(0) }
    }
}

extension Row {
    /// Every column of the row (of `table`), by name, with the value SQLite holds.
    func portable(_ table: String) throws -> PortableRow {
        var row: PortableRow = [:]
        for index in 0..<sqlite3_column_count(pointer) {
            let name = String(cString: sqlite3_column_name(pointer, index))
            switch sqlite3_column_type(pointer, index) {
            case SQLITE_NULL: row[name] = .null
            case SQLITE_INTEGER: row[name] = .integer(int(index))
            case SQLITE_BLOB: row[name] = .blob(blob(index) ?? Data())
            case SQLITE_FLOAT:
                // No column of the schema holds one (money is integer minor units): a damaged row.
                throw StoreCopyError(.copyFailed, "\(table).\(name) holds a floating-point value")
            default: row[name] = .text(text(index))
            }
        }
        return row
    }
}
