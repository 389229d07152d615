import CPostgres
import Foundation
import Gateway

/// An error from PostgreSQL or libpq: the SQLSTATE (when the server sent one) and the server's message.
/// Never carries bound values nor the connection's password.
public struct PostgresError: Error, CustomStringConvertible, Sendable {
    /// The five-character SQLSTATE, or nil for a client-side failure (connection lost, cannot connect).
    public var sqlState: String?
    /// What went wrong, as libpq or the server worded it (one line).
    public var message: String
    /// The constraint the server named (a unique violation names its index), or nil.
    public var constraint: String?

    /// The transaction lost a serialization race (`40001`) or a deadlock (`40P01`): running it again is safe.
    public var isSerializationFailure: Bool { sqlState == "40001" || sqlState == "40P01" }
    /// The connection is gone or unusable (no SQLSTATE, or class 08 / 57P0x: the server shut down).
    public var isConnectionFailure: Bool {
        guard let sqlState else { return true }
        return sqlState.hasPrefix("08") || sqlState.hasPrefix("57P0")
    }

    public var description: String {
        sqlState.map { "postgres error \($0): \(message)" } ?? "postgres error: \(message)"
    }

    /// Whether the unique index or constraint `name` refused the statement (`23505`).
    func violatesUnique(_ name: String) -> Bool { sqlState == "23505" && constraint == name }

    init(sqlState: String?, message: String, constraint: String? = nil) {
        self.sqlState = sqlState
        self.constraint = constraint
        self.message = message.split(whereSeparator: \.isNewline).first.map(String.init) ?? "unknown error"
    }
}

/// A value bound to a statement. Each case names the PostgreSQL type it is sent as (binary format).
enum PGValue {
    case null
    case int8(Int64)
    case text(String)
    case bytea(Data)
    case bool(Bool)
    /// Sent as `timestamptz`, at millisecond precision (as the SQLite store keeps times).
    case timestamptz(Date)
    /// A JSON document, sent as `jsonb`.
    case jsonb(String)
}

extension PGValue {
    init(_ value: String?) { self = value.map { .text($0) } ?? .null }
    init(_ value: Int64?) { self = value.map { .int8($0) } ?? .null }
    init(_ value: Int) { self = .int8(Int64(value)) }
    init(_ value: Bool) { self = .bool(value) }
    init(_ value: Data?) { self = value.map { .bytea($0) } ?? .null }
    init(_ value: Date?) { self = value.map { .timestamptz($0) } ?? .null }

    /// The type's OID (0 lets the server infer the type of a NULL).
    var oid: Oid {
        switch self {
        case .null: 0
        case .int8: 20
        case .text: 25
        case .bytea: 17
        case .bool: 16
        case .timestamptz: 1184
        case .jsonb: 3802
        }
    }

    /// The binary wire form, nil for NULL.
    var bytes: [UInt8]? {
        switch self {
        case .null: nil
        case .int8(let number): bigEndianBytes(number)
        case .text(let text): Array(text.utf8)
        case .bytea(let data): Array(data)
        case .bool(let flag): [flag ? 1 : 0]
        case .timestamptz(let date): bigEndianBytes(PGTime.microseconds(date))
        case .jsonb(let text): [1] + Array(text.utf8)
        }
    }
}

private func bigEndianBytes(_ number: Int64) -> [UInt8] {
    withUnsafeBytes(of: number.bigEndian) { Array($0) }
}

/// PostgreSQL's binary `timestamptz`: microseconds since 2000-01-01 00:00:00 UTC, kept at millisecond precision.
enum PGTime {
    static let epochOffsetMilliseconds: Int64 = 946_684_800_000

    static func microseconds(_ date: Date) -> Int64 { (date.unixMilliseconds - epochOffsetMilliseconds) * 1000 }

    static func date(microseconds: Int64) -> Date {
        Date(unixMilliseconds: microseconds / 1000 + epochOffsetMilliseconds)
    }
}

/// One owned `PGresult`; cleared in deinit. Rows are read through ``PGRow`` while the result is alive.
final class PGResult {
    private let handle: OpaquePointer

    init(takingOwnershipOf handle: OpaquePointer) { self.handle = handle }
    deinit { PQclear(handle) }

