import ApplePayModel
import ApplePaySandbox
import Foundation
import Gateway
import GatewayAssembly
import GatewayHTTP
import GatewayProcessors
import GatewayTestSupport
import OrchardCLI
import OrchardHTTP
import OrchardTestSupport
import Testing

/// `orchard serve`'s settings as they reach the running gateway: flags, `ORCHARD_…` variables, config-file keys,
/// ranges, and `serve --help`.
@Suite("orchard serve: settings reach the running gateway", .serialized)
struct ServeSettingsTests {
    @Test("the protections' settings: flags, ORCHARD_ variables, config-file keys, ranges, and serve --help")
    func slowClientProtections() throws {
        var registry = SettingsRegistry()
        ServerConfiguration.register(in: &registry)
        let defaults = try ServerConfiguration(settings: registry.resolve(arguments: [], environment: [:]))
        #expect(defaults.requestHeadTimeoutSeconds == 10 && defaults.requestBodyTimeoutSeconds == 30)
        #expect(defaults.keepAliveTrimPercent == 75 && defaults.reservedConnectionPercent == 10)
        #expect(defaults.keepAliveTrimMinimumIdleMilliseconds == 500)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("orchard-\(UUID().uuidString).json")
        try Data(#"{"request_head_timeout_seconds": 4, "reserved-connection-percent": 20}"#.utf8).write(to: path)
        defer { try? FileManager.default.removeItem(at: path) }
        let configuration = try ServerConfiguration(
            settings: registry.resolve(
                arguments: ["--config", path.path, "--request-body-timeout-seconds", "7"],
                environment: ["ORCHARD_KEEP_ALIVE_TRIM_PERCENT": "60", "ORCHARD_KEEP_ALIVE_TRIM_MIN_IDLE_MS": "250"]))
        #expect(configuration.keepAliveTrimMinimumIdleMilliseconds == 250)
        #expect(configuration.requestHeadTimeoutSeconds == 4 && configuration.requestBodyTimeoutSeconds == 7)
        #expect(configuration.keepAliveTrimPercent == 60 && configuration.reservedConnectionPercent == 20)
        for arguments in [
            ["--reserved-connection-percent", "51"], ["--keep-alive-trim-percent", "0"],
            ["--request-head-timeout-seconds", "-1"],
        ] {
            #expect(throws: ConfigurationError(.invalidValue, "")) {
                try ServerConfiguration(settings: registry.resolve(arguments: arguments, environment: [:]))
            }
        }
        let captured = CapturedOutput()
        #expect(CLI.run(["serve", "--help"], output: captured.output) == 0)
        for name in [
            "--request-head-timeout-seconds", "--request-body-timeout-seconds", "--keep-alive-trim-percent",
            "--reserved-connection-percent", "ORCHARD_RESERVED_CONNECTION_PERCENT", "--keep-alive-trim-min-idle-ms",
        ] {
            #expect(captured.stdout.contains(name), "missing \(name)")
        }
    }

