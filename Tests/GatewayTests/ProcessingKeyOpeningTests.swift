import Foundation
import Gateway
import GatewayAssembly
import OrchardBase
import OrchardCrypto
import Testing

/// A tokenize reads the merchant's active processing keys still sealed; the token opener unseals a key only
/// when it has not loaded that key id yet.
@Suite("Processing keys opened on a cache miss only")
struct ProcessingKeyOpeningTests {
    /// The material of `keys`, counting how often each private key is opened.
    private func counting(_ keys: [ProcessingKeyMaterial], _ opened: Locked<[String: Int]>) -> [ProcessingKeyMaterial] {
        keys.map { key in
            ProcessingKeyMaterial(id: key.id, certificatePEM: key.certificatePEM) { () throws(GatewayError) in
                opened.withLock { $0[key.id, default: 0] += 1 }
                return try key.privateKeyPEM()
            }
        }
    }

    @Test(
        "reading the active keys unseals none of them: only asking a key for its PEM does", arguments: StoreBackend.all)
    func readStaysSealed(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        // A registry on the same store whose master key opens nothing the store holds.
        let stranger = MerchantRegistry(
            store: h.store, cipher: EnvelopeCipher(masterKey: try MasterKey(hex: String(repeating: "7", count: 64))),
            clock: h.clock)
        let keys = try stranger.activeProcessingKeys(merchantID: h.merchant.id)
        #expect(keys.map(\.id) == [h.keyID])
        #expect(throws: GatewayError.self) { try keys[0].privateKeyPEM() }
        // The gateway's own registry opens it.
        let own = try h.gateway.merchants.activeProcessingKeys(merchantID: h.merchant.id)
        #expect(try own[0].privateKeyPEM().count > 0)
    }

    @Test("a loaded key id is not unsealed again; a new one is unsealed once", arguments: StoreBackend.all)
    func openedOnMiss(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        _ = try h.gateway.payments.tokenize(merchant: h.merchant, token: h.token())
        let keys = try h.gateway.merchants.activeProcessingKeys(merchantID: h.merchant.id)
        #expect(keys.map(\.id) == [h.keyID])
        let opened = Locked([String: Int]())
        for _ in 0..<3 {
            let token = h.token()
            let result = try h.tokenOpener.open(
                token: SubmittedToken(token), environment: .sandbox, keys: counting(keys, opened), at: h.clock.now())
            result.erase()
        }
        #expect(opened.current.isEmpty)
        // Another key id (the same key under a new id) is a miss: opened once, then kept.
        let renamed = try keys.map { key in
            ProcessingKeyMaterial(
                id: "pk_renamed", privateKeyPEM: try key.privateKeyPEM(), certificatePEM: key.certificatePEM)
        }
        for _ in 0..<2 {
            let result = try h.tokenOpener.open(
                token: SubmittedToken(h.token()), environment: .sandbox, keys: counting(keys + renamed, opened), at: h.clock.now())
            result.erase()
        }
        #expect(opened.current == ["pk_renamed": 1])
    }
}
