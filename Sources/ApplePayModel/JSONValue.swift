import Foundation
import OrchardJSON

// The payment-request shapes are read and written as OrchardJSON's `JSONValue`: read field by field (so that
// every problem can be reported with its path) and written back key-sorted (`JSONValue.sortedText(pretty:)`).

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
        if let value { fields[key] = .integer(value) }
    }
    mutating func set(_ key: String, strings: [String]?) {
        if let strings { fields[key] = .array(strings.map(JSONValue.string)) }
    }
    var value: JSONValue { .sortedObject(fields) }
}
