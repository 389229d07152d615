import Foundation
import GatewayPostgres
import OrchardBase
import OrchardHTTP

/// One configurable setting of `orchard serve`, known under one name in three places:
///
/// | where              | form                         | example                  |
/// |--------------------|------------------------------|--------------------------|
/// | config file        | `name = value` line, or JSON key `name` (or `snake_case`) | `max-body-bytes = 65536` |
/// | environment        | `ORCHARD_` + upper snake     | `ORCHARD_MAX_BODY_BYTES` |
/// | command line       | `--name VALUE`, `--name=VALUE` | `--max-body-bytes 65536` |
///
/// A flag beats an environment variable, which beats the file, which beats the default.
public struct Setting: Sendable, Equatable {
    /// The kind of value, for parsing and help.
    public enum Kind: String, Sendable, Equatable {
        /// Free text.
        case string
        /// A whole number.
        case integer
        /// A decimal number.
        case number
        /// `true`/`false` (also `1`/`0`, `yes`/`no`, `on`/`off`); a bare `--name` flag means `true`.
        case boolean
        /// A file or directory path.
        case path
        /// Comma-separated values (a JSON array in the file).
        case list
    }

    /// The setting's name: lower-case words joined by `-` (`port`, `tls-cert`, `max-body-bytes`).
    public var name: String
    /// The kind of value.
    public var kind: Kind
    /// The default as text (shown in help), or `nil` when unset by default.
    public var defaultValue: String?
    /// What it does, one line.
    public var summary: String
    /// Whether the value is secret: never printed (help and descriptions show `(set)`).
    public var isSecret: Bool

    /// A setting.
    public init(name: String, kind: Kind, default defaultValue: String? = nil, summary: String, isSecret: Bool = false)
    {
        precondition(
            !name.isEmpty && name.allSatisfy { $0.isLowercase || $0.isNumber || $0 == "-" },
            "a setting name is lower-case words joined by '-': \(name)")
        self.name = name
        self.kind = kind
        self.defaultValue = defaultValue
        self.summary = summary
        self.isSecret = isSecret
    }

    /// `ORCHARD_` and the name in upper snake case.
    public var environmentVariable: String { "ORCHARD_" + name.uppercased().replacingOccurrences(of: "-", with: "_") }
    /// `--` and the name.
    public var flag: String { "--" + name }
    /// The config file keys: the name, and the name in snake case.
    public var fileKeys: [String] { [name, name.replacingOccurrences(of: "-", with: "_")] }

    var valuePlaceholder: String {
        switch kind {
        case .boolean: ""
        case .integer, .number: " N"
        case .path: " PATH"
        case .list: " A,B,…"
        case .string: " VALUE"
        }
    }
}

/// Where a setting's effective value came from.
public enum SettingSource: Sendable, Equatable, CustomStringConvertible {
    /// Its default.
    case defaultValue
    /// The config file at this path.
    case file(String)
    /// This environment variable.
    case environment(String)
    /// This command-line flag.
    case flag(String)

    /// A readable form: `default`, `config file PATH`, `ORCHARD_PORT`, `--port`.
    public var description: String {
        switch self {
        case .defaultValue: "default"
        case .file(let path): "config file \(path)"
        case .environment(let name): name
        case .flag(let flag): flag
        }
    }
}

/// A bad setting: an unknown flag or key, a missing value, an unreadable file, a value of the wrong kind.
public struct ConfigurationError: CodedError, Sendable {
    /// A stable error code.
    public struct Code: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
        /// The code string.
        public let rawValue: String
        /// A code from its string.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// A code from a literal.
        public init(stringLiteral value: String) { self.rawValue = value }
        /// The code string.
        public var description: String { rawValue }

        /// A flag no setting has.
        public static let unknownFlag: Code = "unknown_flag"
        /// A flag without its value.
        public static let missingValue: Code = "missing_value"
        /// The config file could not be read.
        public static let unreadableFile: Code = "unreadable_file"
        /// The config file is not a JSON object of settings.
        public static let invalidFile: Code = "invalid_file"
        /// A config file key no setting has.
        public static let unknownKey: Code = "unknown_key"
        /// A value of the wrong kind or out of range.
        public static let invalidValue: Code = "invalid_value"
        /// A sandbox-only setting (a test stand-in) given to a production gateway.
        public static let sandboxOnly: Code = "sandbox_only_setting"
    }

    /// The code.
    public var code: Code
    /// What is wrong, naming the setting and where its value came from (never a secret's value).
    public var reason: String

    /// An error.
    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    /// The reason.
    public var description: String { reason }
}

