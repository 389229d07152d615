import Foundation

/// JSON string literals, as every Orchard module writes them by hand: the access log lines, the error bodies
/// of the HTTP server, and the payment-request model's documents.
package enum JSONString {
    /// `value` as a JSON string literal: quotes, backslashes and control characters escaped, and U+2028 and
    /// U+2029 too, so the text is also safe inside a script or one log line.
    package static func literal(_ value: String) -> String {
        var text = ""
        write(value, into: &text)
        return text
    }

    /// Appends `value` to `text` as a JSON string literal (see ``literal(_:)``).
    package static func write(_ value: String, into text: inout String) {
        text += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case "\u{08}": text += "\\b"
            case "\u{0C}": text += "\\f"
            case "\u{2028}", "\u{2029}": text += String(format: "\\u%04x", scalar.value)
            default:
                if scalar.value < 0x20 {
                    text += String(format: "\\u%04x", scalar.value)
                } else {
                    text.unicodeScalars.append(scalar)
                }
            }
        }
        text += "\""
    }

    /// Appends `value` to `out` as a JSON string literal, the form of the wire: quotes, backslashes and control characters escaped; everything else
    /// (slashes, non-ASCII) as its UTF-8 bytes. Runs without escapes are copied whole.
    package static func write(_ value: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { bytes in
            var start = 0
            for index in 0..<bytes.count {
                let byte = bytes[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
                start = index + 1
                out.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): out.append(byte)
                case 0x0A: out.append(UInt8(ascii: "n"))
                case 0x0D: out.append(UInt8(ascii: "r"))
                case 0x09: out.append(UInt8(ascii: "t"))
                default:
                    let hex: StaticString = "0123456789abcdef"
                    out.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                    out.append(hex.utf8Start[Int(byte >> 4)])
                    out.append(hex.utf8Start[Int(byte & 0x0F)])
                }
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start...]))
        }
        out.append(UInt8(ascii: "\""))
    }
}

/// JSON's escapes, shared by OrchardJSON's parser and OrchardCrypto's scanner that reads secret fields straight
/// into secure bytes; `hexDigit` is also OrchardCrypto's `Hex.digit`.
package enum JSONEscape {
    /// The byte a one-character escape (`\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`) stands for; nil for `u`
    /// and anything else.
    @inline(__always)
    package static func single(_ escape: UInt8) -> UInt8? {
        switch escape {
        case UInt8(ascii: "\""): 0x22
        case UInt8(ascii: "\\"): 0x5C
        case UInt8(ascii: "/"): 0x2F
        case UInt8(ascii: "b"): 0x08
        case UInt8(ascii: "f"): 0x0C
        case UInt8(ascii: "n"): 0x0A
        case UInt8(ascii: "r"): 0x0D
        case UInt8(ascii: "t"): 0x09
        default: nil
        }
    }

    /// The value of an ASCII hex digit (either case), or nil.
    @inline(__always)
    package static func hexDigit(_ byte: UInt8) -> UInt8? {
        if (0x30...0x39).contains(byte) { return byte - 0x30 }
        let lower = byte | 0x20  // 'A'...'F' become 'a'...'f'; no other byte lands in that range
        return (0x61...0x66).contains(lower) ? lower - 0x61 + 10 : nil
    }
}
