import Foundation
import GatewayHTTP
import OrchardCLI
import OrchardHTTP
import Testing

@Suite("Settings: config file < environment < flags")
struct SettingsTests {
    static var registry: SettingsRegistry {
        var registry = SettingsRegistry()
        ServerConfiguration.register(in: &registry)
        registry.register(
            Setting(name: "database", kind: .string, default: "sqlite:./orchard.db", summary: "the store"))
        registry.register(Setting(name: "master-key", kind: .string, summary: "the master key", isSecret: true))
        registry.register(Setting(name: "sandbox", kind: .boolean, default: "true", summary: "sandbox mode"))
        registry.register(Setting(name: "webhook-retry-schedule", kind: .list, default: "1,5,30", summary: "retries"))
        return registry
    }

    func writeConfig(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("orchard-\(UUID().uuidString).json")
            .path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test("defaults apply when nothing is given")
    func defaults() throws {
        let settings = try Self.registry.resolve(arguments: [], environment: [:])
        let configuration = try ServerConfiguration(settings: settings)
        #expect(configuration == ServerConfiguration())
        #expect(configuration.host == "127.0.0.1" && configuration.port == 8080 && configuration.maxBodyBytes == 65_536)
        #expect(settings.source("port") == .defaultValue)
        #expect(settings.string("database") == "sqlite:./orchard.db")
        #expect(settings.string("tls-cert") == nil)
    }

    @Test("--tls-cert and --tls-key go together, from any layer")
    func tlsPair() throws {
        for arguments in [["--tls-cert", "/c.pem"], ["--tls-key", "/k.pem"]] {
            let settings = try Self.registry.resolve(arguments: arguments, environment: [:])
            #expect(throws: ConfigurationError(.invalidValue, "--tls-cert and --tls-key go together")) {
                try ServerConfiguration(settings: settings)
            }
        }
        let split = try Self.registry.resolve(
            arguments: ["--tls-key", "/k.pem"], environment: ["ORCHARD_TLS_CERT": "/c.pem"])
        let configuration = try ServerConfiguration(settings: split)
        #expect(configuration.tlsCertificatePath == "/c.pem" && configuration.tlsKeyPath == "/k.pem")
    }

