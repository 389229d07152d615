import COpenSSL
import Foundation

/// An owned OpenSSL `EVP_MD_CTX` for one signature or verification; freed in `deinit`.
final class DigestSignatureContext {
    /// The owned pointer.
    let pointer: OpaquePointer

    init() throws(CryptoError) {
        guard let pointer = EVP_MD_CTX_new() else { throw CryptoError.openSSL("digest context") }
        self.pointer = pointer
    }
    deinit { EVP_MD_CTX_free(pointer) }
}

/// SHA256withRSA (RSASSA-PKCS1-v1_5 with SHA-256) over a message's exact bytes, as Java's `SHA256WithRSA`
/// computes it; the signature is standard Base64 with padding where it travels as text.
public enum RSASignature {
    /// The smallest modulus accepted for a key, in bits.
    public static let minimumBits = 2048

    /// The signature of `message` with the RSA private key `key`.
    public static func sign<M: ContiguousBytes>(_ message: M, key: EVPKey) throws(CryptoError) -> [UInt8] {
        guard key.kind == .rsa else { throw CryptoError(code: .invalidInput, reason: "not an RSA key") }
        let context = try DigestSignatureContext()
        guard EVP_DigestSignInit(context.pointer, nil, FetchedAlgorithms.shared.sha256, nil, key.pointer) == 1 else {
            throw CryptoError.openSSL("SHA256withRSA sign init")
        }
        let signature = message.withUnsafeBytes { buffer -> [UInt8]? in
            var length = 0
            guard
                EVP_DigestSign(
                    context.pointer, nil, &length, buffer.baseAddress?.assumingMemoryBound(to: UInt8.self),
                    buffer.count) == 1
            else { return nil }
            var output = [UInt8](repeating: 0, count: length)
            guard
                EVP_DigestSign(
                    context.pointer, &output, &length, buffer.baseAddress?.assumingMemoryBound(to: UInt8.self),
                    buffer.count) == 1
            else { return nil }
            return Array(output.prefix(length))
        }
        guard let signature else { throw CryptoError.openSSL("SHA256withRSA sign") }
        return signature
    }

    /// Whether `signature` is a valid SHA256withRSA signature of `message` by the RSA public key `key`.
    public static func isValid<S: ContiguousBytes, M: ContiguousBytes>(
        _ signature: S, of message: M, key: EVPKey
    ) -> Bool {
        guard key.kind == .rsa, let context = try? DigestSignatureContext(),
            EVP_DigestVerifyInit(context.pointer, nil, FetchedAlgorithms.shared.sha256, nil, key.pointer) == 1
        else {
            OpenSSLErrorQueue.clear()
            return false
        }
        let valid = signature.withUnsafeBytes { s in
            message.withUnsafeBytes { m in
                EVP_DigestVerify(
                    context.pointer, s.baseAddress?.assumingMemoryBound(to: UInt8.self), s.count,
                    m.baseAddress?.assumingMemoryBound(to: UInt8.self), m.count) == 1
            }
        }
        OpenSSLErrorQueue.clear()
        return valid
    }

    /// Reads an RSA public key of at least ``minimumBits`` bits given as a PEM "PUBLIC KEY" block or as the bare
    /// Base64 of its DER SubjectPublicKeyInfo (PEM armour and line breaks removed, as PayerMax's dashboard shows
    /// keys).
    public static func publicKey(_ text: String) throws(CryptoError) -> EVPKey {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        let key: EVPKey
        if trimmed.hasPrefix("-----BEGIN") {
            key = try EVPKey(publicKeyPEM: trimmed)
        } else {
            let compact = trimmed.filter { !$0.isWhitespace }
            guard let der = Data(base64Encoded: compact) else {
                throw CryptoError(code: .invalidInput, reason: "neither a PEM public key nor Base64 DER")
            }
            key = try EVPKey(publicKeyDER: der)
        }
        guard key.kind == .rsa else { throw CryptoError(code: .invalidInput, reason: "not an RSA public key") }
        guard key.bits >= minimumBits else {
            throw CryptoError(code: .invalidInput, reason: "an RSA key of \(key.bits) bits (at least \(minimumBits))")
        }
        return key
    }
}
