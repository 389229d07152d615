import COpenSSL
import Foundation
import OrchardCrypto

/// Issues X.509 certificates for the sandbox PKI with OpenSSL.
enum CertificateIssuer {
    /// A custom extension: its dotted OID, DER value and criticality.
    struct CustomExtension {
        var oid: String
        var value: [UInt8]
        var critical = false
    }

    /// The DER of ASN.1 NULL, the value of Apple's marker extensions.
    static let asn1Null: [UInt8] = [0x05, 0x00]

    /// The DER of a UTF8String.
    static func utf8String(_ text: String) throws -> [UInt8] {
        guard let string = ASN1_STRING_type_new(V_ASN1_UTF8STRING) else {
            throw CryptoError.openSSL("ASN1_STRING_type_new")
        }
        defer { ASN1_STRING_free(string) }
        let bytes = Array(text.utf8)
        guard ASN1_STRING_set(string, bytes, Int32(bytes.count)) == 1 else {
            throw CryptoError.openSSL("ASN1_STRING_set")
        }
        var output: UnsafeMutablePointer<UInt8>?
        let length = i2d_ASN1_UTF8STRING(string, &output)
        guard length > 0, let output else { throw CryptoError.openSSL("i2d_ASN1_UTF8STRING") }
        defer { orchard_OPENSSL_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }

    /// A certificate for `publicKey` with `subject`, signed by `issuerKey` (self-signed when `issuer` is nil).
    static func issue(
        subject: [(String, String)], publicKey: EVPKey, issuer: X509Certificate?, issuerKey: EVPKey,
        notBefore: Date, notAfter: Date, isCA: Bool, pathLength: Int? = nil, keyUsage: String,
        extensions: [CustomExtension] = [], digest: OpaquePointer? = EVP_sha256()
    ) throws -> X509Certificate {
        guard let certificate = X509_new() else { throw CryptoError.openSSL("X509_new") }
        let result = X509Certificate(takingOwnershipOf: certificate)
        guard X509_set_version(certificate, 2) == 1 else { throw CryptoError.openSSL("X509_set_version") }

        // A random positive 63-bit serial number.
        var serialBytes = try SecureRandom.bytes(8)
        serialBytes[0] &= 0x7F
        serialBytes[0] |= 0x01
        guard let serial = BN_bin2bn(serialBytes, Int32(serialBytes.count), nil) else {
            throw CryptoError.openSSL("BN_bin2bn")
        }
        defer { BN_free(serial) }
        guard BN_to_ASN1_INTEGER(serial, X509_get_serialNumber(certificate)) != nil else {
            throw CryptoError.openSSL("serial number")
        }

        guard ASN1_TIME_set(X509_getm_notBefore(certificate), time_t(notBefore.timeIntervalSince1970)) != nil,
            ASN1_TIME_set(X509_getm_notAfter(certificate), time_t(notAfter.timeIntervalSince1970)) != nil
        else { throw CryptoError.openSSL("validity") }

        guard let name = X509_get_subject_name(certificate) else { throw CryptoError.openSSL("subject") }
        for (field, value) in subject {
            guard X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8, value, -1, -1, 0) == 1 else {
                throw CryptoError.openSSL("subject entry \(field)")
            }
        }
        let issuerName = issuer.map { X509_get_subject_name($0.pointer) } ?? name
        guard X509_set_issuer_name(certificate, issuerName) == 1, X509_set_pubkey(certificate, publicKey.pointer) == 1
        else {
            throw CryptoError.openSSL("issuer or public key")
        }

        var context = X509V3_CTX()
        orchard_X509V3_set_ctx_nodb(&context)
        X509V3_set_ctx(&context, issuer?.pointer ?? certificate, certificate, nil, nil, 0)
        var standard: [(Int32, String)] = [
            (
                NID_basic_constraints,
                isCA ? "critical,CA:TRUE" + (pathLength.map { ",pathlen:\($0)" } ?? "") : "critical,CA:FALSE"
            ),
            (NID_key_usage, "critical," + keyUsage),
            (NID_subject_key_identifier, "hash"),
        ]
        if issuer != nil { standard.append((NID_authority_key_identifier, "keyid:always")) }
        for (nid, value) in standard {
            guard let ext = X509V3_EXT_conf_nid(nil, &context, nid, value) else {
                throw CryptoError.openSSL("extension \(nid)")
            }
            defer { X509_EXTENSION_free(ext) }
            guard X509_add_ext(certificate, ext, -1) == 1 else { throw CryptoError.openSSL("X509_add_ext") }
        }
        for custom in extensions {
            let object = ASN1ObjectID(custom.oid)
            guard let octets = ASN1_OCTET_STRING_new() else { throw CryptoError.openSSL("ASN1_OCTET_STRING_new") }
            defer { ASN1_OCTET_STRING_free(octets) }
            guard ASN1_OCTET_STRING_set(octets, custom.value, Int32(custom.value.count)) == 1,
                let ext = X509_EXTENSION_create_by_OBJ(nil, object.pointer, custom.critical ? 1 : 0, octets)
            else { throw CryptoError.openSSL("extension \(custom.oid)") }
            defer { X509_EXTENSION_free(ext) }
            guard X509_add_ext(certificate, ext, -1) == 1 else { throw CryptoError.openSSL("X509_add_ext") }
        }
        guard X509_sign(certificate, issuerKey.pointer, digest) > 0 else { throw CryptoError.openSSL("X509_sign") }
        return result
    }
}
