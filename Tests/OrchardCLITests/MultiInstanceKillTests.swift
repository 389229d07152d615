import ApplePayModel
import Foundation
import Gateway
import GatewayAssembly
import GatewayHTTP
import GatewayPostgres
import GatewayTestSupport
import OrchardCLI
import OrchardHTTP
import OrchardTestSupport
import Synchronization
import Testing

/// Three `orchard serve` processes on one PostgreSQL database, under tokenize + pay load from many clients spread
/// over them, with random instances SIGKILLed and restarted several times.
@Suite("Three instances on one PostgreSQL database, killed under load", .serialized)
struct MultiInstanceKillTests {
    static let binary = TestPaths.packageRoot.appendingPathComponent(".build/debug/orchard")
    static let masterKey = String(repeating: "3c", count: 32)

    /// One `orchard serve` process on a fixed port (so a restarted instance is at the same URL).
    final class Instance: @unchecked Sendable {
        let port: Int
        let database: String
        var process: Process?
        var url: String { "http://127.0.0.1:\(port)" }

        init(port: Int, database: String) {
            self.port = port
            self.database = database
        }

        func start() throws {
            let process = Process()
            process.executableURL = MultiInstanceKillTests.binary
            process.arguments = [
                "serve", "--port", "\(port)", "--database", database, "--master-key", MultiInstanceKillTests.masterKey,
                "--rate-limit-per-second", "100000", "--rate-limit-burst", "100000", "--log-level", "off",
                "--reconcile-interval", "1", "--webhook-retry-schedule", "1s,1s,1s,1s,1s,1s,1s,1s,1s,1s",
            ]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            self.process = process
            let deadline = Date().addingTimeInterval(30)
            while Date() < deadline {
                if (try? CurlClient().request("GET", url + "/readyz").status) == 200 { return }
                Thread.sleep(forTimeInterval: 0.1)
            }
            throw InstanceError(port: port)
        }

        func kill() {
            guard let process else { return }
            Glibc.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            self.process = nil
        }
    }

    struct InstanceError: Error, CustomStringConvertible {
        var port: Int
        var description: String { "the instance on port \(port) did not become ready within 30 s" }
    }

    static func freePort() throws -> Int {
        var configuration = ServerConfiguration()
        configuration.port = 0
        let probe = HTTPServer(
            configuration: configuration, responder: HTTPApplication(router: Router()), messages: { _ in })
        try probe.start()
        defer { probe.stop(timeoutSeconds: 1) }
        return probe.port
    }

