import OrchardBase

/// Bounds a parse holds a document to.
public struct JSONLimitSet: Sendable, Equatable {
    /// The deepest nesting of objects and arrays allowed (a top-level object is depth 1).
    public var maxDepth: Int
    /// The longest string, object key or number allowed, in UTF-8 bytes after unescaping.
    public var maxStringLength: Int
    /// The longest number allowed, in bytes of its text (refused as ``JSONParseError/Kind/invalid``).
    public var maxNumberLength: Int

    /// Limits; by default depth 32 and no bound on strings or numbers beyond the input's own size.
    public init(maxDepth: Int = 32, maxStringLength: Int = .max, maxNumberLength: Int = .max) {
        self.maxDepth = maxDepth
        self.maxStringLength = maxStringLength
        self.maxNumberLength = maxNumberLength
    }
}

/// Why JSON text was refused: what was wrong, and the byte offset where it was found. The message never
/// quotes a value of the document.
public struct JSONParseError: Error, CustomStringConvertible, Equatable {
    /// The kinds of refusal.
    public enum Kind: Sendable, Equatable {
        /// Not well-formed JSON (or a duplicate name, or a number beyond a 64-bit integer and a double).
        case invalid
        /// Nested deeper than ``JSONLimitSet/maxDepth``.
        case tooDeep
        /// A string, name or number longer than ``JSONLimitSet/maxStringLength``.
        case stringTooLong
    }

    /// The kind of refusal.
    public var kind: Kind
    /// What was wrong (`a duplicate key`, `unterminated string` …), without the offset.
    public var message: String
    /// The byte offset in the input.
    public var offset: Int

    /// A refusal.
    public init(_ kind: Kind, _ message: String, offset: Int) {
        self.kind = kind
        self.message = message
        self.offset = offset
    }

    /// `message at byte offset`.
    public var description: String { "\(message) at byte \(offset)" }
}

extension JSONValue {
    /// Parses `bytes` as one JSON value (RFC 8259), strictly and within `limits`: whitespace around it allowed,
    /// duplicate object names refused, `true`/`false` the only booleans, strings valid UTF-8 without control
    /// characters or lone surrogates, and every number within a 64-bit integer or a finite double.
    ///
    /// A string value of a member named in `opaqueKeys` (at any depth) is a secret the caller reads from the
    /// bytes itself: it is checked (printable ASCII, well-formed escapes decoding to ASCII) but never made into
    /// a `String`. It appears in the result as an empty string, and its member's ``JSONMember/valueRange``
    /// locates its quoted text.
    public static func parse<B: Collection>(
        _ bytes: B, limits: JSONLimitSet = JSONLimitSet(), opaqueKeys: Set<String> = []
    ) throws(JSONParseError) -> JSONValue where B.Element == UInt8 {
        // Contiguous input (Data, arrays) is read in place; anything else is copied once.
        let inPlace = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(JSONParseError) -> JSONValue in
                var parser = JSONParser(bytes: buffer, limits: limits, opaqueKeys: opaqueKeys)
                return try parser.parseDocument()
            }
        }
        if let inPlace { return try inPlace.get() }
        let array = Array(bytes)
        return try array.withUnsafeBufferPointer { buffer throws(JSONParseError) in
            var parser = JSONParser(bytes: buffer, limits: limits, opaqueKeys: opaqueKeys)
            return try parser.parseDocument()
        }
    }

    /// Parses `bytes` with at most `maximumDepth` levels of nesting and no other bound.
    public static func parse<B: Collection>(
        _ bytes: B, maximumDepth: Int
    ) throws(JSONParseError) -> JSONValue where B.Element == UInt8 {
        try parse(bytes, limits: JSONLimitSet(maxDepth: maximumDepth))
    }
}

/// A strict recursive-descent parser that stops at the first violation or exceeded limit.
struct JSONParser {
    let bytes: UnsafeBufferPointer<UInt8>
    let limits: JSONLimitSet
    /// Names whose string values are checked but not decoded (``JSONValue/parse(_:limits:opaqueKeys:)``).
    let opaqueKeys: Set<String>
    var index = 0
    var depth = 0

    init(bytes: UnsafeBufferPointer<UInt8>, limits: JSONLimitSet, opaqueKeys: Set<String> = []) {
        self.bytes = bytes
        self.limits = limits
        self.opaqueKeys = opaqueKeys
    }

