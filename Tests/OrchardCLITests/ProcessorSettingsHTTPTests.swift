import Foundation
import Gateway
import GatewayHTTP
import GatewayProcessors
import GatewayTestSupport
import OrchardCLI
import OrchardTestSupport
import Testing

/// `GET`/`PUT /v1/processor`, `POST /v1/processor/test` and `orchard merchant set-processor`, every answer checked
/// against openapi.yaml.
@Suite("Processor settings over the API and the command line")
struct ProcessorSettingsHTTPTests {
    /// A production merchant of the harness's database and its secret key.
    static func production(_ h: APIHarness) throws -> (merchant: Merchant, headers: [String: String]) {
        let (merchant, credentials) = try h.runtime.gateway.merchants.create(
            MerchantSpec(name: "Live Shop", environment: .production, merchantIdentifiers: ["merchant.com.live"]))
        return (merchant, ["Authorization": "Bearer \(credentials.secretKey)"])
    }

    static func checkAgainstSpec(_ h: APIHarness) throws {
        let checker = try OpenAPIChecker.load()
        for exchange in h.exchanges.withLock({ $0 }) { checker.check(exchange) }
    }

    @Test("a sandbox merchant: the sandbox default, its own settings, refusals with their codes, the test")
    func sandboxMerchant() throws {
        let h = try APIHarness()
        let initial = try h.merchantServer("GET", "/v1/processor")
        #expect(initial.status == 200, "\(initial.text)")
        #expect(initial.json["type"] as? String == "sandbox" && initial.json["configured"] as? Bool == false)
        let set = try h.merchantServer("PUT", "/v1/processor", json: ["type": "sandbox"])
        #expect(set.status == 200 && set.json["version"] as? Int == 1 && set.json["configured"] as? Bool == true)
        let wrongType = try h.merchantServer("PUT", "/v1/processor", json: ["type": 5])
        #expect(wrongType.status == 400 && wrongType.errorCode == "parameter_invalid")
        #expect(wrongType.error["param"] as? String == "type")
        let unknown = try h.merchantServer("PUT", "/v1/processor", json: ["type": "paypal"])
        #expect(unknown.status == 400 && unknown.errorCode == "parameter_invalid")
        let missing = try h.merchantServer("PUT", "/v1/processor", json: ["environment": "test"])
        #expect(missing.status == 400 && missing.errorCode == "parameter_missing")
        let extra = try h.merchantServer("PUT", "/v1/processor", json: ["type": "sandbox", "api_key": "x"])
        #expect(extra.status == 400 && extra.error["param"] as? String == "api_key")
        // No processor setting is nullable: null is refused, not taken as left out, and so is a control character.
        let null = try h.merchantServer(
            "PUT", "/v1/processor", json: ["type": "adyen", "environment": "test", "live_url_prefix": NSNull()])
        #expect(null.status == 400 && null.errorCode == "parameter_invalid", "\(null.text)")
        #expect(null.error["param"] as? String == "live_url_prefix")
        let control = try h.merchantServer("PUT", "/v1/processor", json: ["type": "sandbox\u{0}"])
        #expect(control.status == 400 && control.error["param"] as? String == "type", "\(control.text)")
        let notObject = try h.merchantServer("PUT", "/v1/processor", json: ["sandbox"])
        #expect(notObject.status == 400 && notObject.errorCode == "invalid_json")
        let test = try h.merchantServer("POST", "/v1/processor/test")
        #expect(test.status == 200 && test.json["outcome"] as? String == "ok")
        // The app key opens no setting.
        #expect(try h.client("GET", "/v1/processor").status == 403)
        try Self.checkAgainstSpec(h)
    }

