import Foundation
import Gateway
import GatewayAssembly
import GatewaySQLite
import OrchardCrypto
import Synchronization
import Testing

/// The sandbox's first run on an empty database, by several instances at once: one sandbox merchant, whatever the
/// order they start in.
@Suite("Sandbox provisioning by instances starting together")
struct SandboxProvisioningTests {
    @Test(
        "three instances provisioning an empty database at once make one sandbox merchant, with its key and BIN table",
        arguments: StoreBackend.all)
    func oneSandboxMerchant(_ backend: StoreBackend) throws {
        try backend.requireServer()
        for round in 0..<4 {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "orchard-provision-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let path = directory.appendingPathComponent("gateway.db").path
            let database = backend == .postgres ? try PostgresTestDatabase() : nil
            // Each instance has its own store (its own connections or pool), opened before they race.
            let stores: [any Store] = try (0..<3).map { _ in
                if let database { return try database.store() }
                return try SQLiteStore(path: path)
            }
            let cipher = EnvelopeCipher(masterKey: try MasterKey(hex: String(repeating: "4d", count: 32)))
            let clock = ManualClock(Date(timeIntervalSince1970: 1_800_000_000))
            let setups = Mutex<[Int: SandboxSetup]>([:])
            let outcomes = runTogether(3, describe: { "\($0)" }) { index in
                let setup = try MerchantRegistry(store: stores[index], cipher: cipher, clock: clock).ensureSandbox(
                    issuer: SandboxPKIIssuer())
                setups.withLock { $0[index] = setup }
            }
            #expect(outcomes.allSatisfy { $0 == nil }, "round \(round): \(outcomes)")
            let merchants = try stores[0].read { try $0.merchants(environment: .sandbox) }
            #expect(merchants.count == 1, "round \(round): \(merchants.count) sandbox merchants")
            let results = setups.withLock { $0 }
            #expect(Set(results.values.map(\.merchant.id)) == Set(merchants.map(\.id)), "round \(round)")
            #expect(results.values.filter { $0.newCredentials != nil }.count == 1, "round \(round)")
            #expect(Set(results.values.map(\.trustAnchorPEM)).count == 1, "round \(round): one sandbox PKI")
            let merchant = try #require(merchants.first)
            #expect(try stores[0].read { try $0.processingKeys(merchantID: merchant.id) }.count == 1)
            #expect(try stores[0].read { try $0.binEntries(merchantID: merchant.id, prefixes: ["476112"]) }.count == 1)
        }
    }
}
