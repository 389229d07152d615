/// A JSON value (RFC 8259) that keeps object members in their order and numbers as their exact text, so a
/// document can be read field by field, re-emitted byte for byte, or written in a canonical form.
///
/// It is the one JSON type of the package: request bodies, Apple Pay tokens and their payment data, payment
/// requests and the CLI's JSON output are all read or written as `JSONValue`. Parse with
/// ``parse(_:limits:)``; write with ``serialized`` or ``JSONWriter``.
public enum JSONValue: Sendable, Equatable {
    /// An object: its members in document order (names are unique in a parsed value).
    case object([JSONMember])
    /// An array.
    case array([JSONValue])
    /// A string.
    case string(String)
    /// A number: its text exactly as it appeared (or as it was built).
    case number(String)
    /// `true` or `false`.
    case bool(Bool)
    /// `null`.
    case null

    /// A number from an integer.
    public static func integer(_ value: some BinaryInteger) -> JSONValue { .number(String(value)) }

    /// The member `key` of an object, or nil.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    /// The string value, or nil.
    public var string: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The members of an object, or nil.
    public var members: [JSONMember]? {
        if case .object(let members) = self { return members }
        return nil
    }

    /// The members of an object by name, or nil (a parsed object has unique names).
    public var fields: [String: JSONValue]? {
        guard case .object(let members) = self else { return nil }
        return Dictionary(members.map { ($0.key, $0.value) }, uniquingKeysWith: { _, last in last })
    }

    /// The value of an integer number that fits `Int64` (`12`, not `12.0` or `1e1`), or nil.
    public var int64: Int64? {
        if case .number(let text) = self { return Int64(text) }
        return nil
    }

    /// The JSON type as a phrase for messages (`a string`, `an object` …).
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    /// An object from fields, its members ordered by name (as a canonical writer would order them).
    public static func sortedObject(_ fields: [String: JSONValue]) -> JSONValue {
        .object(fields.sorted { $0.key < $1.key }.map { JSONMember($0.key, $0.value) })
    }

    /// The compact JSON text of the value, members in their order (``JSONWriter/write(_:to:)``).
    public var serialized: [UInt8] {
        var out: [UInt8] = []
        JSONWriter.write(self, to: &out)
        return out
    }
}

/// One member of a JSON object.
public struct JSONMember: Sendable, Equatable {
    /// The member's name.
    public var key: String
    /// The member's value.
    public var value: JSONValue
    /// Where the value's text lies in the parsed bytes (offsets from the first byte), so a nested document (a
    /// token) can be passed on exactly as it came; nil for a member that was built, not parsed.
    public var valueRange: Range<Int>?

    /// A member.
    public init(_ key: String, _ value: JSONValue) {
        self.key = key
        self.value = value
    }

    init(_ key: String, _ value: JSONValue, range: Range<Int>) {
        self.key = key
        self.value = value
        self.valueRange = range
    }

    /// Members are equal when their names and values are; where they came from does not count.
    public static func == (lhs: JSONMember, rhs: JSONMember) -> Bool {
        lhs.key == rhs.key && lhs.value == rhs.value
    }
}
