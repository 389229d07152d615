/// A bad command line: the message is printed with the command's usage and the exit status is 2.
public struct UsageError: Error, CustomStringConvertible {
    public var message: String
    /// `--help` (or `-h`) on a command line that does not declare it: the command prints its usage to standard
    /// output and exits 0.
    public var isHelpRequest = false
    public init(_ message: String) { self.message = message }
    public var description: String { message }

    /// The error `Arguments` throws for `--help` or `-h`.
    public static let helpRequest: UsageError = {
        var error = UsageError("help requested")
        error.isHelpRequest = true
        return error
    }()

    /// Whether `arguments` ask for help: `help`, `--help` or `-h` first, or `--help`/`-h` anywhere.
    public static func asksForHelp(_ arguments: [String]) -> Bool {
        arguments.first == "help" || arguments.contains("--help") || arguments.contains("-h")
    }
}

/// A parsed command line: `--name value` options (repeatable), `--flag` switches and positionals.
///
/// `--name=value` is accepted as well as `--name value`; `--` ends the options. `-h` means `--help`; where
/// `help` is not a declared flag, either throws ``UsageError/helpRequest``.
public struct Arguments: Sendable {
    private var options: [String: [String]] = [:]
    private var flags: Set<String> = []
    /// The arguments that are neither options nor flags, in order.
    public private(set) var positionals: [String] = []

    /// Parses `arguments`, accepting only the named options (which take a value) and flags.
    public init(_ arguments: [String], options valued: Set<String>, flags known: Set<String>) throws(UsageError) {
        var index = 0
        var onlyPositionals = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            // `-h` is `--help`; a command line that does not declare the flag gets a help request instead.
            if !onlyPositionals, argument == "-h" || argument == "--help" {
                guard known.contains("help") else { throw UsageError.helpRequest }
                flags.insert("help")
                continue
            }
            if onlyPositionals || !argument.hasPrefix("--") || argument == "-" {
                positionals.append(argument)
                continue
            }
            if argument == "--" {
                onlyPositionals = true
                continue
            }
            var name = String(argument.dropFirst(2))
            var inlineValue: String?
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            if valued.contains(name) {
                if let inlineValue {
                    options[name, default: []].append(inlineValue)
                } else {
                    guard index < arguments.count else { throw UsageError("option --\(name) needs a value") }
                    options[name, default: []].append(arguments[index])
                    index += 1
                }
            } else if known.contains(name) {
                guard inlineValue == nil else { throw UsageError("flag --\(name) takes no value") }
                flags.insert(name)
            } else {
                throw UsageError("unknown option --\(name)")
            }
        }
    }

    /// The last value given for `--name`, if any.
    public func value(_ name: String) -> String? { options[name]?.last }

    /// Every value given for `--name`, in order.
    public func values(_ name: String) -> [String] { options[name] ?? [] }

    /// Whether `--name` was given.
    public func flag(_ name: String) -> Bool { flags.contains(name) }

    /// The value of `--name`, or a usage error naming it.
    public func required(_ name: String) throws(UsageError) -> String {
        guard let value = value(name) else { throw UsageError("missing required option --\(name)") }
        return value
    }
}
