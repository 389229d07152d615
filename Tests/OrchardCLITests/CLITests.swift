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
