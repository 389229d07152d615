import ApplePaySandbox
import Foundation
import Gateway
import GatewayHTTP
import GatewayTestSupport
import OrchardCLI
import OrchardCrypto
import OrchardTestSupport
import Testing

/// The path docs/operations.md's "Going live" walks, on a fresh database: a production merchant from the command
/// line, a master key, Apple's root configured, a processing key's CSR, its certificate signed by a test CA standing
/// in for Apple, and a token from the sandbox minter refused because its root is not Apple's.
@Suite("Going live with a production merchant on a fresh database", .serialized)
struct GoLiveTests {
    static let appleRoot = (TestPaths.vectors ?? TestPaths.sharedVectors).appendingPathComponent("apple-root-ca-g3.pem")
        .path
    static let haveAppleRoot = FileManager.default.fileExists(atPath: appleRoot)

    @Test(
        "orchard merchant create, orchard serve in production, CSR, certificate upload, a sandbox token refused",
        .enabled(if: haveAppleRoot, "Apple Root CA - G3 is not in ../shared/vectors: the go-live test is skipped"),
        .enabled(if: TestCertificateAuthority.opensslPath != nil, "the openssl command is not installed"))
    func goLive() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "orchard-live-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = "sqlite:" + directory.appendingPathComponent("orchard.db").path
        // The master key, as the guide makes it: 64 hex digits in a file only its owner reads.
        let keyFile = directory.appendingPathComponent("master.key").path
        let hex = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        #expect(FileManager.default.createFile(atPath: keyFile, contents: Data((hex + "\n").utf8)))
        #expect(chmod(keyFile, 0o600) == 0)

