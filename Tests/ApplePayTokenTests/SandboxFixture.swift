import ApplePaySandbox
import ApplePayToken
import Foundation
import OrchardCrypto

/// A sandbox PKI, merchant keys and certificates shared by the tests (generated once per run).
struct SandboxFixture: Sendable {
    /// The tests' "now": 2026-06-01T00:00:00Z.
    static let now = Date(timeIntervalSince1970: 1_780_272_000)
    static let merchantID = "merchant.com.orchard.tests"
    static let shared = try! SandboxFixture()

    let pki: SandboxPKI
    let ecKey: EVPKey
    let ecCertificatePEM: String
    let ecMerchantKey: MerchantKey
    let rsaKey: EVPKey
    let rsaCertificatePEM: String
    let rsaMerchantKey: MerchantKey
    /// A second EC key for the same merchant (rotation).
    let rotatedKey: EVPKey
    let rotatedCertificatePEM: String
    let rotatedMerchantKey: MerchantKey

    init() throws {
        let start = Self.now.addingTimeInterval(-365 * 86400)
        let end = Self.now.addingTimeInterval(365 * 86400)
        pki = try SandboxPKI.generate(notBefore: start, notAfter: end)
        ecKey = try EVPKey.generateEC()
        ecCertificatePEM = try pki.issueMerchantCertificate(
            publicKeyPEM: ecKey.publicKeyPEM, merchantIdentifier: Self.merchantID, notBefore: start, notAfter: end)
        ecMerchantKey = try MerchantKey(privateKeyPEM: try ecKey.privateKeyPEM(), certificatePEM: ecCertificatePEM)
        rsaKey = try EVPKey.generateRSA(bits: 2048)
        rsaCertificatePEM = try pki.issueMerchantCertificate(
            publicKeyPEM: rsaKey.publicKeyPEM, merchantIdentifier: Self.merchantID, notBefore: start, notAfter: end)
        rsaMerchantKey = try MerchantKey(privateKeyPEM: try rsaKey.privateKeyPEM(), certificatePEM: rsaCertificatePEM)
        rotatedKey = try EVPKey.generateEC()
        rotatedCertificatePEM = try pki.issueMerchantCertificate(
            publicKeyPEM: rotatedKey.publicKeyPEM, merchantIdentifier: Self.merchantID, notBefore: start, notAfter: end)
        rotatedMerchantKey = try MerchantKey(
            privateKeyPEM: try rotatedKey.privateKeyPEM(), certificatePEM: rotatedCertificatePEM)
    }

    var decryptor: PaymentTokenDecryptor {
        PaymentTokenDecryptor(trustAnchor: pki.trustAnchor, keys: [ecMerchantKey, rsaMerchantKey])
    }

    func request(_ version: PaymentTokenVersion = .ecV1, signedAt: Date = SandboxFixture.now) -> MintRequest {
        MintRequest(
            version: version, merchantCertificatePEM: version == .ecV1 ? ecCertificatePEM : rsaCertificatePEM,
            signingTime: signedAt)
    }

    func mint(_ request: MintRequest, pki: SandboxPKI? = nil) throws -> PaymentToken {
        try PaymentToken(json: try TokenMinter(pki: pki ?? self.pki).mint(request))
    }
}
