import OrchardBase

/// Hexadecimal text.
public enum Hex {
    /// Lowercase hex of `bytes`.
    public static func encode<B: Sequence>(_ bytes: B) -> String where B.Element == UInt8 {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of hex text (either case), or nil when it is not an even number of hex digits.
    public static func decode(_ text: String) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = digit(utf8[index]), let low = digit(utf8[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }

    /// The value of one hex digit (either case), or nil when `c` is not one (JSON's `\u` escapes read the same
    /// digits).
    public static func digit(_ c: UInt8) -> UInt8? { JSONEscape.hexDigit(c) }
}