    @Test(
        "acknowledged payments all present with their status, no double authorization, audit holds, every event delivered",
        .enabled(if: TestPostgres.serverURL != nil, "needs ORCHARD_TEST_POSTGRES_URL"),
        .timeLimit(.minutes(5)))
    func killedUnderLoad() throws {
        let admin = try #require(TestPostgres.serverURL)
        // With a database at hand, a missing executable is a failure, never a silent skip.
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.binary.path),
            "the orchard executable is not built at \(Self.binary.path) (swift build)")
        let name = "orchard_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try PostgresAdmin.createDatabase(name, url: admin)
        defer { try? PostgresAdmin.dropDatabase(name, url: admin) }
        let database = try #require(PostgresAdmin.url(admin, database: name))

        // The merchant's webhook receiver: records each event id delivered.
        let delivered = Mutex(Set<String>())
        var router = Router()
        router.post("/hooks") { request, _ in
            if let object = try? JSONSerialization.jsonObject(with: request.body) as? [String: Any],
                let id = object["id"] as? String
            {
                _ = delivered.withLock { $0.insert(id) }
            }
            return .text("ok")
        }
        let receiver = try TestServer(responder: HTTPApplication(router: router))
        defer { receiver.server.stop(timeoutSeconds: 1) }

        let instances = try (0..<3).map { _ in
            Instance(port: try Self.freePort(), database: database)
        }
        defer { instances.forEach { $0.kill() } }
        for instance in instances { try instance.start() }

        // The test's own view of the database: keys, tokens, and the final checks.
        var options = GatewayRuntime.Options(databasePath: "")
        options.postgres = PostgresStore.Configuration(url: database)
        options.masterKeyHex = Self.masterKey
        let runtime = try GatewayRuntime(options)
        let merchant = try #require(runtime.sandboxMerchant)
        let credentials = try runtime.gateway.merchants.credentials(merchantID: merchant.id)
        _ = try runtime.gateway.merchants.setWebhookEndpoint(
            merchantID: merchant.id, url: "http://127.0.0.1:\(receiver.port)/hooks")
        let appHeaders = [
            "Content-Type": "application/json", "X-Orchard-App-Id": credentials.appID,
            "X-Orchard-App-Key": credentials.appKey,
        ]
        let serverHeaders = ["Content-Type": "application/json", "Authorization": "Bearer \(credentials.secretKey)"]

        // Tokens minted before the load, each used once.
        let tokens = try (0..<1500).map { _ in try runtime.mintSandboxToken(amount: 1500, currency: .twd) }
        let nextToken = Atomic(0)
        let acknowledged = Mutex([String: String]())
        let stop = Atomic(false)
        let clients = DispatchGroup()
        for client in 0..<12 {
            clients.enter()
            Thread.detachNewThread {
                defer { clients.leave() }
                var turn = client
                while !stop.load(ordering: .relaxed) {
                    let index = nextToken.add(1, ordering: .relaxed).oldValue
                    guard index < tokens.count else { break }
                    turn += 1
                    let base = instances[turn % instances.count].url
                    // The pay goes to the next instance, as a balancer might send it.
                    let payBase = instances[(turn + 1) % instances.count].url
                    do {
                        if let (id, status) = try CurlClient.tokenizeAndPay(
                            tokens[index], tokenBase: base, payBase: payBase, appHeaders: appHeaders,
                            serverHeaders: serverHeaders, keyed: true)
                        {
                            acknowledged.withLock { $0[id] = status }
                        }
                    } catch {
                        Thread.sleep(forTimeInterval: 0.05)
                    }
                }
            }
        }
        var generator = SeededGenerator(seed: 9)
        for _ in 0..<5 {
            Thread.sleep(forTimeInterval: 1.5)
            let victim = instances[Int(generator.next() % 3)]
            victim.kill()
            Thread.sleep(forTimeInterval: 0.5)
            try victim.start()
        }
        Thread.sleep(forTimeInterval: 1)
        stop.store(true, ordering: .relaxed)
        clients.wait()

        let kept = acknowledged.withLock { $0 }
        #expect(kept.count > 10, "too little load got through: \(kept.count) payments")
        let store = runtime.store
        for (id, status) in kept {
            #expect(
                try store.read { try $0.payment(id: id) }?.status.rawValue == status, "acknowledged payment \(id)")
        }
        // A killed instance's leased webhook events are due again after the lease (120 s); what it left unknown or
        // processing is settled by reconciliation (one instance at a time) after the reconciliation delay.
        let deadline = Date().addingTimeInterval(170)
        var events: [WebhookEvent] = []
        while Date() < deadline {
            events = try store.read { try $0.events(merchantID: merchant.id, limit: 1_000_000) }
            if try store.read({ try $0.pendingWebhookCount() }) == 0,
                delivered.withLock({ received in events.allSatisfy { received.contains($0.id) } })
            {
                break
            }
            Thread.sleep(forTimeInterval: 0.5)
        }
        let audit = CapturedOutput()
        #expect(CLI.run(["audit", "--database", database], output: audit.output) == 0, "\(audit.stdout)")
        #expect(!events.isEmpty)
        let received = delivered.withLock { $0 }
        let missing = events.filter { !received.contains($0.id) }
        #expect(missing.isEmpty, "\(missing.count) of \(events.count) events never delivered")
    }
}
