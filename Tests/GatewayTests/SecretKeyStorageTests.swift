import ApplePaySandbox
import Foundation
import GatewayAssembly
import OrchardCrypto
import Testing

@testable import Gateway

@Suite("Private keys stored in zeroing buffers")
struct SecretKeyStorageTests {
    static let now = Date(timeIntervalSince1970: 1_780_000_000)

    @Test("the serialized sandbox PKI round-trips its keys and certificates")
    func pkiRoundTrip() throws {
        let issuer = SandboxPKIIssuer()
        let serialized = try issuer.generatePKI(now: Self.now)
        let pki = try SandboxPKIIssuer.pki(serialized: serialized)
        let again = try SandboxPKIIssuer.pki(serialized: serialized)
        #expect(pki.root.sha256Fingerprint == again.root.sha256Fingerprint)
        #expect(pki.leafKey.hasSamePublicKey(as: again.leafKey))
        #expect(pki.root.matches(privateKey: pki.rootKey))
        #expect(pki.intermediate.matches(privateKey: pki.intermediateKey))
        #expect(pki.leaf.matches(privateKey: pki.leafKey))
    }

    @Test("a PKI serialized by the earlier JSONEncoder form (escaped slashes) still opens")
    func earlierForm() throws {
        let pki = try SandboxPKI.generate(
            notBefore: Self.now.addingTimeInterval(-86_400), notAfter: Self.now.addingTimeInterval(86_400))
        func text(_ key: EVPKey) throws -> String {
            String(decoding: try key.privateKeyPEM().copyBytes(), as: UTF8.self)
        }
        let earlier = try JSONEncoder().encode([
            "root": pki.root.pem, "rootKey": try text(pki.rootKey), "intermediate": pki.intermediate.pem,
            "intermediateKey": try text(pki.intermediateKey), "leaf": pki.leaf.pem, "leafKey": try text(pki.leafKey),
        ])
        #expect(earlier.contains(Data(#"\/"#.utf8)) || !pki.root.pem.contains("/"))
        let opened = try SandboxPKIIssuer.pki(serialized: SecureBytes(earlier))
        #expect(opened.root.sha256Fingerprint == pki.root.sha256Fingerprint)
        #expect(opened.leafKey.hasSamePublicKey(as: pki.leafKey))
    }

    @Test("an issued processing key's PEM opens as the certificate's key")
    func issuedKey() throws {
        let issuer = SandboxPKIIssuer()
        let serialized = try issuer.generatePKI(now: Self.now)
        let material = try issuer.issueProcessingKey(
            pki: serialized, merchantIdentifier: "merchant.com.example", id: "pk_1", now: Self.now)
        let key = try EVPKey(privateKeyPEM: material.privateKeyPEM)
        #expect(try X509Certificate(pem: material.certificatePEM).matches(privateKey: key))
    }
}
