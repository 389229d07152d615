import Foundation

extension JSONValue {
    /// Key-sorted JSON text, pretty printed with two-space indentation (`"key": value`) unless `pretty` is false;
    /// the same bytes on every platform. Strings are escaped as ``stringLiteral(_:)`` escapes them. This is the
    /// form the CLI prints payment requests and validation reports in.
    public func sortedText(pretty: Bool = true) -> Data {
        var text = ""
        write(into: &text, indent: pretty ? "" : nil)
        return Data(text.utf8)
    }

    private func write(into text: inout String, indent: String?) {
        let inner = indent.map { $0 + "  " }
        let newline = indent == nil ? "" : "\n"
        switch self {
        case .null: text += "null"
        case .bool(let value): text += value ? "true" : "false"
        case .number(let value): text += value
        case .string(let value): JSONValue.writeLiteral(value, into: &text)
        case .array(let values):
            guard !values.isEmpty else {
                text += "[]"
                return
            }
            text += "[" + newline
            for (index, value) in values.enumerated() {
                text += inner ?? ""
                value.write(into: &text, indent: inner)
                text += (index < values.count - 1 ? "," : "") + newline
            }
            text += (indent ?? "") + "]"
        case .object(let members):
            guard !members.isEmpty else {
                text += "{}"
                return
            }
            text += "{" + newline
            let sorted = members.sorted { $0.key < $1.key }
            for (index, member) in sorted.enumerated() {
                text += inner ?? ""
                JSONValue.writeLiteral(member.key, into: &text)
                text += indent == nil ? ":" : ": "
                member.value.write(into: &text, indent: inner)
                text += (index < sorted.count - 1 ? "," : "") + newline
            }
            text += (indent ?? "") + "}"
        }
    }

    /// `value` as a JSON string literal: quotes, backslashes and control characters escaped, and U+2028 and
    /// U+2029 too, so the text is also safe inside a script or one log line.
    public static func stringLiteral(_ value: String) -> String {
        var text = ""
        writeLiteral(value, into: &text)
        return text
    }

    private static func writeLiteral(_ value: String, into text: inout String) {
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
}
