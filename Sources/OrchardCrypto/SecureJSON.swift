import Foundation
import OrchardBase

/// Secret string fields of JSON held in ``SecureBytes``, read and written without a `String` of the secret.
package enum SecureJSON {
    /// The unescaped string at `path` (object keys from the root) of the JSON in `json`, copied into a new
    /// zeroing buffer; nil when the path is absent, not a string, or its escapes are malformed.
    package static func string(at path: [String], in json: SecureBytes) -> SecureBytes? {
        json.withUnsafeBytes { buffer -> SecureBytes? in
            var scanner = SecureJSONScanner(bytes: buffer)
            guard let range = scanner.findString(path: path.map { Array($0.utf8) }) else { return nil }
            var unescaped = [UInt8]()
            unescaped.reserveCapacity(range.count)
            defer { SecureBytes.zero(&unescaped) }
            guard SecureJSONScanner.unescape(buffer, range, into: &unescaped) else { return nil }
            return SecureBytes(unescaped)
        }
    }

    /// Appends `"name":"value"` to `out`, the value JSON-escaped (`"`, `\\` and control characters).
    package static func appendMember(_ name: String, _ value: SecureBytes, to out: inout [UInt8]) {
        appendQuoted(Array(name.utf8), to: &out)
        out.append(UInt8(ascii: ":"))
        value.withUnsafeBytes { appendQuoted($0, to: &out) }
    }

    private static func appendQuoted<Bytes: Collection>(_ bytes: Bytes, to out: inout [UInt8])
    where Bytes.Element == UInt8 {
        let digits = Array("0123456789abcdef".utf8)
        out.append(UInt8(ascii: "\""))
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), byte]
            case 0x0A: out += Array("\\n".utf8)
            case 0x0D: out += Array("\\r".utf8)
            case 0x09: out += Array("\\t".utf8)
            case 0..<0x20: out += Array("\\u00".utf8) + [digits[Int(byte >> 4)], digits[Int(byte & 0x0f)]]
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

/// A minimal scanner over validated JSON bytes that locates a string value by its key path without decoding
/// anything into `String`s, so secret fields can go from the plaintext into ``SecureBytes`` directly.
package struct SecureJSONScanner {
    package let bytes: UnsafeRawBufferPointer
    package var index = 0

    package init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    package mutating func skipWhitespace() {
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
    }

    /// The raw (still escaped) contents of the string starting at `index` (a quote); moves past it.
    package mutating func rawString() -> Range<Int>? {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
        let start = index + 1
        index = start
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\\"): index += 2
            case UInt8(ascii: "\""):
                defer { index += 1 }
                return start..<index
            default: index += 1
            }
        }
        return nil
    }

    /// Moves past one value of any kind.
    package mutating func skipValue(depth: Int = 0) -> Bool {
        skipWhitespace()
        guard index < bytes.count, depth < 64 else { return false }
        switch bytes[index] {
        case UInt8(ascii: "\""): return rawString() != nil
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            let close = bytes[index] == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
            let isObject = close == UInt8(ascii: "}")
            index += 1
            skipWhitespace()
            if index < bytes.count, bytes[index] == close {
                index += 1
                return true
            }
            while index < bytes.count {
                if isObject {
                    skipWhitespace()
                    guard rawString() != nil else { return false }
                    skipWhitespace()
                    guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return false }
                    index += 1
                }
                guard skipValue(depth: depth + 1) else { return false }
                skipWhitespace()
                guard index < bytes.count else { return false }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                } else if bytes[index] == close {
                    index += 1
                    return true
                } else {
                    return false
                }
            }
            return false
        default:
            // A number or a literal: up to the next delimiter.
            while index < bytes.count,
                ![UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0A, 0x0D]
                    .contains(bytes[index])
            {
                index += 1
            }
            return true
        }
    }

    /// The raw range of the string value at `path` in the object starting at `index`.
    package mutating func findString(path: [[UInt8]]) -> Range<Int>? {
        guard let key = path.first else { return nil }
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else { return nil }
        index += 1
        while true {
            skipWhitespace()
            guard index < bytes.count else { return nil }
            if bytes[index] == UInt8(ascii: "}") { return nil }
            guard let name = rawString() else { return nil }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return nil }
            index += 1
            skipWhitespace()
            if bytes[name].elementsEqual(key) {
                if path.count == 1 { return rawString() }
                return findString(path: Array(path.dropFirst()))
            }
            guard skipValue() else { return nil }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ",") else { return nil }
            index += 1
        }
    }

    /// Appends the unescaped contents of the raw string `range` to `out`; false when an escape is malformed.
    package static func unescape(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>, into out: inout [UInt8]) -> Bool
    {
        var index = range.lowerBound
        while index < range.upperBound {
            let byte = bytes[index]
            guard byte == UInt8(ascii: "\\") else {
                out.append(byte)
                index += 1
                continue
            }
            guard index + 1 < range.upperBound else { return false }
            if let decoded = JSONEscape.single(bytes[index + 1]) {
                out.append(decoded)
                index += 2
                continue
            }
            switch bytes[index + 1] {
            case UInt8(ascii: "u"):
                guard index + 6 <= range.upperBound else { return false }
                var scalar: UInt32 = 0
                for offset in 2..<6 {
                    guard let digit = JSONEscape.hexDigit(bytes[index + offset]) else { return false }
                    scalar = scalar << 4 | UInt32(digit)
                }
                // Secret fields are ASCII (digits, base64); other escapes are not expected there.
                guard scalar < 0x80 else { return false }
                out.append(UInt8(scalar))
                index += 4
            default: return false
            }
            index += 2
        }
        return true
    }
}
