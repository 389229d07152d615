import ApplePaySandbox
import ApplePayToken
import COpenSSL
import Foundation
import OrchardCrypto
import Testing

/// Token shapes that OpenSSL's own CMS checks accept and Orchard refuses (or, for a signer named by its
/// subjectKeyIdentifier, accepts), each built by the sandbox PKI and tried on a fresh decryptor and on one that
/// has validated and cached the certificates.
@Suite("Minted tokens: the stricter rules")
struct StricterRulesTests {
    let fixture = SandboxFixture.shared

    /// A fresh decryptor, and one that has already decrypted a well-formed token of `pki` (chain cached).
    func decryptors(pki: SandboxPKI? = nil) throws -> (fresh: PaymentTokenDecryptor, warm: PaymentTokenDecryptor) {
        let anchor = (pki ?? fixture.pki).trustAnchor
        let keys = [fixture.ecMerchantKey, fixture.rsaMerchantKey]
        let warm = PaymentTokenDecryptor(trustAnchor: anchor, keys: keys)
        try warm.decrypt(try fixture.mint(fixture.request(), pki: pki), at: SandboxFixture.now).erase()
        #expect(warm.cachedCertificateSets == 1)
        return (PaymentTokenDecryptor(trustAnchor: anchor, keys: keys), warm)
    }