/// The settings a program knows, in the order help lists them. Modules register theirs:
/// ``ServerConfiguration/register(in:)`` adds the HTTP server's; the gateway adds database, keys, modes ….
public struct SettingsRegistry: Sendable {
    /// Every setting, in registration order.
    public private(set) var settings: [Setting] = []

    /// The `config` setting: the JSON config file to read (`--config`, `ORCHARD_CONFIG`).
    public static let configFile = Setting(
        name: "config", kind: .path,
        summary: "a config file of settings: `name = value` lines (orchard.conf) or a JSON object (keys as below)")

    /// A registry holding only ``configFile``.
    public init() {
        register(Self.configFile)
    }

    /// Adds `setting`; a name may be registered once.
    public mutating func register(_ setting: Setting) {
        precondition(!settings.contains { $0.name == setting.name }, "setting \(setting.name) is registered twice")
        settings.append(setting)
    }

    /// The setting named `name`.
    public func setting(named name: String) -> Setting? { settings.first { $0.name == name } }

    /// One help line per setting: flag, value placeholder, summary, environment variable and default.
    public var helpText: String {
        let left = settings.map { "  \($0.flag)\($0.valuePlaceholder)" }
        let width = left.map(\.count).max() ?? 0
        return zip(settings, left).map { setting, left in
            var line = left.padding(toLength: width + 2, withPad: " ", startingAt: 0) + setting.summary
            var notes = [setting.environmentVariable]
            if let value = setting.defaultValue { notes.append("default \(setting.isSecret ? "(set)" : value)") }
            line += " [" + notes.joined(separator: ", ") + "]"
            return line
        }.joined(separator: "\n")
    }

    /// Resolves every setting from, in increasing precedence, its default, the config file, the environment and
    /// the command line.
    ///
    /// - Parameters:
    ///   - arguments: the command line after the command's name; `--name VALUE`, `--name=VALUE`, a bare `--name`
    ///     for booleans, `--` ends the flags. Arguments that are not flags are returned as
    ///     ``ResolvedSettings/positionals``; `--help`/`-h` set ``ResolvedSettings/helpRequested``.
    ///   - environment: the process environment (`ORCHARD_…`; empty values count as unset).
    /// - Throws: ``ConfigurationError``.
    public func resolve(
        arguments: [String], environment: [String: String] = ProcessEnvironment.variables
    )
        throws(ConfigurationError) -> ResolvedSettings
    {
        var flags: [String: String] = [:]
        var positionals: [String] = []
        var helpRequested = false
        var reader = CommandLineReader(arguments, dashedWordsAreOptions: true)
        while let word = reader.next() {
            switch word {
            case .help:
                helpRequested = true
            case .positional(let argument):
                positionals.append(argument)
            case .option(let name, let inline, let spelling):
                guard spelling.hasPrefix("--"), let setting = setting(named: name) else {
                    throw ConfigurationError(.unknownFlag, "unknown option \(spelling)")
                }
                if let inline {
                    flags[name] = inline
                } else if setting.kind == .boolean {
                    flags[name] = "true"
                } else {
                    guard let value = reader.value() else {
                        throw ConfigurationError(.missingValue, "option \(setting.flag) needs a value")
                    }
                    flags[name] = value
                }
            }
        }

        func fromEnvironment(_ setting: Setting) -> String? {
            guard let value = environment[setting.environmentVariable], !value.isEmpty else { return nil }
            return value
        }

        var values: [String: (String, SettingSource)] = [:]
        for setting in settings {
            if let value = setting.defaultValue { values[setting.name] = (value, .defaultValue) }
        }
        let configSetting = Self.configFile
        let configPath =
            flags[configSetting.name].map { ($0, SettingSource.flag(configSetting.flag)) }
            ?? fromEnvironment(configSetting).map { ($0, .environment(configSetting.environmentVariable)) }
        if let (path, source) = configPath {
            values[configSetting.name] = (path, source)
            for (name, value) in try readFile(path) { values[name] = (value, .file(path)) }
        }
        for setting in settings {
            if let value = fromEnvironment(setting) {
                values[setting.name] = (value, .environment(setting.environmentVariable))
            }
            if let value = flags[setting.name] { values[setting.name] = (value, .flag(setting.flag)) }
        }
        return ResolvedSettings(
            registry: self, values: values, positionals: positionals, helpRequested: helpRequested)
    }

