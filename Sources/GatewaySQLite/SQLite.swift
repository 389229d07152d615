import CSQLite
import Foundation
import Gateway

/// An error from SQLite, with its result code and message. Never carries bound values.
public struct SQLiteError: Error, CustomStringConvertible, Sendable {
    /// SQLite's (extended) result code.
    public var code: Int32
    public var message: String
    public var description: String { "sqlite error \(code): \(message)" }

    /// Whether a unique index or constraint covering `table.column` refused the statement (SQLite names the
    /// index's columns, not the index, in the message: "UNIQUE constraint failed: payments.merchant_id, …").
    /// `SQLITE_CONSTRAINT | (8 << 8)` is SQLITE_CONSTRAINT_UNIQUE, a macro Swift does not import.
    func violatesUnique(on table: String, _ column: String) -> Bool {
        guard code == SQLITE_CONSTRAINT | (8 << 8), let columns = message.split(separator: ":", maxSplits: 1).last
        else { return false }
        return columns.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces) == "\(table).\(column)" }
    }
}

/// A value bound to or read from a statement.
enum SQLValue {
    case null
    case integer(Int64)
    case text(String)
    case blob(Data)
}

extension SQLValue {
    init(_ value: String?) { self = value.map { .text($0) } ?? .null }
    init(_ value: Int64?) { self = value.map { .integer($0) } ?? .null }
    init(_ value: Int) { self = .integer(Int64(value)) }
    init(_ value: Bool) { self = .integer(value ? 1 : 0) }
    init(_ value: Data?) { self = value.map { .blob($0) } ?? .null }
    /// Unix milliseconds, UTC.
    init(_ value: Date?) { self = value.map { .integer(millis($0)) } ?? .null }
}

func millis(_ date: Date) -> Int64 { date.unixMilliseconds }

/// One owned `sqlite3*` connection; closed in deinit. Not thread-safe: the store serializes access.
final class SQLiteConnection {
    let handle: OpaquePointer
    private var statements: [String: Statement] = [:]
    /// The database file, held open by the process while this connection is (``DatabaseFile``).
    private let file: DatabaseFile?

    /// Opens `path`, creating the file when `create` (else a missing file is an error).
    init(path: String, create: Bool = true) throws {
        // An in-memory or temporary database has no file of its own.
        let file =
            path.isEmpty || path == ":memory:" || path.hasPrefix("file:")
            ? nil : try DatabaseFile.retain(path: path, create: create)
        self.file = file
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &handle, flags, nil)
        guard rc == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            if let handle { sqlite3_close_v2(handle) }
            file?.release()
            throw SQLiteError(code: rc, message: message)
        }
        self.handle = handle
        sqlite3_extended_result_codes(handle, 1)
    }

    deinit {
        statements.removeAll()
        sqlite3_close_v2(handle)
        file?.release()
    }

    func error(_ rc: Int32) -> SQLiteError { SQLiteError(code: rc, message: String(cString: sqlite3_errmsg(handle))) }

    /// Runs SQL without parameters (several statements allowed).
    func execute(_ sql: String) throws {
        let rc = sqlite3_exec(handle, sql, nil, nil, nil)
        guard rc == SQLITE_OK else { throw error(rc) }
    }

    /// A cached prepared statement for `sql`, reset and with `values` bound.
    func prepare(_ sql: String, _ values: [SQLValue]) throws -> Statement {
        let statement: Statement
        if let cached = statements[sql] {
            statement = cached
            sqlite3_reset(statement.pointer)
            sqlite3_clear_bindings(statement.pointer)
        } else {
            var pointer: OpaquePointer?
            let rc = sqlite3_prepare_v2(handle, sql, -1, &pointer, nil)
            guard rc == SQLITE_OK, let pointer else { throw error(rc) }
            statement = Statement(pointer: pointer, connection: self)
            statements[sql] = statement
        }
        for (index, value) in values.enumerated() {
            let position = Int32(index + 1)
            let rc: Int32
            switch value {
            case .null: rc = sqlite3_bind_null(statement.pointer, position)
            case .integer(let number): rc = sqlite3_bind_int64(statement.pointer, position, number)
            case .text(let text):
                rc = text.utf8CString.withUnsafeBufferPointer {
                    orchard_sqlite3_bind_text_transient(
                        statement.pointer, position, $0.baseAddress, Int32($0.count - 1))
                }
            case .blob(let data):
                rc = data.withUnsafeBytes {
                    orchard_sqlite3_bind_blob_transient(statement.pointer, position, $0.baseAddress, Int32($0.count))
                }
            }
            guard rc == SQLITE_OK else { throw error(rc) }
        }
        return statement
    }

    /// Runs a statement that returns no rows; returns the number of rows changed.
    @discardableResult
    func run(_ sql: String, _ values: [SQLValue] = []) throws -> Int {
        let statement = try prepare(sql, values)
        defer { sqlite3_reset(statement.pointer) }
        let rc = sqlite3_step(statement.pointer)
        guard rc == SQLITE_DONE || rc == SQLITE_ROW else { throw error(rc) }
        return Int(sqlite3_changes(handle))
    }

    /// Runs a query and maps each row.
    func query<T>(_ sql: String, _ values: [SQLValue] = [], _ map: (Row) throws -> T) throws -> [T] {
        let statement = try prepare(sql, values)
        defer { sqlite3_reset(statement.pointer) }
        var results: [T] = []
        while true {
            let rc = sqlite3_step(statement.pointer)
            if rc == SQLITE_DONE { break }
            guard rc == SQLITE_ROW else { throw error(rc) }
            results.append(try map(Row(pointer: statement.pointer)))
        }
        return results
    }
}

