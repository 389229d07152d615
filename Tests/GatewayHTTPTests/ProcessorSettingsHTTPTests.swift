import Foundation
import Gateway
import GatewayHTTP
import OrchardCLI
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

    @Test("orchard merchant set-processor takes the same JSON, records who changed it, and refuses what the API refuses")
    func command() throws {
        let h = try APIHarness()
        let file = h.directory.appendingPathComponent("processor.json")
        try Data(#"{"type": "sandbox"}"#.utf8).write(to: file)
        let database = "sqlite:" + h.directory.appendingPathComponent("gateway.db").path
        func run(_ arguments: [String]) -> (Int32, CapturedOutput) {
            let captured = CapturedOutput()
            return (CLI.run(["merchant", "set-processor"] + arguments + ["--database", database], output: captured.output), captured)
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
}
