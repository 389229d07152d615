/// HTTP's own text rules, on bytes: field names compare without regard to ASCII case, and values lose their
/// optional whitespace (spaces and tabs, RFC 9110 §5.6.3) and any line end. No Foundation and no Unicode
/// tables: every request and every response of the load generator goes through these.
extension StringProtocol {
    /// The text without leading and trailing spaces, tabs, carriage returns and line feeds.
    package func trimmingHTTPWhitespace() -> String {
        let text = Substring(self)
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A }
        guard let first = text.utf8.firstIndex(where: { !isSpace($0) }),
            let last = text.utf8.lastIndex(where: { !isSpace($0) })
        else { return "" }
        return String(text[first...last])
    }

    /// Whether the text equals `other` when ASCII letters are compared without case (HTTP field names,
    /// media types, the `Bearer` scheme).
    package func equalsIgnoringASCIICase(_ other: some StringProtocol) -> Bool {
        let (left, right) = (utf8, other.utf8)
        guard left.count == right.count else { return false }
        return zip(left, right).allSatisfy { a, b in
            a == b || (a | 0x20 == b | 0x20 && (0x61...0x7A).contains(a | 0x20))
        }
    }
}
