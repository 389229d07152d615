import OrchardBase
import COpenSSL
import Foundation
import OrchardCrypto

/// Reusable ECDH state for one EC merchant key: derive contexts set up once, and peer keys on P-256
/// whose point is replaced for each token. A slot is used by one token at a time.
// Unchecked: its slots (OpenSSL contexts, not Sendable) are taken from `slots` and used by one token at a time.
final class ECDHPool: @unchecked Sendable {
    private let privateKey: EVPKey
    private let slots = Locked<[Slot]>([])
    private let capacity = 16

    init(privateKey: EVPKey) { self.privateKey = privateKey }

    /// The 32-byte x-coordinate of the merchant key times the uncompressed P-256 `point` (65 bytes,
    /// checked to lie on the curve).
    func sharedSecret(point: UnsafeBufferPointer<UInt8>) throws(PaymentTokenError) -> [UInt8] {
        guard point.count == 65, let pointBytes = point.baseAddress else {
            throw PaymentTokenError(.decryptionFailed, "the ephemeral public key is not a valid P-256 point")
        }
        guard let slot = slots.withLock({ $0.popLast() }) ?? Slot(privateKey: privateKey) else {
            throw PaymentTokenError(.decryptionFailed, "ECDH setup: \(OpenSSLErrorQueue.drain())")
        }
        // Partial public-key validation (SP 800-56A 5.6.2.3.4) happens in the decoding itself:
        // EC_POINT_oct2point refuses coordinates outside [0, p) and EC_POINT_set_affine_coordinates
        // refuses a point off the curve; a 65-byte uncompressed encoding cannot be the point at
        // infinity (its encoding is the single byte 0x00). OpenSSL's separate quick check would repeat
        // these (with a field inversion) on every token. P-256 has cofactor 1: no check of the order.
        guard pointBytes[0] == 0x04, EVP_PKEY_set1_encoded_public_key(slot.peer.pointer, pointBytes, 65) == 1
        else {
            OpenSSLErrorQueue.clear()
            throw PaymentTokenError(.decryptionFailed, "the ephemeral public key is not a point on P-256")
        }
        guard EVP_PKEY_derive_set_peer_ex(slot.derive, slot.peer.pointer, 0) == 1 else {
            throw PaymentTokenError(.decryptionFailed, "ECDH with the ephemeral key: \(OpenSSLErrorQueue.drain())")
        }
        var secret = [UInt8](repeating: 0, count: 32)
        var length = secret.count
        guard EVP_PKEY_derive(slot.derive, &secret, &length) == 1, length == 32 else {
            throw PaymentTokenError(.decryptionFailed, "ECDH: \(OpenSSLErrorQueue.drain())")
        }
        slots.withLock { slots in if slots.count < capacity { slots.append(slot) } }
        return secret
    }

    final class Slot {
        let derive: OpaquePointer
        let peer: EVPKey

        init?(privateKey: EVPKey) {
            guard let key = EVP_PKEY_new() else { return nil }
            let peer = EVPKey(takingOwnershipOf: key)
            // Start from the merchant key's own public point, so the contexts see a complete key.
            let spki = privateKey.publicKeyDER
            guard spki.count > 65, EVP_PKEY_copy_parameters(key, privateKey.pointer) == 1,
                spki.withUnsafeBufferPointer({
                    EVP_PKEY_set1_encoded_public_key(key, $0.baseAddress! + spki.count - 65, 65)
                })
                    == 1
            else { return nil }
            guard let derive = EVP_PKEY_CTX_new_from_pkey(nil, privateKey.pointer, nil) else { return nil }
            guard EVP_PKEY_derive_init(derive) == 1 else {
                EVP_PKEY_CTX_free(derive)
                return nil
            }
            self.derive = derive
            self.peer = peer
        }

        deinit { EVP_PKEY_CTX_free(derive) }
    }
}
