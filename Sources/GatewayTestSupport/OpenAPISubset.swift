import Foundation
import Testing
import OrchardTestSupport

/// A YAML value of the subset `openapi.yaml` uses: block mappings and sequences, flow sequences and mappings,
/// plain and quoted scalars, and block scalars (`|`, `>`; their text is not needed and is kept empty).
package indirect enum YAMLNode {
    case map([(key: String, value: YAMLNode)])
    case list([YAMLNode])
    case scalar(String)

    package subscript(key: String) -> YAMLNode? {
        guard case .map(let pairs) = self else { return nil }
        return pairs.first { $0.key == key }?.value
    }

    package var string: String? {
        if case .scalar(let text) = self { return text }
        return nil
    }

    package var list: [YAMLNode]? {
        if case .list(let items) = self { return items }
        return nil
    }

    package var keys: [String] {
        if case .map(let pairs) = self { return pairs.map(\.key) }
        return []
    }

    /// A scalar or a list of scalars as strings (`type: [string, 'null']`, `required: [a, b]`).
    package var strings: [String] {
        switch self {
        case .scalar(let text): [text]
        case .list(let items): items.compactMap(\.string)
        case .map: []
        }
    }
}

/// Parses the YAML subset of ``YAMLNode``.
package struct YAMLSubsetParser {
    private struct Line {
        var indent: Int
        var text: String
    }

    private var lines: [Line] = []
    private var index = 0

    package static func parse(_ text: String) -> YAMLNode {
        var parser = YAMLSubsetParser()
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = String(raw)
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") {
                parser.lines.append(Line(indent: -1, text: ""))
                continue
            }
            parser.lines.append(Line(indent: line.prefix { $0 == " " }.count, text: trimmed))
        }
        return parser.block(minimumIndent: 0) ?? .map([])
    }

    private mutating func skipBlank() {
        while index < lines.count, lines[index].indent < 0 { index += 1 }
    }

    /// The block starting at the next line, when it is indented at least `minimumIndent`.
    private mutating func block(minimumIndent: Int) -> YAMLNode? {
        skipBlank()
        guard index < lines.count, lines[index].indent >= minimumIndent else { return nil }
        let indent = lines[index].indent
        return lines[index].text.hasPrefix("- ") || lines[index].text == "-"
            ? sequence(indent: indent) : mapping(indent: indent)
    }

    private mutating func sequence(indent: Int) -> YAMLNode {
        var items: [YAMLNode] = []
        while true {
            skipBlank()
            guard index < lines.count, lines[index].indent == indent,
                lines[index].text.hasPrefix("- ") || lines[index].text == "-"
            else { break }
            let content = String(lines[index].text.dropFirst(2)).trimmingCharacters(in: .whitespaces)
            if content.isEmpty {
                index += 1
                items.append(block(minimumIndent: indent + 1) ?? .scalar(""))
            } else if Self.splitKey(content) != nil, !content.hasPrefix("{"), !content.hasPrefix("[") {
                // A mapping item: its first key sits two columns in.
                lines[index] = Line(indent: indent + 2, text: content)
                items.append(mapping(indent: indent + 2))
            } else {
                index += 1
                items.append(value(content, indent: indent))
            }
        }
        return .list(items)
    }

    private mutating func mapping(indent: Int) -> YAMLNode {
        var pairs: [(key: String, value: YAMLNode)] = []
        while true {
            skipBlank()
            guard index < lines.count, lines[index].indent == indent, !lines[index].text.hasPrefix("- "),
                let (key, rest) = Self.splitKey(lines[index].text)
            else { break }
            index += 1
            if rest.isEmpty {
                skipBlank()
                if index < lines.count, lines[index].indent == indent, lines[index].text.hasPrefix("- ") {
                    pairs.append((key, sequence(indent: indent)))
                } else {
                    pairs.append((key, block(minimumIndent: indent + 1) ?? .scalar("")))
                }
            } else {
                pairs.append((key, value(rest, indent: indent)))
            }
        }
        return .map(pairs)
    }

    /// The value after `key:` (or `- `) on a line; continuation lines (block scalars, multi-line plain or
    /// flow values) are consumed.
    private mutating func value(_ text: String, indent: Int) -> YAMLNode {
        if ["|", "|-", "|+", ">", ">-", ">+"].contains(text) {
            skipDeeper(than: indent)
            return .scalar("")
        }
        if text.hasPrefix("[") || text.hasPrefix("{") {
            var flow = text
            while Self.depth(flow) > 0, index < lines.count {
                if lines[index].indent >= 0 { flow += " " + lines[index].text }
                index += 1
            }
            var scanner = FlowScanner(Array(flow))
            return scanner.value()
        }
        var scalar = text
        // A plain scalar continued on deeper lines.
        while true {
            let save = index
            skipBlank()
            guard index < lines.count, lines[index].indent > indent else {
                index = save
                break
            }
            scalar += " " + lines[index].text
            index += 1
        }
        return .scalar(Self.unquote(scalar))
    }

    private mutating func skipDeeper(than indent: Int) {
        while index < lines.count, lines[index].indent < 0 || lines[index].indent > indent { index += 1 }
    }

    private static func depth(_ text: String) -> Int {
        var depth = 0
        var quote: Character?
        for character in text {
            if let open = quote {
                if character == open { quote = nil }
                continue
            }
            switch character {
            case "'", "\"": quote = character
            case "[", "{": depth += 1
            case "]", "}": depth -= 1
            default: break
            }
        }
        return depth
    }

    /// `key: rest` or `key:`; nil when the line is not a mapping entry.
    package static func splitKey(_ text: String) -> (String, String)? {
        var quote: Character?
        let characters = Array(text)
        for (offset, character) in characters.enumerated() {
            if let open = quote {
                if character == open { quote = nil }
                continue
            }
            if offset == 0, character == "'" || character == "\"" {
                quote = character
                continue
            }
            if character == ":", offset + 1 == characters.count || characters[offset + 1] == " " {
                let key = unquote(String(characters[..<offset]).trimmingCharacters(in: .whitespaces))
                let rest = String(characters[(offset + 1)...]).trimmingCharacters(in: .whitespaces)
                return (key, rest)
            }
        }
        return nil
    }

    package static func unquote(_ text: String) -> String {
        if text.count >= 2, text.hasPrefix("'"), text.hasSuffix("'") {
            return String(text.dropFirst().dropLast()).replacingOccurrences(of: "''", with: "'")
        }
        if text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") {
            return String(text.dropFirst().dropLast()).replacingOccurrences(of: "\\\"", with: "\"")
        }
        return text
    }
}

