import COpenSSL
import Foundation

/// Randomness from OpenSSL's CSPRNG.
public enum SecureRandom {
    /// `count` random bytes.
    public static func bytes(_ count: Int) throws(CryptoError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        guard count == 0 || RAND_bytes(&bytes, Int32(count)) == 1 else {
            throw CryptoError(code: .randomFailure, reason: OpenSSLErrorQueue.drain())
        }
        return bytes
    }

    /// A random string of `count` characters from `[0-9A-Za-z]`, without modulo bias.
    public static func alphanumeric(_ count: Int) throws(CryptoError) -> String {
        let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)
        var result: [UInt8] = []
        result.reserveCapacity(count)
        while result.count < count {
            for byte in try bytes(count * 2) where byte < 248 && result.count < count {
                result.append(alphabet[Int(byte) % alphabet.count])
            }
        }
        return String(decoding: result, as: UTF8.self)
    }
}

/// Comparisons whose time does not depend on where the inputs differ.
public enum ConstantTime {
    /// Whether two byte sequences are equal; the length is not secret.
    public static func equals(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        guard a.count == b.count else { return false }
        guard let pa = a.baseAddress, let pb = b.baseAddress else { return a.count == 0 }
        return CRYPTO_memcmp(pa, pb, a.count) == 0
    }

    /// Whether two byte arrays are equal; the length is not secret.
    public static func equals<A: ContiguousBytes, B: ContiguousBytes>(_ a: A, _ b: B) -> Bool {
        a.withUnsafeBytes { pa in b.withUnsafeBytes { pb in equals(pa, pb) } }
    }
}

/// SHA-256.
public enum SHA256 {
    /// The 32-byte SHA-256 digest of `data`.
    public static func hash<D: ContiguousBytes>(_ data: D) -> [UInt8] {
        oneShotDigest(data, length: 32, COpenSSL.SHA256)
    }

    /// The digest of the concatenation of `parts`, without building the concatenation.
    public static func hash(parts: [[UInt8]]) -> [UInt8] {
        let context = EVP_MD_CTX_new()
        defer { EVP_MD_CTX_free(context) }
        EVP_DigestInit_ex(context, FetchedAlgorithms.shared.sha256, nil)
        for part in parts { part.withUnsafeBytes { _ = EVP_DigestUpdate(context, $0.baseAddress, $0.count) } }
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, &digest, &length)
        return digest
    }
}

/// SHA-384, for Subresource Integrity values.
public enum SHA384 {
    /// The 48-byte SHA-384 digest of `data`.
    public static func hash<D: ContiguousBytes>(_ data: D) -> [UInt8] {
        oneShotDigest(data, length: 48, COpenSSL.SHA384)
    }
}

/// `data`'s digest by OpenSSL's one-shot function `function`, whose digest is `length` bytes.
private func oneShotDigest<D: ContiguousBytes>(
    _ data: D, length: Int,
    _ function: (UnsafePointer<UInt8>?, Int, UnsafeMutablePointer<UInt8>?) -> UnsafeMutablePointer<UInt8>?
) -> [UInt8] {
    var digest = [UInt8](repeating: 0, count: length)
    data.withUnsafeBytes { buffer in
        _ = function(buffer.baseAddress?.assumingMemoryBound(to: UInt8.self), buffer.count, &digest)
    }
    return digest
}

/// HMAC-SHA256.
public enum HMACSHA256 {
    /// The 32-byte HMAC-SHA256 of `message` under `key`.
    public static func authenticationCode<K: ContiguousBytes, M: ContiguousBytes>(key: K, message: M) -> [UInt8] {
        var mac = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 32
        key.withUnsafeBytes { k in
            message.withUnsafeBytes { m in
                _ = HMAC(
                    EVP_sha256(), k.baseAddress, Int32(k.count), m.baseAddress?.assumingMemoryBound(to: UInt8.self),
                    m.count, &mac, &length)
            }
        }
        return mac
    }

