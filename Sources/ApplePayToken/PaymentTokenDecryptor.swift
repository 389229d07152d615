import COpenSSL
import Foundation
import OrchardBase
import OrchardCrypto

/// How far a token's signing time may lie from "now".
public struct SigningTimeWindow: Sendable, Hashable {
    /// The oldest accepted signature, in seconds before now (default 5 minutes).
    public var maximumAge: TimeInterval = 300
    /// The furthest accepted signing time after now, for clock skew (default 1 minute).
    public var maximumFutureSkew: TimeInterval = 60

    /// A window; the defaults are Apple's recommendation.
    public init(maximumAge: TimeInterval = 300, maximumFutureSkew: TimeInterval = 60) {
        self.maximumAge = maximumAge
        self.maximumFutureSkew = maximumFutureSkew
    }

    /// At most 5 minutes old, at most 1 minute in the future.
    public static let `default` = SigningTimeWindow()
}

/// What verification established about a token.
public struct TokenVerification: Sendable, Hashable {
    /// The token's version.
    public var version: PaymentTokenVersion
    /// The CMS signingTime.
    public var signingTime: Date
    /// The signing leaf's subject (RFC 2253).
    public var signerSubject: String
    /// The signing leaf's serial number (hex).
    public var signerSerialNumber: String
    /// The intermediate's subject.
    public var intermediateSubject: String
    /// The trust anchor's subject.
    public var rootSubject: String
    /// The trust anchor's SHA-256 fingerprint.
    public var rootFingerprint: String
}

/// Verifies Apple Pay payment tokens against a trust anchor and decrypts them with a ring of merchant keys.
///
/// Verification, in order: the signature is a detached CMS SignedData with exactly one SignerInfo; the
/// certificates include one leaf marked 1.2.840.113635.100.6.29 and one intermediate marked
/// 1.2.840.113635.100.6.2.14; the SignerInfo names that leaf (by issuer and serial number or by
/// subjectKeyIdentifier); the signingTime lies in the window around `now`; leaf → intermediate → anchor is a
/// valid chain at the signing time (and nothing else) and the leaf's keyUsage allows digitalSignature; the
/// SignerInfo digests with SHA-256 and signs a contentType equal to the eContentType; the signature verifies
/// over ephemeralPublicKey/wrappedKey ‖ data ‖ transactionId ‖ applicationData. An EC_v1 ephemeral key must
/// name its curve (P-256), not spell out explicit parameters.
///
/// Build one decryptor and reuse it: keys and the trust store are parsed once, and validated chains
/// are cached by the certificates' bytes (their validity is re-checked at every signing time).
public struct PaymentTokenDecryptor: Sendable {
    /// The trust anchor.
    public let trustAnchor: TrustAnchor
    /// The merchant keys, in the order given.
    public let keys: [MerchantKey]
    /// The accepted signing-time window.
    public var window: SigningTimeWindow

    private let store: TrustStore
    private let cache: ChainCache
    private let certificateSets: ChainCache

    /// A decryptor trusting `trustAnchor` and holding `keys` (several for certificate rotation).
    public init(trustAnchor: TrustAnchor, keys: [MerchantKey], window: SigningTimeWindow = .default) {
        self.trustAnchor = trustAnchor
        self.keys = keys
        self.window = window
        self.store = TrustStore(anchor: trustAnchor.certificate)
        self.cache = ChainCache()
        self.certificateSets = ChainCache()
    }

    /// How many distinct certificate sets have been validated and cached (for tests and diagnostics).
    package var cachedCertificateSets: Int { certificateSets.count }

    /// Verifies `token`'s signature, certificates and signing time as of `now`.
    public func verify(_ token: PaymentToken, at now: Date) throws(PaymentTokenError) -> TokenVerification {
        try verifyCapturing(token, at: now, details: true)
    }

    /// Verifies `token`, then decrypts it with the merchant key its `publicKeyHash` names.
    public func decrypt(_ token: PaymentToken, at now: Date) throws(PaymentTokenError) -> DecryptedPaymentData {
        _ = try verifyCapturing(token, at: now, details: false)
        return try decryptUnverified(token)
    }

    /// Decrypts without verifying the signature. For diagnostics only; never accept a payment this way.
    package func decryptUnverified(_ token: PaymentToken) throws(PaymentTokenError) -> DecryptedPaymentData {
        guard
            let key = keys.first(where: { ConstantTime.equals($0.publicKeyHashBytes, token.publicKeyHashBytes) })
        else {
            throw PaymentTokenError(.unknownMerchantKey, "no merchant key has publicKeyHash \(token.publicKeyHash)")
        }
        var symmetricKey: [UInt8]
        switch token.version {
        case .ecV1:
            guard key.privateKey.kind == .ec else {
                throw PaymentTokenError(.decryptionFailed, "an EC_v1 token needs an EC merchant key")
            }
            var sharedSecret = try Self.ecdh(key: key, peerSPKI: token.keyMaterial)
            defer { SecureBytes.zero(&sharedSecret) }
            symmetricKey = Self.deriveKey(sharedSecret: sharedSecret, partyV: key.partyV)
        case .rsaV1:
            guard key.privateKey.kind == .rsa else {
                throw PaymentTokenError(.decryptionFailed, "an RSA_v1 token needs an RSA merchant key")
            }
            symmetricKey = try Self.unwrap(token.keyMaterial, with: key.privateKey)
        }
        defer { SecureBytes.zero(&symmetricKey) }
        let plaintext: SecureBytes
        do {
            plaintext = try AESGCM.open(token.ciphertext, key: symmetricKey, nonce: Self.zeroNonce)
        } catch {
            throw PaymentTokenError(.decryptionFailed, "AES-GCM: \(error)")
        }
        return try DecryptedPaymentData(plaintext: plaintext)
    }

