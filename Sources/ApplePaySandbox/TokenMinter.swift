import ApplePayToken
import COpenSSL
import Foundation
import OrchardCrypto
import OrchardJSON

/// What to put in a minted token.
public struct MintRequest: Sendable {
    /// The sandbox's default card number: a Visa test DPAN (BIN 476112, last four 0492) that the sandbox
    /// acquirer approves.
    public static let sandboxVisaPAN = SandboxTestCard.visaCredit.pan

    /// EC_v1 (the merchant certificate must hold a P-256 key) or RSA_v1 (an RSA key).
    public var version: PaymentTokenVersion = .ecV1
    /// The merchant's Payment Processing certificate (PEM).
    public var merchantCertificatePEM: String
    /// The merchant identifier, when the certificate lacks extension 1.2.840.113635.100.6.32.
    public var merchantIdentifier: String?
    /// The device PAN.
    public var pan: String = MintRequest.sandboxVisaPAN
    /// The expiration date, YYMMDD.
    public var expiration: String = "291231"
    /// The amount in minor units.
    public var amount: Int64 = 100
    /// The ISO 4217 numeric currency code ("901" TWD, "840" USD …).
    public var currencyCode: String = "901"
    /// The online payment cryptogram (base64).
    public var cryptogram: String = "AgAAAAAAAAAAAAAAAAAAAAAAAAA="
    /// The ECI indicator, or nil to omit it.
    public var eci: String? = "7"
    /// The cardholder's name, or nil to omit it.
    public var cardholderName: String?
    /// The device manufacturer identifier.
    public var deviceManufacturerIdentifier: String = "040010030273"
    /// When set, an "EMV" token carrying this emvData instead of a 3-D Secure cryptogram.
    public var emvData: String?
    /// With ``emvData``: the encrypted PIN data (hex), if any.
    public var encryptedPINData: String?
    /// Further plaintext fields (kept as strings), as merchant tokens carry.
    public var extraFields: [String: String] = [:]
    /// The CMS signingTime.
    public var signingTime: Date
    /// `header.applicationData` (hex), or nil.
    public var applicationData: String?
    /// The transaction identifier (hex); random 32 bytes when nil.
    public var transactionIdentifier: String?
    /// The card network.
    public var network: String = "Visa"
    /// The card type.
    public var type: String = "debit"
    /// The display name; "<network> <last four>" when nil.
    public var displayName: String?

    // MARK: Test knobs

    /// Retries the ephemeral key until the ECDH shared secret starts with a zero byte (EC_v1).
    public var forceLeadingZeroSharedSecret = false
    /// Encrypts these bytes instead of the payment data JSON (e.g. non-JSON plaintext).
    public var plaintextOverride: [UInt8]?
    /// How the SignerInfo names the signing leaf.
    public var signerIdentifier: SignerIdentifier = .issuerAndSerialNumber
    /// A deliberate defect, for rejection tests.
    public var tamper: Tamper = .none

    /// How a SignerInfo names its signer (RFC 5652 §5.3).
    public enum SignerIdentifier: Sendable, Hashable {
        /// The leaf's issuer and serial number, in a version-1 SignerInfo, as Apple signs.
        case issuerAndSerialNumber
        /// The leaf's subjectKeyIdentifier, in a version-3 SignerInfo: valid CMS, which Apple does not use.
        case subjectKeyIdentifier
    }

    /// Deliberate defects of a minted token.
    public enum Tamper: Sendable, Hashable {
        /// A well-formed token.
        case none
        /// Flips a byte of the ciphertext (or its tag) before signing: the signature holds, decryption fails.
        case flipCiphertextBeforeSigning(byteFromEnd: Int)
        /// Flips a byte of the ciphertext after signing: the signature fails.
        case flipCiphertextAfterSigning
        /// Signs with a foreign key and certificate while the valid leaf and intermediate sit beside it.
        case foreignSigner
        /// Encodes the ephemeral public key with a point that is not on P-256.
        case offCurveEphemeralKey
        /// Encodes the ephemeral public key with explicit P-256 parameters instead of the named curve (the
        /// same point and curve, spelt out; RFC 5480 §2.1.1 allows only the name).
        case explicitCurveEphemeralKey
        /// Signs with the leaf over a SHA-1 digest (digestAlgorithm sha1, ecdsa-with-SHA1) instead of SHA-256.
        case sha1Digest
        /// Signs a contentType attribute of id-ct-TSTInfo while the eContentType stays id-data (RFC 5652 §11.1
        /// requires them equal).
        case mismatchedContentTypeAttribute
        /// Names the signer by the intermediate's subjectKeyIdentifier (a version-3 SignerInfo) while the leaf
        /// signs; the identifier is not covered by the signature.
        case signerKeyIdentifierOfIntermediate
    }