/// Flow collections: `[a, 'b', {k: v}]`, `{k: v, k2: [x]}`.
private struct FlowScanner {
    let characters: [Character]
    var index = 0

    init(_ characters: [Character]) { self.characters = characters }

    mutating func skipSpaces() {
        while index < characters.count, characters[index] == " " { index += 1 }
    }

    mutating func value() -> YAMLNode {
        skipSpaces()
        guard index < characters.count else { return .scalar("") }
        switch characters[index] {
        case "[":
            index += 1
            var items: [YAMLNode] = []
            while true {
                skipSpaces()
                guard index < characters.count else { break }
                if characters[index] == "]" {
                    index += 1
                    break
                }
                items.append(value())
                skipSpaces()
                if index < characters.count, characters[index] == "," { index += 1 }
            }
            return .list(items)
        case "{":
            index += 1
            var pairs: [(key: String, value: YAMLNode)] = []
            while true {
                skipSpaces()
                guard index < characters.count else { break }
                if characters[index] == "}" {
                    index += 1
                    break
                }
                let key = scalar(stoppingAt: [":"])
                if index < characters.count, characters[index] == ":" { index += 1 }
                pairs.append((key, value()))
                skipSpaces()
                if index < characters.count, characters[index] == "," { index += 1 }
            }
            return .map(pairs)
        default:
            return .scalar(scalar(stoppingAt: [",", "]", "}"]))
        }
    }