    static let zeroNonce = [UInt8](repeating: 0, count: 16)

    /// ECDH with a merchant key: pooled contexts when the ephemeral key is a P-256 SubjectPublicKeyInfo
    /// with the same header as the merchant key's, the general path otherwise.
    package static func ecdh(key: MerchantKey, peerSPKI: [UInt8]) throws(PaymentTokenError) -> [UInt8] {
        if let pool = key.ecdhPool, let header = key.ecPublicKeyHeader, peerSPKI.count == header.count + 65,
            peerSPKI.starts(with: header)
        {
            return try peerSPKI.withUnsafeBufferPointer { buffer throws(PaymentTokenError) in
                try pool.sharedSecret(point: UnsafeBufferPointer(rebasing: buffer[header.count...]))
            }
        }
        return try ecdh(privateKey: key.privateKey, peerSPKI: peerSPKI, spkiHeader: key.ecPublicKeyHeader)
    }

    /// K = SHA-256(00000001 ‖ Z ‖ 0x0D ‖ "id-aes256-GCM" ‖ "Apple" ‖ partyV).
    package static func deriveKey(sharedSecret: [UInt8], partyV: [UInt8]) -> [UInt8] {
        let prefix: [UInt8] = [0, 0, 0, 1]
        let info: [UInt8] = [0x0D] + Array("id-aes256-GCM".utf8) + Array("Apple".utf8)
        return OrchardCrypto.SHA256.hash(parts: [prefix, sharedSecret, info, partyV])
    }