    /// Whether `mac` is the HMAC of `message` under `key`, compared in constant time.
    public static func isValid<K: ContiguousBytes, M: ContiguousBytes>(_ mac: [UInt8], key: K, message: M) -> Bool {
        ConstantTime.equals(authenticationCode(key: key, message: message), mac)
    }
}

/// AES-GCM (128, 192 or 256-bit keys by the key's length), with any nonce length OpenSSL accepts
/// (12 bytes is the usual one; Apple Pay tokens use 16 zero bytes) and a 16-byte tag.
public enum AESGCM {
    /// The tag length used throughout: 16 bytes.
    public static let tagLength = 16

    /// Encrypts `plaintext`; returns the ciphertext followed by the 16-byte tag.
    public static func seal<K: ContiguousBytes>(
        _ plaintext: [UInt8], key: K, nonce: [UInt8], authenticating aad: [UInt8] = []
    ) throws(CryptoError) -> [UInt8] {
        let context = try CipherContext()
        let cipher = try cipherFor(key: key)
        guard EVP_EncryptInit_ex(context.pointer, cipher, nil, nil, nil) == 1,
            EVP_CIPHER_CTX_ctrl(context.pointer, EVP_CTRL_GCM_SET_IVLEN, Int32(nonce.count), nil) == 1
        else { throw CryptoError.openSSL("AES-GCM init") }
        let initialized = key.withUnsafeBytes { k in
            EVP_EncryptInit_ex(context.pointer, nil, nil, k.baseAddress?.assumingMemoryBound(to: UInt8.self), nonce)
        }
        guard initialized == 1 else { throw CryptoError.openSSL("AES-GCM key") }
        var length: Int32 = 0
        if !aad.isEmpty {
            guard EVP_EncryptUpdate(context.pointer, nil, &length, aad, Int32(aad.count)) == 1 else {
                throw CryptoError.openSSL("AES-GCM aad")
            }
        }
        var output = [UInt8](repeating: 0, count: plaintext.count + tagLength)
        guard EVP_EncryptUpdate(context.pointer, &output, &length, plaintext, Int32(plaintext.count)) == 1 else {
            throw CryptoError.openSSL("AES-GCM encrypt")
        }
        var finalLength: Int32 = 0
        let finished = output.withUnsafeMutableBufferPointer { buffer in
            EVP_EncryptFinal_ex(context.pointer, buffer.baseAddress! + Int(length), &finalLength)
        }
        guard finished == 1 else { throw CryptoError.openSSL("AES-GCM final") }
        let tagOK = output.withUnsafeMutableBufferPointer { buffer in
            EVP_CIPHER_CTX_ctrl(
                context.pointer, EVP_CTRL_GCM_GET_TAG, Int32(tagLength), buffer.baseAddress! + plaintext.count)
        }
        guard tagOK == 1 else { throw CryptoError.openSSL("AES-GCM tag") }
        return output
    }