    private func readFile(_ path: String) throws(ConfigurationError) -> [String: String] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError(.unreadableFile, "cannot read the config file \(path)")
        }
        let pairs: [(key: String, value: String)]
        if data.first(where: { !Self.isSpace($0) }) == UInt8(ascii: "{") {
            pairs = try Self.jsonPairs(data, path: path)
        } else {
            pairs = try Self.linePairs(data, path: path)
        }
        var values: [String: String] = [:]
        for (key, value) in pairs {
            guard let setting = settings.first(where: { $0.fileKeys.contains(key) }), setting.name != "config" else {
                throw ConfigurationError(.unknownKey, "unknown key \"\(key)\" in the config file \(path)")
            }
            guard values[setting.name] == nil else {
                throw ConfigurationError(.invalidFile, "setting \(setting.name) is set twice in the config file \(path)")
            }
            values[setting.name] = value
        }
        return values
    }

    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

    /// A JSON object of settings.
    private static func jsonPairs(_ data: Data, path: String) throws(ConfigurationError) -> [(key: String, value: String)] {
        // The config file, read once at start-up: not request handling.
        guard let object = try? JSONSerialization.jsonObject(with: data), let fields = object as? [String: Any] else {
            throw ConfigurationError(.invalidFile, "the config file \(path) is not a JSON object")
        }
        var pairs: [(key: String, value: String)] = []
        for (key, value) in fields {
            guard let text = text(of: value) else {
                throw ConfigurationError(
                    .invalidValue, "key \"\(key)\" in the config file \(path) must be a string, number, boolean or list"
                )
            }
            pairs.append((key, text))
        }
        return pairs
    }

    /// The line form (`orchard.conf`): one `name = value` a line, `#` starts a comment line, blank lines are
    /// skipped; a value may be put in double quotes (kept as written inside them), a list is comma-separated.
    private static func linePairs(_ data: Data, path: String) throws(ConfigurationError) -> [(key: String, value: String)] {
        guard let text = String(data: data, encoding: .utf8) else {
            throw ConfigurationError(.invalidFile, "the config file \(path) is not UTF-8 text")
        }
        var pairs: [(key: String, value: String)] = []
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespaces.union(CharacterSet(charactersIn: "\r")))
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard let equals = line.firstIndex(of: "=") else {
                throw ConfigurationError(
                    .invalidFile, "line \(index + 1) of the config file \(path) is not `name = value`")
            }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces)
            var value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
            guard !key.isEmpty else {
                throw ConfigurationError(.invalidFile, "line \(index + 1) of the config file \(path) has no name")
            }
            pairs.append((key, value))
        }
        return pairs
    }

    /// A config file in the line form naming every setting, each with its summary, environment variable and
    /// default, commented out, except those given in `active` (written as set): what `orchard config template`
    /// prints and the package installs as `/etc/orchard/orchard.conf`. Secrets are never given a value here.
    public func configTemplate(active: [(name: String, value: String)] = []) -> String {
        var lines = [
            "# orchard serve's settings, one `name = value` a line; `#` starts a comment.",
            "# A command-line flag beats an ORCHARD_… environment variable, which beats this file, which beats the",
            "# default. Lists are comma-separated. `orchard serve --help` describes every setting.",
        ]
        for setting in settings where setting.name != Self.configFile.name {
            lines.append("")
            var note = "[\(setting.environmentVariable)"
            if let value = setting.defaultValue { note += ", default \(setting.isSecret ? "(set)" : value)" }
            lines.append("# \(setting.name): \(setting.summary) \(note)]")
            if let given = active.last(where: { $0.name == setting.name }) {
                lines.append("\(setting.name) = \(given.value)")
            } else {
                lines.append("#\(setting.name) = \(setting.isSecret ? "" : setting.defaultValue ?? "")")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func text(of value: Any) -> String? {
        switch value {
        case let string as String: return string
        case let number as NSNumber:
            // JSON booleans come back as NSNumbers of Objective-C type "c" (char).
            if String(cString: number.objCType) == "c" { return number.boolValue ? "true" : "false" }
            return number.stringValue
        case let list as [Any]:
            let items = list.compactMap { item -> String? in item is [Any] ? nil : text(of: item) }
            return items.count == list.count ? items.joined(separator: ",") : nil
        default: return nil
        }
    }
}

/// The effective value of every setting, with its source, and typed accessors whose errors name the source.
public struct ResolvedSettings: Sendable {
    /// The registry resolved.
    public let registry: SettingsRegistry
    private let values: [String: (String, SettingSource)]
    /// Command-line arguments that were not flags, in order.
    public let positionals: [String]
    /// Whether `--help` or `-h` was given.
    public let helpRequested: Bool

    init(
        registry: SettingsRegistry, values: [String: (String, SettingSource)], positionals: [String],
        helpRequested: Bool
    ) {
        self.registry = registry
        self.values = values
        self.positionals = positionals
        self.helpRequested = helpRequested
    }

    /// The value of `name` as text, if set (by default or otherwise).
    public func string(_ name: String) -> String? {
        precondition(registry.setting(named: name) != nil, "setting \(name) is not registered")
        return values[name]?.0
    }

    /// Where the value of `name` came from; `nil` when it is unset.
    public func source(_ name: String) -> SettingSource? { values[name]?.1 }

    private func invalid(_ name: String, _ expected: String) -> ConfigurationError {
        let source = values[name].map { "\($0.1)" } ?? "default"
        let shown = registry.setting(named: name)?.isSecret == true ? "" : " (got \"\(values[name]?.0 ?? "")\")"
        return ConfigurationError(.invalidValue, "setting \(name) from \(source) must be \(expected)\(shown)")
    }

    /// The value of `name` as a whole number.
    public func integer(_ name: String) throws(ConfigurationError) -> Int? {
        guard let text = string(name) else { return nil }
        guard let value = Int(text.trimmingCharacters(in: .whitespaces)) else { throw invalid(name, "a whole number") }
        return value
    }

    /// The value of `name` as a whole number within `range`.
    public func integer(_ name: String, in range: ClosedRange<Int>) throws(ConfigurationError) -> Int? {
        guard let value = try integer(name) else { return nil }
        guard range.contains(value) else {
            throw invalid(name, "between \(range.lowerBound) and \(range.upperBound)")
        }
        return value
    }

    /// The value of `name` as a number.
    public func number(_ name: String) throws(ConfigurationError) -> Double? {
        guard let text = string(name) else { return nil }
        guard let value = Double(text.trimmingCharacters(in: .whitespaces)), value.isFinite else {
            throw invalid(name, "a number")
        }
        return value
    }

    /// The value of `name` as a boolean.
    public func boolean(_ name: String) throws(ConfigurationError) -> Bool? {
        guard let text = string(name) else { return nil }
        switch text.lowercased() {
        case "true", "1", "yes", "on": return true
        case "false", "0", "no", "off": return false
        default: throw invalid(name, "true or false")
        }
    }

    /// The value of `name` as a comma-separated list (items trimmed, empty items dropped).
    public func list(_ name: String) -> [String]? {
        string(name).map { text in
            text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
    }

    /// One line per set setting, `name = value (source)`, secrets shown as `(set)`: for `orchard serve` to print
    /// its effective configuration.
    public var summaryLines: [String] {
        registry.settings.compactMap { setting in
            guard let (value, source) = values[setting.name] else { return nil }
            // A database URL may carry its password: shown with it replaced.
            let shown = setting.isSecret ? "(set)" : value.hasPrefix("postgres") ? redactedDatabaseURL(value) : value
            return "\(setting.name) = \(shown) (\(source))"
        }
    }
}

extension ServerConfiguration {
    /// Adds the HTTP server's settings to `registry`: `host`, `port`, `max-body-bytes`, `max-json-depth`,
    /// `max-string-length`, `connection-limit`, `per-ip-connection-limit`, `connection-timeout`,
    /// `request-head-timeout-seconds`, `request-body-timeout-seconds`, `keep-alive-trim-percent`,
    /// `reserved-connection-percent`, `keep-alive-trim-min-idle-ms`, `thread-pool-size`,
    /// `rate-limit-per-second`, `rate-limit-burst`, `tls-cert`, `tls-key`, `cookie-secure`, `trusted-proxy`,
    /// `shutdown-timeout`.
    public static func register(in registry: inout SettingsRegistry) {
        let defaults = ServerConfiguration()
        for entry in ServerSetting.all { registry.register(entry.setting(defaults)) }
    }

    /// The configuration described by `settings` (resolved from a registry that ``register(in:)`` filled).
    public init(settings: ResolvedSettings) throws(ConfigurationError) {
        self.init()
        for entry in ServerSetting.all { try entry.apply(&self, settings) }
        // Checks across settings, once all are applied.
        if (tlsCertificatePath == nil) != (tlsKeyPath == nil) {
            throw ConfigurationError(.invalidValue, "--tls-cert and --tls-key go together")
        }
    }
}

/// One setting of the HTTP server, in the one table that both registers it (its default read from a fresh
/// ``ServerConfiguration``) and applies its resolved value.
private struct ServerSetting {
    var name: String
    var kind: Setting.Kind
    var summary: String
    var defaultValue: (ServerConfiguration) -> String?
    var apply: (inout ServerConfiguration, ResolvedSettings) throws(ConfigurationError) -> Void

    func setting(_ defaults: ServerConfiguration) -> Setting {
        Setting(name: name, kind: kind, default: defaultValue(defaults), summary: summary)
    }

    /// A whole number within `range`, stored at `keyPath`.
    static func integer(
        _ name: String, _ keyPath: WritableKeyPath<ServerConfiguration, Int>, in range: ClosedRange<Int>,
        _ summary: String
    ) -> ServerSetting {
        ServerSetting(name: name, kind: .integer, summary: summary, defaultValue: { String($0[keyPath: keyPath]) }) {
            (configuration: inout ServerConfiguration, settings: ResolvedSettings) throws(ConfigurationError) in
            if let value = try settings.integer(name, in: range) { configuration[keyPath: keyPath] = value }
        }
    }

    /// A path without a default, stored at `keyPath`.
    static func path(
        _ name: String, _ keyPath: WritableKeyPath<ServerConfiguration, String?>, _ summary: String
    ) -> ServerSetting {
        ServerSetting(name: name, kind: .path, summary: summary, defaultValue: { _ in nil }) {
            (configuration: inout ServerConfiguration, settings: ResolvedSettings) in
            configuration[keyPath: keyPath] = settings.string(name)
        }
    }

    /// Every server setting, in the order help lists them and their values are applied.
    static var all: [ServerSetting] {
        [
            ServerSetting(
                name: "host", kind: .string, summary: "the IP address to listen on", defaultValue: { $0.host }
            ) { (configuration: inout ServerConfiguration, settings: ResolvedSettings) throws(ConfigurationError) in
                if let host = settings.string("host") { configuration.host = host }
            },
            .integer("port", \.port, in: 0...65_535, "the TCP port to listen on (0 picks a free one)"),
            .integer(
                "max-body-bytes", \.maxBodyBytes, in: 0...(1 << 30), "the largest request body accepted (larger: 413)"),
            .integer("max-json-depth", \.maxJSONDepth, in: 1...1_000, "the deepest JSON nesting accepted"),
            .integer(
                "max-string-length", \.maxStringLength, in: 1...(1 << 30), "the longest JSON string accepted, in bytes"),
            .integer("connection-limit", \.connectionLimit, in: 1...1_000_000, "the most connections open at once"),
            .integer(
                "per-ip-connection-limit", \.perIPConnectionLimit, in: 0...1_000_000,
                "the most connections from one IP address (0: no limit)"),
            .integer(
                "connection-timeout", \.connectionTimeoutSeconds, in: 0...86_400,
                "seconds of inactivity before a connection is closed"),
            .integer(
                "request-head-timeout-seconds", \.requestHeadTimeoutSeconds, in: 0...86_400,
                "seconds to send a whole request head, however steadily (0: no deadline)"),
            .integer(
                "request-body-timeout-seconds", \.requestBodyTimeoutSeconds, in: 0...86_400,
                "seconds to send a whole request body after its head (0: no deadline)"),
            .integer(
                "keep-alive-trim-percent", \.keepAliveTrimPercent, in: 1...100,
                "above this % of connection-limit open, close idle keep-alive connections, oldest first"),
            .integer(
                "reserved-connection-percent", \.reservedConnectionPercent, in: 0...50,
                "% of connection-limit kept free of idle and slow connections, for new clients"),
            .integer(
                "keep-alive-trim-min-idle-ms", \.keepAliveTrimMinimumIdleMilliseconds, in: 0...86_400_000,
                "ms a keep-alive connection must be idle before trimming or the reserve closes it"),
            .integer("thread-pool-size", \.threadPoolSize, in: 1...1_024, "worker threads answering requests"),
            ServerSetting(
                name: "rate-limit-per-second", kind: .number,
                summary: "requests per second per credential (0: no limit)",
                defaultValue: { formatValue($0.rateLimitPerSecond) }
            ) { (configuration: inout ServerConfiguration, settings: ResolvedSettings) throws(ConfigurationError) in
                guard let value = try settings.number("rate-limit-per-second") else { return }
                guard value >= 0 else {
                    throw ConfigurationError(.invalidValue, "setting rate-limit-per-second must not be negative")
                }
                configuration.rateLimitPerSecond = value
            },
            .integer(
                "rate-limit-burst", \.rateLimitBurst, in: 1...1_000_000, "requests a credential may make at once"),
            .path("tls-cert", \.tlsCertificatePath, "PEM certificate chain: serve HTTPS (with --tls-key)"),
            .path("tls-key", \.tlsKeyPath, "PEM private key for --tls-cert"),
            ServerSetting(
                name: "cookie-secure", kind: .string,
                summary: "the console cookie is Secure: always (behind a TLS proxy) or auto (when serving TLS)",
                defaultValue: { $0.cookieSecure.rawValue }
            ) { (configuration: inout ServerConfiguration, settings: ResolvedSettings) throws(ConfigurationError) in
                guard let value = settings.string("cookie-secure") else { return }
                guard let mode = ServerConfiguration.CookieSecurity(rawValue: value) else {
                    throw ConfigurationError(.invalidValue, "setting cookie-secure is always or auto")
                }
                configuration.cookieSecure = mode
            },
            ServerSetting(
                name: "trusted-proxy", kind: .list,
                summary: "reverse proxies (addresses or CIDRs: 127.0.0.1,10.0.0.0/8,::1) whose Forwarded, "
                    + "X-Forwarded-For and X-Forwarded-Proto name the client",
                defaultValue: { $0.trustedProxies.networks.isEmpty ? nil : $0.trustedProxies.description }
            ) { (configuration: inout ServerConfiguration, settings: ResolvedSettings) throws(ConfigurationError) in
                guard let list = settings.list("trusted-proxy") else { return }
                guard let proxies = TrustedProxies(parsing: list) else {
                    throw ConfigurationError(
                        .invalidValue, "setting trusted-proxy lists addresses or CIDRs (10.0.0.0/8,::1), not \(list)")
                }
                configuration.trustedProxies = proxies
            },
            .integer(
                "shutdown-timeout", \.shutdownTimeoutSeconds, in: 0...3_600,
                "seconds to let requests in flight finish on shutdown"),
        ]
    }
}

/// The process environment, read here and nowhere else: `serve`'s settings
/// (``SettingsRegistry/resolve(arguments:environment:)``), the other commands' `ORCHARD_MASTER_KEY`, and the data
/// directory's and Apple root's defaults (`ORCHARD_DATA_DIR`, `ORCHARD_APPLE_ROOT`, `HOME`) all come from here; the
/// modules below take what they need as parameters (`GatewayAPITests` checks that nothing else reads it).
public enum ProcessEnvironment {
    /// Every variable of the process.
    public static var variables: [String: String] { ProcessInfo.processInfo.environment }

    /// The non-empty value of variable `name`.
    static func value(_ name: String) -> String? { variables[name].flatMap { $0.isEmpty ? nil : $0 } }
}