    /// ECDH P-256 between the merchant key and the ephemeral key (DER SubjectPublicKeyInfo): the 32-byte x-coordinate.
    ///
    /// When `peerSPKI` carries the same algorithm header as the merchant key's own SubjectPublicKeyInfo
    /// (`spkiHeader`, the named curve P-256 with an uncompressed point, as ``MerchantKey/ecPublicKeyHeader``),
    /// the point is set on a copy of the merchant key's parameters directly (OpenSSL checks it lies on the
    /// curve); anything else goes through d2i_PUBKEY, and explicit curve parameters are refused (`malformed_token`).
    package static func ecdh(
        privateKey: EVPKey, peerSPKI: [UInt8], spkiHeader: [UInt8]? = nil
    ) throws(PaymentTokenError)
        -> [UInt8]
    {
        let peer: EVPKey
        if let spkiHeader, peerSPKI.count == spkiHeader.count + 65, peerSPKI.starts(with: spkiHeader) {
            guard let key = EVP_PKEY_new() else { throw PaymentTokenError(.decryptionFailed, "EVP_PKEY_new failed") }
            peer = EVPKey(takingOwnershipOf: key)
            let pointSet = peerSPKI.withUnsafeBufferPointer { buffer in
                EVP_PKEY_copy_parameters(key, privateKey.pointer) == 1
                    && EVP_PKEY_set1_encoded_public_key(key, buffer.baseAddress! + spkiHeader.count, 65) == 1
            }
            guard pointSet else {
                OpenSSLErrorQueue.clear()
                throw PaymentTokenError(.decryptionFailed, "the ephemeral public key is not a valid P-256 point")
            }
        } else {
            do {
                peer = try EVPKey(publicKeyDER: peerSPKI)
            } catch {
                OpenSSLErrorQueue.clear()
                throw PaymentTokenError(.decryptionFailed, "the ephemeral public key is not a valid EC point")
            }
            guard peer.kind != .ec || hasNamedCurve(peer) else {
                throw PaymentTokenError(
                    .malformedToken, "the ephemeral public key has explicit curve parameters, not the named curve P-256"
                )
            }
            // DER only: OpenSSL's decoder also takes other encodings of the same key (a bit string that claims
            // unused bits, say), which no signer writes.
            guard peer.publicKeyDER == peerSPKI else {
                throw PaymentTokenError(.malformedToken, "the ephemeral public key is not a DER SubjectPublicKeyInfo")
            }
        }
        guard peer.kind == .ec else { throw PaymentTokenError(.decryptionFailed, "the ephemeral public key is not EC") }
        // Partial public-key validation (SP 800-56A 5.6.2.3.4): the point is on the curve. P-256 has
        // cofactor 1, so OpenSSL's full check (an extra scalar multiplication by the order) adds nothing.
        guard let peerContext = EVP_PKEY_CTX_new_from_pkey(nil, peer.pointer, nil) else {
            throw PaymentTokenError(.decryptionFailed, "EC context: \(OpenSSLErrorQueue.drain())")
        }
        defer { EVP_PKEY_CTX_free(peerContext) }
        guard EVP_PKEY_public_check_quick(peerContext) == 1 else {
            OpenSSLErrorQueue.clear()
            throw PaymentTokenError(.decryptionFailed, "the ephemeral public key is not a point on the curve")
        }
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, privateKey.pointer, nil) else {
            throw PaymentTokenError(.decryptionFailed, "ECDH context: \(OpenSSLErrorQueue.drain())")
        }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_derive_init(context) == 1, EVP_PKEY_derive_set_peer_ex(context, peer.pointer, 0) == 1 else {
            throw PaymentTokenError(.decryptionFailed, "ECDH with the ephemeral key: \(OpenSSLErrorQueue.drain())")
        }
        var secret = [UInt8](repeating: 0, count: 32)
        var length = secret.count
        guard EVP_PKEY_derive(context, &secret, &length) == 1, length == 32 else {
            throw PaymentTokenError(.decryptionFailed, "ECDH: \(OpenSSLErrorQueue.drain())")
        }
        return secret
    }

    /// Whether an EC key's parameters are encoded as a named curve (RFC 5480 §2.1.1), not spelt out as explicit
    /// parameters; OpenSSL names a curve given explicitly too when it recognises it, so the encoding is asked.
    package static func hasNamedCurve(_ key: EVPKey) -> Bool {
        var encoding = [CChar](repeating: 0, count: 16)
        var length = 0
        guard
            EVP_PKEY_get_utf8_string_param(
                key.pointer, OSSL_PKEY_PARAM_EC_ENCODING, &encoding, encoding.count, &length) == 1
        else {
            OpenSSLErrorQueue.clear()
            return false
        }
        return String(decoding: encoding.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            == OSSL_PKEY_EC_ENCODING_GROUP
    }

    /// RSA-OAEP (SHA-256, MGF1-SHA-256) unwrapping of the 16-byte AES-128 key.
    package static func unwrap(_ wrapped: [UInt8], with key: EVPKey) throws(PaymentTokenError) -> [UInt8] {
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key.pointer, nil) else {
            throw PaymentTokenError(.decryptionFailed, "RSA context: \(OpenSSLErrorQueue.drain())")
        }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_decrypt_init(context) == 1, EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_OAEP_PADDING) == 1,
            EVP_PKEY_CTX_set_rsa_oaep_md(context, EVP_sha256()) == 1,
            EVP_PKEY_CTX_set_rsa_mgf1_md(context, EVP_sha256()) == 1
        else { throw PaymentTokenError(.decryptionFailed, "RSA-OAEP setup: \(OpenSSLErrorQueue.drain())") }
        var length = 0
        guard EVP_PKEY_decrypt(context, nil, &length, wrapped, wrapped.count) == 1 else {
            throw PaymentTokenError(.decryptionFailed, "RSA-OAEP: \(OpenSSLErrorQueue.drain())")
        }
        var output = [UInt8](repeating: 0, count: length)
        guard EVP_PKEY_decrypt(context, &output, &length, wrapped, wrapped.count) == 1 else {
            SecureBytes.zero(&output)
            OpenSSLErrorQueue.clear()
            throw PaymentTokenError(.decryptionFailed, "RSA-OAEP unwrapping failed")
        }
        guard length == 16 else {
            SecureBytes.zero(&output)
            throw PaymentTokenError(.decryptionFailed, "the unwrapped key is \(length) bytes, not 16")
        }
        let key = Array(output.prefix(length))
        SecureBytes.zero(&output)
        return key
    }

    // MARK: Verification

    private func verifyCapturing(
        _ token: PaymentToken, at now: Date, details: Bool
    ) throws(PaymentTokenError)
        -> TokenVerification
    {
        defer { OpenSSLErrorQueue.clear() }
        let split = SignedDataSplitter.split(token.signature)
        if let split, let chain = certificateSets.entry(for: split.certificates) {
            // Certificates seen and validated before, byte for byte: only the SignerInfo is parsed. When its
            // signer identifier is byte for byte the chain leaf's IssuerAndSerialNumber, it names that leaf, and
            // the SignerInfo is parsed without it.
            let detached = SignedDataSplitter.detachSignerIdentifier(split.withoutCertificates)
            let namesLeaf = detached.map { $0.signerIdentifier == chain.leafSignerIdentifier } ?? false
            if let cms = try? CMSSignedData(
                der: namesLeaf ? detached!.rest : split.withoutCertificates, context: nil),
                let signerInfo = cms.onlySignerInfo,
                let verification = try checkSigner(
                    signerInfo, of: cms, chain: chain, token: token, at: now, details: details,
                    signerMatched: namesLeaf, definitive: false)
            {
                return verification
            }
            // The signature did not verify in this form: decide on the structure as it came.
        }
        return try verifyParsingCertificates(token, at: now, details: details, certificatesElement: split?.certificates)
    }

    /// Verification from the signature as it came, certificates included.
    private func verifyParsingCertificates(
        _ token: PaymentToken, at now: Date, details: Bool, certificatesElement: [UInt8]?
    ) throws(PaymentTokenError) -> TokenVerification {
        // Parsed without decoding the embedded certificates' public keys (see ParsingContext); the
        // signature is checked with the leaf parsed and validated on its own.
        let cms = try CMSSignedData(der: token.signature, context: ParsingContext.shared)
        // Exactly one SignerInfo.
        guard let signerInfo = cms.onlySignerInfo else {
            throw PaymentTokenError(.signatureInvalid, "the signature must have exactly one signer")
        }

        // The leaf and the intermediate, by Apple's marker extensions.
        var leaf: X509Certificate?
        var intermediate: X509Certificate?
        for certificate in cms.certificates {
            if certificate.hasExtension(AppleOID.leaf) {
                guard leaf == nil else { throw PaymentTokenError(.certificateUntrusted, "more than one signing leaf") }
                leaf = certificate
            } else if certificate.hasExtension(AppleOID.intermediate) {
                guard intermediate == nil else {
                    throw PaymentTokenError(.certificateUntrusted, "more than one intermediate")
                }
                intermediate = certificate
            }
        }
        guard let leaf else {
            throw PaymentTokenError(
                .certificateUntrusted, "no certificate carries the leaf marker 1.2.840.113635.100.6.29")
        }
        guard let intermediate else {
            throw PaymentTokenError(
                .certificateUntrusted, "no certificate carries the intermediate marker 1.2.840.113635.100.6.2.14")
        }
        // The SignerInfo must name that very leaf, as parsed in the default library context (the validated
        // chain's when the pair is known): in the context without key decoders OpenSSL cannot compute a
        // certificate's extension cache (it includes a SHA-1 fingerprint), so a signer named by
        // subjectKeyIdentifier would never match the leaf parsed there.
        let chainKey = leaf.der + intermediate.der
        let known = cache.entry(for: chainKey)
        let signingLeaf: X509Certificate
        if let known { signingLeaf = known.leaf } else { signingLeaf = try Self.parsedAfresh(leaf) }
        guard Self.signerNames(signerInfo, signingLeaf) else {
            throw PaymentTokenError(.signatureInvalid, "the signer is not the Apple Pay signing leaf")
        }
        let signingSeconds = try checkSigningTime(signerInfo, at: now)

        // The chain, at the signing time.
        let chain = try validateChain(
            key: chainKey, known: known, leaf: signingLeaf, intermediate: intermediate, at: signingSeconds)
        if let certificatesElement { certificateSets.insert(chain, for: certificatesElement) }
        return try checkSigner(
            signerInfo, of: cms, chain: chain, token: token, at: now, details: details, signerMatched: true,
            definitive: true)!
    }

    /// The checks that involve the SignerInfo: it names the chain's leaf (already established when
    /// `signerMatched`), its signing time lies in the window and in the chain's validity, its digest algorithm
    /// and contentType attribute are acceptable (`checkAlgorithms`), and the CMS signature holds (`cmsVerify`).
    /// When not `definitive`, a failing signature check returns nil instead of throwing. The order is the full
    /// path's, so that a token is refused with the same code whether its certificates were seen before or not.
    private func checkSigner(
        _ signerInfo: OpaquePointer, of cms: CMSSignedData, chain: ValidatedChain, token: PaymentToken, at now: Date,
        details: Bool, signerMatched: Bool, definitive: Bool
    ) throws(PaymentTokenError) -> TokenVerification? {
        guard signerMatched || Self.signerNames(signerInfo, chain.leaf) else {
            throw PaymentTokenError(.signatureInvalid, "the signer is not the Apple Pay signing leaf")
        }
        let signingSeconds = try checkSigningTime(signerInfo, at: now)
        guard signingSeconds >= chain.notBefore, signingSeconds < chain.notAfter else {
            throw PaymentTokenError(
                .certificateUntrusted, "a certificate of the chain is not valid at the signing time")
        }
        try Self.checkAlgorithms(signerInfo, of: cms, signer: chain.leaf)
        var content = token.signedContent
        if !Self.cmsVerify(cms, signerInfo: signerInfo, signer: chain.leaf, content: &content) {
            guard definitive else { return nil }
            // Confirm a failure with the signature parsed in the default library context.
            let confirmation = try CMSSignedData(der: token.signature, context: nil)
            guard let confirmationSigner = confirmation.onlySignerInfo,
                Self.signerNames(confirmationSigner, chain.leaf),
                Self.cmsVerify(confirmation, signerInfo: confirmationSigner, signer: chain.leaf, content: &content)
            else {
                throw PaymentTokenError(
                    .signatureInvalid, "the CMS signature does not verify: \(OpenSSLErrorQueue.drain())")
            }
        }
        let signingTime = Date(timeIntervalSince1970: TimeInterval(signingSeconds))
        guard details else {
            return TokenVerification(
                version: token.version, signingTime: signingTime, signerSubject: "", signerSerialNumber: "",
                intermediateSubject: "", rootSubject: "", rootFingerprint: "")
        }
        return TokenVerification(
            version: token.version, signingTime: signingTime, signerSubject: chain.leaf.subject,
            signerSerialNumber: chain.leaf.serialNumberHex, intermediateSubject: chain.intermediate.subject,
            rootSubject: trustAnchor.certificate.subject, rootFingerprint: trustAnchor.sha256Fingerprint)
    }

    /// Whether the SignerInfo's signer identifier names `leaf`, exactly: by subjectKeyIdentifier, the leaf's
    /// own (OpenSSL compares those byte for byte), or by issuer and serial number, the leaf's serial and its
    /// issuer name byte for byte as the leaf writes it. `CMS_SignerInfo_cert_cmp` alone compares names in their
    /// canonical form (case, spaces and string types folded, RFC 5280 §7.1), so an identifier spelt otherwise,
    /// which no signer writes, would still name the leaf.
    static func signerNames(_ signerInfo: OpaquePointer, _ leaf: X509Certificate) -> Bool {
        guard CMS_SignerInfo_cert_cmp(signerInfo, leaf.pointer) == 0 else { return false }
        var keyID: UnsafeMutablePointer<ASN1_OCTET_STRING>?
        var issuer: OpaquePointer?
        guard CMS_SignerInfo_get0_signer_id(signerInfo, &keyID, &issuer, nil) == 1 else { return false }
        guard let issuer else { return keyID != nil }
        let named = SignedDataSplitter.der { i2d_X509_NAME(issuer, $0) }
        return named != nil && named == SignedDataSplitter.der { i2d_X509_NAME(X509_get_issuer_name(leaf.pointer), $0) }
    }

    /// The SignerInfo's digest algorithm is SHA-256, the one Apple signs with (anything else, SHA-1 included,
    /// is refused), its signature algorithm is ECDSA or RSA with SHA-256 (or the bare key algorithm some
    /// signers write, RFC 5754 §3), of the kind of `signer`'s key: OpenSSL verifies by the key and the digest
    /// algorithm and would take any identifier there, another hash's or another key kind's included; and its
    /// signed contentType attribute, which RFC 5652 §11.1 requires whenever there are signed attributes, is
    /// exactly one value equal to the eContentType.
    private static func checkAlgorithms(
        _ signerInfo: OpaquePointer, of cms: CMSSignedData, signer: X509Certificate
    ) throws(PaymentTokenError) {
        var digestAlgorithm: UnsafeMutablePointer<X509_ALGOR>?
        var signatureAlgorithm: UnsafeMutablePointer<X509_ALGOR>?
        CMS_SignerInfo_get0_algs(signerInfo, nil, nil, &digestAlgorithm, &signatureAlgorithm)
        let signature = signatureAlgorithm.map { OBJ_obj2nid($0.pointee.algorithm) } ?? NID_undef
        var signatureDigest = NID_undef
        var signatureKey = signature
        let isSHA256 =
            signature == NID_X9_62_id_ecPublicKey || signature == NID_rsaEncryption
            || (OBJ_find_sigid_algs(signature, &signatureDigest, &signatureKey) == 1 && signatureDigest == NID_sha256)
        let signerKind = X509_get0_pubkey(signer.pointer).map { EVP_PKEY_get_base_id($0) } ?? NID_undef
        guard isSHA256, [NID_X9_62_id_ecPublicKey, NID_rsaEncryption].contains(signatureKey), signatureKey == signerKind
        else {
            throw PaymentTokenError(
                .signatureInvalid, "the SignerInfo's signature algorithm is not the signing key's ECDSA or RSA with SHA-256")
        }
        let digest = digestAlgorithm.map { OBJ_obj2nid($0.pointee.algorithm) } ?? NID_undef
        guard digest == NID_sha256 else {
            let name = OBJ_nid2sn(digest).map { String(cString: $0) } ?? "unknown"
            throw PaymentTokenError(
                .signatureInvalid, "the SignerInfo's digest algorithm is \(name); only SHA-256 is accepted")
        }
        guard
            let attribute = CMS_signed_get0_data_by_OBJ(
                signerInfo, OBJ_nid2obj(NID_pkcs9_contentType), -3, V_ASN1_OBJECT)
        else {
            OpenSSLErrorQueue.clear()
            throw PaymentTokenError(.signatureInvalid, "the signature has no single contentType attribute")
        }
        guard let contentType = CMS_get0_eContentType(cms.pointer), OBJ_cmp(OpaquePointer(attribute), contentType) == 0
        else {
            throw PaymentTokenError(
                .signatureInvalid, "the signed contentType attribute differs from the eContentType")
        }
    }

    /// The SignerInfo's signing time (seconds since 1970), checked against the window around `now`.
    private func checkSigningTime(_ signerInfo: OpaquePointer, at now: Date) throws(PaymentTokenError) -> Int {
        let signingSeconds = try Self.signingTime(signerInfo)
        let signingTime = Date(timeIntervalSince1970: TimeInterval(signingSeconds))
        let age = now.timeIntervalSince(signingTime)
        guard age <= window.maximumAge else {
            throw PaymentTokenError(
                .signingTimeOutOfWindow,
                "signed at \(RFC3339.string(signingTime)), \(Int(age)) s before \(RFC3339.string(now)) (limit \(Int(window.maximumAge)) s)"
            )
        }
        guard -age <= window.maximumFutureSkew else {
            throw PaymentTokenError(
                .signingTimeOutOfWindow,
                "signed at \(RFC3339.string(signingTime)), \(Int(-age)) s after \(RFC3339.string(now)) (limit \(Int(window.maximumFutureSkew)) s)"
            )
        }
        return signingSeconds
    }

    /// The checks `CMS_verify(CMS_DETACHED | CMS_BINARY | CMS_NO_SIGNER_CERT_VERIFY)` makes of one
    /// SignerInfo, called one by one: with `signer` as its certificate, `CMS_SignerInfo_verify` checks the
    /// signature over the signed attributes, then `CMS_SignerInfo_verify_content` compares the
    /// messageDigest attribute with the digest of the detached `content`, computed through the digest
    /// BIOs `CMS_dataInit` sets up from the SignedData's digest algorithms. (CMS_verify does the same
    /// after building certificate stacks and copying the content, which a token does not need: the
    /// chain is validated separately.)
    package static func cmsVerify(
        _ cms: CMSSignedData, signerInfo: OpaquePointer, signer: X509Certificate, content: inout [UInt8]
    ) -> Bool {
        CMS_SignerInfo_set1_signer_cert(signerInfo, signer.pointer)
        // As CMS_verify: the signed attributes' signature, when there are signed attributes (without
        // them, CMS_SignerInfo_verify_content checks the signature over the content digest itself).
        if CMS_signed_get_attr_count(signerInfo) >= 0 {
            guard CMS_SignerInfo_verify(signerInfo) == 1 else { return false }
        }
        return content.withUnsafeMutableBytes { buffer -> Bool in
            guard let memory = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else { return false }
            guard let chain = CMS_dataInit(cms.pointer, memory) else {
                BIO_free(memory)
                return false
            }
            defer { BIO_free_all(chain) }
            // Read the content through the digest BIOs (into scratch space that is thrown away).
            return withUnsafeTemporaryAllocation(byteCount: 1024, alignment: 16) { scratch -> Bool in
                var total = 0
                while true {
                    let read = BIO_read(chain, scratch.baseAddress, Int32(scratch.count))
                    guard read > 0 else { break }
                    total += Int(read)
                }
                guard total == buffer.count else { return false }
                return CMS_SignerInfo_verify_content(signerInfo, chain) == 1
            }
        }
    }

    private static func signingTime(_ signerInfo: OpaquePointer) throws(PaymentTokenError) -> Int {
        let object = OBJ_nid2obj(NID_pkcs9_signingTime)
        var raw = CMS_signed_get0_data_by_OBJ(signerInfo, object, -3, V_ASN1_UTCTIME)
        if raw == nil {
            OpenSSLErrorQueue.clear()
            raw = CMS_signed_get0_data_by_OBJ(signerInfo, object, -3, V_ASN1_GENERALIZEDTIME)
        }
        guard let raw else {
            throw PaymentTokenError(.signatureInvalid, "the signature has no single signingTime attribute")
        }
        let time = raw.assumingMemoryBound(to: ASN1_TIME.self)
        guard ASN1_TIME_check(time) == 1, let seconds = X509Certificate.epochSeconds(time) else {
            throw PaymentTokenError(.signatureInvalid, "the signingTime attribute is not a valid time")
        }
        return seconds
    }

    /// The chain leaf → intermediate → anchor at `time`: the `known` chain validated before for the same
    /// certificates (`key`, their DER), re-checked at `time`, or a validation now, cached. `leaf` is parsed in
    /// the default library context; the intermediate is parsed afresh in it too.
    private func validateChain(
        key: [UInt8], known: ValidatedChain?, leaf: X509Certificate, intermediate: X509Certificate, at time: Int
    )
        throws(PaymentTokenError) -> ValidatedChain
    {
        if let known {
            guard time >= known.notBefore, time < known.notAfter else {
                throw PaymentTokenError(
                    .certificateUntrusted, "a certificate of the chain is not valid at the signing time")
            }
            return known
        }
        let entry = try store.validate(leaf: leaf, intermediate: try Self.parsedAfresh(intermediate), at: time)
        cache.insert(entry, for: key)
        return entry
    }

    /// `certificate` parsed again in the default library context, for validation and signing.
    private static func parsedAfresh(_ certificate: X509Certificate) throws(PaymentTokenError) -> X509Certificate {
        do {
            return try X509Certificate(der: certificate.der)
        } catch {
            throw PaymentTokenError(.certificateUntrusted, "unreadable certificate: \(error)")
        }
    }
}

