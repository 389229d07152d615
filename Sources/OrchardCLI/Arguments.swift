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

extension CLIOutput {
    /// Reports `error` of `command` (`orchard audit`) and returns the exit status, the same way for every
    /// command:
    /// - a help request prints `usage` to standard output: 0;
    /// - bad usage prints `command: error`, then a blank line and `usage` when one is given, to standard error:
    ///   2. An error is bad usage when it is a ``UsageError`` or a ``ConfigurationError``, and any error is when
    ///   `failure` is `nil`;
    /// - any other error prints `command: error` to standard error: `failure`.
    func report(_ error: any Error, of command: String, usage: String? = nil, failure: Int32? = 1) -> Int32 {
        let usageError = error as? UsageError
        if let usage, usageError?.isHelpRequest == true {
            out(usage)
            return 0
        }
        guard usageError == nil, !(error is ConfigurationError), let failure else {
            err(usage.map { "\(command): \(error)\n\n\($0)" } ?? "\(command): \(error)")
            return 2
        }
        err("\(command): \(error)")
        return failure
    }

    /// The answer to a command line whose first word is not one of the command's subcommands: `usage` on
    /// standard output when it asks for help (0); otherwise, on standard error, `command: unknown subcommand
    /// 'WORD'` and `usage` when `command` is given and there is a word, else `usage` alone (2, or
    /// `emptyStatus` without any word).
    func unknownSubcommand(
        _ arguments: [String], usage: String, command: String? = nil, emptyStatus: Int32 = 2
    ) -> Int32 {
        if UsageError.asksForHelp(arguments) {
            out(usage)
            return 0
        }
        if let command, let word = arguments.first {
            err("\(command): unknown subcommand '\(word)'\n\n\(usage)")
        } else {
            err(usage)
        }
        return arguments.isEmpty ? emptyStatus : 2
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
        var reader = CommandLineReader(arguments)
        while let word = reader.next() {
            switch word {
            case .help:
                // `-h` is `--help`; a command line that does not declare the flag gets a help request instead.
                guard known.contains("help") else { throw UsageError.helpRequest }
                flags.insert("help")
            case .positional(let argument):
                positionals.append(argument)
            case .option(let name, let inlineValue, _):
                if valued.contains(name) {
                    guard let value = inlineValue ?? reader.value() else {
                        throw UsageError("option --\(name) needs a value")
                    }
                    options[name, default: []].append(value)
                } else if known.contains(name) {
                    guard inlineValue == nil else { throw UsageError("flag --\(name) takes no value") }
                    flags.insert(name)
                } else {
                    throw UsageError("unknown option --\(name)")
                }
            }
        }
    }

    /// Parses `arguments` as ``init(_:options:flags:)`` does, with `--help` and `-h` accepted anywhere: once
    /// the whole line has parsed, a help request throws ``UsageError/helpRequest`` (which
    /// ``CLIOutput/report(_:of:usage:failure:)`` answers with the usage).
    public static func parse(
        _ arguments: [String], options: Set<String>, flags: Set<String> = []
    ) throws(UsageError)
        -> Arguments
    {
        let parsed = try Arguments(arguments, options: options, flags: flags.union(["help"]))
        if parsed.flag("help") { throw UsageError.helpRequest }
        return parsed
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

/// One word of a command line, as ``CommandLineReader`` reads it.
enum CommandLineWord: Equatable {
    /// `--help` or `-h`.
    case help
    /// An argument that is not an option: a word without a leading `--`, `-`, or anything after `--`.
    case positional(String)
    /// `--name` or `--name=value`; `spelling` is the word as given, up to its `=`.
    case option(name: String, inlineValue: String?, spelling: String)
}

/// The one command-line grammar of `orchard`, which ``Arguments`` and ``SettingsRegistry`` both read:
/// `--name value`, `--name=value`, `--help`/`-h`, and `--` ending the options.
struct CommandLineReader {
    private let arguments: [String]
    private let dashedWordsAreOptions: Bool
    private var index = 0
    private var onlyPositionals = false

    /// A reader of `arguments`; with `dashedWordsAreOptions`, a word with one leading `-` (other than `-` and
    /// `-h`) is read as an option, for the caller to refuse, instead of as a positional.
    init(_ arguments: [String], dashedWordsAreOptions: Bool = false) {
        self.arguments = arguments
        self.dashedWordsAreOptions = dashedWordsAreOptions
    }

    /// The next word, or `nil` at the end.
    mutating func next() -> CommandLineWord? {
        guard index < arguments.count else { return nil }
        let argument = arguments[index]
        index += 1
        if onlyPositionals || argument == "-" || !argument.hasPrefix(dashedWordsAreOptions ? "-" : "--") {
            return argument == "-h" && !onlyPositionals ? .help : .positional(argument)
        }
        if argument == "--" {
            onlyPositionals = true
            return next()
        }
        if argument == "--help" || argument == "-h" { return .help }
        var name = String(argument.dropFirst(argument.hasPrefix("--") ? 2 : 1))
        var inlineValue: String?
        if let equals = name.firstIndex(of: "=") {
            inlineValue = String(name[name.index(after: equals)...])
            name = String(name[..<equals])
        }
        let spelling = String(argument.prefix { $0 != "=" })
        return .option(name: name, inlineValue: inlineValue, spelling: spelling)
    }

    /// The argument after an option, taken as its value whatever it looks like; `nil` at the end.
    mutating func value() -> String? {
        guard index < arguments.count else { return nil }
        defer { index += 1 }
        return arguments[index]
    }
}
