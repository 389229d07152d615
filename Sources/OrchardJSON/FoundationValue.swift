import Foundation

extension JSONValue {
    /// The value as a Foundation-style tree: `[String: Any]`, `[Any]`, `String`, `Int64` (an integer that fits),
    /// `Double` (any other number), `Bool` and `NSNull`; what ``JSONWriter/json(_:)`` writes back.
    public var foundationValue: Any {
        switch self {
        case .object(let members):
            var object: [String: Any] = [:]
            for member in members { object[member.key] = member.value.foundationValue }
            return object
        case .array(let values): return values.map(\.foundationValue)
        case .string(let text): return text
        case .number(let text):
            if let integer = Int64(text) { return integer }
            return Double(text) ?? Double.nan
        case .bool(let flag): return flag
        case .null: return NSNull()
        }
    }

    /// The members of an object as a Foundation-style dictionary whose values are `JSONValue`s, for building a
    /// larger response around a parsed document (``JSONWriter/json(_:)`` writes them canonically); nil for
    /// anything but an object.
    public var objectForWriting: [String: Any]? {
        guard case .object(let members) = self else { return nil }
        var object: [String: Any] = [:]
        for member in members { object[member.key] = member.value }
        return object
    }
}
