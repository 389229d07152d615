import COpenSSL
import Foundation

/// An owned OpenSSL memory `BIO`, for PEM and DER input and output.
package final class MemoryBIO {
    package let pointer: OpaquePointer

    /// An empty memory BIO to write into.
    package init() throws(CryptoError) {
        guard let pointer = BIO_new(BIO_s_mem()) else { throw CryptoError.openSSL("BIO_new") }
        self.pointer = pointer
    }

    /// A memory BIO holding a copy of `bytes`, to read from.
    package convenience init<B: ContiguousBytes>(bytes: B) throws(CryptoError) {
        try self.init()
        let written = bytes.withUnsafeBytes { buffer -> Int32 in
            buffer.count == 0 ? 0 : BIO_write(pointer, buffer.baseAddress, Int32(buffer.count))
        }
        guard written == bytes.withUnsafeBytes({ Int32($0.count) }) else { throw CryptoError.openSSL("BIO_write") }
    }

    /// A memory BIO holding the UTF-8 bytes of `text`.
    package convenience init(text: String) throws(CryptoError) {
        try self.init(bytes: Array(text.utf8))
    }

    deinit { BIO_free(pointer) }

    /// Everything written so far.
    package var bytes: [UInt8] {
        var data: UnsafeMutablePointer<CChar>?
        let length = orchard_BIO_get_mem_data(pointer, &data)
        guard let data, length > 0 else { return [] }
        return data.withMemoryRebound(to: UInt8.self, capacity: length) {
            Array(UnsafeBufferPointer(start: $0, count: length))
        }
    }

    /// Everything written so far, as text.
    package var text: String { String(decoding: bytes, as: UTF8.self) }

    /// Everything written so far, moved into a zeroing buffer: the BIO's own copy is overwritten with zeros.
    package func takeSecureBytes() -> SecureBytes {
        var data: UnsafeMutablePointer<CChar>?
        let length = orchard_BIO_get_mem_data(pointer, &data)
        guard let data, length > 0 else { return SecureBytes([UInt8]()) }
        let bytes = SecureBytes(UnsafeRawBufferPointer(start: data, count: length))
        OPENSSL_cleanse(data, length)
        return bytes
    }
}

/// An ASN.1 object identifier parsed once (dotted text), for extension and attribute lookups.
// Unchecked: an OpenSSL ASN1_OBJECT pointer, never changed after init; OpenSSL only reads it.
package final class ASN1ObjectID: @unchecked Sendable {
    package let pointer: OpaquePointer
    /// The dotted form, e.g. "1.2.840.113635.100.6.29".
    package let dotted: String

    package init(_ dotted: String) {
        guard let pointer = OBJ_txt2obj(dotted, 1) else { fatalError("invalid object identifier \(dotted)") }
        self.pointer = pointer
        self.dotted = dotted
    }
    deinit { ASN1_OBJECT_free(pointer) }
}

/// An owned OpenSSL `EVP_PKEY`: an EC or RSA public key or key pair.
///
/// Instances are immutable after creation and safe to share between threads.
// Unchecked: an owned EVP_PKEY pointer, never changed after init; OpenSSL 3 keys are safe to use from several threads.
public final class EVPKey: @unchecked Sendable {
    /// The owned pointer; freed in `deinit`.
    package let pointer: OpaquePointer

    /// Takes ownership of `pointer` (one reference).
    package init(takingOwnershipOf pointer: OpaquePointer) { self.pointer = pointer }
    deinit { EVP_PKEY_free(pointer) }

    /// The key's algorithm family.
    public enum Kind: String, Sendable {
        /// An elliptic-curve key.
        case ec = "EC"
        /// An RSA key.
        case rsa = "RSA"
        /// Anything else.
        case other
    }

