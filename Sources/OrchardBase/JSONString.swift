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
}
