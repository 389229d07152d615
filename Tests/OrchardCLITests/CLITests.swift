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
    }
}