    /// Reads a private key from PEM: PKCS#8 (plain or encrypted with `password`), SEC1 "EC PRIVATE KEY" or
    /// PKCS#1 "RSA PRIVATE KEY". Other PEM blocks (e.g. "EC PARAMETERS") before the key are skipped. OpenSSL
    /// reads the PEM in place (a read-only BIO over the buffer): no other copy of it is made.
    public convenience init(privateKeyPEM pem: SecureBytes, password: String? = nil) throws(CryptoError) {
        let key = pem.withUnsafeBytes { buffer -> OpaquePointer? in
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(clamping: buffer.count)) else { return nil }
            defer { BIO_free(bio) }
            guard let password else { return PEM_read_bio_PrivateKey(bio, nil, nil, nil) }
            var passwordBytes = Array(password.utf8CString)
            defer { passwordBytes.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, $0.count) } }
            return passwordBytes.withUnsafeMutableBufferPointer {
                PEM_read_bio_PrivateKey(bio, nil, nil, $0.baseAddress)
            }
        }
        guard let key else {
            throw CryptoError(code: .invalidInput, reason: "not a PEM private key: \(OpenSSLErrorQueue.drain())")
        }
        OpenSSLErrorQueue.clear()
        self.init(takingOwnershipOf: key)
    }

    /// Reads a private key from DER (PKCS#8, SEC1 or PKCS#1).
    public convenience init<B: ContiguousBytes>(privateKeyDER der: B) throws(CryptoError) {
        let key = der.withUnsafeBytes { buffer -> OpaquePointer? in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self)
            return d2i_AutoPrivateKey(nil, &cursor, buffer.count)
        }
        guard let key else {
            throw CryptoError(code: .invalidInput, reason: "not a DER private key: \(OpenSSLErrorQueue.drain())")
        }
        self.init(takingOwnershipOf: key)
    }

    /// Reads a public key from a PEM "PUBLIC KEY" block (SubjectPublicKeyInfo).
    public convenience init(publicKeyPEM pem: String) throws(CryptoError) {
        let bio = try MemoryBIO(text: pem)
        guard let key = PEM_read_bio_PUBKEY(bio.pointer, nil, nil, nil) else {
            throw CryptoError(code: .invalidInput, reason: "not a PEM public key: \(OpenSSLErrorQueue.drain())")
        }
        self.init(takingOwnershipOf: key)
    }

    /// Reads a public key from DER SubjectPublicKeyInfo.
    public convenience init<B: ContiguousBytes>(publicKeyDER der: B) throws(CryptoError) {
        let key = der.withUnsafeBytes { buffer -> OpaquePointer? in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self)
            let end = cursor.map { $0 + buffer.count }
            let key = d2i_PUBKEY(nil, &cursor, buffer.count)
            if let key, cursor != end {
                EVP_PKEY_free(key)
                return nil
            }
            return key
        }
        guard let key else {
            throw CryptoError(code: .invalidInput, reason: "not a DER public key: \(OpenSSLErrorQueue.drain())")
        }
        self.init(takingOwnershipOf: key)
    }

    /// A new EC key pair on the named curve ("P-256", "P-384").
    public static func generateEC(curve: String = "P-256") throws(CryptoError) -> EVPKey {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else {
            throw CryptoError.openSSL("EC keygen context")
        }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_CTX_set_group_name(context, curve) == 1,
            EVP_PKEY_generate(context, &key) == 1, let key
        else { throw CryptoError.openSSL("EC key generation") }
        return EVPKey(takingOwnershipOf: key)
    }

    /// A new RSA key pair with a modulus of `bits` bits.
    public static func generateRSA(bits: Int = 2048) throws(CryptoError) -> EVPKey {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "RSA", nil) else {
            throw CryptoError.openSSL("RSA keygen context")
        }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_CTX_set_rsa_keygen_bits(context, Int32(bits)) == 1,
            EVP_PKEY_generate(context, &key) == 1, let key
        else { throw CryptoError.openSSL("RSA key generation") }
        return EVPKey(takingOwnershipOf: key)
    }

    /// The key's algorithm family.
    public var kind: Kind {
        switch EVP_PKEY_get_base_id(pointer) {
        case EVP_PKEY_EC: .ec
        case EVP_PKEY_RSA: .rsa
        default: .other
        }
    }

    /// The key size in bits (256 for P-256, 2048 for RSA-2048).
    public var bits: Int { Int(EVP_PKEY_get_bits(pointer)) }

    /// The EC curve's name ("prime256v1", "secp384r1"), or nil for other keys.
    public var curveName: String? {
        guard kind == .ec else { return nil }
        var buffer = [CChar](repeating: 0, count: 64)
        var length = 0
        guard EVP_PKEY_get_group_name(pointer, &buffer, buffer.count, &length) == 1 else { return nil }
        return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The public key as DER SubjectPublicKeyInfo.
    public var publicKeyDER: [UInt8] {
        var output: UnsafeMutablePointer<UInt8>?
        let length = i2d_PUBKEY(pointer, &output)
        guard length > 0, let output else { return [] }
        defer { orchard_OPENSSL_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }

    /// The public key as a PEM "PUBLIC KEY" block.
    public var publicKeyPEM: String {
        guard let bio = try? MemoryBIO(), PEM_write_bio_PUBKEY(bio.pointer, pointer) == 1 else { return "" }
        return bio.text
    }

    /// The private key as PKCS#8 PEM ("PRIVATE KEY"), or "ENCRYPTED PRIVATE KEY" (AES-256-CBC, PBKDF2) with a password.
    /// It comes back in a zeroing buffer; OpenSSL's own copy is overwritten with zeros.
    public func privateKeyPEM(password: String? = nil) throws(CryptoError) -> SecureBytes {
        let bio = try MemoryBIO()
        let written: Int32
        if let password {
            var passwordBytes = Array(password.utf8CString)
            written = passwordBytes.withUnsafeMutableBufferPointer { buffer in
                PEM_write_bio_PKCS8PrivateKey(
                    bio.pointer, pointer, EVP_aes_256_cbc(), buffer.baseAddress, Int32(password.utf8.count), nil, nil)
            }
        } else {
            written = PEM_write_bio_PKCS8PrivateKey(bio.pointer, pointer, nil, nil, 0, nil, nil)
        }
        guard written == 1 else { throw CryptoError.openSSL("writing the private key") }
        return bio.takeSecureBytes()
    }

    /// The private key as unencrypted PKCS#8 DER, in a zeroing buffer.
    public func privateKeyDER() throws(CryptoError) -> SecureBytes {
        let bio = try MemoryBIO()
        guard i2d_PKCS8PrivateKey_bio(bio.pointer, pointer, nil, nil, 0, nil, nil) == 1 else {
            throw CryptoError.openSSL("writing the private key")
        }
        return bio.takeSecureBytes()
    }

    /// Whether `other` has the same public key.
    public func hasSamePublicKey(as other: EVPKey) -> Bool {
        let same = EVP_PKEY_eq(pointer, other.pointer) == 1
        OpenSSLErrorQueue.clear()
        return same
    }
}

/// An owned OpenSSL `X509` certificate.
// Unchecked: an owned X509 pointer, never changed after init (its cached extensions are computed at parse time).
public final class X509Certificate: @unchecked Sendable {
    /// The owned pointer; freed in `deinit`.
    package let pointer: OpaquePointer

    /// Takes ownership of `pointer` (one reference).
    package init(takingOwnershipOf pointer: OpaquePointer) { self.pointer = pointer }

    /// Shares `pointer`, taking a new reference to it.
    package init(retaining pointer: OpaquePointer) {
        X509_up_ref(pointer)
        self.pointer = pointer
    }
    deinit { X509_free(pointer) }

    /// Reads the first certificate of PEM text.
    public convenience init(pem: String) throws(CryptoError) {
        let bio = try MemoryBIO(text: pem)
        guard let certificate = PEM_read_bio_X509(bio.pointer, nil, nil, nil) else {
            throw CryptoError(code: .invalidInput, reason: "not a PEM certificate: \(OpenSSLErrorQueue.drain())")
        }
        self.init(takingOwnershipOf: certificate)
    }

    /// Reads a DER certificate (the whole input must be one certificate).
    public convenience init<B: ContiguousBytes>(der: B) throws(CryptoError) {
        let certificate = der.withUnsafeBytes { buffer -> OpaquePointer? in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self)
            let end = cursor.map { $0 + buffer.count }
            let certificate = d2i_X509(nil, &cursor, buffer.count)
            if let certificate, cursor != end {
                X509_free(certificate)
                return nil
            }
            return certificate
        }
        guard let certificate else {
            throw CryptoError(code: .invalidInput, reason: "not a DER certificate: \(OpenSSLErrorQueue.drain())")
        }
        self.init(takingOwnershipOf: certificate)
    }

    /// Reads a certificate in PEM or DER, whichever `bytes` holds (an Apple `.cer` file is DER).
    public static func load(_ bytes: [UInt8]) throws(CryptoError) -> X509Certificate {
        if bytes.starts(with: Array("-----BEGIN".utf8))
            || String(decoding: bytes.prefix(4096), as: UTF8.self).contains("-----BEGIN")
        {
            return try X509Certificate(pem: String(decoding: bytes, as: UTF8.self))
        }
        return try X509Certificate(der: bytes)
    }

    /// Every certificate in PEM text, in order.
    public static func all(pem: String) throws(CryptoError) -> [X509Certificate] {
        let bio = try MemoryBIO(text: pem)
        var result: [X509Certificate] = []
        while let certificate = PEM_read_bio_X509(bio.pointer, nil, nil, nil) {
            result.append(X509Certificate(takingOwnershipOf: certificate))
        }
        OpenSSLErrorQueue.clear()
        return result
    }

    /// The DER encoding.
    public var der: [UInt8] {
        var output: UnsafeMutablePointer<UInt8>?
        let length = i2d_X509(pointer, &output)
        guard length > 0, let output else { return [] }
        defer { orchard_OPENSSL_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }

    /// The PEM encoding ("CERTIFICATE").
    public var pem: String {
        guard let bio = try? MemoryBIO(), PEM_write_bio_X509(bio.pointer, pointer) == 1 else { return "" }
        return bio.text
    }

    /// The subject as RFC 2253 text, e.g. "CN=Apple Root CA - G3,OU=…".
    public var subject: String { Self.text(of: X509_get_subject_name(pointer)) }

    /// The issuer as RFC 2253 text.
    public var issuer: String { Self.text(of: X509_get_issuer_name(pointer)) }

    /// The value of the subject's first entry with the short name `field` ("CN", "UID", "O" …).
    public func subjectField(_ field: String) -> String? {
        guard let name = X509_get_subject_name(pointer) else { return nil }
        let nid = OBJ_txt2nid(field)
        guard nid != NID_undef else { return nil }
        let index = X509_NAME_get_index_by_NID(name, nid, -1)
        guard index >= 0, let entry = X509_NAME_get_entry(name, index), let data = X509_NAME_ENTRY_get_data(entry)
        else { return nil }
        var utf8: UnsafeMutablePointer<UInt8>?
        let length = ASN1_STRING_to_UTF8(&utf8, data)
        guard length >= 0, let utf8 else { return nil }
        defer { orchard_OPENSSL_free(utf8) }
        return String(decoding: UnsafeBufferPointer(start: utf8, count: Int(length)), as: UTF8.self)
    }

    /// The start of the validity period.
    public var notBefore: Date {
        Date(timeIntervalSince1970: TimeInterval(Self.epochSeconds(X509_get0_notBefore(pointer)) ?? 0))
    }

    /// The end of the validity period.
    public var notAfter: Date {
        Date(timeIntervalSince1970: TimeInterval(Self.epochSeconds(X509_get0_notAfter(pointer)) ?? 0))
    }

    /// The serial number in uppercase hex.
    public var serialNumberHex: String {
        guard let serial = X509_get0_serialNumber(pointer), let number = ASN1_INTEGER_to_BN(serial, nil) else {
            return ""
        }
        defer { BN_free(number) }
        guard let hex = BN_bn2hex(number) else { return "" }
        defer { orchard_OPENSSL_free(hex) }
        return String(cString: hex)
    }

    /// The SHA-256 fingerprint of the DER encoding, uppercase hex without separators.
    public var sha256Fingerprint: String { Hex.encode(SHA256.hash(der)).uppercased() }

    /// The certificate's public key.
    public func publicKey() throws(CryptoError) -> EVPKey {
        guard let key = X509_get_pubkey(pointer) else { throw CryptoError.openSSL("certificate public key") }
        return EVPKey(takingOwnershipOf: key)
    }

    /// Whether the certificate has an extension with the object identifier `oid`.
    package func hasExtension(_ oid: ASN1ObjectID) -> Bool { X509_get_ext_by_OBJ(pointer, oid.pointer, -1) >= 0 }

    /// The `extnValue` octets of the extension `oid`, or nil when absent.
    package func extensionValue(_ oid: ASN1ObjectID) -> [UInt8]? {
        let index = X509_get_ext_by_OBJ(pointer, oid.pointer, -1)
        guard index >= 0, let ext = X509_get_ext(pointer, index), let data = X509_EXTENSION_get_data(ext) else {
            return nil
        }
        let length = Int(ASN1_STRING_length(data))
        guard length > 0, let bytes = ASN1_STRING_get0_data(data) else { return [] }
        return Array(UnsafeBufferPointer(start: bytes, count: length))
    }

    /// The `extnValue` octets of the extension with dotted object identifier `oid`, or nil when absent.
    public func extensionValue(oid: String) -> [UInt8]? { extensionValue(ASN1ObjectID(oid)) }

    /// Whether `key` is the private key of this certificate's public key.
    public func matches(privateKey key: EVPKey) -> Bool {
        let matches = X509_check_private_key(pointer, key.pointer) == 1
        OpenSSLErrorQueue.clear()
        return matches
    }

    static func text(of name: OpaquePointer?) -> String {
        guard let name, let bio = try? MemoryBIO() else { return "" }
        guard X509_NAME_print_ex(bio.pointer, name, 0, orchard_XN_FLAG_RFC2253_UTF8()) >= 0 else { return "" }
        return bio.text
    }

    /// Seconds since 1970 of an ASN1_TIME, or nil when it cannot be read.
    package static func epochSeconds(_ time: UnsafePointer<ASN1_TIME>?) -> Int? {
        guard let time else { return nil }
        var parts = tm()
        guard ASN1_TIME_to_tm(time, &parts) == 1 else { return nil }
        return Int(timegm(&parts))
    }
}

/// PKCS#10 certificate signing requests.
public enum CertificateSigningRequest {
    /// A CSR in PEM for `key`, with the subject's entries in order (e.g. `[("CN", "merchant.com.example")]`),
    /// signed with SHA-256.
    public static func pem(key: EVPKey, subject: [(String, String)]) throws(CryptoError) -> String {
        guard let request = X509_REQ_new() else { throw CryptoError.openSSL("X509_REQ_new") }
        defer { X509_REQ_free(request) }
        guard X509_REQ_set_version(request, 0) == 1, let name = X509_REQ_get_subject_name(request) else {
            throw CryptoError.openSSL("CSR version")
        }
        for (field, value) in subject {
            guard X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8, value, -1, -1, 0) == 1 else {
                throw CryptoError(
                    code: .invalidInput, reason: "bad subject entry \(field): \(OpenSSLErrorQueue.drain())")
            }
        }
        guard X509_REQ_set_pubkey(request, key.pointer) == 1, X509_REQ_sign(request, key.pointer, EVP_sha256()) > 0
        else {
            throw CryptoError.openSSL("signing the CSR")
        }
        let bio = try MemoryBIO()
        guard PEM_write_bio_X509_REQ(bio.pointer, request) == 1 else { throw CryptoError.openSSL("writing the CSR") }
        return bio.text
    }

    /// The public key of a PEM CSR whose self-signature verifies, with its subject text.
    public static func publicKey(csrPEM: String) throws(CryptoError) -> (key: EVPKey, subject: String) {
        let bio = try MemoryBIO(text: csrPEM)
        guard let request = PEM_read_bio_X509_REQ(bio.pointer, nil, nil, nil) else {
            throw CryptoError(code: .invalidInput, reason: "not a PEM CSR: \(OpenSSLErrorQueue.drain())")
        }
        defer { X509_REQ_free(request) }
        guard let key = X509_REQ_get_pubkey(request) else { throw CryptoError.openSSL("CSR public key") }
        let wrapped = EVPKey(takingOwnershipOf: key)
        guard X509_REQ_verify(request, key) == 1 else {
            throw CryptoError(
                code: .invalidInput, reason: "the CSR's signature does not verify: \(OpenSSLErrorQueue.drain())")
        }
        return (wrapped, X509Certificate.text(of: X509_REQ_get_subject_name(request)))
    }
}

