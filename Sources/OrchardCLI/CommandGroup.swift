extension CLI.Command {
    /// A subcommand that only dispatches to actions: `orchard NAME ACTION …`.
    ///
    /// Without an action it prints `usage` and exits 2; `help`, `--help` or `-h` as the action, or a help request
    /// from an action's arguments, prints `usage` to standard output and exits 0. An unknown action or a
    /// ``UsageError`` prints
    /// `orchard NAME: <error>` and `usage` and exits 2; any other error prints `orchard NAME: <error>`
    /// and exits 1. Each action gets the arguments after its own name.
    static func group(
        name: String, summary: String, usage: String,
        actions: [String: @Sendable ([String], CLIOutput) throws -> Int32]
    ) -> CLI.Command {
        CLI.Command(name: name, summary: summary) { arguments, io in
            guard let action = arguments.first else {
                io.err(usage)
                return 2
            }
            do {
                guard let run = actions[action] else {
                    if UsageError.asksForHelp(arguments) { throw UsageError.helpRequest }
                    throw UsageError("unknown \(name) command \(action)")
                }
                return try run(Array(arguments.dropFirst()), io)
            } catch {
                return io.report(error, of: "orchard \(name)", usage: usage)
            }
        }
    }
}
