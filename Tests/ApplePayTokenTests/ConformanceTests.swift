import ApplePayToken
import Foundation
import OrchardCrypto
import Testing

/// Real Apple Pay tokens from public projects (../shared/vectors). Skipped when the directory is absent,
/// as in a fresh clone: set ORCHARD_VECTORS_DIR or place the vectors next to the checkout.
@Suite(
    "Conformance vectors", .enabled(if: Vectors.available, "../shared/vectors is absent: conformance vectors skipped"))
struct ConformanceTests {
    @Test("every vector verifies at its signing time", arguments: Vectors.all)
    func verifies(_ vector: Vectors.Vector) throws {
        let decryptor = PaymentTokenDecryptor(trustAnchor: try Vectors.appleRoot(), keys: [])
        let token = try PaymentToken(json: try vector.tokenData())
        #expect(token.version.rawValue == vector.version)
        let verification = try decryptor.verify(token, at: vector.verifyAt)
        #expect(verification.signingTime == vector.verifyAt)
        // Again, now that the certificates are known: the SignerInfo alone is parsed (BER as it came).
        #expect(try decryptor.verify(token, at: vector.verifyAt) == verification)
        #expect(SignedDataSplitter.split(token.signature) != nil)
        #expect(decryptor.cachedCertificateSets == 1)
        #expect(verification.rootFingerprint == TrustAnchor.appleRootCAG3SHA256)
        #expect(verification.intermediateSubject.contains("Apple Application Integration CA - G3"))
    }

    @Test("every vector's SignerInfo verifies on its own once the certificates are split off", arguments: Vectors.all)
    func splitSignerInfoVerifies(_ vector: Vectors.Vector) throws {
        let token = try PaymentToken(json: try vector.tokenData())
        let split = try #require(SignedDataSplitter.split(token.signature))
        let generic = try #require(SignedDataSplitter.splitGeneric(token.signature))
        #expect(split.certificates == generic.certificates)
        #expect(split.withoutCertificates == generic.withoutCertificates)
        let full = try CMSSignedData(der: token.signature, context: nil)
        let leaf = try #require(full.certificates.first { $0.hasExtension(AppleOID.leaf) })
        let stripped = try CMSSignedData(der: split.withoutCertificates, context: nil)
        #expect(stripped.certificates.isEmpty)
        let signerInfo = try #require(stripped.onlySignerInfo)
        var content = token.signedContent
        #expect(PaymentTokenDecryptor.cmsVerify(stripped, signerInfo: signerInfo, signer: leaf, content: &content))
        content[content.count - 1] ^= 1
        #expect(!PaymentTokenDecryptor.cmsVerify(stripped, signerInfo: signerInfo, signer: leaf, content: &content))
        content[content.count - 1] ^= 1
        // The signer identifier is byte for byte the leaf's IssuerAndSerialNumber; without it, the rest verifies.
        let detached = try #require(SignedDataSplitter.detachSignerIdentifier(split.withoutCertificates))
        #expect(detached.signerIdentifier == SignedDataSplitter.issuerAndSerialNumber(of: leaf))
        let withoutSigner = try CMSSignedData(der: detached.rest, context: nil)
        let rest = try #require(withoutSigner.onlySignerInfo)
        #expect(PaymentTokenDecryptor.cmsVerify(withoutSigner, signerInfo: rest, signer: leaf, content: &content))
    }

    @Test(
        "every vector with a key decrypts to exactly its expected JSON",
        arguments: Vectors.all.filter { $0.expected != nil })
    func decrypts(_ vector: Vectors.Vector) throws {
        let key = try #require(try vector.merchantKey())
        let decryptor = PaymentTokenDecryptor(trustAnchor: try Vectors.appleRoot(), keys: [key])
        let token = try PaymentToken(json: try vector.tokenData())
        #expect(token.publicKeyHash == key.publicKeyHash)
        _ = try decryptor.decrypt(token, at: vector.verifyAt)
        let payment = try decryptor.decrypt(token, at: vector.verifyAt)
        var expected = try Data(contentsOf: vector.url(vector.expected!))
        while expected.last == 0x0A || expected.last == 0x0D { expected.removeLast() }
        #expect(payment.json(revealing: true) == expected)
        let pan = String(decoding: payment.primaryAccountNumberBytes.copyBytes(), as: UTF8.self)
        #expect(pan.count >= 12)
        #expect(!String(decoding: payment.json(revealing: false), as: UTF8.self).contains(pan))
        #expect(!payment.description.contains(pan))
    }