/// An owned prepared statement; finalized in deinit.
final class Statement {
    let pointer: OpaquePointer
    unowned let connection: SQLiteConnection
    init(pointer: OpaquePointer, connection: SQLiteConnection) {
        self.pointer = pointer
        self.connection = connection
    }
    deinit { sqlite3_finalize(pointer) }
}

/// The current row of a stepping statement.
struct Row {
    let pointer: OpaquePointer

    func isNull(_ index: Int32) -> Bool { sqlite3_column_type(pointer, index) == SQLITE_NULL }
    func int(_ index: Int32) -> Int64 { sqlite3_column_int64(pointer, index) }
    func optionalInt(_ index: Int32) -> Int64? { isNull(index) ? nil : int(index) }
    func bool(_ index: Int32) -> Bool { int(index) != 0 }
    func text(_ index: Int32) -> String {
        guard let raw = sqlite3_column_text(pointer, index) else { return "" }
        return String(cString: raw)
    }
    func optionalText(_ index: Int32) -> String? { isNull(index) ? nil : text(index) }
    func blob(_ index: Int32) -> Data? {
        guard !isNull(index) else { return nil }
        let count = Int(sqlite3_column_bytes(pointer, index))
        guard count > 0, let raw = sqlite3_column_blob(pointer, index) else { return Data() }
        return Data(bytes: raw, count: count)
    }
    func date(_ index: Int32) -> Date { Date(unixMilliseconds: int(index)) }
    func optionalDate(_ index: Int32) -> Date? { isNull(index) ? nil : date(index) }
}

/// The shared row mappings (``StoreRow``) read SQLite rows by `Int` position.
extension Row: StoreRow {
    func text(_ column: Int) -> String { text(Int32(column)) }
    func optionalText(_ column: Int) -> String? { optionalText(Int32(column)) }
    func int(_ column: Int) -> Int64 { int(Int32(column)) }
    func optionalInt(_ column: Int) -> Int64? { optionalInt(Int32(column)) }
    func bool(_ column: Int) -> Bool { bool(Int32(column)) }
    func date(_ column: Int) -> Date { date(Int32(column)) }
    func optionalDate(_ column: Int) -> Date? { optionalDate(Int32(column)) }
    func bytes(_ column: Int) -> Data? { blob(Int32(column)) }
}