/// PKCS#12 (`.p12`) bundles of a private key and its certificate.
public enum PKCS12Bundle {
    /// A PKCS#12 DER bundle of `key` and `certificate` (and `chain`), protected by `password`
    /// (OpenSSL 3 defaults: AES-256-CBC, PBKDF2, SHA-256 MAC).
    public static func make(
        key: EVPKey, certificate: X509Certificate, chain: [X509Certificate] = [], password: String, name: String? = nil
    ) throws(CryptoError) -> [UInt8] {
        let stack = orchard_sk_X509_new_null()
        defer { orchard_sk_X509_free(stack) }
        for extra in chain { orchard_sk_X509_push(stack, extra.pointer) }
        guard let bundle = PKCS12_create(password, name, key.pointer, certificate.pointer, stack, 0, 0, 0, 0, 0) else {
            throw CryptoError.openSSL("PKCS12_create")
        }
        defer { PKCS12_free(bundle) }
        var output: UnsafeMutablePointer<UInt8>?
        let length = i2d_PKCS12(bundle, &output)
        guard length > 0, let output else { throw CryptoError.openSSL("i2d_PKCS12") }
        defer { orchard_OPENSSL_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }

    /// The private key, certificate and extra certificates of a PKCS#12 DER bundle.
    ///
    /// Bundles exported by older tools (Keychain Access, Java keystores) encrypt with RC2 or 3DES, which
    /// OpenSSL 3 keeps in its "legacy" provider; when a bundle cannot be opened otherwise, that provider is
    /// loaded into the default library context (alongside the default provider) and the bundle is tried again.
    public static func parse(
        _ der: [UInt8], password: String
    ) throws(CryptoError) -> (
        key: EVPKey, certificate: X509Certificate, chain: [X509Certificate]
    ) {
        do {
            return try parseOnce(der, password: password)
        } catch {
            guard LegacyProvider.load() else { throw error }
            return try parseOnce(der, password: password)
        }
    }

    private static func parseOnce(
        _ der: [UInt8], password: String
    ) throws(CryptoError) -> (
        key: EVPKey, certificate: X509Certificate, chain: [X509Certificate]
    ) {
        let bundle = der.withUnsafeBytes { buffer -> OpaquePointer? in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self)
            return d2i_PKCS12(nil, &cursor, buffer.count)
        }
        guard let bundle else {
            throw CryptoError(code: .invalidInput, reason: "not a PKCS#12 bundle: \(OpenSSLErrorQueue.drain())")
        }
        defer { PKCS12_free(bundle) }
        var key: OpaquePointer?
        var certificate: OpaquePointer?
        var chain: OpaquePointer?
        guard PKCS12_parse(bundle, password, &key, &certificate, &chain) == 1 else {
            throw CryptoError(
                code: .invalidInput, reason: "cannot open the PKCS#12 bundle: \(OpenSSLErrorQueue.drain())")
        }
        var extras: [X509Certificate] = []
        if let chain {
            for index in 0..<orchard_sk_X509_num(chain) {
                if let item = orchard_sk_X509_value(chain, index) { extras.append(X509Certificate(retaining: item)) }
            }
            orchard_sk_X509_pop_free(chain)
        }
        guard let key, let certificate else {
            if let key { EVP_PKEY_free(key) }
            if let certificate { X509_free(certificate) }
            throw CryptoError(code: .invalidInput, reason: "the PKCS#12 bundle lacks a key or a certificate")
        }
        return (EVPKey(takingOwnershipOf: key), X509Certificate(takingOwnershipOf: certificate), extras)
    }
}

/// OpenSSL's "legacy" provider (RC2, DES, …), loaded on demand into the default library context.
enum LegacyProvider {
    private static let loaded: Bool = {
        // Keep the default provider as a fallback: loading a provider explicitly would otherwise disable it.
        let provider = OSSL_PROVIDER_try_load(nil, "legacy", 1)
        OpenSSLErrorQueue.clear()
        return provider != nil
    }()

    /// Loads the provider once; whether it is available.
    static func load() -> Bool { loaded }
}