    private func invalid(_ message: String, at offset: Int? = nil) -> JSONParseError {
        JSONParseError(.invalid, message, offset: offset ?? index)
    }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    mutating func parseDocument() throws(JSONParseError) -> JSONValue {
        skipWhitespace()
        let value = try parseValue()
        skipWhitespace()
        guard index == bytes.count else { throw invalid("unexpected data after the JSON value") }
        return value
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func parseValue() throws(JSONParseError) -> JSONValue {
        guard let byte = current else { throw invalid("unexpected end of input") }
        switch byte {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"):
            try parseLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try parseLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try parseLiteral("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw invalid("unexpected character")
        }
    }

    private mutating func parseLiteral(_ literal: StaticString) throws(JSONParseError) {
        let count = literal.utf8CodeUnitCount
        guard bytes.count - index >= count else { throw invalid("unexpected end of input") }
        let expected = UnsafeBufferPointer(start: literal.utf8Start, count: count)
        for offset in 0..<count where bytes[index + offset] != expected[offset] {
            throw invalid("unexpected character")
        }
        index += count
    }

    private mutating func enter() throws(JSONParseError) {
        depth += 1
        guard depth <= limits.maxDepth else {
            throw JSONParseError(.tooDeep, "nesting deeper than \(limits.maxDepth) levels", offset: index)
        }
    }

    private mutating func parseObject() throws(JSONParseError) -> JSONValue {
        try enter()
        index += 1
        skipWhitespace()
        var members: [JSONMember] = []
        var seen: Set<String> = []
        if current == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return .object(members)
        }
        while true {
            guard current == UInt8(ascii: "\"") else { throw invalid("expected a string key") }
            let keyStart = index
            let key = try parseString()
            // Duplicate names are refused: a linear scan for small objects, a set beyond.
            let duplicate: Bool
            if members.count < 16 {
                duplicate = members.contains { $0.key == key }
            } else {
                if seen.isEmpty { seen = Set(members.map(\.key)) }
                duplicate = !seen.insert(key).inserted
            }
            guard !duplicate else { throw invalid("a duplicate key", at: keyStart) }
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw invalid("expected ':'") }
            index += 1
            skipWhitespace()
            let valueStart = index
            let value: JSONValue
            if current == UInt8(ascii: "\""), !opaqueKeys.isEmpty, opaqueKeys.contains(key) {
                try skipOpaqueString()
                value = .string("")
            } else {
                value = try parseValue()
            }
            members.append(JSONMember(key, value, range: valueStart..<index))
            guard try another(closing: "}") else { return .object(members) }
        }
    }

    /// After a member or an element: true past a `,`, false past the `closing` bracket (leaving the level).
    private mutating func another(closing: Unicode.Scalar) throws(JSONParseError) -> Bool {
        skipWhitespace()
        switch current {
        case UInt8(ascii: ","):
            index += 1
            skipWhitespace()
            return true
        case UInt8(closing.value):
            index += 1
            depth -= 1
            return false
        default: throw invalid("expected ',' or '\(closing)'")
        }
    }

    private mutating func parseArray() throws(JSONParseError) -> JSONValue {
        try enter()
        index += 1
        skipWhitespace()
        var values: [JSONValue] = []
        if current == UInt8(ascii: "]") {
            index += 1
            depth -= 1
            return .array(values)
        }
        while true {
            values.append(try parseValue())
            guard try another(closing: "]") else { return .array(values) }
        }
    }

    private func tooLong(_ start: Int) -> JSONParseError {
        JSONParseError(.stringTooLong, "a string longer than \(limits.maxStringLength) bytes", offset: start)
    }

