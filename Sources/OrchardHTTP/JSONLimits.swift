import Foundation
import OrchardCrypto

/// Bounds on a JSON body, enforced by the one strict parse every JSON request body gets.
public struct JSONLimits: Sendable, Equatable {
    /// The deepest nesting of objects and arrays allowed (a top-level object is depth 1).
    public var maxDepth: Int
    /// The longest string (or object key, or number) allowed, in UTF-8 bytes after unescaping.
    public var maxStringLength: Int

    /// Limits; the defaults are those `orchard serve` enforces: depth 16 and 16 KiB strings.
    public init(maxDepth: Int = 16, maxStringLength: Int = 16_384) {
        self.maxDepth = maxDepth
        self.maxStringLength = maxStringLength
    }

    /// Checks that `body` is one well-formed JSON value within the limits.
    ///
    /// - Throws: as ``parse(_:)``.
    public func validate(_ body: Data) throws(HTTPAPIError) {
        _ = try parse(body)
    }

    /// Parses `body` as one JSON value (RFC 8259), strictly and within the limits: duplicate object keys are
    /// refused, `true`/`false` are the only booleans, and a number must fit a 64-bit integer or a finite double.
    ///
    /// Values come back as `[String: Any]`, `[Any]`, `String`, `Int64` (integers), `Double` (other numbers),
    /// `Bool` and `NSNull`.
    ///
    /// - Throws: ``HTTPAPIError`` `invalid_json`, `json_too_deep` or `string_too_long` (400), naming the byte
    ///   offset but never quoting a value of the body.
    public func parse(_ body: Data) throws(HTTPAPIError) -> JSONBody {
        let result: Result<Any, HTTPAPIError> = body.withUnsafeBytes { raw in
            var parser = JSONBodyParser(bytes: raw.bindMemory(to: UInt8.self), limits: self)
            do throws(HTTPAPIError) {
                return .success(try parser.parseDocument())
            } catch {
                return .failure(error)
            }
        }
        return JSONBody(value: try result.get())
    }
}

/// A request body parsed by ``JSONLimits/parse(_:)``, kept in the ``RequestContext`` so that a request is
/// parsed once (``ParsedJSONBodyKey``).
public struct JSONBody: @unchecked Sendable {  // an immutable tree of value types and NSNull, read on one thread
    /// The parsed value (see ``JSONLimits/parse(_:)`` for the types).
    public let value: Any
}

/// The key under which ``JSONLimitsMiddleware`` keeps the parsed body.
public enum ParsedJSONBodyKey: RequestContextKey {
    public typealias Value = JSONBody
}

/// A strict recursive-descent JSON parser (RFC 8259) that stops at the first violation or exceeded limit.
private struct JSONBodyParser {
    let bytes: UnsafeBufferPointer<UInt8>
    let limits: JSONLimits
    var index = 0

    init(bytes: UnsafeBufferPointer<UInt8>, limits: JSONLimits) {
        self.bytes = bytes
        self.limits = limits
    }

    mutating func parseDocument() throws(HTTPAPIError) -> Any {
        skipWhitespace()
        let value = try parseValue(depth: 0)
        skipWhitespace()
        guard index == bytes.count else { throw invalid("unexpected data after the JSON value") }
        return value
    }

    private func invalid(_ what: String) -> HTTPAPIError {
        .invalidJSON("the request body is not valid JSON: \(what) at byte \(index)")
    }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
    }

    private mutating func parseValue(depth: Int) throws(HTTPAPIError) -> Any {
        guard let byte = current else { throw invalid("unexpected end of input") }
        switch byte {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return try parseString()
        case UInt8(ascii: "t"):
            try parseLiteral("true")
            return true
        case UInt8(ascii: "f"):
            try parseLiteral("false")
            return false
        case UInt8(ascii: "n"):
            try parseLiteral("null")
            return NSNull()
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw invalid("unexpected character")
        }
    }

    private func checkDepth(_ depth: Int) throws(HTTPAPIError) {
        guard depth <= limits.maxDepth else {
            throw HTTPAPIError(
                status: .badRequest, type: .invalidRequest, code: .jsonTooDeep,
                message: "the JSON body nests deeper than \(limits.maxDepth) levels (at byte \(index))")
        }
    }

    private mutating func parseObject(depth: Int) throws(HTTPAPIError) -> [String: Any] {
        try checkDepth(depth)
        index += 1
        skipWhitespace()
        var object: [String: Any] = [:]
        if current == UInt8(ascii: "}") {
            index += 1
            return object
        }
        while true {
            guard current == UInt8(ascii: "\"") else { throw invalid("expected a string key") }
            let keyStart = index
            let key = try parseString()
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw invalid("expected ':'") }
            index += 1
            skipWhitespace()
            let value = try parseValue(depth: depth)
            guard object.updateValue(value, forKey: key) == nil else {
                index = keyStart
                throw invalid("a duplicate key")
            }
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","):
                index += 1
                skipWhitespace()
            case UInt8(ascii: "}"):
                index += 1
                return object
            default: throw invalid("expected ',' or '}'")
            }
        }
    }

    private mutating func parseArray(depth: Int) throws(HTTPAPIError) -> [Any] {
        try checkDepth(depth)
        index += 1
        skipWhitespace()
        var array: [Any] = []
        if current == UInt8(ascii: "]") {
            index += 1
            return array
        }
        while true {
            array.append(try parseValue(depth: depth))
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","):
                index += 1
                skipWhitespace()
            case UInt8(ascii: "]"):
                index += 1
                return array
            default: throw invalid("expected ',' or ']'")
            }
        }
    }

    private func tooLong(_ start: Int) -> HTTPAPIError {
        HTTPAPIError(
            status: .badRequest, type: .invalidRequest, code: .stringTooLong,
            message: "a JSON string in the body is longer than \(limits.maxStringLength) bytes (at byte \(start))")
    }

    private mutating func hexQuad() throws(HTTPAPIError) -> UInt32 {
        var code: UInt32 = 0
        for _ in 0..<4 {
            guard let digit = current.flatMap({ Hex.digit($0) }) else { throw invalid("bad \\u escape") }
            code = code << 4 | UInt32(digit)
            index += 1
        }
        return code
    }

    private mutating func parseString() throws(HTTPAPIError) -> String {
        let start = index
        index += 1
        var utf8: [UInt8] = []
        while true {
            guard let byte = current else { throw invalid("unterminated string") }
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let text = String(validating: utf8, as: UTF8.self) else {
                    index = start
                    throw invalid("a string that is not UTF-8")
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
                    utf8.append(contentsOf: String(Character(Unicode.Scalar(scalar)!)).utf8)
                } else {
                    guard let unescaped = JSONEscape.single(escape) else { throw invalid("bad escape") }
                    utf8.append(unescaped)
                    index += 1
                }
            case 0x00..<0x20:
                throw invalid("control character in string")
            default:
                index += 1
                utf8.append(byte)
            }
            if utf8.count > limits.maxStringLength { throw tooLong(start) }
        }
    }

    private mutating func parseLiteral(_ literal: StaticString) throws(HTTPAPIError) {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw invalid("unexpected end of input") }
        let expected = UnsafeBufferPointer(start: literal.utf8Start, count: count)
        for offset in 0..<count where bytes[index + offset] != expected[offset] {
            throw invalid("unexpected character")
        }
        index += count
    }

    private mutating func parseNumber() throws(HTTPAPIError) -> Any {
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
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        if integral, let integer = Int64(text) { return integer }
        guard let number = Double(text), number.isFinite else {
            index = start
            throw invalid("a number out of range (beyond a 64-bit integer or a double)")
        }
        return number
    }
}