    var status: ExecStatusType { PQresultStatus(handle) }
    var rowCount: Int { Int(PQntuples(handle)) }
    /// Rows changed by an INSERT/UPDATE/DELETE.
    var changedRows: Int { Int(String(cString: PQcmdTuples(handle))) ?? 0 }

    /// The error this result reports, when it failed.
    var error: PostgresError? {
        switch status {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY: return nil
        default:
            let state = orchard_pq_sqlstate(handle).map { String(cString: $0) }
            let message = PQresultErrorMessage(handle).map { String(cString: $0) } ?? ""
            return PostgresError(
                sqlState: state, message: message.isEmpty ? "statement failed" : message,
                constraint: orchard_pq_constraint(handle).map { String(cString: $0) })
        }
    }

    func isNull(row: Int, column: Int) -> Bool { PQgetisnull(handle, Int32(row), Int32(column)) == 1 }
    func type(column: Int) -> Oid { PQftype(handle, Int32(column)) }

    /// A copy of a field's binary value.
    func bytes(row: Int, column: Int) -> [UInt8] {
        let count = Int(PQgetlength(handle, Int32(row), Int32(column)))
        guard count > 0, let raw = PQgetvalue(handle, Int32(row), Int32(column)) else { return [] }
        return raw.withMemoryRebound(to: UInt8.self, capacity: count) {
            Array(UnsafeBufferPointer(start: $0, count: count))
        }
    }
}

/// One row of a binary-format result.
struct PGRow: StoreRow {
    let result: PGResult
    let index: Int

    func isNull(_ column: Int) -> Bool { result.isNull(row: index, column: column) }

    /// An integer column (`int2`, `int4` or `int8`).
    func int(_ column: Int) -> Int64 {
        let bytes = result.bytes(row: index, column: column)
        guard !bytes.isEmpty else { return 0 }
        var value: Int64 = bytes[0] & 0x80 != 0 ? -1 : 0
        for byte in bytes { value = (value << 8) | Int64(byte) }
        return value
    }
    func optionalInt(_ column: Int) -> Int64? { isNull(column) ? nil : int(column) }
    func bool(_ column: Int) -> Bool { result.bytes(row: index, column: column).first.map { $0 != 0 } ?? false }
    /// A `text` column, or the document of a `jsonb` column.
    func text(_ column: Int) -> String {
        var bytes = result.bytes(row: index, column: column)
        if result.type(column: column) == 3802, !bytes.isEmpty { bytes.removeFirst() }
        return String(decoding: bytes, as: UTF8.self)
    }
    func optionalText(_ column: Int) -> String? { isNull(column) ? nil : text(column) }
    func bytea(_ column: Int) -> Data? { isNull(column) ? nil : Data(result.bytes(row: index, column: column)) }
    func date(_ column: Int) -> Date { PGTime.date(microseconds: int(column)) }
    func optionalDate(_ column: Int) -> Date? { isNull(column) ? nil : date(column) }
    func bytes(_ column: Int) -> Data? { bytea(column) }
}

/// One owned `PGconn`; finished in deinit. Not thread-safe: the pool hands it to one caller at a time.
/// Statements are prepared once per connection (named after their text and parameter types) and run with
/// bound parameters in binary format.
final class PGConnection {
    private let handle: OpaquePointer
    private var prepared: [String: String] = [:]

    /// The last error a statement on this connection failed with (the store reads it when a transaction's body
    /// turned it into an error of its own).
    var lastError: PostgresError?
    /// Whether a statement changed a row since the store last cleared it (at the start of a transaction).
    var changedRows = false

    /// Connects with libpq's keyword/value pairs; a `dbname` value that is a `postgres://` URI is expanded, its
    /// settings overriding the keywords before it. The error never shows the password.
    init(keywords: [String], values: [String]) throws {
        let handle = withCStrings(keywords) { keys in
            withCStrings(values) { values in PQconnectdbParams(keys, values, 1) }
        }
        guard let handle else { throw PostgresError(sqlState: nil, message: "out of memory") }
        guard PQstatus(handle) == CONNECTION_OK else {
            let message = String(cString: PQerrorMessage(handle))
            PQfinish(handle)
            throw PostgresError(sqlState: "08001", message: message.isEmpty ? "cannot connect" : message)
        }
        self.handle = handle
        orchard_pq_silence_notices(handle)
    }