    mutating func scalar(stoppingAt stops: Set<Character>) -> String {
        skipSpaces()
        guard index < characters.count else { return "" }
        if characters[index] == "'" || characters[index] == "\"" {
            let quote = characters[index]
            index += 1
            var text = ""
            while index < characters.count {
                if characters[index] == quote {
                    if quote == "'", index + 1 < characters.count, characters[index + 1] == "'" {
                        text.append("'")
                        index += 2
                        continue
                    }
                    index += 1
                    break
                }
                if quote == "\"", characters[index] == "\\", index + 1 < characters.count {
                    text.append(characters[index + 1])
                    index += 2
                    continue
                }
                text.append(characters[index])
                index += 1
            }
            return text
        }
        var text = ""
        while index < characters.count, !stops.contains(characters[index]) {
            // `:` ends a flow key only when followed by a space.
            text.append(characters[index])
            index += 1
        }
        return text.trimmingCharacters(in: .whitespaces)
    }
}

/// Checks JSON values against the schemas of an OpenAPI document: `$ref`, `allOf`, `oneOf`/`anyOf`, `type`
/// (one or several, `null` included), `enum`, `pattern`, `required`, `properties` (and no properties beyond
/// them unless `additionalProperties` allows), `items`.
package struct OpenAPIChecker {
    package let document: YAMLNode

    package init(document: YAMLNode) { self.document = document }

    /// The document at the package root.
    package static func load() throws -> OpenAPIChecker {
        let text = try String(contentsOf: TestPaths.packageRoot.appendingPathComponent("openapi.yaml"), encoding: .utf8)
        return OpenAPIChecker(document: YAMLSubsetParser.parse(text))
    }

    package func resolve(_ reference: String) -> YAMLNode? {
        guard reference.hasPrefix("#/") else { return nil }
        var node: YAMLNode? = document
        for part in reference.dropFirst(2).split(separator: "/") { node = node?[String(part)] }
        return node
    }

    /// The path template of `openapi.yaml` that `path` (no query) matches.
    package func template(for path: String) -> String? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        // The most specific template wins, as in the router (`/console/session` before `/console/{file}`).
        return document["paths"]?.keys.filter { template in
            let templateParts = template.split(separator: "/", omittingEmptySubsequences: false)
            guard templateParts.count == parts.count else { return false }
            return zip(templateParts, parts).allSatisfy { $0.hasPrefix("{") || $0 == $1 }
        }.min { $0.filter { $0 == "{" }.count < $1.filter { $0 == "{" }.count }
    }

    /// The JSON schema of the response `status` of `method path`; nil when the operation or status is not
    /// documented (the caller reports that), `.scalar("")` when the response has no JSON body.
    package func responseSchema(method: String, path: String, status: Int) -> YAMLNode? {
        guard let template = template(for: path),
            let operation = document["paths"]?[template]?[method.lowercased()],
            var response = operation["responses"]?[String(status)]
        else { return nil }
        if let reference = response["$ref"]?.string, let resolved = resolve(reference) { response = resolved }
        return response["content"]?["application/json"]?["schema"] ?? .scalar("")
    }

    /// Problems of `value` against `schema`, each with its JSON path.
    package func problems(_ value: Any, _ schema: YAMLNode, path: String = "$", checkExtras: Bool = true) -> [String] {
        var schema = schema
        var found: [String] = []
        if let reference = schema["$ref"]?.string {
            guard let resolved = resolve(reference) else { return ["\(path): unresolved \(reference)"] }
            schema = resolved
        }
        for part in schema["allOf"]?.list ?? [] { found += problems(value, part, path: path, checkExtras: false) }
        if let options = schema["oneOf"]?.list ?? schema["anyOf"]?.list,
            !options.contains(where: { problems(value, $0, path: path).isEmpty })
        {
            found.append("\(path): matches none of oneOf/anyOf (\(Self.describe(value)))")
        }
        let types = schema["type"]?.strings ?? []
        if !types.isEmpty, !types.contains(where: { Self.has(value, type: $0) }) {
            found.append("\(path): \(Self.describe(value)) is not \(types.joined(separator: "|"))")
            return found
        }
        if let allowed = schema["enum"]?.strings, !allowed.isEmpty, let text = value as? String,
            !allowed.contains(text)
        {
            found.append("\(path): \(text) is not one of \(allowed)")
        }
        if let pattern = schema["pattern"]?.string, let text = value as? String,
            let regex = try? NSRegularExpression(pattern: pattern),
            regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) == nil
        {
            found.append("\(path): \(text) does not match \(pattern)")
        }
        if let object = value as? [String: Any] {
            for key in schema["required"]?.strings ?? [] where object[key] == nil {
                found.append("\(path): required \(key) is missing")
            }
            let properties = schema["properties"]
            let named = propertyNames(schema)
            for (key, member) in object {
                if let property = properties?[key] {
                    found += problems(member, property, path: "\(path).\(key)")
                } else if let additional = schema["additionalProperties"], additional.string != "true",
                    additional.string != "false"
                {
                    found += problems(member, additional, path: "\(path).\(key)")
                } else if checkExtras, !named.isEmpty, !named.contains(key),
                    schema["additionalProperties"]?.string != "true"
                {
                    found.append("\(path): \(key) is not in the schema")
                }
            }
        }
        if let array = value as? [Any], let items = schema["items"] {
            for (offset, item) in array.enumerated() { found += problems(item, items, path: "\(path)[\(offset)]") }
        }
        return found
    }

    /// The properties a schema names, its `allOf` parts' included.
    package func propertyNames(_ schema: YAMLNode) -> Set<String> {
        var schema = schema
        if let reference = schema["$ref"]?.string, let resolved = resolve(reference) { schema = resolved }
        var names = Set(schema["properties"]?.keys ?? [])
        for part in schema["allOf"]?.list ?? [] { names.formUnion(propertyNames(part)) }
        return names
    }

    package static func has(_ value: Any, type: String) -> Bool {
        switch type {
        case "null": return value is NSNull
        case "string": return value is String
        case "boolean": return isBool(value)
        case "integer":
            guard !isBool(value), let number = value as? NSNumber else { return false }
            return number.doubleValue.rounded() == number.doubleValue
        case "number": return !isBool(value) && value is NSNumber
        case "array": return value is [Any]
        case "object": return value is [String: Any]
        default: return true
        }
    }

    /// Whether a JSONSerialization value is a boolean (a Swift `Bool`, or an `NSNumber` made from one).
    package static func isBool(_ value: Any) -> Bool {
        if type(of: value) == Bool.self { return true }
        if let number = value as? NSNumber { return String(cString: number.objCType) == "c" }
        return false
    }

    package static func describe(_ value: Any) -> String {
        switch value {
        case is NSNull: "null"
        case let text as String: "\"\(text.prefix(40))\""
        case is [Any]: "an array"
        case is [String: Any]: "an object"
        default: "\(value)"
        }
    }
}