    /// A request with defaults for everything but the merchant certificate and the signing time.
    public init(version: PaymentTokenVersion = .ecV1, merchantCertificatePEM: String, signingTime: Date) {
        self.version = version
        self.merchantCertificatePEM = merchantCertificatePEM
        self.signingTime = signingTime
    }
}

/// Mints Apple Pay tokens signed by a ``SandboxPKI``, in exactly Apple's format: the token JSON with
/// `paymentData` (`data`, `signature` as a detached CMS SignedData with signingTime, `header`, `version`),
/// `paymentMethod` and `transactionIdentifier`.
public struct TokenMinter: Sendable {
    /// The PKI whose leaf signs.
    public let pki: SandboxPKI

    /// A minter signing with `pki`'s leaf.
    public init(pki: SandboxPKI) { self.pki = pki }

    /// The token JSON.
    public func mint(_ request: MintRequest) throws -> Data {
        let certificate = try X509Certificate(pem: request.merchantCertificatePEM)
        let merchantKey = try certificate.publicKey()
        var plaintext = request.plaintextOverride ?? Self.paymentDataJSON(request)
        defer { SecureBytes.zero(&plaintext) }

        var header: [JSONMember] = []
        var ciphertext: [UInt8]
        var keyMaterial: [UInt8]
        switch request.version {
        case .ecV1:
            guard merchantKey.kind == .ec else {
                throw MintError("EC_v1 needs a merchant certificate with an EC P-256 key")
            }
            let partyV: [UInt8]
            if let identifier = request.merchantIdentifier {
                partyV = OrchardCrypto.SHA256.hash(Array(identifier.utf8))
            } else if let hash = MerchantKey.merchantIdentifierHash(of: certificate) {
                partyV = hash
            } else {
                throw MintError("the merchant certificate has no merchant identifier; give one")
            }
            var ephemeral = try EVPKey.generateEC(curve: "P-256")
            var secret = try PaymentTokenDecryptor.ecdh(privateKey: ephemeral, peerSPKI: merchantKey.publicKeyDER)
            var attempts = 1
            while request.forceLeadingZeroSharedSecret && secret[0] != 0 {
                guard attempts < 100_000 else { throw MintError("no leading-zero shared secret found") }
                ephemeral = try EVPKey.generateEC(curve: "P-256")
                secret = try PaymentTokenDecryptor.ecdh(privateKey: ephemeral, peerSPKI: merchantKey.publicKeyDER)
                attempts += 1
            }
            var key = PaymentTokenDecryptor.deriveKey(sharedSecret: secret, partyV: partyV)
            SecureBytes.zero(&secret)
            defer { SecureBytes.zero(&key) }
            ciphertext = try AESGCM.seal(plaintext, key: key, nonce: [UInt8](repeating: 0, count: 16))
            if request.tamper == .explicitCurveEphemeralKey {
                guard
                    EVP_PKEY_set_utf8_string_param(
                        ephemeral.pointer, OSSL_PKEY_PARAM_EC_ENCODING, OSSL_PKEY_EC_ENCODING_EXPLICIT) == 1
                else { throw CryptoError.openSSL("explicit curve encoding") }
            }
            keyMaterial = ephemeral.publicKeyDER
            if request.tamper == .offCurveEphemeralKey {
                // Change the point's y-coordinate: the encoding stays well-formed, the point leaves the curve.
                keyMaterial[keyMaterial.count - 1] ^= 0x01
            }
            header.append(JSONMember("ephemeralPublicKey", .string(Data(keyMaterial).base64EncodedString())))
        case .rsaV1:
            guard merchantKey.kind == .rsa else {
                throw MintError("RSA_v1 needs a merchant certificate with an RSA key")
            }
            var key = try SecureRandom.bytes(16)
            defer { SecureBytes.zero(&key) }
            ciphertext = try AESGCM.seal(plaintext, key: key, nonce: [UInt8](repeating: 0, count: 16))
            keyMaterial = try Self.wrap(key, for: merchantKey)
            header.append(JSONMember("wrappedKey", .string(Data(keyMaterial).base64EncodedString())))
        }
        if case .flipCiphertextBeforeSigning(let fromEnd) = request.tamper {
            ciphertext[ciphertext.count - 1 - min(max(fromEnd, 0), ciphertext.count - 1)] ^= 0x01
        }

        let transactionHex = try (request.transactionIdentifier ?? Hex.encode(SecureRandom.bytes(32))).lowercased()
        guard let transactionBytes = Hex.decode(transactionHex), !transactionBytes.isEmpty else {
            throw MintError("the transaction identifier is not hex")
        }
        var applicationBytes: [UInt8] = []
        if let applicationData = request.applicationData {
            guard let bytes = Hex.decode(applicationData) else { throw MintError("applicationData is not hex") }
            applicationBytes = bytes
        }
        let signedContent = keyMaterial + ciphertext + transactionBytes + applicationBytes
        let signature = try sign(
            signedContent, at: request.signingTime, signerIdentifier: request.signerIdentifier, tamper: request.tamper)
        if request.tamper == .flipCiphertextAfterSigning { ciphertext[0] ^= 0x01 }

        header.append(
            JSONMember(
                "publicKeyHash",
                .string(Data(OrchardCrypto.SHA256.hash(merchantKey.publicKeyDER)).base64EncodedString())))
        header.append(JSONMember("transactionId", .string(transactionHex)))
        if let applicationData = request.applicationData {
            header.insert(JSONMember("applicationData", .string(applicationData.lowercased())), at: 0)
        }
        let paymentData = JSONValue.object([
            JSONMember("data", .string(Data(ciphertext).base64EncodedString())),
            JSONMember("signature", .string(Data(signature).base64EncodedString())),
            JSONMember("header", .object(header)),
            JSONMember("version", .string(request.version.rawValue)),
        ])
        let token = JSONValue.object([
            JSONMember("paymentData", paymentData),
            JSONMember(
                "paymentMethod",
                .object([
                    JSONMember(
                        "displayName", .string(request.displayName ?? "\(request.network) \(request.pan.suffix(4))")),
                    JSONMember("network", .string(request.network)),
                    JSONMember("type", .string(request.type)),
                ])),
            JSONMember("transactionIdentifier", .string(transactionHex.uppercased())),
        ])
        return Data(token.serialized)
    }

