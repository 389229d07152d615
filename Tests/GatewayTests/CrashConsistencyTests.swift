import Foundation
import Gateway
import GatewaySQLite
import OrchardTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs the built `orchard gateway-worker`, SIGKILLs it at random points again and again, lets a last run
/// finish, then checks the database: every acknowledged payment is there, nothing was authorized twice,
/// every settled payment has its event.
@Suite("Crash consistency", .serialized)
struct CrashConsistencyTests {
    /// The `orchard` executable next to the test bundle (`.build/<triple>/debug/orchard`).
    static func orchardBinary() -> URL? {
        var candidates: [URL] = []
        let runner = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = runner.deletingLastPathComponent()
        for _ in 0..<4 {
            candidates.append(directory.appendingPathComponent("orchard"))
            directory = directory.deletingLastPathComponent()
        }
        candidates.append(TestPaths.packageRoot.appendingPathComponent(".build/debug/orchard"))
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    struct Run {
        var acknowledged: [String: String] = [:]
        var errors: [String] = []
        var finished = false
    }

    /// A SIGKILL point: once the worker acknowledged payment `index` (or a later one), wait `jitter` seconds
    /// (landing somewhere inside the following payments) and kill it.
    struct KillPoint {
        var index: Int
        var jitter: Double
    }

    /// Starts the worker and reads its output as it comes; kills it at `killPoint` (nil: lets it finish).
    /// `killAfterCommits` makes the worker SIGKILL itself right after that many batch commits.
    static func runWorker(
        _ binary: URL, database: String, count: Int, killPoint: KillPoint?, killAfterCommits: Int? = nil
    ) throws -> Run {
        let process = Process()
        process.executableURL = binary
        process.arguments =
            ["gateway-worker", "--database", "sqlite:\(database)", "--count", String(count)]
            + (killAfterCommits.map { ["--kill-after-commits", String($0)] } ?? [])
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        var run = Run()
        var pending = ""
        var killed = false
        while true {
            let chunk = pipe.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            pending += String(decoding: chunk, as: UTF8.self)
            while let newline = pending.firstIndex(of: "\n") {
                let line = String(pending[..<newline])
                pending = String(pending[pending.index(after: newline)...])
                let fields = line.split(separator: " ").map(String.init)
                if fields.first == "ACK", fields.count == 4 {
                    run.acknowledged[fields[2]] = fields[3]
                    if let killPoint, !killed, let index = Int(fields[1]), index >= killPoint.index {
                        Thread.sleep(forTimeInterval: killPoint.jitter)
                        kill(process.processIdentifier, SIGKILL)
                        killed = true
                    }
                }
                if fields.first == "ERR" { run.errors.append(line) }
                if fields.first == "DONE" { run.finished = true }
            }
        }
        process.waitUntilExit()
        return run
    }

    @Test("SIGKILL at random points of many payments loses nothing acknowledged and never charges twice")
    func killAndRecover() throws {
        let binary = try #require(Self.orchardBinary(), "build the orchard executable first (swift build)")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "orchard-crash-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = directory.appendingPathComponent("crash.db").path
        var generator = SeededGenerator(seed: 20_261_130)
        var acknowledged: [String: String] = [:]
        let count = 60
        var interrupted = 0
        let targets = (0..<10).map { _ in 1 + Int(generator.next() % UInt64(count - 2)) }.sorted()
        for target in targets {
            let jitter = Double(generator.next() % 30) / 1000
            let run = try Self.runWorker(
                binary, database: database, count: count, killPoint: KillPoint(index: target, jitter: jitter))
            if !run.finished { interrupted += 1 }
            for (id, status) in run.acknowledged where acknowledged[id] == nil { acknowledged[id] = status }
        }
        #expect(interrupted > 0, "no run was killed before it finished")
        let last = try Self.runWorker(binary, database: database, count: count, killPoint: nil)
        #expect(last.finished)
        #expect(last.errors.isEmpty, "\(last.errors)")
        acknowledged.merge(last.acknowledged) { first, _ in first }
        #expect(acknowledged.count == count)

        let store = try SQLiteStore(path: database)
        for (id, _) in acknowledged {
            let payment = try store.read { try $0.payment(id: id) }
            #expect(payment != nil, "acknowledged payment \(id) is missing")
        }
        let rows = try store.read { try $0.auditRows() }
        #expect(rows.allSatisfy { $0.processorAuthorizations <= 1 }, "a payment was authorized twice")
        let report = try LedgerAudit.run(store: store)
        #expect(report.findings.isEmpty, "\(report.findings)")
        #expect(report.unsettled == 0)
        let payments = try store.read { tx in
            try tx.payments(
                merchantID: try tx.merchants(environment: .sandbox)[0].id, environment: .sandbox,
                query: PaymentQuery(limit: 1000), after: nil)
        }
        let orders = Set(payments.compactMap(\.orderNumber))
        #expect(orders.count == payments.count, "one order was paid by two payments")
    }

    @Test("killed between a batch commit and the answers: retries with the same keys replay the stored results")
    func killAfterBatchCommit() throws {
        let binary = try #require(Self.orchardBinary(), "build the orchard executable first (swift build)")
        let count = 3
        var replayedUnanswered = 0
        // Every commit point of the first payments: tokenize, the claim, the acquirer's books, the outcome …
        for point in 1...10 {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "orchard-commitkill-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let database = directory.appendingPathComponent("kill.db").path
            let killed = try Self.runWorker(
                binary, database: database, count: count, killPoint: nil, killAfterCommits: point)
            #expect(!killed.finished, "the worker was not killed after commit \(point)")
            // What the killed worker had committed but not answered: finished idempotency results.
            let store = try SQLiteStore(path: database)
            let merchantID = try store.read { try $0.merchants(environment: .sandbox)[0].id }
            let finishedBefore = try (0..<count).filter { index in
                try store.read {
                    try $0.idempotencyRecord(merchantID: merchantID, environment: .sandbox, key: "pay-\(index)")
                }?.responseSealed != nil
            }
            let answeredBefore = Set(killed.acknowledged.keys)
            let again = try Self.runWorker(binary, database: database, count: count, killPoint: nil)
            #expect(again.finished, "commit point \(point): the retry run did not finish")
            #expect(again.errors.isEmpty, "commit point \(point): \(again.errors)")
            #expect(again.acknowledged.count == count)
            let payments = try store.read { tx in
                try tx.payments(
                    merchantID: merchantID, environment: .sandbox, query: PaymentQuery(limit: 100), after: nil)
            }
            // Nothing doubled: one payment per order, each authorized once; the retry answered those payments.
            #expect(payments.count == count, "commit point \(point): \(payments.count) payments for \(count) orders")
            #expect(Set(payments.compactMap(\.orderNumber)).count == payments.count)
            #expect(Set(payments.map(\.id)) == Set(again.acknowledged.keys))
            let rows = try store.read { try $0.auditRows() }
            #expect(
                rows.allSatisfy { $0.processorAuthorizations <= 1 }, "commit point \(point): an authorization twice")
            let report = try LedgerAudit.run(store: store)
            #expect(report.findings.isEmpty, "commit point \(point): \(report.findings)")
            // A result committed by the killed run and never answered is what its retry answers.
            for index in finishedBefore {
                let order = "h-\(index)"
                let payment = try #require(payments.first { $0.orderNumber == order })
                if !answeredBefore.contains(payment.id) {
                    replayedUnanswered += 1
                    #expect(again.acknowledged[payment.id] != nil, "commit point \(point): \(order) not replayed")
                    if index == 0 { #expect(again.acknowledged[payment.id] == "captured") }
                }
            }
        }
        #expect(replayedUnanswered > 0, "no kill landed between a payment's final commit and its answer")
    }

    @Test("orchard audit exits 0 on a clean ledger and 1 on a broken one")
    func auditCommand() throws {
        let binary = try #require(Self.orchardBinary(), "build the orchard executable first (swift build)")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "orchard-audit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = directory.appendingPathComponent("audit.db").path
        #expect(try Self.runWorker(binary, database: database, count: 5, killPoint: nil).finished)
        func audit() throws -> Int32 {
            let process = Process()
            process.executableURL = binary
            process.arguments = ["audit", "--database", "sqlite:\(database)"]
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            return process.terminationStatus
        }
        #expect(try audit() == 0)
        let store = try SQLiteStore(path: database)
        let first = try #require(try store.read { try $0.auditRows() }.first)
        try store.insertAcquirerAuthorization(
            SandboxAuthorization(
                reference: "acq_double", merchantReference: first.paymentID, merchantID: "m", amount: 1,
                currency: "TWD",
                lastFour: "1111", status: .approved, declineCode: nil, authCode: "000000", capturedAmount: 0,
                refundedAmount: 0, voided: false, createdAt: Date(), resolvesAt: nil))
        #expect(try audit() == 1)
    }
}