/// An owned CMS_ContentInfo holding a SignedData.
package final class CMSSignedData {
    package let pointer: OpaquePointer

    /// Parses DER or BER; `context` is the OpenSSL library context the structure is parsed in (and
    /// its algorithms fetched from), nil for the default one.
    package init(der: [UInt8], context: ParsingContext?) throws(PaymentTokenError) {
        let parsed = der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            let end = cursor.map { $0 + buffer.count }
            var cms: OpaquePointer? = nil
            if let context {
                cms = CMS_ContentInfo_new_ex(context.pointer, nil)
                guard cms != nil else { return nil }
            }
            cms = d2i_CMS_ContentInfo(&cms, &cursor, buffer.count)
            if let cms, cursor != end {
                CMS_ContentInfo_free(cms)
                return nil
            }
            return cms
        }
        guard let parsed else {
            OpenSSLErrorQueue.clear()
            throw PaymentTokenError(.malformedToken, "the signature is not a CMS structure")
        }
        pointer = parsed
        guard OBJ_obj2nid(CMS_get0_type(pointer)) == NID_pkcs7_signed else {
            throw PaymentTokenError(.signatureInvalid, "the signature is not CMS SignedData")
        }
        guard CMS_is_detached(pointer) == 1 else {
            throw PaymentTokenError(.signatureInvalid, "the signature is not detached")
        }
    }
    deinit { CMS_ContentInfo_free(pointer) }

    /// The SignerInfo, when there is exactly one.
    package var onlySignerInfo: OpaquePointer? {
        guard let signerInfos = CMS_get0_SignerInfos(pointer), orchard_sk_CMS_SignerInfo_num(signerInfos) == 1 else {
            return nil
        }
        return orchard_sk_CMS_SignerInfo_value(signerInfos, 0)
    }

    /// What the only SignerInfo's signature binds, without the envelope around it; nil without exactly one
    /// SignerInfo.
    package var signatureCore: SignatureCore? {
        guard let signerInfo = onlySignerInfo, let value = CMS_SignerInfo_get0_signature(signerInfo) else { return nil }
        defer { OpenSSLErrorQueue.clear() }
        let attributes = (0..<max(CMS_signed_get_attr_count(signerInfo), 0)).map { index in
            SignedDataSplitter.der { i2d_X509_ATTRIBUTE(CMS_signed_get_attr(signerInfo, index), $0) } ?? []
        }
        return SignatureCore(
            value: Array(UnsafeBufferPointer(start: ASN1_STRING_get0_data(value), count: Int(ASN1_STRING_length(value)))),
            signedAttributes: attributes, certificates: certificates.map(\.der))
    }

    /// The certificates the SignedData carries.
    package var certificates: [X509Certificate] {
        guard let stack = CMS_get1_certs(pointer) else { return [] }
        defer { orchard_sk_X509_pop_free(stack) }
        var result: [X509Certificate] = []
        for index in 0..<orchard_sk_X509_num(stack) {
            if let certificate = orchard_sk_X509_value(stack, index) {
                result.append(X509Certificate(retaining: certificate))
            }
        }
        return result
    }
}