    deinit { PQfinish(handle) }

    /// Whether the connection is still usable (not lost, not in a failed state).
    var isHealthy: Bool { PQstatus(handle) == CONNECTION_OK }
    /// Whether a transaction is open on the connection.
    var inTransaction: Bool { PQtransactionStatus(handle) != PQTRANS_IDLE }

    private func failure() -> PostgresError {
        let message = String(cString: PQerrorMessage(handle))
        return PostgresError(sqlState: nil, message: message.isEmpty ? "connection lost" : message)
    }

    /// Remembers `error` as the last one and returns it.
    private func failed(_ error: PostgresError) -> PostgresError {
        lastError = error
        return error
    }

    /// Runs SQL without parameters (several statements allowed), e.g. `BEGIN` or a migration.
    func execute(_ sql: String) throws {
        guard let raw = PQexec(handle, sql) else { throw failed(failure()) }
        let result = PGResult(takingOwnershipOf: raw)
        if let error = result.error { throw failed(error) }
    }

    /// Runs `sql` (placeholders `$1`…) with `values` bound, as a prepared statement.
    @discardableResult
    func run(_ sql: String, _ values: [PGValue] = []) throws -> PGResult {
        let types = values.map(\.oid)
        let key = sql + "\u{0}" + types.map(String.init).joined(separator: ",")
        let name: String
        if let known = prepared[key] {
            name = known
        } else {
            name = "orchard_\(prepared.count)"
            guard let raw = PQprepare(handle, name, sql, Int32(types.count), types) else { throw failed(failure()) }
            let result = PGResult(takingOwnershipOf: raw)
            if let error = result.error { throw failed(error) }
            prepared[key] = name
        }
        let buffers = values.map(\.bytes)
        let lengths = buffers.map { Int32($0?.count ?? 0) }
        let formats = [Int32](repeating: 1, count: values.count)
        let raw = withPointers(to: buffers) { pointers in
            PQexecPrepared(handle, name, Int32(values.count), pointers, lengths, formats, 1)
        }
        guard let raw else { throw failed(failure()) }
        let result = PGResult(takingOwnershipOf: raw)
        if let error = result.error { throw failed(error) }
        if result.changedRows > 0 { changedRows = true }
        return result
    }

    /// Runs a query and maps each row.
    func query<T>(_ sql: String, _ values: [PGValue] = [], _ map: (PGRow) throws -> T) throws -> [T] {
        let result = try run(sql, values)
        return try (0..<result.rowCount).map { try map(PGRow(result: result, index: $0)) }
    }

    /// The number of rows a statement changed.
    func change(_ sql: String, _ values: [PGValue] = []) throws -> Int { try run(sql, values).changedRows }
}

/// Calls `body` with a NULL-terminated array of C strings, valid only during the call.
private func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
    let copies = strings.map { strdup($0) }
    defer { copies.forEach { free($0) } }
    let pointers = copies.map { UnsafePointer($0) } + [nil]
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}

/// Calls `body` with C pointers to each buffer (NULL for nil), valid only during the call.
private func withPointers<R>(to buffers: [[UInt8]?], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
    var pointers: [UnsafePointer<CChar>?] = []
    func next(_ index: Int) -> R {
        if index == buffers.count { return body(pointers) }
        guard let buffer = buffers[index] else {
            pointers.append(nil)
            return next(index + 1)
        }
        return buffer.withUnsafeBufferPointer { raw in
            // An empty value still needs a non-NULL pointer (NULL means SQL NULL).
            let pointer = raw.baseAddress.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) }
            pointers.append(pointer ?? emptyValue)
            return next(index + 1)
        }
    }
    return next(0)
}

nonisolated(unsafe) private let emptyValue: UnsafePointer<CChar> = {
    let pointer = UnsafeMutablePointer<CChar>.allocate(capacity: 1)
    pointer.initialize(to: 0)
    return UnsafePointer(pointer)
}()