    /// Decrypts `sealed` (ciphertext followed by the 16-byte tag) and verifies the tag.
    /// The plaintext comes back in ``SecureBytes``.
    public static func open<K: ContiguousBytes>(
        _ sealed: [UInt8], key: K, nonce: [UInt8], authenticating aad: [UInt8] = []
    ) throws(CryptoError) -> SecureBytes {
        guard sealed.count >= tagLength else {
            throw CryptoError(code: .invalidInput, reason: "sealed box shorter than its tag")
        }
        let context = try CipherContext()
        let cipher = try cipherFor(key: key)
        guard EVP_DecryptInit_ex(context.pointer, cipher, nil, nil, nil) == 1,
            EVP_CIPHER_CTX_ctrl(context.pointer, EVP_CTRL_GCM_SET_IVLEN, Int32(nonce.count), nil) == 1
        else { throw CryptoError.openSSL("AES-GCM init") }
        let initialized = key.withUnsafeBytes { k in
            EVP_DecryptInit_ex(context.pointer, nil, nil, k.baseAddress?.assumingMemoryBound(to: UInt8.self), nonce)
        }
        guard initialized == 1 else { throw CryptoError.openSSL("AES-GCM key") }
        var length: Int32 = 0
        if !aad.isEmpty {
            guard EVP_DecryptUpdate(context.pointer, nil, &length, aad, Int32(aad.count)) == 1 else {
                throw CryptoError.openSSL("AES-GCM aad")
            }
        }
        let ciphertextCount = sealed.count - tagLength
        var output = [UInt8](repeating: 0, count: ciphertextCount + tagLength)
        defer { SecureBytes.zero(&output) }
        let updated = sealed.withUnsafeBufferPointer { input in
            EVP_DecryptUpdate(context.pointer, &output, &length, input.baseAddress, Int32(ciphertextCount))
        }
        guard updated == 1 else { throw CryptoError.openSSL("AES-GCM decrypt") }
        var tag = Array(sealed[ciphertextCount...])
        guard EVP_CIPHER_CTX_ctrl(context.pointer, EVP_CTRL_GCM_SET_TAG, Int32(tagLength), &tag) == 1 else {
            throw CryptoError.openSSL("AES-GCM set tag")
        }
        var finalLength: Int32 = 0
        let finished = output.withUnsafeMutableBufferPointer { buffer in
            EVP_DecryptFinal_ex(context.pointer, buffer.baseAddress! + Int(length), &finalLength)
        }
        guard finished == 1 else {
            OpenSSLErrorQueue.clear()
            throw CryptoError(code: .authenticationFailed, reason: "AES-GCM tag mismatch")
        }
        return SecureBytes(output[0..<Int(length + finalLength)])
    }

    private static func cipherFor<K: ContiguousBytes>(key: K) throws(CryptoError) -> OpaquePointer {
        let count = key.withUnsafeBytes { $0.count }
        switch count {
        case 16: return FetchedAlgorithms.shared.aes128GCM
        case 24: return FetchedAlgorithms.shared.aes192GCM
        case 32: return FetchedAlgorithms.shared.aes256GCM
        default: throw CryptoError(code: .invalidInput, reason: "AES key must be 16, 24 or 32 bytes, got \(count)")
        }
    }
}

/// Algorithms fetched once from the default library context and kept for the life of the process.
///
/// OpenSSL 3 resolves a legacy `EVP_sha256()` or `EVP_aes_256_gcm()` handle by fetching the provider's
/// implementation again at every `…Init_ex`; an explicitly fetched one is used as it is.
// Unchecked: OpenSSL algorithm handles fetched once in init and only read (they are reference-counted and thread-safe).
package final class FetchedAlgorithms: @unchecked Sendable {
    /// SHA-256 (falls back to the built-in handle when fetching fails).
    package let sha256: OpaquePointer
    /// AES-128-GCM.
    package let aes128GCM: OpaquePointer
    /// AES-192-GCM.
    package let aes192GCM: OpaquePointer
    /// AES-256-GCM.
    package let aes256GCM: OpaquePointer

    private init() {
        sha256 = EVP_MD_fetch(nil, "SHA2-256", nil) ?? EVP_sha256()
        aes128GCM = EVP_CIPHER_fetch(nil, "AES-128-GCM", nil) ?? EVP_aes_128_gcm()
        aes192GCM = EVP_CIPHER_fetch(nil, "AES-192-GCM", nil) ?? EVP_aes_192_gcm()
        aes256GCM = EVP_CIPHER_fetch(nil, "AES-256-GCM", nil) ?? EVP_aes_256_gcm()
        ERR_clear_error()
    }

    /// The process-wide set.
    package static let shared = FetchedAlgorithms()
}

/// An owned EVP_CIPHER_CTX.
final class CipherContext {
    let pointer: OpaquePointer
    init() throws(CryptoError) {
        guard let pointer = EVP_CIPHER_CTX_new() else { throw CryptoError.openSSL("EVP_CIPHER_CTX_new") }
        self.pointer = pointer
    }
    deinit { EVP_CIPHER_CTX_free(pointer) }
}