    @Test("a production merchant: no processor until one is set; the sandbox acquirer is refused")
    func productionMerchant() throws {
        let h = try APIHarness()
        let (_, headers) = try Self.production(h)
        let initial = try h.call("GET", "/v1/processor", headers: headers)
        #expect(initial.status == 200 && initial.json["type"] is NSNull && initial.json["configured"] as? Bool == false)
        let test = try h.call("POST", "/v1/processor/test", headers: headers)
        #expect(test.status == 409 && test.errorCode == "processor_not_configured")
        let sandbox = try h.call("PUT", "/v1/processor", headers: headers, json: ["type": "sandbox"])
        #expect(sandbox.status == 422 && sandbox.errorCode == "processor_not_allowed")
        try Self.checkAgainstSpec(h)
    }

    @Test(
        "orchard merchant set-processor takes the same JSON, records who changed it, and refuses what the API refuses")
    func command() throws {
        let h = try APIHarness()
        let file = h.directory.appendingPathComponent("processor.json")
        try Data(#"{"type": "sandbox"}"#.utf8).write(to: file)
        let database = "sqlite:" + h.directory.appendingPathComponent("gateway.db").path
        func run(_ arguments: [String]) -> (Int32, CapturedOutput) {
            let captured = CapturedOutput()
            return (
                CLI.run(
                    ["merchant", "set-processor"] + arguments + ["--database", database], output: captured.output),
                captured
            )
        }
        let (status, output) = run(["--merchant-id", h.merchant.id, "--config", file.path, "--json"])
        #expect(status == 0, "\(output.stderr)")
        let shown = try #require(try JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as? [String: Any])
        #expect(shown["type"] as? String == "sandbox" && shown["version"] as? Int == 1)
        let view = try h.merchantServer("GET", "/v1/processor")
        #expect(view.json["version"] as? Int == 1)
        let audit = try h.runtime.gateway.auditLog(merchant: h.merchant, limit: 10, startingAfter: nil).entries
        let entry = try #require(audit.first { $0.action == "processor_settings.update" })
        #expect(entry.actor.kind == "cli" && entry.actor.name == "orchard merchant set-processor")
        let (production, _) = try Self.production(h)
        let (refused, refusedOutput) = run(["--merchant-id", production.id, "--config", file.path])
        #expect(refused == 1 && refusedOutput.stderr.contains("processor_not_allowed"), "\(refusedOutput.stderr)")
        try Data("not json".utf8).write(to: file)
        #expect(run(["--merchant-id", h.merchant.id, "--config", file.path]).0 == 2)
        #expect(run(["--merchant-id", h.merchant.id, "--config", "/nonexistent/processor.json"]).0 == 2)
        try Data(#"{"type": ["sandbox"]}"#.utf8).write(to: file)
        #expect(run(["--merchant-id", h.merchant.id, "--config", file.path]).0 != 0)
    }

    static let adyen: [String: String] = [
        "type": "adyen", "environment": "test", "merchant_account": "OrchardShopECOM",
        "api_key": "AQE-test-api-key-0001",
        "hmac_key": "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056",
    ]

    @Test(
        "Adyen and Checkout.com settings: shown without their secrets, live refused for a sandbox merchant, tested against a stand-in"
    )
    func connectors() throws {
        let standIn = try ProcessorStandIn(api: .adyen)
        try standIn.configure([
            "api_key": "AQE-test-api-key-0001", "merchant_account": "OrchardShopECOM",
            "hmac_key": Self.adyen["hmac_key"]!, "notification_url": "http://127.0.0.1:9/none",
        ])
        let h = try APIHarness(runtime: { $0.processors.baseURLs = ["adyen": standIn.baseURL] })
        let set = try h.merchantServer("PUT", "/v1/processor", json: Self.adyen)
        #expect(set.status == 200, "\(set.text)")
        #expect(set.json["type"] as? String == "adyen" && set.json["environment"] as? String == "test")
        #expect(set.json["fields"] as? [String: String] == ["merchant_account": "OrchardShopECOM"])
        #expect(set.json["secret_hints"] as? [String: String] == ["api_key": "…0001", "hmac_key": "…A056"])
        #expect(!set.text.contains("AQE-test-api-key-0001") && !set.text.contains("C71FC68D9D0C0575"))
        let test = try h.merchantServer("POST", "/v1/processor/test")
        #expect(test.json["outcome"] as? String == "ok" && test.json["http_status"] as? Int == 200, "\(test.text)")
        var live = Self.adyen
        live["environment"] = "live"
        live["live_url_prefix"] = "1797a841fbb37ca7-AdyenDemo"
        let refused = try h.merchantServer("PUT", "/v1/processor", json: live)
        #expect(refused.status == 422 && refused.errorCode == "processor_not_allowed")
        var wrong = Self.adyen
        wrong["hmac_key"] = "xyz"
        let invalid = try h.merchantServer("PUT", "/v1/processor", json: wrong)
        #expect(invalid.status == 400 && invalid.error["param"] as? String == "hmac_key")
        let checkout = try h.merchantServer(
            "PUT", "/v1/processor",
            json: [
                "type": "checkout_com", "environment": "sandbox", "secret_key": "sk_sbox_test_secret_0001",
                "processing_channel_id": "pc_w2njpb6jbjjujgcz5dgzxdn5mm", "webhook_secret": "whk_signature_key",
            ])
        #expect(checkout.status == 200 && checkout.json["version"] as? Int == 2)
        #expect(
            checkout.json["secret_hints"] as? [String: String] == ["secret_key": "…0001", "webhook_secret": "…_key"])
        let (_, headers) = try Self.production(h)
        live["type"] = "adyen"
        let production = try h.call("PUT", "/v1/processor", headers: headers, json: live)
        #expect(production.status == 200 && production.json["environment"] as? String == "live", "\(production.text)")
        try Self.checkAgainstSpec(h)
    }

    @Test("orchard serve --processor-base-url: TYPE=URL, https or loopback http, refused in production")
    func serveFlag() throws {
        func configuration(
            _ arguments: [String], environment: GatewayEnvironment = .sandbox
        ) throws
            -> ProcessorConnectorConfiguration
        {
            let settings = try ServeCommand.registry().resolve(arguments: arguments, environment: [:])
            return try ServeCommand.processorConnectors(settings: settings, environment: environment)
        }
        let both = try configuration([
            "--processor-base-url", "adyen=http://127.0.0.1:9001/v71,checkout_com=https://standin.example",
            "--processor-connect-timeout", "3", "--processor-timeout", "12",
        ])
        #expect(both.baseURLs == ["adyen": "http://127.0.0.1:9001/v71", "checkout_com": "https://standin.example"])
        #expect(both.connectTimeout == 3 && both.timeout == 12)
        let defaults = try configuration([])
        #expect(defaults.baseURLs.isEmpty && defaults.connectTimeout == 5 && defaults.timeout == 20)
        #expect(throws: ConfigurationError(.invalidValue, "")) {
            _ = try configuration(["--processor-base-url", "adyen=http://10.1.2.3:9001"])
        }
        #expect(throws: ConfigurationError(.invalidValue, "")) {
            _ = try configuration(["--processor-base-url", "stripe=https://x.example"])
        }
        #expect(throws: ConfigurationError(.invalidValue, "")) { _ = try configuration(["--processor-timeout", "40"]) }
        #expect(throws: ConfigurationError(.sandboxOnly, "")) {
            _ = try configuration(["--processor-base-url", "adyen=https://x.example"], environment: .production)
        }
        let captured = CapturedOutput()
        let status = CLI.run(
            [
                "serve", "--environment", "production", "--master-key", String(repeating: "ab", count: 32),
                "--database", "sqlite:/nonexistent/orchard.db", "--processor-base-url", "adyen=https://x.example",
            ], output: captured.output)
        #expect(status == 2 && captured.stderr.contains("sandbox_only_setting"), "\(captured.stderr)")
    }
}
