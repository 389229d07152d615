import Foundation
import Gateway

extension PostgresStore: StoreImporting {
    public func gatewayTables() throws -> [String] {
        try transaction(.readOnly) { tx in try tx.gatewayTables() }
    }

    public func rowCounts() throws -> [String: Int] {
        try transaction(.readOnly) { tx in try tx.rowCounts() }
    }

    /// Runs in one `SERIALIZABLE` transaction. Each row goes in through this schema's own columns: a value is
    /// converted to the column's type (Unix milliseconds to `timestamptz`, 0/1 to `boolean`, JSON text to
    /// `jsonb`), a merchant through ``StoreTransaction/insertMerchant(_:)`` (its sealed secrets move from the
    /// document to their `bytea` columns, still sealed), a prime's `card_*` columns into its `card_info`
    /// document. Identity columns the rows carry (`seq`) keep their values, and their sequences continue after
    /// the highest.
    public func importRows(
        _ feed: (_ insert: (_ table: String, _ row: PortableRow) throws -> Void) throws -> Void,
        verify: (any StoreTransaction, [String: Int]) throws -> Void
    ) throws {
        try transaction(.serializable) { tx in
            let before = try tx.rowCounts()
            if let table = before.filter({ $0.value > 0 }).keys.sorted().first {
                throw StoreCopyError(
                    .targetNotEmpty, "the target database already holds gateway data (table \(table) has rows)")
            }
            let columns = try tx.columnTypes()
            var overridden: Set<[String]> = []
            try feed { table, row in
                try tx.importRow(table, row, columns: columns, overridden: &overridden)
            }
            for key in overridden.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
                try tx.db.run(
                    "SELECT setval(pg_get_serial_sequence($1, $2), max(\(key[1]))) FROM \(key[0])",
                    [.text(key[0]), .text(key[1])])
            }
            try verify(tx, try tx.rowCounts())
        }
    }
}

/// A column of this schema: its type as `information_schema` names it, and whether it is an identity column.
struct PostgresColumn {
    var type: String
    var isIdentity: Bool
}

extension PostgresTransaction {
    func gatewayTables() throws -> [String] {
        try db.query(
            """
            SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename <> 'schema_migrations'
            ORDER BY tablename
            """
        ) { $0.text(0) }
        .filter(PostgresAdmin.isPlainIdentifier)
    }

    func rowCounts() throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for table in try gatewayTables() {
            counts[table] = Int(try db.query("SELECT count(*) FROM \(table)") { $0.int(0) }.first ?? 0)
        }
        return counts
    }

    /// Every column of the schema's tables, by table and column name.
    func columnTypes() throws -> [String: [String: PostgresColumn]] {
        var tables: [String: [String: PostgresColumn]] = [:]
        _ = try db.query(
            """
            SELECT table_name::text, column_name::text, data_type::text, is_identity::text
            FROM information_schema.columns WHERE table_schema = current_schema()
            """
        ) { row in
            tables[row.text(0), default: [:]][row.text(1)] = PostgresColumn(
                type: row.text(2), isIdentity: row.text(3) == "YES")
        }
        return tables
    }

    /// Inserts one portable row into `table`; records in `overridden` the identity columns given a value.
    func importRow(
        _ table: String, _ row: PortableRow, columns: [String: [String: PostgresColumn]],
        overridden: inout Set<[String]>
    ) throws {
        guard let schema = columns[table] else {
            throw StoreCopyError(.schemaMismatch, "the target has no table \(table)")
        }
        var row = row
        switch table {
        case "merchants":
            guard case .text(let body)? = row["body"] else {
                throw StoreCopyError(.copyFailed, "a row of merchants has no document")
            }
            try insertMerchant(try store.decode(MerchantRecord.self, body))
            return
        case "primes":
            row = try primeRow(row)
        default:
            break
        }
        var names: [String] = []
        var values: [PGValue] = []
        var identity = false
        for (name, value) in row.sorted(by: { $0.key < $1.key }) {
            guard let column = schema[name], PostgresAdmin.isPlainIdentifier(name) else {
                throw StoreCopyError(.schemaMismatch, "the target's table \(table) has no column \(name)")
            }
            guard let converted = Self.convert(value, to: column.type) else {
                throw StoreCopyError(.copyFailed, "\(table).\(name) holds a value that is not \(column.type)")
            }
            if column.isIdentity {
                identity = true
                overridden.insert([table, name])
            }
            names.append(name)
            values.append(converted)
        }
        try db.run(
            """
            INSERT INTO \(table) (\(names.joined(separator: ", ")))\(identity ? " OVERRIDING SYSTEM VALUE" : "")
            VALUES (\(Self.placeholders(values.count, from: 1)))
            """, values)
    }

    /// A prime row of the portable form (card information in `card_*` columns) with its `card_info` document.
    private func primeRow(_ row: PortableRow) throws -> PortableRow {
        var row = row
        func take(_ name: String) throws -> String? {
            switch row.removeValue(forKey: "card_" + name) {
            case .text(let text)?: return text
            case .null?, nil: return nil
            default: throw StoreCopyError(.copyFailed, "primes.card_\(name) is not text")
            }
        }
        func number(_ name: String) throws -> Int {
            guard case .integer(let value)? = row.removeValue(forKey: "card_" + name) else {
                throw StoreCopyError(.copyFailed, "primes.card_\(name) is not an integer")
            }
            return Int(value)
        }
        let card = CardInfo(
            binCode: try take("bin_code") ?? "", lastFour: try take("last_four") ?? "", type: try number("type"),
            funding: try number("funding"), network: try take("network"), issuer: try take("issuer"),
            bankID: try take("bank_id"), level: try take("level"), country: try take("country"),
            countryCode: try take("country_code"), issuerZhTW: try take("issuer_zh_tw"))
        row["card_info"] = .text(try store.json(card))
        return row
    }

    /// `value` as a parameter of a column of `type`, nil when it cannot be one.
    static func convert(_ value: PortableValue, to type: String) -> PGValue? {
        switch (value, type) {
        case (.null, _): return .null
        case (.integer(let number), "bigint"), (.integer(let number), "integer"), (.integer(let number), "smallint"):
            return .int8(number)
        case (.integer(let number), "boolean"): return .bool(number != 0)
        case (.integer(let milliseconds), "timestamp with time zone"):
            return .timestamptz(Date(unixMilliseconds: milliseconds))
        case (.integer(let number), "text"): return .text(String(number))
        case (.text(let text), "text"): return .text(text)
        case (.text(let text), "jsonb"): return .jsonb(text)
        case (.text(let text), "bytea"): return .bytea(Data(text.utf8))
        case (.blob(let data), "bytea"): return .bytea(data)
        default: return nil
        }
    }
}
