import Foundation
import OrchardCrypto

/// A finished answer kept for an idempotency key, replayed as is: the transport's rendering of the first
/// complete result (the domain also keeps its own result; this keeps the exact bytes a client saw).
public struct StoredResponse: Sendable, Hashable, Codable {
    /// What the request was (method, route and a digest of its parameters), to tell a retry from a conflict.
    public var fingerprint: String
    /// The status answered.
    public var status: Int
    /// The body answered, byte for byte.
    public var body: Data
    /// When it was answered.
    public var createdAt: Date

    public init(fingerprint: String, status: Int, body: Data, createdAt: Date) {
        self.fingerprint = fingerprint
        self.status = status
        self.body = body
        self.createdAt = createdAt
    }
}

extension GatewayService {
    private func storedResponseName(merchant: Merchant, key: String) -> String {
        "response:\(merchant.id):\(merchant.environment.rawValue):\(Identifiers.sha256Hex(key))"
    }

    /// The answer stored for `key` (scoped to the merchant and environment) within the retention period.
    public func storedResponse(merchant: Merchant, key: String) throws(GatewayError) -> StoredResponse? {
        let name = storedResponseName(merchant: merchant, key: key)
        guard let sealed = try read({ try $0.storedResponse(name) }) else { return nil }
        let bytes = try cipher.open(sealed, context: SealingContext.setting(name))
        let stored = try gatewayThrowing {
            // Stored format (sealed stored responses), written by Codable.
            try JSONDecoder().decode(StoredResponse.self, from: Data(bytes.copyBytes()))
        }
        guard stored.createdAt > clock.now().addingTimeInterval(-configuration.idempotencyRetention) else { return nil }
        return stored
    }

    /// Keeps `response` for `key` (sealed: bodies may hold card information) until the maintenance pass
    /// (``reconcile(delay:)``) purges it after the retention period.
    public func storeResponse(_ response: StoredResponse, merchant: Merchant, key: String) throws(GatewayError) {
        let name = storedResponseName(merchant: merchant, key: key)
        // Stored format (sealed stored responses), read back by Codable.
        let json = try gatewayThrowing { try JSONEncoder().encode(response) }
        let sealed = try cipher.seal(Array(json), context: SealingContext.setting(name))
        try write { try $0.setStoredResponse(name, value: sealed, createdAt: response.createdAt) }
    }

    /// The gateway's clock (for the transport's wire times, e.g. a session's `expired` status).
    public var now: Date { clock.now() }
}
