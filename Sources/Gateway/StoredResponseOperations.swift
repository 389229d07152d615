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

/// The transport's answer to an idempotent request, written in the same transaction as the domain's result
/// (one durable step fewer than storing it after the answer is rendered). The transport makes one per request
/// with its key, its fingerprint and a rendering of the domain's result; the gateway renders and stores it
/// where it stores the result of that key, and ``answer`` is set once that transaction committed.
public final class StoredAnswerRecorder: @unchecked Sendable {  // used on the request's thread only
    /// Renders a domain result (read in the transaction `tx` that stores it) as the answer (status and body),
    /// or nil when this result is not answered that way (the transport then stores its answer itself).
    public typealias Render = @Sendable (_ result: Any, _ tx: any StoreTransaction) throws -> (status: Int, body: Data)?

    /// The transport's key (the `Idempotency-Key`).
    public let key: String
    /// The request's fingerprint, kept with the answer (a retry with another one is a conflict).
    public let fingerprint: String
    let render: Render
    /// Written inside a transaction that has not reported its commit yet.
    var candidate: StoredResponse?
    /// The answer stored with the domain's result, once that transaction committed: the transport answers
    /// with it, byte for byte, and stores nothing more.
    public private(set) var answer: StoredResponse?

    @TaskLocal static var current: StoredAnswerRecorder?

    /// The answer the current request's recorder holds (stored and committed), if any.
    public static var recordedAnswer: StoredResponse? { current?.answer }

    public init(key: String, fingerprint: String, render: @escaping Render) {
        self.key = key
        self.fingerprint = fingerprint
        self.render = render
    }

    /// Runs `body` with this recorder offered to the idempotent operation inside it.
    public func recording<T>(_ body: () throws -> T) rethrows -> T { try Self.$current.withValue(self) { try body() } }

    /// The transaction holding ``candidate`` committed.
    func committed() {
        answer = candidate
        candidate = nil
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
        try write { try storeResponse(response, merchant: merchant, key: key, in: $0) }
    }

    func storeResponse(_ response: StoredResponse, merchant: Merchant, key: String, in tx: any StoreTransaction) throws
    {
        let name = storedResponseName(merchant: merchant, key: key)
        // Stored format (sealed stored responses), read back by Codable.
        let json = try JSONEncoder().encode(response)
        let sealed = try cipher.seal(Array(json), context: SealingContext.setting(name))
        try tx.setStoredResponse(name, value: sealed, createdAt: response.createdAt)
    }

    /// Stores the transport's answer for `result` in `tx` when the request offered `recorder` for this key.
    func recordAnswer(
        _ result: Any, recorder: StoredAnswerRecorder?, merchant: Merchant, key: String, in tx: any StoreTransaction
    ) throws {
        guard let recorder, recorder.key == key,
            let (status, body) = try recorder.render(result, tx)
        else { return }
        let answer = StoredResponse(fingerprint: recorder.fingerprint, status: status, body: body, createdAt: now)
        try storeResponse(answer, merchant: merchant, key: key, in: tx)
        recorder.candidate = answer
    }

    /// The gateway's clock (for the transport's wire times, e.g. a session's `expired` status).
    public var now: Date { clock.now() }
}