    /// Apple's payment data JSON for `request`.
    static func paymentDataJSON(_ request: MintRequest) -> [UInt8] {
        var members = [
            JSONMember("applicationPrimaryAccountNumber", .string(request.pan)),
            JSONMember("applicationExpirationDate", .string(request.expiration)),
            JSONMember("currencyCode", .string(request.currencyCode)),
            JSONMember("transactionAmount", .number(String(request.amount))),
        ]
        if let name = request.cardholderName { members.append(JSONMember("cardholderName", .string(name))) }
        members.append(JSONMember("deviceManufacturerIdentifier", .string(request.deviceManufacturerIdentifier)))
        if let emv = request.emvData {
            members.append(JSONMember("paymentDataType", .string("EMV")))
            var details = [JSONMember("emvData", .string(emv))]
            if let pin = request.encryptedPINData { details.append(JSONMember("encryptedPINData", .string(pin))) }
            members.append(JSONMember("paymentData", .object(details)))
        } else {
            members.append(JSONMember("paymentDataType", .string("3DSecure")))
            var details = [JSONMember("onlinePaymentCryptogram", .string(request.cryptogram))]
            if let eci = request.eci { details.append(JSONMember("eciIndicator", .string(eci))) }
            members.append(JSONMember("paymentData", .object(details)))
        }
        for key in request.extraFields.keys.sorted() {
            members.append(JSONMember(key, .string(request.extraFields[key]!)))
        }
        return JSONValue.object(members).serialized
    }

