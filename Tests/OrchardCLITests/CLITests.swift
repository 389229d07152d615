import OrchardBase
import Testing

@testable import OrchardCLI

@Suite("Command line")
struct CLITests {
    @Test("unknown commands exit 2 with the usage")
    func unknownCommand() {
        let captured = CapturedOutput()
        #expect(CLI.run(["no-such-command"], output: captured.output) == 2)
        #expect(captured.stderr.contains("usage: orchard"))
    }

    @Test("orchard --version and orchard version print the version and the commit the build is made from")
    func version() throws {
        for words in [["--version"], ["version"]] {
            let captured = CapturedOutput()
            #expect(CLI.run(words, output: captured.output) == 0)
            let line = captured.stdout.trimmingCharacters(in: .newlines)
            let prefix = "orchard \(OrchardVersion.number) (commit "
            #expect(line.hasPrefix(prefix) && line.hasSuffix(")"))
            let commit = line.dropFirst(prefix.count).dropLast()
            // 12 hex digits (with -dirty when tracked files differed), or `unknown` outside a checkout.
            let digits = commit.hasSuffix("-dirty") ? commit.dropLast(6) : commit
            #expect(commit == "unknown" || (digits.count == 12 && digits.allSatisfy(\.isHexDigit)), "\(line)")
        }
    }

    @Test("arguments: options, repeated options, flags, positionals and errors")
    func arguments() throws {
        let parsed = try Arguments(
            ["--key", "a.pem", "--key=b.pem", "--reveal", "file.json", "--", "--not-an-option"],
            options: ["key"], flags: ["reveal"])
        #expect(parsed.values("key") == ["a.pem", "b.pem"])
        #expect(parsed.value("key") == "b.pem")
        #expect(parsed.flag("reveal"))
        #expect(parsed.positionals == ["file.json", "--not-an-option"])
        #expect(throws: UsageError.self) { try Arguments(["--bogus"], options: [], flags: []) }
        #expect(throws: UsageError.self) { try Arguments(["--key"], options: ["key"], flags: []) }
        // -h is --help: a flag where declared, a help request where not; a value after an option is a value.
        #expect(try Arguments(["-h"], options: [], flags: ["help"]).flag("help"))
        let request = #expect(throws: UsageError.self) { try Arguments(["--help"], options: [], flags: []) }
        #expect(request?.isHelpRequest == true)
        #expect(try Arguments(["--key", "-h"], options: ["key"], flags: []).value("key") == "-h")
        #expect(try Arguments(["--", "-h"], options: [], flags: []).positionals == ["-h"])
    }

    @Test("one reader for Arguments and the settings: a word with one dash is a positional or an option to refuse")
    func commandLineReader() throws {
        var reader = CommandLineReader(["-x", "-", "-h", "--a=b", "--", "--help"])
        var words: [CommandLineWord] = []
        while let word = reader.next() { words.append(word) }
        #expect(
            words == [
                .positional("-x"), .positional("-"), .help, .option(name: "a", inlineValue: "b", spelling: "--a"),
                .positional("--help"),
            ])
        var settings = CommandLineReader(["-x=1", "--port", "8080"], dashedWordsAreOptions: true)
        #expect(settings.next() == .option(name: "x", inlineValue: "1", spelling: "-x"))
        #expect(settings.next() == .option(name: "port", inlineValue: nil, spelling: "--port"))
        #expect(settings.value() == "8080")
        #expect(settings.next() == nil)
        #expect(settings.value() == nil)
        let refused = #expect(throws: ConfigurationError.self) {
            try ServeCommand.registry().resolve(arguments: ["-x=1"], environment: [:])
        }
        #expect(refused?.code == .unknownFlag)
        #expect(refused?.reason == "unknown option -x")
    }

    @Test("Arguments.parse reads the whole line before a help request, so a bad option after --help is bad usage")
    func parseThenHelp() throws {
        let help = #expect(throws: UsageError.self) { try Arguments.parse(["--a", "1", "-h"], options: ["a"]) }
        #expect(help?.isHelpRequest == true)
        let bad = #expect(throws: UsageError.self) { try Arguments.parse(["--help", "--bogus"], options: []) }
        #expect(bad?.isHelpRequest == false)
        #expect(bad?.message == "unknown option --bogus")
    }

    @Test("every command reports an error the same way: help 0, bad usage 2 with the usage, a failure its status")
    func report() {
        struct Failure: Error, CustomStringConvertible { var description: String { "it broke" } }
        let cases: [(any Error, String?, Int32?, Int32, out: String, err: String)] = [
            (UsageError.helpRequest, "usage: x", 1, 0, "usage: x\n", ""),
            (UsageError("bad"), "usage: x", 1, 2, "", "orchard x: bad\n\nusage: x\n"),
            (UsageError("bad"), nil, 1, 2, "", "orchard x: bad\n"),
            (ConfigurationError(.invalidValue, "no"), nil, 1, 2, "", "orchard x: no\n"),
            (Failure(), "usage: x", 1, 1, "", "orchard x: it broke\n"),
            (Failure(), "usage: x", 3, 3, "", "orchard x: it broke\n"),
            (Failure(), "usage: x", nil, 2, "", "orchard x: it broke\n\nusage: x\n"),
        ]
        for (error, usage, failure, status, out, err) in cases {
            let captured = CapturedOutput()
            #expect(captured.output.report(error, of: "orchard x", usage: usage, failure: failure) == status)
            #expect(captured.stdout == out)
            #expect(captured.stderr == err)
        }
    }

    @Test(
        "--help and -h print the command's usage to standard output and exit 0, for every command",
        arguments: [
            ["request"], ["request", "validate"], ["demo"], ["audit"], ["serve"], ["merchant"], ["merchant", "show"],
            ["merchant", "create"], ["merchant", "list"], ["merchant", "rotate-secret-key"],
            ["merchant", "rotate-app-key"], ["merchant", "disable"], ["merchant", "enable"],
            ["bench"], ["bench", "token"], ["bench", "http"], ["token"], ["token", "decrypt"], ["keys"],
            ["keys", "csr"], ["sandbox"], ["sandbox", "mint"], ["sandbox", "mint", "--database", "sqlite:x.db"],
        ])
    func help(command: [String]) {
        for flag in ["--help", "-h"] {
            let captured = CapturedOutput()
            #expect(CLI.run(command + [flag], output: captured.output) == 0, "\(command) \(flag): \(captured.stderr)")
            #expect(captured.stdout.contains("usage: orchard"), "\(command) \(flag)")
            #expect(captured.stderr.isEmpty, "\(command) \(flag)")
        }
    }
}