    @Test("orchard serve --console-session-lifetime sets the absolute lifetime; out of range is refused")
    func serveSetting() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "orchard-life-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let arguments = [
            "--database", "sqlite:" + directory.appendingPathComponent("gateway.db").path, "--port", "0",
            "--reconcile-interval", "0", "--log-level", "off",
        ]
        let help = CapturedOutput()
        #expect(CLI.run(["serve", "--help"], output: help.output) == 0)
        #expect(help.stdout.contains("--console-session-lifetime"))
        for bad in ["299", "2592001", "a day"] {
            let settings = try ServeCommand.registry().resolve(
                arguments: arguments + ["--console-session-lifetime", bad], environment: [:])
            #expect(throws: ConfigurationError.self) {
                _ = try ServeCommand.start(settings: settings, io: CapturedOutput().output)
            }
        }
        let settings = try ServeCommand.registry().resolve(
            arguments: arguments, environment: ["ORCHARD_CONSOLE_SESSION_LIFETIME": "600"])
        let running = try ServeCommand.start(settings: settings, io: CapturedOutput().output)
        defer { running.stop() }
        #expect(running.runtime.gateway.configuration.consoleSessionLifetime == 600)
        let merchant = try #require(running.runtime.sandboxMerchant)
        let key = try running.runtime.gateway.merchants.credentials(merchantID: merchant.id).secretKey
        let answer = try CurlClient().call(
            "POST", running.server.baseURL, "/console/session", headers: [:], json: ["secret_key": key], body: nil)
        #expect(answer.status == 200, "\(answer.text)")
        let expires = try #require((answer.json["expires_at"] as? String).flatMap { try? Date($0, strategy: .iso8601) })
        #expect(abs(expires.timeIntervalSinceNow - 600) < 5)
    }

    @Test("a production gateway mounts neither the sandbox wallet routes nor the demo store; orchard.js it serves")
    func absentInProduction() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("orchard-prod-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let settings = try ServeCommand.registry().resolve(
            arguments: [
                "--environment", "production", "--master-key", String(repeating: "ab", count: 32), "--database",
                "sqlite:" + directory.appendingPathComponent("prod.db").path, "--port", "0", "--log-level", "off",
                "--reconcile-interval", "0",
            ], environment: [:])
        let running = try ServeCommand.start(settings: settings, io: CapturedOutput().output)
        defer { running.stop() }
        #expect(running.api.sandboxWallet == nil)
        #expect(
            !running.api.makeRouter().routeList.contains {
                "\($0.template)".hasPrefix("/v1/sandbox") || "\($0.template)".hasPrefix("/demo")
            })
        let response = try CurlClient().request(
            "POST", running.server.baseURL + "/v1/sandbox/wallet/tokens",
            headers: ["Content-Type": "application/json", "X-Orchard-App-Id": "app", "X-Orchard-App-Key": "key"],
            body: Data(#"{"amount":"1.00","currency":"TWD"}"#.utf8))
        #expect(response.status == 404)
        let client = CurlClient()
        #expect(try client.request("GET", running.server.baseURL + "/v1/sandbox/wallet/cards").status == 404)
        #expect(try client.request("GET", running.server.baseURL + "/demo").status == 404)
        let pay = try client.request(
            "POST", running.server.baseURL + "/demo/api/pay", headers: ["Content-Type": "application/json"],
            body: Data(#"{"prime":"prm_x","amount":"1.00","currency":"TWD"}"#.utf8))
        #expect(pay.status == 404)
        #expect(try client.request("GET", running.server.baseURL + "/sdk/v1/orchard.js").status == 200)
    }

    @Test("--cookie-secure, ORCHARD_COOKIE_SECURE and the cookie_secure key: auto by default, always when set; others refused")
    func cookieSecure() throws {
        var registry = SettingsRegistry()
        ServerConfiguration.register(in: &registry)
        #expect(
            try ServerConfiguration(settings: registry.resolve(arguments: [], environment: [:])).cookieSecure == .auto)
        #expect(
            try ServerConfiguration(
                settings: registry.resolve(arguments: ["--cookie-secure", "always"], environment: [:])
            )
            .cookieSecure == .always)
        #expect(
            try ServerConfiguration(
                settings: registry.resolve(arguments: [], environment: ["ORCHARD_COOKIE_SECURE": "always"])
            ).cookieSecure == .always)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("orchard-\(UUID().uuidString).json")
        try Data(#"{"cookie_secure": "always"}"#.utf8).write(to: path)
        defer { try? FileManager.default.removeItem(at: path) }
        #expect(
            try ServerConfiguration(settings: registry.resolve(arguments: ["--config", path.path], environment: [:]))
                .cookieSecure == .always)
        #expect(throws: ConfigurationError(.invalidValue, "")) {
            try ServerConfiguration(
                settings: registry.resolve(arguments: ["--cookie-secure", "yes"], environment: [:]))
        }
    }
}
