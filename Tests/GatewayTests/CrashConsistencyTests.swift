import Foundation
import Gateway
import GatewaySQLite
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
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        candidates.append(root.appendingPathComponent(".build/debug/orchard"))
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    struct Run {
        var acknowledged: [String: String] = [:]
        var errors: [String] = []
        var finished = false
    }

    /// Starts the worker; kills it after `killAfter` seconds (nil: lets it finish, up to 300 s).
    static func runWorker(_ binary: URL, database: String, count: Int, killAfter: Double?) throws -> Run {
        let process = Process()
        process.executableURL = binary
        process.arguments = ["gateway-worker", "--database", "sqlite:\(database)", "--count", String(count)]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        if let killAfter {
            Thread.sleep(forTimeInterval: killAfter)
            kill(process.processIdentifier, SIGKILL)
        }
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        var run = Run()
        for line in String(decoding: output, as: UTF8.self).split(separator: "\n") {
            let fields = line.split(separator: " ").map(String.init)
            if fields.first == "ACK", fields.count == 4 { run.acknowledged[fields[2]] = fields[3] }
            if fields.first == "ERR" { run.errors.append(String(line)) }
            if fields.first == "DONE" { run.finished = true }
        }
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
        var generator = SplitMix(seed: 20_261_130)
        var acknowledged: [String: String] = [:]
        let count = 120
        var interrupted = 0
        for _ in 0..<10 {
            let delay = 0.05 + Double(generator.next() % 1000) / 1000 * 1.2
            let run = try Self.runWorker(binary, database: database, count: count, killAfter: delay)
            if !run.finished { interrupted += 1 }
            for (id, status) in run.acknowledged where acknowledged[id] == nil { acknowledged[id] = status }
        }
        #expect(interrupted > 0, "no run was killed before it finished")
        let last = try Self.runWorker(binary, database: database, count: count, killAfter: nil)
        #expect(last.finished)
        #expect(last.errors.isEmpty, "\(last.errors)")
        acknowledged.merge(last.acknowledged) { first, _ in first }
        #expect(acknowledged.count == count)

        let store = try SQLiteStore(path: database, cipher: nil)
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

    @Test("orchard audit exits 0 on a clean ledger and 1 on a broken one")
    func auditCommand() throws {
        let binary = try #require(Self.orchardBinary(), "build the orchard executable first (swift build)")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "orchard-audit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = directory.appendingPathComponent("audit.db").path
        #expect(try Self.runWorker(binary, database: database, count: 5, killAfter: nil).finished)
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
        let store = try SQLiteStore(path: database, cipher: nil)
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

/// A small deterministic generator for kill delays.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