    /// RSA-OAEP (SHA-256, MGF1-SHA-256) wrapping.
    static func wrap(_ key: [UInt8], for publicKey: EVPKey) throws -> [UInt8] {
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, publicKey.pointer, nil) else {
            throw CryptoError.openSSL("RSA context")
        }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_encrypt_init(context) == 1, EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_OAEP_PADDING) == 1,
            EVP_PKEY_CTX_set_rsa_oaep_md(context, EVP_sha256()) == 1,
            EVP_PKEY_CTX_set_rsa_mgf1_md(context, EVP_sha256()) == 1
        else { throw CryptoError.openSSL("RSA-OAEP setup") }
        var length = 0
        guard EVP_PKEY_encrypt(context, nil, &length, key, key.count) == 1 else {
            throw CryptoError.openSSL("RSA-OAEP")
        }
        var output = [UInt8](repeating: 0, count: length)
        guard EVP_PKEY_encrypt(context, &output, &length, key, key.count) == 1 else {
            throw CryptoError.openSSL("RSA-OAEP")
        }
        return Array(output.prefix(length))
    }

    /// A detached CMS SignedData over `content` by the PKI's leaf, with signingTime `time` and the
    /// leaf and intermediate certificates; DER. `tamper` applies the signature's defects.
    func sign(
        _ content: [UInt8], at time: Date, signerIdentifier: MintRequest.SignerIdentifier, tamper: MintRequest.Tamper
    ) throws -> [UInt8] {
        let foreign = tamper == .foreignSigner
        var signerKey = pki.leafKey
        var signerCertificate = pki.leaf
        if foreign {
            signerKey = try EVPKey.generateEC(curve: "P-256")
            signerCertificate = try CertificateIssuer.issue(
                subject: [("CN", "Foreign Signer")], publicKey: signerKey, issuer: nil, issuerKey: signerKey,
                notBefore: time.addingTimeInterval(-86400), notAfter: time.addingTimeInterval(86400), isCA: false,
                keyUsage: "digitalSignature")
        }
        let flags = UInt32(CMS_DETACHED | CMS_BINARY | CMS_PARTIAL | CMS_NOSMIMECAP)
        let keyIdentifier = signerIdentifier == .subjectKeyIdentifier || tamper == .signerKeyIdentifierOfIntermediate
        guard let cms = CMS_sign(nil, nil, nil, nil, flags) else { throw CryptoError.openSSL("CMS_sign") }
        defer { CMS_ContentInfo_free(cms) }
        if foreign { CMS_add1_cert(cms, pki.leaf.pointer) }
        guard
            let signerInfo = CMS_add1_signer(
                cms, signerCertificate.pointer, signerKey.pointer, tamper == .sha1Digest ? EVP_sha1() : EVP_sha256(),
                flags | (keyIdentifier ? UInt32(CMS_USE_KEYID) : 0))
        else {
            throw CryptoError.openSSL("CMS_add1_signer")
        }
        // OpenSSL signs the eContentType as the contentType attribute: sign another type, then restore id-data.
        let mismatchedContentType = tamper == .mismatchedContentTypeAttribute
        if mismatchedContentType, CMS_set1_eContentType(cms, OBJ_nid2obj(NID_id_smime_ct_TSTInfo)) != 1 {
            throw CryptoError.openSSL("CMS_set1_eContentType")
        }
        guard let signingTime = ASN1_TIME_set(nil, time_t(time.timeIntervalSince1970)) else {
            throw CryptoError.openSSL("ASN1_TIME_set")
        }
        defer { ASN1_STRING_free(signingTime) }
        guard
            CMS_signed_add1_attr_by_NID(
                signerInfo, NID_pkcs9_signingTime, ASN1_STRING_type(signingTime), signingTime, -1) == 1
        else { throw CryptoError.openSSL("signingTime") }
        guard CMS_add1_cert(cms, pki.intermediate.pointer) == 1 else { throw CryptoError.openSSL("CMS_add1_cert") }
        let finished = content.withUnsafeBytes { buffer -> Int32 in
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else { return 0 }
            defer { BIO_free(bio) }
            return CMS_final(cms, bio, nil, flags)
        }
        guard finished == 1 else { throw CryptoError.openSSL("CMS_final") }
        if mismatchedContentType, CMS_set1_eContentType(cms, OBJ_nid2obj(NID_pkcs7_data)) != 1 {
            throw CryptoError.openSSL("CMS_set1_eContentType")
        }
        if tamper == .signerKeyIdentifierOfIntermediate {
            var keyID: UnsafeMutablePointer<ASN1_OCTET_STRING>?
            guard CMS_SignerInfo_get0_signer_id(signerInfo, &keyID, nil, nil) == 1, let keyID,
                let intermediateKeyID = X509_get0_subject_key_id(pki.intermediate.pointer),
                ASN1_STRING_set(keyID, ASN1_STRING_get0_data(intermediateKeyID), ASN1_STRING_length(intermediateKeyID))
                    == 1
            else { throw CryptoError.openSSL("signer key identifier") }
        }
        var output: UnsafeMutablePointer<UInt8>?
        let length = i2d_CMS_ContentInfo(cms, &output)
        guard length > 0, let output else { throw CryptoError.openSSL("i2d_CMS_ContentInfo") }
        defer { orchard_OPENSSL_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }
}

/// Why a token could not be minted.
public struct MintError: Error, CustomStringConvertible {
    /// What went wrong.
    public var description: String
    init(_ description: String) { self.description = description }
}
