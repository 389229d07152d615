import Foundation
import GatewayHTTP
import OrchardCLI
import Testing

@Suite("orchard serve, merchant show, sandbox mint", .serialized)
struct GatewayCommandsTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("orchard-cli-\(UUID().uuidString)")
    var database: String { "sqlite:" + directory.appendingPathComponent("orchard.db").path }

    @Test("serve --help lists every setting")
    func help() {
        let captured = CapturedOutput()
        #expect(CLI.run(["serve", "--help"], output: captured.output) == 0)
        for name in [
            "--host", "--port", "--database", "--master-key", "--environment", "--apple-root", "--signing-time-max-age",
            "--max-body-bytes", "--webhook-retry-schedule", "--log-level", "ORCHARD_DATABASE", "sqlite:./orchard.db",
        ] {
            #expect(captured.stdout.contains(name), "missing \(name)")
        }
    }

    @Test("production refuses to start without a master key")
    func productionNeedsMasterKey() {
        let captured = CapturedOutput()
        let status = CLI.run(
            ["serve", "--environment", "production", "--database", database, "--port", "0"], output: captured.output)
        #expect(status == 2)
        #expect(captured.stderr.contains("master key"))
        #expect(!FileManager.default.fileExists(atPath: directory.path))
    }

    @Test("serve provisions the sandbox merchant once; merchant show and sandbox mint use the same database")
    func serveShowMint() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = CapturedOutput()
        let settings = try ServeCommand.registry().resolve(
            arguments: ["--database", database, "--port", "0", "--reconcile-interval", "0"], environment: [:])
        let running = try ServeCommand.start(settings: settings, io: first.output)
        #expect(first.stdout.contains("app_id"))
        #expect(first.stdout.contains("orchard merchant show --database \(database)"))
        let base = running.server.baseURL
        #expect(try CurlClient().request("GET", base + "/healthz").status == 200)
        #expect(try CurlClient().request("GET", base + "/readyz").status == 200)

        let shown = CapturedOutput()
        #expect(CLI.run(["merchant", "show", "--database", database, "--json"], output: shown.output) == 0)
        let merchant = try #require(
            try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: Any])
        for field in ["merchant_id", "app_id", "app_key", "secret_key", "merchant_identifier"] {
            #expect((merchant[field] as? String)?.isEmpty == false, "\(field)")
        }
        #expect((merchant["processing_certificate_pem"] as? String)?.contains("BEGIN CERTIFICATE") == true)
        let appID = try #require(merchant["app_id"] as? String)
        #expect(first.stdout.contains(appID))

        let minted = CapturedOutput()
        #expect(
            CLI.run(
                ["sandbox", "mint", "--database", database, "--amount", "12.34", "--currency", "TWD"],
                output: minted.output) == 0, "\(minted.stderr)")
        let token = try JSONSerialization.jsonObject(with: Data(minted.stdout.utf8))
        let body = try JSONSerialization.data(withJSONObject: ["token": token])
        let tokenized = try CurlClient().request(
            "POST", base + "/v1/tokens",
            headers: [
                "Content-Type": "application/json", "X-Orchard-App-Id": appID,
                "X-Orchard-App-Key": try #require(merchant["app_key"] as? String),
            ], body: body)
        #expect(tokenized.status == 200, "\(tokenized.text)")
        #expect(tokenized.json["total_amount"] as? String == "12.34")
        running.stop()
        #expect(throws: (any Error).self) { try CurlClient().request("GET", base + "/healthz") }

        let second = CapturedOutput()
        let again = try ServeCommand.start(settings: settings, io: second.output)
        #expect(!second.stdout.contains("app_key"))
        again.stop()
        #expect(
            CLI.run(["sandbox", "mint", "--database", database, "--amount", "1.001"], output: CapturedOutput().output)
                != 0)
    }
}
