import Foundation
import OrchardBase

/// A JSON document as a Swift value, used to read the request shapes field by field (so that
/// every problem can be reported with its path) and to write them back.
package enum JSONValue: Hashable, Sendable, Codable {
    case null
    case bool(Bool)
    case number(Decimal)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode(Decimal.self) {
            self = .number(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// Parses JSON text.
    package static func parse(_ data: Data) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: data)
    }

    /// Key-sorted JSON text, pretty printed with two-space indentation (`"key": value`) unless
    /// `pretty` is false; the same bytes on every platform.
    package func serialized(pretty: Bool = true) -> Data {
        var text = ""
        write(into: &text, indent: pretty ? "" : nil)
        return Data(text.utf8)
    }

    private func write(into text: inout String, indent: String?) {
        let inner = indent.map { $0 + "  " }
        let newline = indent == nil ? "" : "\n"
        switch self {
        case .null: text += "null"
        case .bool(let value): text += value ? "true" : "false"
        case .number(let value): text += value.description
        case .string(let value): JSONString.write(value, into: &text)
        case .array(let values):
            guard !values.isEmpty else {
                text += "[]"
                return
            }
            text += "[" + newline
            for (index, value) in values.enumerated() {
                text += inner ?? ""
                value.write(into: &text, indent: inner)
                text += (index < values.count - 1 ? "," : "") + newline
            }
            text += (indent ?? "") + "]"
        case .object(let fields):
            guard !fields.isEmpty else {
                text += "{}"
                return
            }
            text += "{" + newline
            let keys = fields.keys.sorted()
            for (index, key) in keys.enumerated() {
                text += inner ?? ""
                JSONString.write(key, into: &text)
                text += indent == nil ? ":" : ": "
                fields[key]!.write(into: &text, indent: inner)
                text += (index < keys.count - 1 ? "," : "") + newline
            }
            text += (indent ?? "") + "}"
        }
    }

    package var objectValue: [String: JSONValue]? {
        if case .object(let value) = self { return value }
        return nil
    }

    package var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    package var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

/// Builds a JSON object, leaving out nil values.
struct ObjectBuilder {
    var fields: [String: JSONValue] = [:]
    mutating func set(_ key: String, _ value: JSONValue?) {
        if let value { fields[key] = value }
    }
    mutating func set(_ key: String, _ value: String?) {
        if let value { fields[key] = .string(value) }
    }
    mutating func set(_ key: String, _ value: Bool?) {
        if let value { fields[key] = .bool(value) }
    }
    mutating func set(_ key: String, _ value: Int?) {
        if let value { fields[key] = .number(Decimal(value)) }
    }
    mutating func set(_ key: String, strings: [String]?) {
        if let strings { fields[key] = .array(strings.map(JSONValue.string)) }
    }
    var value: JSONValue { .object(fields) }
}