/// What a CMS signature binds: the signature value, the signed attributes (each re-encoded in DER: the signature
/// covers their DER encoding, whatever encoding they came in) and the certificates. Two signatures that differ
/// only where no signature reaches (the versions, the set of digest algorithms, the signer identifier, BER's
/// choices of length and tag encoding) have the same core. The fuzz campaign's forgery oracle compares cores.
package struct SignatureCore: Hashable, Sendable {
    package var value: [UInt8]
    package var signedAttributes: [[UInt8]]
    package var certificates: [[UInt8]]
}

/// A validated chain: its leaf (parsed in the default library context) and the interval (seconds since
/// 1970) in which all three certificates are valid.
struct ValidatedChain: Sendable {
    var leaf: X509Certificate
    var intermediate: X509Certificate
    var notBefore: Int
    var notAfter: Int
    /// The DER of the leaf's IssuerAndSerialNumber (`SEQUENCE { issuer Name, serialNumber INTEGER }`), as a
    /// SignerInfo naming the leaf carries it; empty when OpenSSL cannot encode it.
    var leafSignerIdentifier: [UInt8]

    init(leaf: X509Certificate, intermediate: X509Certificate, notBefore: Int, notAfter: Int) {
        self.leaf = leaf
        self.intermediate = intermediate
        self.notBefore = notBefore
        self.notAfter = notAfter
        leafSignerIdentifier = SignedDataSplitter.issuerAndSerialNumber(of: leaf)
    }
}

