import Foundation
import OrchardBase

/// JSON text already encoded, written as it is (a stored body inside a larger one).
public struct RawJSON: Sendable {
    /// The encoded text.
    public var bytes: Data
    /// Raw text to embed.
    public init(_ bytes: Data) { self.bytes = bytes }
}

/// A value with no JSON form: a non-finite number, or a type JSON cannot carry.
public struct NotJSON: Error, CustomStringConvertible {
    /// What could not be written.
    public var description: String
}

/// The byte writer of the package's JSON: compact output, slashes and non-ASCII characters unescaped, quotes,
/// backslashes and control characters escaped.
///
/// It writes a ``JSONValue`` as it is (``write(_:to:)``) or canonically (``writeCanonical(_:to:)``: names
/// sorted, numbers in one form), and Foundation-style trees of dictionaries, arrays, strings, numbers and
/// `NSNull` (``json(_:)``), which is how the API's responses and webhook bodies are built.
public enum JSONWriter {
    /// `value` as a JSON string literal: quotes, backslashes and control characters escaped; everything else
    /// (slashes, non-ASCII) as its UTF-8 bytes. Runs without escapes are copied whole.
    public static func writeString(_ value: String, to out: inout [UInt8]) { JSONString.write(value, to: &out) }

    /// The compact text of `value`, members in their order and numbers as their text.
    public static func write(_ value: JSONValue, to out: inout [UInt8]) {
        write(value, canonical: false, to: &out)
    }

    /// The canonical text of `value`: members sorted by name (Unicode order, byte order for ASCII), integers
    /// that fit 64 bits as integers and every other number in the one form ``writeNumber(_:to:)`` gives it,
    /// so two documents that differ only in member order or number spelling (`2`, `2.0`, `2e0`) write the same
    /// bytes.
    public static func writeCanonical(_ value: JSONValue, to out: inout [UInt8]) {
        write(value, canonical: true, to: &out)
    }

    private static func write(_ value: JSONValue, canonical: Bool, to out: inout [UInt8]) {
        switch value {
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (index, member) in (canonical ? members.sorted { $0.key < $1.key } : members).enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                writeString(member.key, to: &out)
                out.append(UInt8(ascii: ":"))
                write(member.value, canonical: canonical, to: &out)
            }
            out.append(UInt8(ascii: "}"))
        case .array(let values):
            out.append(UInt8(ascii: "["))
            for (index, element) in values.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                write(element, canonical: canonical, to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .string(let text): writeString(text, to: &out)
        case .number(let text): canonical ? writeCanonicalNumber(text, to: &out) : out.append(contentsOf: text.utf8)
        case .bool(let flag): out.append(contentsOf: (flag ? "true" : "false").utf8)
        case .null: out.append(contentsOf: "null".utf8)
        }
    }

    private static func writeCanonicalNumber(_ text: String, to out: inout [UInt8]) {
        if let integer = Int64(text) {
            out.append(contentsOf: String(integer).utf8)
        } else if !text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }), let integer = UInt64(text) {
            out.append(contentsOf: String(integer).utf8)
        } else if let number = Double(text), number.isFinite {
            writeNumber(number, to: &out)
        } else {
            out.append(contentsOf: text.utf8)
        }
    }

    /// The canonical bytes of `value` (``writeCanonical(_:to:)``).
    public static func canonical(_ value: JSONValue) -> Data {
        var out: [UInt8] = []
        writeCanonical(value, to: &out)
        return Data(out)
    }

    /// A finite double: integral values below 10^15 as integers (`2`), others in Swift's shortest round-trip
    /// form (`2.5`, `1e+20`).
    public static func writeNumber(_ number: Double, to out: inout [UInt8]) {
        if number == number.rounded(), abs(number) < 1e15 {
            out.append(contentsOf: String(Int64(number)).utf8)
        } else {
            out.append(contentsOf: "\(number)".utf8)
        }
    }

    /// The compact JSON bytes of a Foundation-style value: dictionaries with string keys (written with their
    /// keys sorted by Unicode order, which is byte order for ASCII), arrays, strings, integers, floating-point
    /// numbers (integral ones as integers), booleans, `NSNull`, `NSNumber`, ``RawJSON`` and ``JSONValue``
    /// (written canonically). `JSONSerialization` sorts keys through locale-aware string comparisons and dynamic
    /// casts, which cost more than a payment itself.
    public static func json(_ object: Any) throws(NotJSON) -> Data {
        var out: [UInt8] = []
        out.reserveCapacity(1024)
        try write(any: object, to: &out)
        return Data(out)
    }

    /// Writes a Foundation-style value (see ``json(_:)``).
    public static func write(any value: Any, to out: inout [UInt8]) throws(NotJSON) {
        switch value {
        case let text as String:
            writeString(text, to: &out)
        case let object as [String: Any]:
            out.append(UInt8(ascii: "{"))
            for (index, key) in object.keys.sorted().enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                writeString(key, to: &out)
                out.append(UInt8(ascii: ":"))
                try write(any: object[key]!, to: &out)
            }
            out.append(UInt8(ascii: "}"))
        case let array as [Any]:
            out.append(UInt8(ascii: "["))
            for (index, element) in array.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                try write(any: element, to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case is NSNull:
            out.append(contentsOf: "null".utf8)
        case let raw as RawJSON:
            out.append(contentsOf: raw.bytes)
        case let json as JSONValue:
            writeCanonical(json, to: &out)
        default:
            try writeScalar(value, to: &out)
        }
    }

    private static func writeScalar(_ value: Any, to out: inout [UInt8]) throws(NotJSON) {
        let dynamicType = type(of: value)
        if dynamicType is NSNumber.Type, let number = value as? NSNumber {
            // An NSNumber: its own type says boolean, floating point or integer.
            switch String(cString: number.objCType) {
            case "c", "B": out.append(contentsOf: (number.boolValue ? "true" : "false").utf8)
            case "f", "d": try writeDouble(number.doubleValue, to: &out)
            case "Q", "L", "I", "S", "C": out.append(contentsOf: String(number.uint64Value).utf8)
            default: out.append(contentsOf: String(number.int64Value).utf8)
            }
        } else if dynamicType == Bool.self, let flag = value as? Bool {
            out.append(contentsOf: (flag ? "true" : "false").utf8)
        } else if let integer = value as? any BinaryInteger {
            out.append(contentsOf: String(describing: integer).utf8)
        } else if let number = value as? Double {
            try writeDouble(number, to: &out)
        } else if let number = value as? Float {
            guard number.isFinite else { throw NotJSON(description: "\(number) has no JSON form") }
            // Float's own shortest form ("0.1"), not that of the Double it widens to.
            out.append(
                contentsOf: (number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : "\(number)")
                    .utf8)
        } else if let number = value as? Decimal {
            out.append(contentsOf: number.description.utf8)
        } else {
            throw NotJSON(description: "\(dynamicType) has no JSON form")
        }
    }

    private static func writeDouble(_ number: Double, to out: inout [UInt8]) throws(NotJSON) {
        guard number.isFinite else { throw NotJSON(description: "\(number) has no JSON form") }
        writeNumber(number, to: &out)
    }
}
