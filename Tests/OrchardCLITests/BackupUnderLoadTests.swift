import Foundation
import Gateway
import GatewayAssembly
import GatewayTestSupport
import OrchardCLI
import OrchardTestSupport
import Synchronization
import Testing

/// `orchard backup` of a SQLite database while an `orchard serve` process on it takes tokenize + pay from 32
/// clients: the copy holds every payment acknowledged before the backup began, with its status, passes the audit,
/// and a gateway restored on it serves those payments.
@Suite("Online backup of a SQLite database under load", .serialized)
struct BackupUnderLoadTests {
    static let binary = TestPaths.packageRoot.appendingPathComponent(".build/debug/orchard")

    /// An `orchard serve` process on `database`, ready when this returns.
    static func serve(database: String, port: Int) throws -> Process {
        let process = Process()
        process.executableURL = binary
        process.arguments = [
            "serve", "--port", "\(port)", "--database", "sqlite:\(database)", "--rate-limit-per-second", "100000",
            "--rate-limit-burst", "100000", "--log-level", "off",
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if (try? CurlClient().request("GET", "http://127.0.0.1:\(port)/readyz").status) == 200 { return process }
            Thread.sleep(forTimeInterval: 0.1)
        }
        process.terminate()
        throw MultiInstanceKillTests.InstanceError(port: port)
    }

    @Test("a backup under 32-client load holds every payment acknowledged before it; audit clean; restored it serves them")
    func backupUnderLoad() throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.binary.path),
            "the orchard executable is not built at \(Self.binary.path) (swift build)")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("orchard-backup-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = directory.appendingPathComponent("live.db").path

        // The sandbox merchant, its keys and the tokens, made before the server opens the file.
        let (tokens, appHeaders, serverHeaders): ([Data], [String: String], [String: String]) = try {
            let runtime = try GatewayRuntime(GatewayRuntime.Options(databasePath: database))
            let merchant = try #require(runtime.sandboxMerchant)
            let credentials = try runtime.gateway.merchants.credentials(merchantID: merchant.id)
            let tokens = try (0..<1200).map { _ in try runtime.mintSandboxToken(amount: 1500, currency: .twd) }
            return (
                tokens,
                [
                    "Content-Type": "application/json", "X-Orchard-App-Id": credentials.appID,
                    "X-Orchard-App-Key": credentials.appKey,
                ],
                ["Content-Type": "application/json", "Authorization": "Bearer \(credentials.secretKey)"]
            )
        }()

        let port = try MultiInstanceKillTests.freePort()
        let server = try Self.serve(database: database, port: port)
        defer {
            server.terminate()
            server.waitUntilExit()
        }
        let base = "http://127.0.0.1:\(port)"
        // Each acknowledged payment with its status and the time its answer arrived.
        let acknowledged = Mutex([String: (status: String, at: Date)]())
        let nextToken = Atomic(0)
        let stop = Atomic(false)
        let clients = DispatchGroup()
        for _ in 0..<32 {
            clients.enter()
            Thread.detachNewThread {
                defer { clients.leave() }
                while !stop.load(ordering: .relaxed) {
                    let index = nextToken.add(1, ordering: .relaxed).oldValue
                    guard index < tokens.count else { break }
                    do {
                        if let (id, status) = try CurlClient.tokenizeAndPay(
                            tokens[index], tokenBase: base, payBase: base, appHeaders: appHeaders,
                            serverHeaders: serverHeaders)
                        {
                            let at = Date()
                            acknowledged.withLock { $0[id] = (status, at) }
                        }
                    } catch {
                        Thread.sleep(forTimeInterval: 0.05)
                    }
                }
            }
        }

        Thread.sleep(forTimeInterval: 2)
        let copy = directory.appendingPathComponent("backup.db").path
        let began = Date()
        let backup = Process()
        backup.executableURL = Self.binary
        backup.arguments = ["backup", "--database", "sqlite:\(database)", "--to", copy]
        let backupOutput = Pipe()
        backup.standardOutput = backupOutput
        backup.standardError = backupOutput
        try backup.run()
        let printed = String(decoding: backupOutput.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        backup.waitUntilExit()
        let ended = Date()
        Thread.sleep(forTimeInterval: 1)
        stop.store(true, ordering: .relaxed)
        clients.wait()
        #expect(backup.terminationStatus == 0, "\(printed)")
        #expect(printed.contains("all invariants hold"), "\(printed)")

        let all = acknowledged.withLock { $0 }
        let before = all.filter { $0.value.at < began }
        let after = all.filter { $0.value.at > ended }
        #expect(before.count > 20, "too little load before the backup: \(before.count) payments")
        #expect(!after.isEmpty, "no load after the backup: it did not run under load")

        // Restore: the copy (and the sandbox master key beside it) under a new name, served by a new gateway.
        let restored = directory.appendingPathComponent("restored.db").path
        try FileManager.default.copyItem(atPath: copy, toPath: restored)
        try FileManager.default.copyItem(atPath: database + ".master-key", toPath: restored + ".master-key")
        let audit = CapturedOutput()
        #expect(CLI.run(["audit", "--database", "sqlite:\(restored)"], output: audit.output) == 0, "\(audit.stdout)")
        let restoredPort = try MultiInstanceKillTests.freePort()
        let restoredServer = try Self.serve(database: restored, port: restoredPort)
        defer {
            restoredServer.terminate()
            restoredServer.waitUntilExit()
        }
        var missing: [String] = []
        for (id, payment) in before {
            let answer = try CurlClient().request(
                "GET", "http://127.0.0.1:\(restoredPort)/v1/payments/\(id)", headers: serverHeaders)
            if answer.status != 200 || answer.json["status"] as? String != payment.status { missing.append(id) }
        }
        #expect(missing.isEmpty, "\(missing.count) of \(before.count) payments acknowledged before the backup")
    }
}
