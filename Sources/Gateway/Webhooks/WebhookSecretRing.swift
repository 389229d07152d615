import Foundation
import OrchardCrypto

/// A merchant's webhook signing secrets, newest first, as sealed in ``MerchantRecord/webhookSecretsSealed``.
///
/// Rotation (`PUT /v1/webhook-endpoint`) puts a new secret first and gives the previous one
/// ``rotationOverlap`` (24 hours) more: until then deliveries carry a `v1=` for each, afterwards only the new.
package struct WebhookSecretRing: Sendable, Hashable, Codable {
    /// One secret and when it stops signing (nil: in force).
    package struct Entry: Sendable, Hashable, Codable {
        package var secret: String
        package var retiresAt: Date?
    }

    /// How long a replaced secret keeps signing.
    package static let rotationOverlap: TimeInterval = 24 * 3600

    package var entries: [Entry]

    package init(entries: [Entry]) { self.entries = entries }

    /// A fresh secret: `whsec_` and 48 lowercase hex digits.
    package static func newSecret() throws(GatewayError) -> String {
        do { return "whsec_" + Hex.encode(try SecureRandom.bytes(24)) } catch {
            throw GatewayError(.internalError, "random generator failed")
        }
    }

    /// The ring in the sealed plaintext; an older plain array of secrets reads as secrets in force.
    package init(plaintext: [UInt8]) throws {
        let data = Data(plaintext)
        // Stored format (the sealed secret ring), written by Codable.
        if let entries = try? JSONDecoder().decode([Entry].self, from: data) {
            self.entries = entries
        } else {
            self.entries = try JSONDecoder().decode([String].self, from: data).map { Entry(secret: $0, retiresAt: nil) }
        }
    }

    /// The plaintext to seal (a stored format, read back by Codable).
    package func plaintext() throws -> [UInt8] { Array(try JSONEncoder().encode(entries)) }

    /// The signing secrets in force at `now` in a merchant's sealed ring: the one place a ring is opened (the
    /// registry, and ``StoreWebhookOutbox`` when it hands out due deliveries; stores never open it).
    package static func secrets(
        sealed: Data, merchantID: String, cipher: EnvelopeCipher, at now: Date
    ) throws
        -> [String]
    {
        let bytes = try cipher.open(sealed, context: SealingContext.webhookSecrets(merchantID: merchantID))
        return try WebhookSecretRing(plaintext: bytes.copyBytes()).secrets(at: now)
    }

    /// The secrets signing at `now`, newest first.
    package func secrets(at now: Date) -> [String] {
        entries.filter { $0.retiresAt.map { now < $0 } ?? true }.map(\.secret)
    }

    /// Puts `secret` first; the secret in force until now retires after ``rotationOverlap``, and any already
    /// retired or retiring one is dropped.
    package mutating func rotate(to secret: String, at now: Date) {
        let previous = entries.first { $0.retiresAt == nil }.map {
            Entry(secret: $0.secret, retiresAt: now.addingTimeInterval(Self.rotationOverlap))
        }
        entries = [Entry(secret: secret, retiresAt: nil)] + (previous.map { [$0] } ?? [])
    }
}
