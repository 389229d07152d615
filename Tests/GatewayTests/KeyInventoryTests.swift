import GatewayAssembly
import ApplePaySandbox
import Foundation
import Gateway
import Testing

@Suite("Merchant key inventory: states, expiry warnings, retiring")
struct KeyInventoryTests {
    @Test(
        "pending CSRs, active and retired keys, the identity, and warnings 30 days before expiry",
        arguments: StoreBackend.all)
    func inventory(backend: StoreBackend) throws {
        let h = try Harness(backend)
        let registry = h.gateway.merchants
        let pki = try #require(try SandboxPKIIssuer.storedPKI(store: h.store, cipher: h.cipher))
        let now = h.clock.now()
        let sandboxKey = try #require(try h.gateway.keys.keyInventory(merchantID: h.merchant.id).keys.first)
        #expect(sandboxKey.id == h.keyID)
        #expect(sandboxKey.state == .active)
        #expect(sandboxKey.purpose == "processing")
        #expect(sandboxKey.type == "ec")
        let sandboxExpiry = try #require(sandboxKey.notAfter)

        let csr = try h.gateway.keys.createKeyCSR(merchant: h.merchant, type: "ec", purpose: "processing")
        var inventory = try h.gateway.keys.keyInventory(merchantID: h.merchant.id)
        #expect(inventory.keys.map(\.id) == [h.keyID, csr.id])
        #expect(inventory.keys[1].state == .pending)
        #expect(inventory.keys[1].publicKeyHash == csr.publicKeyHash)
        #expect(inventory.keys[1].notAfter == nil)

        // A certificate that expires in 20 days and one hour: warned about, 20 days left.
        let expiry = now.addingTimeInterval(20 * 86_400 + 3600)
        let certificate = try pki.issueMerchantCertificate(
            publicKeyPEM: csr.csrPEM, merchantIdentifier: h.merchant.merchantIdentifiers[0], notBefore: now - 60,
            notAfter: expiry)
        _ = try h.gateway.keys.attachCertificate(merchant: h.merchant, keyID: csr.id, certificatePEM: certificate)
        inventory = try h.gateway.keys.keyInventory(merchantID: h.merchant.id)
        #expect(inventory.keys.map(\.state) == [.active, .active])
        #expect(inventory.keys[1].notAfter == expiry)
        let expected = sandboxExpiry.timeIntervalSince(now) <= 30 * 86_400 ? 2 : 1
        #expect(inventory.warnings.count == expected)
        #expect(
            inventory.warnings.first
                == CertificateWarning(
                    keyID: csr.id, purpose: "processing", notAfter: expiry, daysLeft: 20, expired: false))

        // Rotation's last step: the old key retires; the only active one cannot.
        try h.gateway.keys.retireProcessingKey(merchantID: h.merchant.id, keyID: h.keyID)
        try h.gateway.keys.retireProcessingKey(merchantID: h.merchant.id, keyID: h.keyID)
        expectGatewayError(.lastActiveKey) {
            try h.gateway.keys.retireProcessingKey(merchantID: h.merchant.id, keyID: csr.id)
        }
        expectGatewayError(.notFound) { try h.gateway.keys.retireProcessingKey(merchantID: h.merchant.id, keyID: "pk_nope") }
        inventory = try h.gateway.keys.keyInventory(merchantID: h.merchant.id)
        #expect(inventory.keys.map(\.state) == [.retired, .active])
        #expect(inventory.warnings.map(\.keyID) == [csr.id])
        #expect(try registry.activeProcessingKeys(merchantID: h.merchant.id).map(\.id) == [csr.id])

        // The identity: its CSR is pending until Apple's certificate comes back; a newer CSR is pending beside it.
        let identityCSR = try h.gateway.keys.createKeyCSR(merchant: h.merchant, type: "rsa", purpose: "identity")
        #expect(try h.gateway.keys.keyInventory(merchantID: h.merchant.id).keys.last?.state == .pending)
        let identityCertificate = try pki.issueMerchantCertificate(
            publicKeyPEM: identityCSR.csrPEM, merchantIdentifier: h.merchant.merchantIdentifiers[0],
            notBefore: now - 60, notAfter: now.addingTimeInterval(400 * 86_400))
        _ = try h.gateway.keys.attachCertificate(
            merchant: h.merchant, keyID: identityCSR.id, certificatePEM: identityCertificate)
        let renewal = try h.gateway.keys.createKeyCSR(merchant: h.merchant, type: "rsa", purpose: "identity")
        inventory = try h.gateway.keys.keyInventory(merchantID: h.merchant.id)
        #expect(inventory.keys.map(\.id) == [h.keyID, csr.id, identityCSR.id, renewal.id])
        #expect(inventory.keys.map(\.purpose) == ["processing", "processing", "identity", "identity"])
        #expect(inventory.keys.map(\.state) == [.retired, .active, .active, .pending])
        #expect(inventory.keys[2].type == "rsa")

        // 25 days on, the processing certificate has expired: still warned about, as expired.
        h.clock.advance(by: 25 * 86_400)
        inventory = try h.gateway.keys.keyInventory(merchantID: h.merchant.id)
        #expect(
            inventory.warnings == [
                CertificateWarning(keyID: csr.id, purpose: "processing", notAfter: expiry, daysLeft: -5, expired: true)
            ])
    }
}
