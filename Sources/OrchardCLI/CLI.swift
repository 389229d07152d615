import OrchardBase
import Foundation
import Gateway

/// The `orchard` command line: a table of subcommands, each a function of its
/// arguments and an output sink that returns the process exit status.
///
/// Exit statuses are part of the interface that operators' scripts rely on:
/// 0 success, 1 a rejection the command reports (invalid request, refused token …),
/// 2 bad usage or unreadable input.
public enum CLI {
    /// A subcommand: `orchard NAME …`.
    public struct Command: Sendable {
        /// The word after `orchard`.
        public var name: String
        /// One line for `orchard help`.
        public var summary: String
        /// Runs the subcommand with the arguments after its name.
        public var run: @Sendable ([String], CLIOutput) -> Int32
    }

    /// Every subcommand, in the order `orchard help` lists them.
    static let commands: [Command] = [
        Command(name: "version", summary: "print Orchard's version and the commit it was built from") { _, io in
            io.out(versionLine)
            return 0
        },
        RequestCommand.command,
        DemoCommand.command,
        AuditCommand.command,
        MigrateCommand.command,
        BackupCommand.command,
        GatewayWorkerCommand.command,
        ServeCommand.command,
        ConfigCommand.command,
        MerchantCommand.command,
        BenchCommand.command,
        TokenCommand.command,
        KeysCommand.command,
        SandboxCommand.command,
    ]

    /// `orchard <version> (commit <commit>)`: what `orchard version` and `orchard --version` print.
    static var versionLine: String { "orchard \(OrchardVersion.number) (commit \(BuildInfo.commit))" }

    /// Runs `orchard` with `arguments` (without the program name) and returns the exit status.
    public static func run(_ arguments: [String], output: CLIOutput = .standard) -> Int32 {
        if arguments.first == "--version" { return run(["version"] + arguments.dropFirst(), output: output) }
        guard let name = arguments.first, !["help", "--help", "-h"].contains(name) else {
            output.out(usage)
            return arguments.isEmpty ? 2 : 0
        }
        guard let command = commands.first(where: { $0.name == name }) else {
            output.err("orchard: unknown command '\(name)'\n\n\(usage)")
            return 2
        }
        return command.run(Array(arguments.dropFirst()), output)
    }

    /// The audit log's actor for a command line: `orchard`, the command and its subcommand word when it has
    /// one (`orchard merchant rotate-secret-key`); options and their values are never part of it. A command that
    /// changes what the audit log records passes it in the ``RequestScope`` of each operation.
    static func auditActor(_ name: String, _ arguments: [String]) -> AuditActor {
        var words = ["orchard", name]
        if let word = arguments.first, !word.isEmpty, word.count <= 40,
            word.allSatisfy({ $0.isASCII && ($0.isLowercase || $0 == "-") }), word.first != "-"
        {
            words.append(word)
        }
        return .cli(words.joined(separator: " "))
    }

    static var usage: String {
        let width = commands.map(\.name.count).max() ?? 0
        let lines = commands.map { "  \($0.name.padding(toLength: width, withPad: " ", startingAt: 0))  \($0.summary)" }
        return "usage: orchard <command> [options]\n\ncommands:\n" + lines.joined(separator: "\n")
    }
}

/// Where a command writes: standard output and standard error, or buffers in tests.
// The writers are called only under `lock` (they need not be thread-safe themselves, nor Sendable).
public final class CLIOutput: @unchecked Sendable {
    private let lock = Locked()
    private let writeOut: (String) -> Void
    private let writeErr: (String) -> Void

    /// Whether standard output is a terminal that a person reads (not a file or a pipe): secrets shown once
    /// are written in full only there.
    public let outIsTerminal: Bool

    /// An output that calls the given functions with each line (a trailing newline included).
    public init(out: @escaping (String) -> Void, err: @escaping (String) -> Void, outIsTerminal: Bool = false) {
        self.writeOut = out
        self.writeErr = err
        self.outIsTerminal = outIsTerminal
    }

    /// The process's standard output and standard error.
    public static var standard: CLIOutput {
        CLIOutput(
            out: { FileHandle.standardOutput.write(Data($0.utf8)) },
            err: { FileHandle.standardError.write(Data($0.utf8)) }, outIsTerminal: isatty(STDOUT_FILENO) == 1)
    }

    /// Writes `text` and a newline to standard output.
    public func out(_ text: String) {
        lock.withLock { writeOut(text + "\n") }
    }

    /// Writes `text` and a newline to standard error.
    public func err(_ text: String) {
        lock.withLock { writeErr(text + "\n") }
    }
}

/// A buffer that captures a command's output, for tests and in-process callers.
public final class CapturedOutput: Sendable {
    private let text = Locked((out: "", err: ""))

    public init() {}

    /// The sink to pass to ``CLI/run(_:output:)``.
    public var output: CLIOutput {
        CLIOutput(
            out: { [text] line in text.withLock { $0.out += line } },
            err: { [text] line in text.withLock { $0.err += line } })
    }

    /// Everything written to standard output so far.
    public var stdout: String { text.current.out }
    /// Everything written to standard error so far.
    public var stderr: String { text.current.err }
}