        // 1. The production merchant.
        let created = CapturedOutput()
        let identifier = "merchant.com.orchard.golive"
        #expect(
            CLI.run(
                [
                    "merchant", "create", "--environment", "production", "--name", "Orchard Live",
                    "--merchant-identifier",
                    identifier, "--currencies", "TWD", "--database", database, "--master-key-file", keyFile, "--json",
                ], output: created.output) == 0, "\(created.stderr)")
        let credentials = try #require(
            try JSONSerialization.jsonObject(with: Data(created.stdout.utf8)) as? [String: Any])
        let merchantID = try #require(credentials["merchant_id"] as? String)
        let secretKey = try #require(credentials["secret_key"] as? String)
        let appID = try #require(credentials["app_id"] as? String)
        let appKey = try #require(credentials["app_key"] as? String)

        // 2. orchard serve in production, with the master key and Apple's root.
        let log = CapturedOutput()
        let settings = try ServeCommand.registry().resolve(
            arguments: [
                "--environment", "production", "--database", database, "--master-key-file", keyFile, "--apple-root",
                Self.appleRoot, "--port", "0", "--reconcile-interval", "0",
            ], environment: [:])
        let running = try ServeCommand.start(settings: settings, io: log.output)
        defer { running.stop() }
        #expect(!log.stderr.contains("warning"), "\(log.stderr)")
        #expect(running.runtime.sandboxMerchant == nil, "production provisions no sandbox merchant")
        let base = running.server.baseURL
        func server(_ method: String, _ path: String, _ json: Any?) throws -> ClientResponse {
            try CurlClient().call(
                method, base, path, headers: ["Authorization": "Bearer \(secretKey)"], json: json, body: nil)
        }

        // 3. The processing key's CSR, from the gateway (the private key never leaves it).
        let csr = try server("POST", "/v1/merchant-keys/csr", ["type": "ec", "purpose": "processing"])
        #expect(csr.status == 200, "\(csr.text)")
        let keyID = try #require(csr.json["id"] as? String)
        let csrPEM = try #require(csr.json["csr_pem"] as? String)

        // 4. Its certificate, signed by the test CA standing in for Apple, uploaded.
        let authority = try TestCertificateAuthority()
        defer { authority.remove() }
        let hash = Hex.encode(SHA256.hash(Array(identifier.utf8))).uppercased()
        let certificatePEM = try authority.signProcessing(csrPEM: csrPEM, merchantIdentifierHash: hash)
        let uploaded = try server("POST", "/v1/merchant-keys/\(keyID)/certificate", ["certificate_pem": certificatePEM])
        #expect(uploaded.status == 200, "\(uploaded.text)")
        #expect(uploaded.json["active"] as? Bool == true)
        #expect((uploaded.json["merchant_identifier_hash"] as? String)?.uppercased() == hash)

        // 5. A token from the sandbox minter, for that very certificate: refused, its root is not Apple's.
        let now = Date()
        let minter = TokenMinter(
            pki: try SandboxPKI.generate(
                notBefore: now.addingTimeInterval(-3600), notAfter: now.addingTimeInterval(86_400)))
        var request = MintRequest(merchantCertificatePEM: certificatePEM, signingTime: now)
        request.amount = 10_000
        let token = try JSONSerialization.jsonObject(with: try minter.mint(request))
        let refused = try CurlClient().call(
            "POST", base, "/v1/tokens", headers: ["X-Orchard-App-Id": appID, "X-Orchard-App-Key": appKey],
            json: ["token": token], body: nil)
        #expect(refused.status == 422, "\(refused.text)")
        let error = try #require(refused.json["error"] as? [String: Any])
        #expect(error["type"] as? String == "token_error")
        #expect(error["code"] as? String == "certificate_untrusted")

        // 6. The processor: none until set, then Adyen live from a file through the command line, with the master key
        // file; shown by its last four characters, its secrets sealed in the database.
        let before = try server("GET", "/v1/processor", nil)
        #expect(before.status == 200 && before.json["configured"] as? Bool == false, "\(before.text)")
        let apiKey = "AQE-golive-api-key-Zx90"
        let hmacKey = "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056"
        let processorFile = directory.appendingPathComponent("processor.json")
        try JSONSerialization.data(withJSONObject: [
            "type": "adyen", "environment": "live", "merchant_account": "OrchardLiveECOM", "api_key": apiKey,
            "hmac_key": hmacKey, "live_url_prefix": "1797a841fbb37ca7-OrchardLive",
        ]).write(to: processorFile)
        let set = CapturedOutput()
        #expect(
            CLI.run(
                [
                    "merchant", "set-processor", "--merchant-id", merchantID, "--config", processorFile.path,
                    "--database", database, "--master-key-file", keyFile,
                ], output: set.output) == 0, "\(set.stderr)")
        #expect(set.stdout.contains("Zx90") && !set.stdout.contains(apiKey) && !set.stdout.contains(hmacKey))
        let after = try server("GET", "/v1/processor", nil)
        #expect(after.json["type"] as? String == "adyen" && after.json["environment"] as? String == "live")
        #expect((after.json["secret_hints"] as? [String: String])?["api_key"] == "…Zx90", "\(after.text)")
        for suffix in ["", "-wal"] {
            let bytes = FileManager.default.contents(atPath: String(database.dropFirst("sqlite:".count)) + suffix)
            #expect(bytes?.range(of: Data(apiKey.utf8)) == nil, "the API key in orchard.db\(suffix)")
        }

        // The merchant as orchard merchant show sees it, and the audit log of the way there.
        let shown = CapturedOutput()
        #expect(
            CLI.run(
                [
                    "merchant", "show", "--merchant-id", merchantID, "--database", database, "--master-key-file",
                    keyFile,
                ],
                output: shown.output) == 0, "\(shown.stderr)")
        #expect(shown.stdout.contains("\"id\":\"\(keyID)\"") && shown.stdout.contains("\"active\":true"))
        #expect(!shown.stdout.contains(secretKey) && !shown.stdout.contains(appKey))
        let audit = try server("GET", "/v1/audit-log", nil)
        let entries = try #require(audit.json["data"] as? [[String: Any]])
        let trail = entries.reversed().map {
            "\($0["action"] as? String ?? "") \((($0["actor"] as? [String: Any])?["name"] as? String) ?? "")"
        }
        let keyName = String(secretKey.prefix(20))
        #expect(
            trail == [
                "merchant.create orchard merchant create", "processing_key.csr \(keyName)",
                "processing_key.certificate \(keyName)", "processor_settings.update orchard merchant set-processor",
            ])
    }
}
