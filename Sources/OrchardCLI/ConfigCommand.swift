import Foundation

/// `orchard config template [NAME=VALUE …]` and `orchard config check FILE`: the config file of `orchard serve`
/// as an operator writes it (the package installs the template as `/etc/orchard/orchard.conf`).
enum ConfigCommand {
    static let usage = """
        usage: orchard config template [NAME=VALUE …]
               orchard config check FILE

        template  prints a config file naming every `orchard serve` setting with its summary, environment variable
                  and default, commented out; each NAME=VALUE given is written as set instead.
        check     reads FILE as `orchard serve --config FILE` would (either form: `name = value` lines or a JSON
                  object) and prints the settings it sets; exit status 2 when it is not a valid config file.
        """

    static let command = CLI.Command.group(
        name: "config", summary: "print a commented config file of every serve setting, or check one", usage: usage,
        actions: ["template": template, "check": check])

    static func template(_ arguments: [String], _ io: CLIOutput) throws -> Int32 {
        let registry = ServeCommand.registry()
        var active: [(name: String, value: String)] = []
        for argument in arguments {
            guard let equals = argument.firstIndex(of: "="),
                let setting = registry.setting(named: String(argument[..<equals])),
                setting.name != SettingsRegistry.configFile.name
            else { throw UsageError("not NAME=VALUE of a serve setting: \(argument)") }
            guard !setting.isSecret else { throw UsageError("a secret (\(setting.name)) is never written in a template") }
            active.append((setting.name, String(argument[argument.index(after: equals)...])))
        }
        io.out(String(registry.configTemplate(active: active).dropLast()))
        return 0
    }

    static func check(_ arguments: [String], _ io: CLIOutput) throws -> Int32 {
        guard arguments.count == 1, let path = arguments.first, !path.hasPrefix("-") else {
            throw UsageError("check takes one FILE")
        }
        let settings = try ServeCommand.registry().resolve(arguments: ["--config", path], environment: [:])
        for line in settings.summaryLines where !line.hasSuffix("(default)") { io.out(line) }
        return 0
    }
}