    private mutating func parseString() throws(JSONParseError) -> String {
        let quote = index
        index += 1
        let start = index
        // Fast path: no escapes. Eight bytes at a time while none of them is a quote, a backslash, a control
        // character or non-ASCII (the byte loop below handles those).
        if let base = bytes.baseAddress {
            let raw = UnsafeRawPointer(base)
            while bytes.count - index >= 8 {
                let word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                let ones: UInt64 = 0x0101_0101_0101_0101
                let highs: UInt64 = 0x8080_8080_8080_8080
                let quotes = word ^ (ones &* 0x22)
                let backslash = word ^ (ones &* 0x5C)
                // A byte of `x` is zero, or below 0x20, exactly when the corresponding high bit is set here.
                let special =
                    ((quotes &- ones) & ~quotes) | ((backslash &- ones) & ~backslash) | ((word &- ones &* 0x20) & ~word)
                    | word
                if special & highs != 0 { break }
                index += 8
                if index - start > limits.maxStringLength { throw tooLong(quote) }
            }
        }
        var ascii = true
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<index])
                guard slice.count <= limits.maxStringLength else { throw tooLong(quote) }
                index += 1
                // ASCII is valid UTF-8 as it stands; anything else is validated.
                if ascii { return String(decoding: slice, as: UTF8.self) }
                guard let text = String(validating: slice, as: UTF8.self) else {
                    throw invalid("a string that is not UTF-8", at: quote)
                }
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            guard byte >= 0x20 else { throw invalid("control character in string") }
            if byte >= 0x80 { ascii = false }
            index += 1
            if index - start > limits.maxStringLength { throw tooLong(quote) }
        }
        var buffer = Array(bytes[start..<index])
        while true {
            guard let byte = current else { throw invalid("unterminated string") }
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let text = String(validating: buffer, as: UTF8.self) else {
                    throw invalid("a string that is not UTF-8", at: quote)
                }
                return text
            case UInt8(ascii: "\\"):
                index += 1
                guard let escape = current else { throw invalid("unterminated string") }
                if escape == UInt8(ascii: "u") {
                    index += 1
                    var scalar = try hexQuad()
                    if (0xD800...0xDBFF).contains(scalar) {
                        guard current == UInt8(ascii: "\\"), index + 1 < bytes.count,
                            bytes[index + 1] == UInt8(ascii: "u")
                        else { throw invalid("a lone surrogate in a \\u escape") }
                        index += 2
                        let low = try hexQuad()
                        guard (0xDC00...0xDFFF).contains(low) else { throw invalid("a lone surrogate in a \\u escape") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(scalar) {
                        throw invalid("a lone surrogate in a \\u escape")
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw invalid("bad \\u escape") }
                    buffer.append(contentsOf: String(Character(unicode)).utf8)
                } else {
                    guard let unescaped = JSONEscape.single(escape) else { throw invalid("bad escape") }
                    buffer.append(unescaped)
                    index += 1
                }
            case 0x00..<0x20:
                throw invalid("control character in string")
            default:
                index += 1
                buffer.append(byte)
            }
            if buffer.count > limits.maxStringLength { throw tooLong(quote) }
        }
    }

    /// Moves past a secret string without decoding it: printable ASCII, and escapes that decode to ASCII.
    private mutating func skipOpaqueString() throws(JSONParseError) {
        let quote = index
        index += 1
        var length = 0
        while true {
            guard let byte = current else { throw invalid("unterminated string") }
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return
            case UInt8(ascii: "\\"):
                index += 1
                guard let escape = current else { throw invalid("unterminated string") }
                if escape == UInt8(ascii: "u") {
                    index += 1
                    guard try hexQuad() < 0x80 else { throw invalid("a secret string that is not ASCII", at: quote) }
                } else {
                    guard JSONEscape.single(escape) != nil else { throw invalid("bad escape") }
                    index += 1
                }
            case 0x00..<0x20: throw invalid("control character in string")
            case 0x80...: throw invalid("a secret string that is not ASCII", at: quote)
            default: index += 1
            }
            length += 1
            if length > limits.maxStringLength { throw tooLong(quote) }
        }
    }

    private mutating func hexQuad() throws(JSONParseError) -> UInt32 {
        var code: UInt32 = 0
        for _ in 0..<4 {
            guard let digit = current.flatMap(JSONEscape.hexDigit) else { throw invalid("bad \\u escape") }
            code = code << 4 | UInt32(digit)
            index += 1
        }
        return code
    }

    private mutating func parseNumber() throws(JSONParseError) -> String {
        let start = index
        func isDigit(_ byte: UInt8?) -> Bool { byte.map { (0x30...0x39).contains($0) } ?? false }
        var integral = true
        if current == UInt8(ascii: "-") { index += 1 }
        if current == UInt8(ascii: "0") {
            index += 1
        } else if isDigit(current) {
            while isDigit(current) { index += 1 }
        } else {
            throw invalid("bad number")
        }
        if current == UInt8(ascii: ".") {
            integral = false
            index += 1
            guard isDigit(current) else { throw invalid("bad number") }
            while isDigit(current) { index += 1 }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            integral = false
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard isDigit(current) else { throw invalid("bad number") }
            while isDigit(current) { index += 1 }
        }
        if index - start > limits.maxStringLength { throw tooLong(start) }
        if index - start > limits.maxNumberLength { throw invalid("number too long", at: start) }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        if integral, Int64(text) != nil { return text }
        guard let number = Double(text), number.isFinite else {
            throw invalid("a number out of range (beyond a 64-bit integer or a double)", at: start)
        }
        return text
    }
}
