import Foundation
import Gateway
import GatewayAssembly
import GatewayHTTP
import GatewayTestSupport
import OrchardCLI
import OrchardHTTP
import Testing

/// `orchard merchant …` on a fresh SQLite database, checked through the real HTTP API on loopback.
@Suite("orchard merchant: create, list, show, rotations, disable and enable", .serialized)
struct MerchantCommandTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("orchard-mch-\(UUID().uuidString)")
    var path: String { directory.appendingPathComponent("orchard.db").path }
    var database: String { "sqlite:" + path }
    let masterKey = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()

    /// Runs `orchard merchant …` with the database and master key; returns the status and output.
    func merchant(_ arguments: [String], key: Bool = true) -> (status: Int32, out: String, err: String) {
        let captured = CapturedOutput()
        let status = CLI.run(
            ["merchant"] + arguments + ["--database", database] + (key ? ["--master-key", masterKey] : []),
            output: captured.output)
        return (status, captured.stdout, captured.stderr)
    }

    func object(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "\(text)")
    }

    /// The gateway over the database on a manual clock, served on loopback.
    final class Served {
        let clock: Gateway.ManualClock
        let server: HTTPServer
        init(database path: String, masterKey: String, now: Date) throws {
            clock = Gateway.ManualClock(now)
            var options = GatewayRuntime.Options(databasePath: path)
            options.environment = .production
            options.masterKeyHex = masterKey
            let runtime = try GatewayRuntime(options, clock: clock)
            var configuration = ServerConfiguration()
            configuration.port = 0
            let api = GatewayAPI(gateway: runtime.gateway)
            server = api.server(configuration: configuration, accessLog: { _ in }, messages: { _ in })
            try server.start()
        }
        deinit { server.stop(timeoutSeconds: 1) }

        func get(_ path: String, secretKey: String) throws -> ClientResponse {
            try CurlClient().call(
                "GET", "http://127.0.0.1:\(server.port)", path, headers: ["Authorization": "Bearer \(secretKey)"],
                json: nil, body: nil)
        }

        func tokens(appID: String, appKey: String) throws -> ClientResponse {
            try CurlClient().call(
                "POST", "http://127.0.0.1:\(server.port)", "/v1/tokens",
                headers: ["X-Orchard-App-Id": appID, "X-Orchard-App-Key": appKey], json: ["token": ["x": 1]], body: nil)
        }
    }

    static func code(_ response: ClientResponse) -> String? {
        (response.json["error"] as? [String: Any])?["code"] as? String
    }

    @Test("create prints the production keys once; show and list never print them; the keys open the API")
    func createShowList() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let created = merchant([
            "create", "--environment", "production", "--name", "Orchard Tea", "--merchant-identifier",
            "merchant.com.orchard.tea", "--country", "TW", "--currencies", "TWD,USD", "--web-origins",
            "https://tea.example,https://www.tea.example", "--json",
        ])
        #expect(created.status == 0, "\(created.err)")
        #expect(created.err.contains("shown only now"))
        let fields = try object(created.out)
        let merchantID = try #require(fields["merchant_id"] as? String)
        let secretKey = try #require(fields["secret_key"] as? String)
        let appKey = try #require(fields["app_key"] as? String)
        let appID = try #require(fields["app_id"] as? String)
        #expect(merchantID.hasPrefix("mch_") && appID.hasPrefix("app_") && appKey.hasPrefix("ak_"))
        #expect(secretKey.hasPrefix("sk_live_"))
        #expect(fields["currencies"] as? [String] == ["TWD", "USD"])
        #expect(fields["web_origins"] as? [String] == ["https://tea.example", "https://www.tea.example"])
        #expect(fields["environment"] as? String == "production")

        let shown = merchant(["show", "--merchant-id", merchantID, "--json"])
        #expect(shown.status == 0, "\(shown.err)")
        let show = try object(shown.out)
        #expect(show["app_key"] == nil && show["secret_key"] == nil)
        #expect(show["secret_key_prefix"] as? String == String(secretKey.prefix(20)))
        #expect(show["status"] as? String == "active")
        #expect(show["merchant_identifiers"] as? [String] == ["merchant.com.orchard.tea"])
        let text = merchant(["show", "--merchant-id", merchantID])
        #expect(text.status == 0 && text.out.contains("status: active") && text.out.contains("country: TW"))
        let listed = merchant(["list", "--json"])
        #expect(listed.status == 0)
        let rows = try #require(try object(listed.out)["data"] as? [[String: Any]])
        #expect(rows.map { $0["merchant_id"] as? String } == [merchantID], "no sandbox merchant was provisioned")
        #expect(merchant(["list"]).out.contains("\(merchantID)\tproduction\tactive\tOrchard Tea"))
        for output in [shown.out, text.out, listed.out] {
            #expect(!output.contains(secretKey) && !output.contains(appKey))
        }
        // The database holds neither key.
        for suffix in ["", "-wal"] {
            let bytes = FileManager.default.contents(atPath: path + suffix) ?? Data()
            #expect(bytes.range(of: Data(secretKey.utf8)) == nil && bytes.range(of: Data(appKey.utf8)) == nil)
        }
        let served = try Served(database: path, masterKey: masterKey, now: Date())
        #expect(try served.get("/v1/payments", secretKey: secretKey).status == 200)
        let audit = try served.get("/v1/audit-log", secretKey: secretKey)
        let entry = try #require((audit.json["data"] as? [[String: Any]])?.first)
        #expect(entry["action"] as? String == "merchant.create")
        #expect(entry["actor"] as? [String: String] == ["kind": "cli", "name": "orchard merchant create"])
    }

    @Test("rotate-secret-key: the old key works for the overlap, then 401; rotate-app-key; disable and enable")
    func rotationsAndDisable() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let created = try object(
            merchant([
                "create", "--environment", "production", "--name", "Shop", "--merchant-identifier",
                "merchant.com.shop", "--json",
            ]).out)
        let merchantID = try #require(created["merchant_id"] as? String)
        let oldKey = try #require(created["secret_key"] as? String)
        let appID = try #require(created["app_id"] as? String)
        let oldAppKey = try #require(created["app_key"] as? String)
        let rotatedAt = Date()
        let rotated = merchant(["rotate-secret-key", "--merchant-id", merchantID, "--overlap-hours", "2", "--json"])
        #expect(rotated.status == 0, "\(rotated.err)")
        let newKey = try #require(try object(rotated.out)["secret_key"] as? String)
        #expect(newKey.hasPrefix("sk_live_") && newKey != oldKey)
        #expect(try object(rotated.out)["previous_secret_key_expires_at"] is String)

        let served = try Served(database: path, masterKey: masterKey, now: rotatedAt)
        #expect(try served.get("/v1/payments", secretKey: oldKey).status == 200)
        #expect(try served.get("/v1/payments", secretKey: newKey).status == 200)
        served.clock.advance(by: 2 * 3600 - 60)
        #expect(try served.get("/v1/payments", secretKey: oldKey).status == 200)
        served.clock.advance(by: 120)
        let refused = try served.get("/v1/payments", secretKey: oldKey)
        #expect(refused.status == 401 && Self.code(refused) == "invalid_credentials")
        #expect(try served.get("/v1/payments", secretKey: newKey).status == 200)

        let appRotation = merchant(["rotate-app-key", "--merchant-id", merchantID, "--json"])
        #expect(appRotation.status == 0, "\(appRotation.err)")
        let newAppKey = try #require(try object(appRotation.out)["app_key"] as? String)
        #expect(try object(appRotation.out)["app_id"] as? String == appID)
        #expect(Self.code(try served.tokens(appID: appID, appKey: oldAppKey)) == "invalid_credentials")
        // The new key passes authentication: the bad token itself is what is refused (a 4xx of its own).
        let withNewKey = try served.tokens(appID: appID, appKey: newAppKey)
        #expect((400..<500).contains(withNewKey.status) && ![401, 403].contains(withNewKey.status))
        #expect(Self.code(withNewKey) != "invalid_credentials")

        let disabled = merchant(["disable", "--merchant-id", merchantID, "--json"])
        #expect(disabled.status == 0)
        #expect(try object(disabled.out)["status"] as? String == "disabled")
        for response in [
            try served.get("/v1/payments", secretKey: newKey), try served.get("/v1/audit-log", secretKey: newKey),
            try served.tokens(appID: appID, appKey: newAppKey),
        ] {
            #expect(response.status == 403 && Self.code(response) == "merchant_disabled", "\(response.text)")
        }
        #expect(try served.get("/v1/payments", secretKey: oldKey).status == 401, "a wrong key stays 401")
        #expect(merchant(["show", "--merchant-id", merchantID]).out.contains("status: disabled"))
        #expect(merchant(["enable", "--merchant-id", merchantID]).status == 0)
        #expect(try served.get("/v1/payments", secretKey: newKey).status == 200)

        let audit = try served.get("/v1/audit-log?limit=100", secretKey: newKey)
        let entries = try #require(audit.json["data"] as? [[String: Any]])
        let names = entries.reversed().compactMap { ($0["actor"] as? [String: Any])?["name"] as? String }
        #expect(
            names == [
                "orchard merchant create", "orchard merchant rotate-secret-key", "orchard merchant rotate-app-key",
                "orchard merchant disable", "orchard merchant enable",
            ])
        #expect(entries.allSatisfy { ($0["actor"] as? [String: Any])?["kind"] as? String == "cli" })
        for secret in [oldKey, newKey, oldAppKey, newAppKey] { #expect(!audit.text.contains(secret)) }
    }

    @Test("usage errors exit 2, refusals exit 1, a production merchant needs a master key")
    func errors() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let noKey = merchant(
            ["create", "--environment", "production", "--name", "X", "--merchant-identifier", "merchant.com.x"],
            key: false)
        #expect(noKey.status == 1 && noKey.err.contains("master_key_missing"), "\(noKey.err)")
        for arguments in [
            ["create", "--environment", "staging", "--name", "X", "--merchant-identifier", "merchant.com.x"],
            ["create", "--environment", "production", "--merchant-identifier", "merchant.com.x"],
            ["create", "--environment", "production", "--name", "X", "--merchant-identifier", "com.x"],
            [
                "create", "--environment", "production", "--name", "X", "--merchant-identifier", "merchant.com.x",
                "--currencies", "TWD,XYZ",
            ],
            [
                "create", "--environment", "production", "--name", "X", "--merchant-identifier", "merchant.com.x",
                "--country", "tw",
            ],
            ["rotate-secret-key", "--merchant-id", "mch_x", "--overlap-hours", "721"],
            ["rotate-secret-key", "--merchant-id", "mch_x", "--overlap-hours", "1.5"],
            ["disable"], ["frobnicate"],
        ] {
            let result = merchant(arguments)
            #expect(result.status == 2, "\(arguments): \(result.err)")
        }
        _ = merchant([
            "create", "--environment", "production", "--name", "X", "--merchant-identifier", "merchant.com.x",
        ])
        let unknown = merchant(["disable", "--merchant-id", "mch_none"])
        #expect(unknown.status == 1 && unknown.err.contains("merchant_not_found"))
        let origin = merchant([
            "create", "--environment", "production", "--name", "Y", "--merchant-identifier", "merchant.com.y",
            "--web-origins", "https://shop.example/path",
        ])
        #expect(origin.status == 1 && origin.err.contains("web_origins"), "\(origin.err)")
        let help = CapturedOutput()
        #expect(CLI.run(["merchant", "--help"], output: help.output) == 0)
        for word in ["create", "list", "show", "rotate-secret-key", "--overlap-hours", "rotate-app-key", "disable"] {
            #expect(help.stdout.contains(word), "\(word)")
        }
    }
}
