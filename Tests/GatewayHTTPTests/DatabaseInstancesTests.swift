import ApplePayModel
import Foundation
import Gateway
import GatewayHTTP
import GatewayPostgres
import OrchardCLI
import OrchardHTTP
import Testing

/// `--database` across instances: a SQLite file has one `orchard serve`; several share a PostgreSQL database.
@Suite("orchard serve instances on one database", .serialized)
struct DatabaseInstancesTests {
    static let postgresURL = ProcessInfo.processInfo.environment["ORCHARD_TEST_POSTGRES_URL"].flatMap {
        $0.isEmpty ? nil : $0
    }
    static let masterKey = String(repeating: "5a", count: 32)

    @Test("a second orchard serve on the same SQLite file refuses to start, with a clear message")
    func secondSQLiteInstanceRefused() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "orchard-lock-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = "sqlite:" + directory.appendingPathComponent("orchard.db").path
        let settings = try ServeCommand.registry().resolve(
            arguments: ["--database", database, "--port", "0", "--reconcile-interval", "0", "--log-level", "off"],
            environment: [:])
        let first = try ServeCommand.start(settings: settings, io: CapturedOutput().output)
        let refused = CapturedOutput()
        #expect(CLI.run(["serve", "--database", database, "--port", "0"], output: refused.output) == 2)
        #expect(refused.stderr.contains("another orchard serve is running on"), "\(refused.stderr)")
        first.stop()
        let again = try ServeCommand.start(settings: settings, io: CapturedOutput().output)
        again.stop()
    }

    @Test(
        "two instances on one PostgreSQL database: a token replayed and a prime paid once across them, audit holds",
        .enabled(if: postgresURL != nil, "ORCHARD_TEST_POSTGRES_URL is not set"))
    func twoPostgresInstances() throws {
        let admin = try #require(Self.postgresURL)
        let name = "orchard_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try PostgresAdmin.createDatabase(name, url: admin)
        defer { try? PostgresAdmin.dropDatabase(name, url: admin) }
        let database = try #require(PostgresAdmin.url(admin, database: name))
        let arguments = [
            "--database", database, "--port", "0", "--reconcile-interval", "0", "--log-level", "off", "--master-key",
            Self.masterKey,
        ]
        let settings = try ServeCommand.registry().resolve(arguments: arguments, environment: [:])
        let first = try ServeCommand.start(settings: settings, io: CapturedOutput().output)
        defer { first.stop() }
        let second = try ServeCommand.start(settings: settings, io: CapturedOutput().output)
        defer { second.stop() }
        let merchant = try #require(first.runtime.sandboxMerchant)
        #expect(second.runtime.sandboxMerchant?.id == merchant.id)
        let credentials = try first.runtime.gateway.merchants.credentials(merchantID: merchant.id)
        let appHeaders = [
            "Content-Type": "application/json", "X-Orchard-App-Id": credentials.appID,
            "X-Orchard-App-Key": credentials.appKey,
        ]
        let serverHeaders = ["Content-Type": "application/json", "Authorization": "Bearer \(credentials.secretKey)"]
        for instance in [first, second] {
            #expect(try CurlClient().request("GET", instance.server.baseURL + "/readyz").status == 200)
        }

        // A token tokenized on one instance is a replay on the other; its prime pays once.
        let token = try JSONSerialization.jsonObject(
            with: try first.runtime.mintSandboxToken(amount: 1500, currency: .twd))
        let body = try JSONSerialization.data(withJSONObject: ["token": token])
        let tokenized = try CurlClient().request(
            "POST", first.server.baseURL + "/v1/tokens", headers: appHeaders, body: body)
        #expect(tokenized.status == 200, "\(tokenized.text)")
        let prime = try #require(tokenized.json["prime"] as? String)
        let replayed = try CurlClient().request(
            "POST", second.server.baseURL + "/v1/tokens", headers: appHeaders, body: body)
        #expect(replayed.status != 200 || replayed.json["prime"] as? String == prime, "\(replayed.text)")
        let pay = try JSONSerialization.data(withJSONObject: ["prime": prime, "amount": "15.00", "currency": "TWD"])
        let paid = try CurlClient().request(
            "POST", second.server.baseURL + "/v1/payments", headers: serverHeaders, body: pay)
        #expect(paid.status == 200, "\(paid.text)")
        let again = try CurlClient().request(
            "POST", first.server.baseURL + "/v1/payments", headers: serverHeaders, body: pay)
        #expect(again.status != 200, "a prime paid twice across instances: \(again.text)")

        // The ledger on the shared database, through the CLI with the URL.
        let audit = CapturedOutput()
        #expect(
            CLI.run(["audit", "--database", database], output: audit.output) == 0, "\(audit.stdout)\(audit.stderr)")
        #expect(audit.stdout.contains("all invariants hold"))
    }

    @Test("a PostgreSQL URL's password is never printed, also when the server cannot be reached")
    func passwordNeverPrinted() {
        let captured = CapturedOutput()
        let status = CLI.run(
            [
                "audit", "--database", "postgres://orchard:s3cret-pw@127.0.0.1:1/orchard?connect_timeout=2",
            ], output: captured.output)
        #expect(status == 2)
        #expect(!captured.stderr.contains("s3cret-pw") && !captured.stdout.contains("s3cret-pw"))
        let serve = CapturedOutput()
        #expect(
            CLI.run(
                ["serve", "--database", "postgres://orchard:s3cret-pw@127.0.0.1:1/orchard", "--port", "0"],
                output: serve.output) != 0)
        #expect(!serve.stderr.contains("s3cret-pw") && !serve.stdout.contains("s3cret-pw"))
        #expect(serve.stderr.contains("master key") || serve.stderr.contains("***"), "\(serve.stderr)")
    }
}
