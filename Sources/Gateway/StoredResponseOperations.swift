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
/// with its key, its fingerprint and a rendering of the domain's result, and passes it in the request's
/// ``RequestScope``; the gateway renders and stores it where it stores the result of that key, and ``answer`` is
/// set once that transaction committed.
public final class StoredAnswerRecorder: @unchecked Sendable {  // used on the request's thread only
    /// Renders a domain result as the answer (status and body), or nil when this result is not answered that
    /// way (the transport then stores its answer itself). `records` are the rows as the result's transaction
    /// leaves them: the gateway renders before that transaction joins its batch, so the writer only stores bytes.
    public typealias Render =
        @Sendable (_ result: Any, _ records: any AnswerRecords) throws -> (status: Int, body: Data)?

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

    public init(key: String, fingerprint: String, render: @escaping Render) {
        self.key = key
        self.fingerprint = fingerprint
        self.render = render
    }

    /// The transaction holding ``candidate`` committed.
    func committed() {
        answer = candidate
        candidate = nil
    }
}

/// The rows an answer's rendering may read besides the result, as the result's transaction leaves them: read in
/// that transaction, or worked out before it (``PreparedRecords``).
public protocol AnswerRecords {
    /// A payment's transitions, oldest first.
    func transitions(paymentID: String) throws -> [PaymentTransition]
}

extension StoreTransaction {
    /// This transaction as the records an answer reads.
    var answerRecords: any AnswerRecords { StoreAnswerRecords(tx: self) }
}

/// A store transaction's rows, read as an answer's records.
private struct StoreAnswerRecords: AnswerRecords {
    let tx: any StoreTransaction
    func transitions(paymentID: String) throws -> [PaymentTransition] { try tx.transitions(paymentID: paymentID) }
}

/// Rows worked out before their transaction runs (what it will have written), for rendering early.
struct PreparedRecords: AnswerRecords {
    /// Every transition of each payment the answer may show, as the transaction leaves them.
    var transitions: [String: [PaymentTransition]] = [:]

    func transitions(paymentID: String) throws -> [PaymentTransition] {
        guard let known = transitions[paymentID] else {
            throw GatewayError(.internalError, "transitions of \(paymentID) were not prepared")
        }
        return known
    }
}

/// The transport's answer rendered and sealed before its transaction: storing it binds these bytes.
struct PreparedAnswer {
    let recorder: StoredAnswerRecorder
    let response: StoredResponse
    let name: String
    let sealed: Data

    /// Stores the answer in `tx` (the transaction of the result it renders); the recorder answers with it once
    /// that transaction committed.
    func store(in tx: any StoreTransaction) throws {
        try tx.setStoredResponse(name, value: sealed, createdAt: response.createdAt)
        recorder.candidate = response
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
        let (name, sealed) = try sealResponse(response, merchant: merchant, key: key)
        try tx.setStoredResponse(name, value: sealed, createdAt: response.createdAt)
    }

    /// The stored response's setting name and sealed bytes.
    private func sealResponse(
        _ response: StoredResponse, merchant: Merchant, key: String
    ) throws -> (name: String, sealed: Data) {
        let name = storedResponseName(merchant: merchant, key: key)
        // Stored format (sealed stored responses), read back by Codable.
        let json = try JSONEncoder().encode(response)
        return (name, try cipher.seal(Array(json), context: SealingContext.setting(name)))
    }

    /// The transport's answer for `result`, rendered from `records` and sealed, when the request offered
    /// `recorder` for this key (nil otherwise, or when the transport does not answer this result so).
    func prepareAnswer(
        _ result: Any, recorder: StoredAnswerRecorder?, merchant: Merchant, key: String, records: any AnswerRecords
    ) throws -> PreparedAnswer? {
        guard let recorder, recorder.key == key,
            let (status, body) = try recorder.render(result, records)
        else { return nil }
        let answer = StoredResponse(fingerprint: recorder.fingerprint, status: status, body: body, createdAt: now)
        let (name, sealed) = try sealResponse(answer, merchant: merchant, key: key)
        return PreparedAnswer(recorder: recorder, response: answer, name: name, sealed: sealed)
    }

    /// The gateway's clock (for the transport's wire times, e.g. a session's `expired` status).
    public var now: Date { clock.now() }
}