extension OpenAPIChecker {
    /// Records an issue unless `exchange`'s status is documented for its operation and its JSON body matches the
    /// schema; returns whether a JSON body was checked.
    @discardableResult
    package func check(_ exchange: (method: String, path: String, response: ClientResponse)) -> Bool {
        let path = String(exchange.path.prefix { $0 != "?" })
        let status = exchange.response.status
        let label = "\(exchange.method) \(exchange.path) → \(status)"
        guard let schema = responseSchema(method: exchange.method, path: path, status: status) else {
            Issue.record("\(label): status not documented for this operation")
            return false
        }
        guard schema.string != "" else { return false }
        guard let body = try? JSONSerialization.jsonObject(with: exchange.response.body) else {
            Issue.record("\(label): body is not JSON: \(exchange.response.text.prefix(200))")
            return false
        }
        let problems = problems(body, schema)
        #expect(problems.isEmpty, "\(label): \(problems)")
        return true
    }
}

extension APIHarness {
    /// Every answer the harness got on `paths` has its status and schema in openapi.yaml.
    package func expectDocumented(paths: Set<String>) throws {
        let checker = try OpenAPIChecker.load()
        let exchanges = self.exchanges.withLock { $0 }.filter { paths.contains($0.path) }
        #expect(!exchanges.isEmpty)
        for exchange in exchanges { checker.check(exchange) }
    }
}