/// An OpenSSL library context holding only the "null" provider, for parsing token signatures.
///
/// OpenSSL 3.0 decodes every embedded certificate's public key while parsing, through its decoder
/// framework, which costs several times an ECDSA verification. The signature's certificates are only
/// inspected (marker extensions, issuer and serial); the leaf used for the signature and the chain
/// are parsed separately and cached, so the parse can skip key decoding. Algorithms used by the CMS checks
/// on a structure parsed here resolve through OpenSSL's built-in fallbacks; a failure is confirmed with
/// a parse in the default context before a token is rejected.
// Unchecked: an OSSL_LIB_CTX pointer set in init and only read; OpenSSL library contexts are thread-safe.
package final class ParsingContext: @unchecked Sendable {
    package let pointer: OpaquePointer

    private init?() {
        guard let context = OSSL_LIB_CTX_new() else { return nil }
        guard OSSL_PROVIDER_load(context, "null") != nil else {
            OSSL_LIB_CTX_free(context)
            OpenSSLErrorQueue.clear()
            return nil
        }
        pointer = context
    }

    /// The shared context, or nil when OpenSSL cannot create it (the default context is used then).
    package static let shared: ParsingContext? = ParsingContext()
}

/// An X509_STORE holding only the trust anchor.
// Unchecked: an X509_STORE filled in init and only read after (OpenSSL locks the store internally).
final class TrustStore: @unchecked Sendable {
    let pointer: OpaquePointer
    let anchor: X509Certificate