    @Test(
        "each layer overrides the one below: file < environment < flag",
        arguments: [
            ([], [:], "9001", "file"),
            ([], ["ORCHARD_PORT": "9002"], "9002", "env"),
            (["--port", "9003"], ["ORCHARD_PORT": "9002"], "9003", "flag"),
            (["--port=9004"], [:], "9004", "flag"),
            ([], ["ORCHARD_PORT": ""], "9001", "file"),
        ] as [([String], [String: String], String, String)])
    func precedence(arguments: [String], environment: [String: String], port: String, source: String) throws {
        let path = try writeConfig(#"{"port": 9001, "host": "0.0.0.0", "max_body_bytes": 1000, "sandbox": false}"#)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let settings = try Self.registry.resolve(arguments: ["--config", path] + arguments, environment: environment)
        #expect(settings.string("port") == port)
        switch source {
        case "file": #expect(settings.source("port") == .file(path))
        case "env": #expect(settings.source("port") == .environment("ORCHARD_PORT"))
        default: #expect(settings.source("port") == .flag("--port"))
        }
        let configuration = try ServerConfiguration(settings: settings)
        #expect(configuration.port == Int(port))
        #expect(configuration.host == "0.0.0.0")
        #expect(configuration.maxBodyBytes == 1000)
        #expect(try settings.boolean("sandbox") == false)
    }

    @Test("the config file may be named by ORCHARD_CONFIG; lists, booleans and secrets")
    func configFromEnvironment() throws {
        let path = try writeConfig(
            #"{"webhook-retry-schedule": [10, 60, 300], "master-key": "mk_secret_value", "rate-limit-per-second": 2.5}"#
        )
        defer { try? FileManager.default.removeItem(atPath: path) }
        let settings = try Self.registry.resolve(
            arguments: ["--sandbox", "serve-extra"], environment: ["ORCHARD_CONFIG": path, "ORCHARD_HOST": "::1"])
        #expect(settings.list("webhook-retry-schedule") == ["10", "60", "300"])
        #expect(try settings.boolean("sandbox") == true)
        #expect(settings.positionals == ["serve-extra"])
        #expect(settings.string("master-key") == "mk_secret_value")
        #expect(settings.summaryLines.contains("master-key = (set) (config file \(path))"))
        #expect(!settings.summaryLines.joined().contains("mk_secret_value"))
        let configuration = try ServerConfiguration(settings: settings)
        #expect(configuration.host == "::1")
        #expect(configuration.rateLimitPerSecond == 2.5)
    }

    @Test(
        "bad input is a clear configuration error",
        arguments: [
            (["--prot", "1"], [:], "{}", ConfigurationError.Code.unknownFlag),
            (["--port"], [:], "{}", .missingValue),
            ([], ["ORCHARD_PORT": "eighty"], "{}", .invalidValue),
            (["--port", "70000"], [:], "{}", .invalidValue),
            ([], [:], #"{"prot": 1}"#, .unknownKey),
            ([], [:], #"[1, 2]"#, .invalidFile),
            ([], [:], #"{"port": {"a": 1}}"#, .invalidValue),
            (["--tls-cert", "/x.pem"], [:], "{}", .invalidValue),
        ] as [([String], [String: String], String, ConfigurationError.Code)])
    func errors(
        arguments: [String], environment: [String: String], file: String, code: ConfigurationError.Code
    )
        throws
    {
        let path = try writeConfig(file)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let error = #expect(throws: ConfigurationError.self) {
            let settings = try Self.registry.resolve(
                arguments: ["--config", path] + arguments, environment: environment)
            _ = try ServerConfiguration(settings: settings)
        }
        #expect(error?.code == code)
        #expect(error?.description.isEmpty == false)
    }

    @Test("the line form (orchard.conf): comments, blank lines, quotes, lists and an = inside a value")
    func lineForm() throws {
        let path = try writeConfig(
            """
            # a comment
              port = 9002

            host=0.0.0.0
            database = "postgres://u@h/db?sslmode=require"
            webhook_retry_schedule = 1m, 5m
            master-key = \(String(repeating: "ab", count: 32))
            sandbox = off
            """)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let settings = try Self.registry.resolve(arguments: ["--config", path], environment: [:])
        #expect(try settings.integer("port") == 9002)
        #expect(settings.string("host") == "0.0.0.0")
        #expect(settings.string("database") == "postgres://u@h/db?sslmode=require")
        #expect(settings.list("webhook-retry-schedule") == ["1m", "5m"])
        #expect(try settings.boolean("sandbox") == false)
        #expect(settings.source("port") == .file(path))
        #expect(settings.summaryLines.contains("master-key = (set) (config file \(path))"))
    }

    @Test(
        "the line form's errors: no `=`, no name, an unknown name, a setting twice",
        arguments: [
            ("port 9000", ConfigurationError.Code.invalidFile), ("= 1", .invalidFile), ("prot = 1", .unknownKey),
            ("port = 1\nport = 2", .invalidFile), ("port = 1\nport_x = 2", .unknownKey),
            ("max-body-bytes = 1\nmax_body_bytes = 2", .invalidFile),
        ])
    func lineFormErrors(file: String, code: ConfigurationError.Code) throws {
        let path = try writeConfig(file)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let error = #expect(throws: ConfigurationError.self) {
            try Self.registry.resolve(arguments: ["--config", path], environment: [:])
        }
        #expect(error?.code == code, "\(file)")
        #expect(error?.reason.contains(path) == true)
    }

    @Test("orchard config template names every serve setting, commented; read back it sets only the given ones")
    func template() throws {
        let registry = ServeCommand.registry()
        let plain = registry.configTemplate()
        for setting in registry.settings where setting.name != "config" {
            #expect(plain.contains("\n#\(setting.name) = "), "\(setting.name)")
            #expect(plain.contains(setting.environmentVariable), "\(setting.name)")
        }
        let untouched = try writeConfig(plain)
        defer { try? FileManager.default.removeItem(atPath: untouched) }
        let defaults = try registry.resolve(arguments: ["--config", untouched], environment: [:])
        #expect(registry.settings.allSatisfy { defaults.source($0.name).map { $0 != .file(untouched) } ?? true })

        let captured = CapturedOutput()
        #expect(
            CLI.run(["config", "template", "port=9100", "environment=production"], output: captured.output) == 0)
        let active = try writeConfig(captured.stdout)
        defer { try? FileManager.default.removeItem(atPath: active) }
        let resolved = try registry.resolve(arguments: ["--config", active], environment: [:])
        #expect(try resolved.integer("port") == 9100)
        #expect(resolved.string("environment") == "production")
        #expect(resolved.source("host") == .defaultValue)
        let check = CapturedOutput()
        #expect(CLI.run(["config", "check", active], output: check.output) == 0)
        #expect(check.stdout.contains("port = 9100 (config file \(active))"))
        #expect(!check.stdout.contains("(default)"))

        // A secret is never written into a template; a bad file is bad usage (2).
        #expect(CLI.run(["config", "template", "master-key=00"], output: CapturedOutput().output) == 2)
        #expect(CLI.run(["config", "template", "no-such=1"], output: CapturedOutput().output) == 2)
        let bad = try writeConfig("port = eighty\nprot = 1")
        defer { try? FileManager.default.removeItem(atPath: bad) }
        #expect(CLI.run(["config", "check", bad], output: CapturedOutput().output) == 2)
    }

    @Test("an unreadable config file is reported with its path")
    func unreadableFile() {
        let error = #expect(throws: ConfigurationError.self) {
            try Self.registry.resolve(arguments: ["--config", "/nonexistent/orchard.json"], environment: [:])
        }
        #expect(error?.code == .unreadableFile)
        #expect(error?.reason.contains("/nonexistent/orchard.json") == true)
    }

    @Test("help lists every setting with its flag, variable and default; secrets' values never")
    func help() throws {
        var registry = Self.registry
        registry.register(Setting(name: "api-secret", kind: .string, default: "s3cr3t", summary: "x", isSecret: true))
        let help = registry.helpText
        for setting in registry.settings {
            #expect(help.contains(setting.flag))
            #expect(help.contains(setting.environmentVariable))
        }
        #expect(help.contains("--port N"))
        #expect(help.contains("default 8080"))
        #expect(help.contains("ORCHARD_MAX_BODY_BYTES"))
        #expect(!help.contains("s3cr3t"))
        #expect(try Self.registry.resolve(arguments: ["--help"], environment: [:]).helpRequested)
    }
}
