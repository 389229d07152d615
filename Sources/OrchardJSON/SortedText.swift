import Foundation
import OrchardBase

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
        case .string(let value): JSONString.write(value, into: &text)
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
                JSONString.write(member.key, into: &text)
                text += indent == nil ? ":" : ": "
                member.value.write(into: &text, indent: inner)
                text += (index < sorted.count - 1 ? "," : "") + newline
            }
            text += (indent ?? "") + "}"
        }
    }

    /// `value` as a JSON string literal: quotes, backslashes and control characters escaped, and U+2028 and
    /// U+2029 too, so the text is also safe inside a script or one log line (OrchardBase's ``JSONString``).
    public static func stringLiteral(_ value: String) -> String { JSONString.literal(value) }
}