    func expectRejection(
        _ code: PaymentTokenError.Code, _ token: PaymentToken, by decryptor: PaymentTokenDecryptor,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let error = #expect(throws: PaymentTokenError.self, sourceLocation: sourceLocation) {
            try decryptor.decrypt(token, at: SandboxFixture.now)
        }
        #expect(error?.code == code, "\(error.map { "\($0)" } ?? "no error")", sourceLocation: sourceLocation)
    }

    /// The token's SignedData, parsed, with its one SignerInfo; and whether OpenSSL's own checks of that
    /// SignerInfo (signature over the signed attributes, messageDigest over the content) pass with the leaf.
    func openSSLVerdict(_ token: PaymentToken) throws -> (cms: CMSSignedData, signerInfo: OpaquePointer, holds: Bool) {
        let cms = try CMSSignedData(der: token.signature, context: nil)
        let signerInfo = try #require(cms.onlySignerInfo)
        var content = token.signedContent
        let holds = PaymentTokenDecryptor.cmsVerify(
            cms, signerInfo: signerInfo, signer: fixture.pki.leaf, content: &content)
        return (cms, signerInfo, holds)
    }

    @Test("signature_invalid: a signed contentType attribute that differs from the eContentType (RFC 5652 §11.1)")
    func mismatchedContentType() throws {
        var request = fixture.request()
        request.tamper = .mismatchedContentTypeAttribute
        let token = try fixture.mint(request)
        // The shape: eContentType id-data, the signed attribute id-ct-TSTInfo, and OpenSSL's checks pass.
        let verdict = try openSSLVerdict(token)
        #expect(OBJ_obj2nid(CMS_get0_eContentType(verdict.cms.pointer)) == NID_pkcs7_data)
        let attribute = CMS_signed_get0_data_by_OBJ(
            verdict.signerInfo, OBJ_nid2obj(NID_pkcs9_contentType), -3, V_ASN1_OBJECT)
        #expect(OBJ_obj2nid(OpaquePointer(try #require(attribute))) == NID_id_smime_ct_TSTInfo)
        #expect(verdict.holds)
        let (fresh, warm) = try decryptors()
        expectRejection(.signatureInvalid, token, by: fresh)
        expectRejection(.signatureInvalid, token, by: warm)
    }

    @Test("signature_invalid: a SignerInfo whose digest algorithm is SHA-1; only SHA-256 is accepted")
    func sha1Digest() throws {
        for version in [PaymentTokenVersion.ecV1, .rsaV1] {
            var request = fixture.request(version)
            request.tamper = .sha1Digest
            let token = try fixture.mint(request)
            let verdict = try openSSLVerdict(token)
            var digest: UnsafeMutablePointer<X509_ALGOR>?
            CMS_SignerInfo_get0_algs(verdict.signerInfo, nil, nil, &digest, nil)
            #expect(OBJ_obj2nid(try #require(digest).pointee.algorithm) == NID_sha1)
            #expect(verdict.holds)
            let (fresh, warm) = try decryptors()
            expectRejection(.signatureInvalid, token, by: fresh)
            expectRejection(.signatureInvalid, token, by: warm)
        }
    }

    @Test("certificate_untrusted: a signing leaf whose keyUsage lacks digitalSignature (RFC 5280 §4.2.1.3)")
    func leafWithoutDigitalSignature() throws {
        var options = SandboxPKI.Options()
        options.leafKeyUsage = "keyAgreement"
        let pki = try SandboxPKI.generate(
            notBefore: SandboxFixture.now.addingTimeInterval(-86400),
            notAfter: SandboxFixture.now.addingTimeInterval(86400), options: options)
        #expect(X509_get_key_usage(pki.leaf.pointer) & UInt32(KU_DIGITAL_SIGNATURE) == 0)
        #expect(X509_get_key_usage(pki.leaf.pointer) & UInt32(KU_KEY_AGREEMENT) != 0)
        let decryptor = PaymentTokenDecryptor(trustAnchor: pki.trustAnchor, keys: [fixture.ecMerchantKey])
        let token = try fixture.mint(fixture.request(), pki: pki)
        expectRejection(.certificateUntrusted, token, by: decryptor)
        // Refused again on a second sight: the refusal is not cached as a validated chain.
        expectRejection(.certificateUntrusted, try fixture.mint(fixture.request(), pki: pki), by: decryptor)
        #expect(decryptor.cachedCertificateSets == 0)
    }

    @Test("malformed_token: an ephemeral public key with explicit curve parameters (RFC 5480 §2.1.1)")
    func explicitCurveEphemeralKey() throws {
        var request = fixture.request()
        request.tamper = .explicitCurveEphemeralKey
        let token = try fixture.mint(request)
        // The shape: P-256 spelt out; the signature holds.
        let peer = try EVPKey(publicKeyDER: token.keyMaterial)
        #expect(peer.curveName == "prime256v1")
        #expect(Self.encoding(of: peer) == "explicit")
        let (fresh, warm) = try decryptors()
        #expect(throws: Never.self) { try fresh.verify(token, at: SandboxFixture.now) }
        expectRejection(.malformedToken, token, by: fresh)
        expectRejection(.malformedToken, token, by: warm)
        // Directly, on both ECDH paths of the merchant key.
        #expect(throws: PaymentTokenError(.malformedToken)) {
            try PaymentTokenDecryptor.ecdh(key: fixture.ecMerchantKey, peerSPKI: token.keyMaterial)
        }
        #expect(throws: PaymentTokenError(.malformedToken)) {
            try PaymentTokenDecryptor.ecdh(
                privateKey: fixture.ecKey, peerSPKI: token.keyMaterial,
                spkiHeader: fixture.ecMerchantKey.ecPublicKeyHeader)
        }
    }

    @Test("malformed_token: explicit curve parameters also when the merchant key itself is encoded with them")
    func explicitCurveMerchantKey() throws {
        // A merchant key whose own SubjectPublicKeyInfo spells out P-256: an ephemeral key encoded the same way
        // must not take the pooled path that the key's own header would open.
        let merchant = try EVPKey.generateEC()
        let merchantNamedSPKI = merchant.publicKeyDER
        try Self.setExplicitEncoding(merchant)
        let key = try MerchantKey(privateKey: merchant, merchantIdentifier: SandboxFixture.merchantID)
        #expect(key.ecPublicKeyHeader == nil)
        let ephemeral = try EVPKey.generateEC()
        let namedSPKI = ephemeral.publicKeyDER
        try Self.setExplicitEncoding(ephemeral)
        let explicitSPKI = ephemeral.publicKeyDER
        #expect(explicitSPKI != namedSPKI)
        #expect(throws: PaymentTokenError(.malformedToken)) {
            try PaymentTokenDecryptor.ecdh(key: key, peerSPKI: explicitSPKI)
        }
        #expect(throws: PaymentTokenError(.malformedToken)) {
            try PaymentTokenDecryptor.ecdh(
                privateKey: merchant, peerSPKI: explicitSPKI, spkiHeader: key.ecPublicKeyHeader)
        }
        // The same point on the named curve agrees with the ephemeral side's derivation.
        let expected = try PaymentTokenDecryptor.ecdh(privateKey: ephemeral, peerSPKI: merchantNamedSPKI)
        #expect(try PaymentTokenDecryptor.ecdh(key: key, peerSPKI: namedSPKI) == expected)
    }

    @Test("a SignerInfo naming the genuine leaf by subjectKeyIdentifier (version 3) is accepted, cached or not")
    func signerBySubjectKeyIdentifier() throws {
        for version in [PaymentTokenVersion.ecV1, .rsaV1] {
            var request = fixture.request(version)
            request.signerIdentifier = .subjectKeyIdentifier
            request.amount = 4321
            let token = try fixture.mint(request)
            let verdict = try openSSLVerdict(token)
            var keyID: UnsafeMutablePointer<ASN1_OCTET_STRING>?
            #expect(CMS_SignerInfo_get0_signer_id(verdict.signerInfo, &keyID, nil, nil) == 1)
            #expect(keyID != nil)
            #expect(CMS_SignerInfo_cert_cmp(verdict.signerInfo, fixture.pki.leaf.pointer) == 0)
            let (fresh, warm) = try decryptors()
            // First sight of the certificates by subjectKeyIdentifier, then again with them cached.
            for decryptor in [fresh, fresh, warm] {
                let verification = try decryptor.verify(token, at: SandboxFixture.now)
                #expect(verification.signerSerialNumber == fixture.pki.leaf.serialNumberHex)
                let payment = try decryptor.decrypt(token, at: SandboxFixture.now)
                #expect(payment.transactionAmount == 4321)
                payment.erase()
            }
            #expect(fresh.cachedCertificateSets == 1)
        }
    }

    @Test("signature_invalid: a subjectKeyIdentifier naming another certificate, cached or not")
    func signerKeyIdentifierOfAnotherCertificate() throws {
        var request = fixture.request()
        request.tamper = .signerKeyIdentifierOfIntermediate
        let token = try fixture.mint(request)
        let verdict = try openSSLVerdict(token)
        #expect(CMS_SignerInfo_cert_cmp(verdict.signerInfo, fixture.pki.intermediate.pointer) == 0)
        #expect(CMS_SignerInfo_cert_cmp(verdict.signerInfo, fixture.pki.leaf.pointer) != 0)
        // With the leaf set as its certificate, the signature itself holds: only the signer check catches it.
        #expect(verdict.holds)
        let (fresh, warm) = try decryptors()
        expectRejection(.signatureInvalid, token, by: fresh)
        expectRejection(.signatureInvalid, token, by: warm)
        // A decryptor that first saw the certificates through a subjectKeyIdentifier naming the leaf.
        var genuine = fixture.request()
        genuine.signerIdentifier = .subjectKeyIdentifier
        let keyed = PaymentTokenDecryptor(trustAnchor: fixture.pki.trustAnchor, keys: [fixture.ecMerchantKey])
        try keyed.decrypt(try fixture.mint(genuine), at: SandboxFixture.now).erase()
        expectRejection(.signatureInvalid, token, by: keyed)
    }

    @Test(
        "a token with two defects gets the same code whether its certificates were seen before or not",
        arguments: [
            (MintRequest.Tamper.sha1Digest, PaymentTokenError.Code.signingTimeOutOfWindow),
            (.mismatchedContentTypeAttribute, .signingTimeOutOfWindow),
            (.signerKeyIdentifierOfIntermediate, .signatureInvalid),
            (.foreignSigner, .signatureInvalid),
        ])
    func sameCodeCachedOrNot(tamper: MintRequest.Tamper, code: PaymentTokenError.Code) throws {
        // Signed an hour ago as well: the signer binding comes before the signing time, the algorithms after.
        var request = fixture.request(signedAt: SandboxFixture.now.addingTimeInterval(-3600))
        request.tamper = tamper
        let token = try fixture.mint(request)
        let (fresh, warm) = try decryptors()
        expectRejection(code, token, by: fresh)
        expectRejection(code, token, by: warm)
    }

    static func encoding(of key: EVPKey) -> String? {
        var buffer = [CChar](repeating: 0, count: 32)
        var length = 0
        guard
            EVP_PKEY_get_utf8_string_param(key.pointer, OSSL_PKEY_PARAM_EC_ENCODING, &buffer, buffer.count, &length)
                == 1
        else { return nil }
        return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func setExplicitEncoding(_ key: EVPKey) throws {
        guard
            EVP_PKEY_set_utf8_string_param(key.pointer, OSSL_PKEY_PARAM_EC_ENCODING, OSSL_PKEY_EC_ENCODING_EXPLICIT)
                == 1
        else { throw CryptoError.openSSL("explicit curve encoding") }
    }
}