    @Test("every vector is rejected at today's date", arguments: Vectors.all)
    func rejectedToday(_ vector: Vectors.Vector) throws {
        let decryptor = PaymentTokenDecryptor(trustAnchor: try Vectors.appleRoot(), keys: [])
        let token = try PaymentToken(json: try vector.tokenData())
        let error = #expect(throws: PaymentTokenError.self) { try decryptor.verify(token, at: Date()) }
        #expect([.signingTimeOutOfWindow, .certificateUntrusted].contains(error?.code))
    }

    @Test("with a wide window an old vector verifies today: the chain is checked at the signing time")
    func expiredLeafWideWindow() throws {
        let vector = try #require(Vectors.all.first { $0.id == "gala" })
        let decryptor = PaymentTokenDecryptor(
            trustAnchor: try Vectors.appleRoot(), keys: [],
            window: SigningTimeWindow(maximumAge: 100 * 365 * 86400, maximumFutureSkew: 60))
        let token = try PaymentToken(json: try vector.tokenData())
        // The signing time is within the leaf's validity, so the chain holds; only the window rejects today.
        #expect(throws: Never.self) { try decryptor.verify(token, at: Date()) }
    }

    @Test("rotation: the old token does not decrypt with only the new key, and both decrypt with both")
    func rotation() throws {
        let new = try #require(Vectors.all.first { $0.id == "basis-theory-ec-new" })
        let old = try #require(Vectors.all.first { $0.id == "basis-theory-ec-old" })
        let newKey = try #require(try new.merchantKey())
        let oldKey = try #require(try old.merchantKey())
        let onlyNew = PaymentTokenDecryptor(trustAnchor: try Vectors.appleRoot(), keys: [newKey])
        let oldToken = try PaymentToken(json: try old.tokenData())
        #expect(throws: PaymentTokenError(.unknownMerchantKey)) { try onlyNew.decrypt(oldToken, at: old.verifyAt) }
        let both = PaymentTokenDecryptor(trustAnchor: try Vectors.appleRoot(), keys: [newKey, oldKey])
        #expect(throws: Never.self) { try both.decrypt(oldToken, at: old.verifyAt) }
        #expect(throws: Never.self) { try both.decrypt(try PaymentToken(json: try new.tokenData()), at: new.verifyAt) }
    }

    @Test("a key and certificate from a legacy-encrypted PKCS#12 keystore decrypt their token")
    func pkcs12Keystore() throws {
        let vector = try #require(Vectors.all.first { $0.id == "vgs-starlarky" })
        let password = try vector.text("keystore_password.txt").trimmingCharacters(in: .whitespacesAndNewlines)
        let bundle = try PKCS12Bundle.parse(
            [UInt8](try Data(contentsOf: vector.url("keystore.p12"))), password: password)
        let key = try MerchantKey(privateKey: bundle.key, certificate: bundle.certificate)
        let decryptor = PaymentTokenDecryptor(trustAnchor: try Vectors.appleRoot(), keys: [key])
        let payment = try decryptor.decrypt(try PaymentToken(json: try vector.tokenData()), at: vector.verifyAt)
        var expected = try Data(contentsOf: vector.url(vector.expected!))
        while expected.last == 0x0A || expected.last == 0x0D { expected.removeLast() }
        #expect(payment.json(revealing: true) == expected)
    }

    @Test("the Apple root is refused when its fingerprint differs")
    func wrongRootFingerprint() throws {
        let intermediate = Vectors.directory!.appendingPathComponent("apple-aai-ca-g3.pem").path
        #expect(throws: PaymentTokenError(.certificateUntrusted)) {
            try TrustAnchor.appleRoot(contentsOf: intermediate)
        }
        #expect(try Vectors.appleRoot().sha256Fingerprint == TrustAnchor.appleRootCAG3SHA256)
    }
}
