import Foundation
import OrchardCrypto

/// Bounds on a JSON body, checked by a validating scan before any decoding.
public struct JSONLimits: Sendable, Equatable {
    /// The deepest nesting of objects and arrays allowed (a top-level object is depth 1).
    public var maxDepth: Int
    /// The longest string (or object key, or number) allowed, in UTF-8 bytes after unescaping.
    public var maxStringLength: Int

    /// Limits; the defaults are depth 32 and 8 KiB strings.
    public init(maxDepth: Int = 32, maxStringLength: Int = 8_192) {
        self.maxDepth = maxDepth
        self.maxStringLength = maxStringLength
    }

    /// Checks that `body` is one well-formed JSON value within the limits.
    ///
    /// - Throws: ``HTTPAPIError`` `invalid_json`, `json_too_deep` or `string_too_long` (400), naming the byte
    ///   offset but never quoting the body.
    public func validate(_ body: Data) throws(HTTPAPIError) {
        let result: HTTPAPIError? = body.withUnsafeBytes { raw -> HTTPAPIError? in
            var scanner = JSONScanner(bytes: raw.bindMemory(to: UInt8.self), limits: self)
            do {
                try scanner.scanDocument()
                return nil
            } catch {
                return error as? HTTPAPIError ?? .invalidJSON("the request body is not valid JSON")
            }
        }
        if let result { throw result }
    }
}

/// A recursive-descent JSON syntax checker (RFC 8259) that stops at the first violation or exceeded limit.
private struct JSONScanner {
    let bytes: UnsafeBufferPointer<UInt8>
    let limits: JSONLimits
    var index = 0

    init(bytes: UnsafeBufferPointer<UInt8>, limits: JSONLimits) {
        self.bytes = bytes
        self.limits = limits
    }

    mutating func scanDocument() throws(HTTPAPIError) {
        skipWhitespace()
        try scanValue(depth: 0)
        skipWhitespace()
        guard index == bytes.count else { throw invalid("unexpected data after the JSON value") }
    }

    private func invalid(_ what: String) -> HTTPAPIError {
        .invalidJSON("the request body is not valid JSON: \(what) at byte \(index)")
    }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
    }

    private mutating func scanValue(depth: Int) throws(HTTPAPIError) {
        guard let byte = current else { throw invalid("unexpected end of input") }
        switch byte {
        case UInt8(ascii: "{"): try scanObject(depth: depth + 1)
        case UInt8(ascii: "["): try scanArray(depth: depth + 1)
        case UInt8(ascii: "\""): try scanString()
        case UInt8(ascii: "t"): try scanLiteral("true")
        case UInt8(ascii: "f"): try scanLiteral("false")
        case UInt8(ascii: "n"): try scanLiteral("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try scanNumber()
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

    private mutating func scanObject(depth: Int) throws(HTTPAPIError) {
        try checkDepth(depth)
        index += 1
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            index += 1
            return
        }
        while true {
            guard current == UInt8(ascii: "\"") else { throw invalid("expected a string key") }
            try scanString()
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw invalid("expected ':'") }
            index += 1
            skipWhitespace()
            try scanValue(depth: depth)
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","):
                index += 1
                skipWhitespace()
            case UInt8(ascii: "}"):
                index += 1
                return
            default: throw invalid("expected ',' or '}'")
            }
        }
    }

    private mutating func scanArray(depth: Int) throws(HTTPAPIError) {
        try checkDepth(depth)
        index += 1
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            index += 1
            return
        }
        while true {
            try scanValue(depth: depth)
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","):
                index += 1
                skipWhitespace()
            case UInt8(ascii: "]"):
                index += 1
                return
            default: throw invalid("expected ',' or ']'")
            }
        }
    }

    private func tooLong(_ start: Int) -> HTTPAPIError {
        HTTPAPIError(
            status: .badRequest, type: .invalidRequest, code: .stringTooLong,
            message: "a JSON string in the body is longer than \(limits.maxStringLength) bytes (at byte \(start))")
    }

    private mutating func scanString() throws(HTTPAPIError) {
        let start = index
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
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                    UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    index += 1
                    length += 1
                case UInt8(ascii: "u"):
                    index += 1
                    var code: UInt32 = 0
                    for _ in 0..<4 {
                        guard let digit = current.flatMap({ Hex.digit($0) }) else { throw invalid("bad \\u escape") }
                        code = code << 4 | UInt32(digit)
                        index += 1
                    }
                    // UTF-8 length of the escaped code unit; a surrogate pair counts 2 + 2 = 4.
                    length += code < 0x80 ? 1 : code < 0x800 || (0xD800...0xDFFF).contains(code) ? 2 : 3
                default: throw invalid("bad escape")
                }
            case 0x00..<0x20:
                throw invalid("control character in string")
            default:
                index += 1
                length += 1
            }
            if length > limits.maxStringLength { throw tooLong(start) }
        }
    }

    private mutating func scanLiteral(_ literal: String) throws(HTTPAPIError) {
        let expected = Array(literal.utf8)
        let count = expected.count
        guard index + count <= bytes.count else { throw invalid("unexpected end of input") }
        for offset in 0..<count where bytes[index + offset] != expected[offset] {
            throw invalid("unexpected character")
        }
        index += count
    }

    private mutating func scanNumber() throws(HTTPAPIError) {
        let start = index
        func isDigit(_ byte: UInt8?) -> Bool { byte.map { (0x30...0x39).contains($0) } ?? false }
        if current == UInt8(ascii: "-") { index += 1 }
        if current == UInt8(ascii: "0") {
            index += 1
        } else if isDigit(current) {
            while isDigit(current) { index += 1 }
        } else {
            throw invalid("bad number")
        }
        if current == UInt8(ascii: ".") {
            index += 1
            guard isDigit(current) else { throw invalid("bad number") }
            while isDigit(current) { index += 1 }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard isDigit(current) else { throw invalid("bad number") }
            while isDigit(current) { index += 1 }
        }
        if index - start > limits.maxStringLength { throw tooLong(start) }
    }
}