    init(anchor: X509Certificate) {
        guard let store = X509_STORE_new() else { fatalError("X509_STORE_new failed") }
        X509_STORE_add_cert(store, anchor.pointer)
        self.pointer = store
        self.anchor = anchor
    }
    deinit { X509_STORE_free(pointer) }

    /// Validates leaf → intermediate → anchor at `time`; returns the interval in which all three are valid.
    func validate(
        leaf: X509Certificate, intermediate: X509Certificate, at time: Int
    ) throws(PaymentTokenError)
        -> ValidatedChain
    {
        guard let context = X509_STORE_CTX_new() else {
            throw PaymentTokenError(.certificateUntrusted, "X509_STORE_CTX_new: \(OpenSSLErrorQueue.drain())")
        }
        defer { X509_STORE_CTX_free(context) }
        let untrusted = orchard_sk_X509_new_null()
        defer { orchard_sk_X509_free(untrusted) }
        orchard_sk_X509_push(untrusted, intermediate.pointer)
        guard X509_STORE_CTX_init(context, pointer, leaf.pointer, untrusted) == 1 else {
            throw PaymentTokenError(.certificateUntrusted, "X509_STORE_CTX_init: \(OpenSSLErrorQueue.drain())")
        }
        // The leaf signs, so its keyUsage must allow digitalSignature (RFC 5280 §4.2.1.3); OpenSSL reports all
        // bits when the extension is absent, which restricts nothing. The chain verification does not check it.
        guard X509_get_key_usage(leaf.pointer) & UInt32(KU_DIGITAL_SIGNATURE) != 0 else {
            OpenSSLErrorQueue.clear()
            throw PaymentTokenError(
                .certificateUntrusted, "the signing leaf's keyUsage does not allow digitalSignature")
        }
        X509_VERIFY_PARAM_set_time(X509_STORE_CTX_get0_param(context), time_t(time))
        guard X509_verify_cert(context) == 1 else {
            let code = X509_STORE_CTX_get_error(context)
            let text = X509_verify_cert_error_string(Int(code)).map { String(cString: $0) } ?? "error \(code)"
            OpenSSLErrorQueue.clear()
            throw PaymentTokenError(.certificateUntrusted, "the certificate chain does not verify: \(text)")
        }
        guard let chain = X509_STORE_CTX_get0_chain(context), orchard_sk_X509_num(chain) == 3,
            let built1 = orchard_sk_X509_value(chain, 1), let built2 = orchard_sk_X509_value(chain, 2),
            X509_cmp(built1, intermediate.pointer) == 0, X509_cmp(built2, anchor.pointer) == 0
        else {
            throw PaymentTokenError(.certificateUntrusted, "the chain is not leaf → intermediate → trust anchor")
        }
        var validity = ValidatedChain(leaf: leaf, intermediate: intermediate, notBefore: Int.min, notAfter: Int.max)
        for certificate in [leaf.pointer, intermediate.pointer, anchor.pointer] {
            guard let notBefore = X509Certificate.epochSeconds(X509_get0_notBefore(certificate)),
                let notAfter = X509Certificate.epochSeconds(X509_get0_notAfter(certificate))
            else { throw PaymentTokenError(.certificateUntrusted, "unreadable validity period") }
            validity.notBefore = max(validity.notBefore, notBefore)
            validity.notAfter = min(validity.notAfter, notAfter)
        }
        return validity
    }
}

/// Chains already validated, keyed by certificate bytes; the most recent hit is checked first with one
/// memory comparison (tokens come from a handful of Apple leaves).
final class ChainCache: Sendable {
    private struct Entries {
        var byKey: [[UInt8]: ValidatedChain] = [:]
        var recent: (key: [UInt8], chain: ValidatedChain)?
    }
    private let entries = Locked(Entries())
    private let capacity = 256

    func entry(for key: [UInt8]) -> ValidatedChain? {
        entries.withLock { entries in
            if let recent = entries.recent, recent.key.count == key.count,
                recent.key.withUnsafeBytes({ a in
                    key.withUnsafeBytes { b in memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0 }
                })
            {
                return recent.chain
            }
            guard let chain = entries.byKey[key] else { return nil }
            entries.recent = (key, chain)
            return chain
        }
    }

    var count: Int { entries.withLock { $0.byKey.count } }

    func insert(_ chain: ValidatedChain, for key: [UInt8]) {
        entries.withLock { entries in
            if entries.byKey.count >= capacity { entries.byKey.removeAll(keepingCapacity: true) }
            entries.byKey[key] = chain
            entries.recent = (key, chain)
        }
    }
}
