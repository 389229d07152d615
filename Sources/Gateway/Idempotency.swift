import Foundation
import OrchardCrypto

/// The progress of one idempotent request: where a resumed request starts, and how a phase records
/// the point it reached in the same transaction as its writes.
package final class IdempotencyScope {
    package let merchant: Merchant
    package let key: String?
    /// The recovery point a resumed request starts from (nil for a fresh one).
    package let resumePoint: String?
    package private(set) var currentPoint: String
    /// Seals a stored result for this key's record.
    let seal: (Data) throws -> Data
    /// Renders and seals the transport's answer for a finished result, stored in the result's transaction
    /// (see ``StoredAnswerRecorder``).
    let prepareAnswer: (Any, any AnswerRecords) throws -> PreparedAnswer?
    /// A fresh key's claim not committed yet: the first checkpoint or completion inserts it in its own
    /// transaction (one commit fewer), and the caller reports that commit with ``claimCommitted()``.
    private(set) var pendingClaim: IdempotencyRecord?
    /// Whether another request claimed the key before the pending claim could be inserted.
    private(set) var claimLost = false
    /// Whether a transaction of this request inserted the pending claim (committed or not).
    private var claimInserted = false
    /// Whether the key's finished result is stored and committed (reported with ``completionCommitted()``):
    /// finishing the key then needs no read of its record.
    private(set) var resultCommitted = false

    init(
        merchant: Merchant, key: String?, resumePoint: String?, seal: @escaping (Data) throws -> Data = { $0 },
        prepareAnswer: @escaping (Any, any AnswerRecords) throws -> PreparedAnswer? = { _, _ in nil },
        pendingClaim: IdempotencyRecord? = nil
    ) {
        self.merchant = merchant
        self.key = key
        self.resumePoint = resumePoint
        self.currentPoint = resumePoint ?? "started"
        self.seal = seal
        self.prepareAnswer = prepareAnswer
        self.pendingClaim = pendingClaim
    }

    /// Inserts the pending claim inside `tx`; when another request holds the key now, the transaction fails
    /// with `idempotency_in_flight` and ``idempotent(_:key:operation:fingerprint:claimInFirstWrite:requestScope:_:)``
    /// answers as a claim made first would have (replay, conflict or in flight).
    /// Call it first in the transaction, before checks whose errors a request holding the key would answer
    /// differently; the first checkpoint or completion calls it otherwise.
    package func claim(in tx: any StoreTransaction) throws {
        guard let pendingClaim, !claimInserted else { return }
        guard try tx.claimIdempotencyKey(pendingClaim) else {
            claimLost = true
            throw GatewayError(.idempotencyInFlight, "a request with this key is in progress", param: "idempotency_key")
        }
        claimInserted = true
    }

    /// Reports that the transaction which inserted the pending claim committed: the key is held from now on.
    package func claimCommitted() { pendingClaim = nil }

    /// Reports that the transaction which stored the finished result (``complete(_:in:)``) committed.
    package func completionCommitted() { resultCommitted = key != nil }

    /// A finished result encoded and sealed, with the transport's answer rendered, before the transaction that
    /// stores it: that transaction (a group commit's serial section) only binds the bytes.
    package struct PreparedCompletion {
        let sealedResult: Data?
        let answer: PreparedAnswer?
    }

    /// Encodes and seals `value` as the key's finished result, and renders the transport's answer from
    /// `records` (the rows as the storing transaction leaves them), on the calling thread.
    func prepare<T: Codable>(_ value: T, records: any AnswerRecords) throws -> PreparedCompletion {
        guard key != nil else { return PreparedCompletion(sealedResult: nil, answer: nil) }
        // Stored format (sealed idempotent results), read back by Codable: its bytes stay as they are.
        return PreparedCompletion(
            sealedResult: try seal(try JSONEncoder().encode(StoredResult(value: value, error: nil))),
            answer: try prepareAnswer(value, records))
    }

    /// Stores `value` as the key's finished result inside `tx`, atomically with the work that produced it
    /// (for results that cannot be recomputed after a crash, like a new prime).
    package func complete<T: Codable>(_ value: T, in tx: any StoreTransaction) throws {
        try complete(try prepare(value, records: tx.answerRecords), in: tx)
    }

    /// Stores a result prepared by ``prepare(_:records:)`` as the key's finished result inside `tx`.
    package func complete(_ prepared: PreparedCompletion, in tx: any StoreTransaction) throws {
        currentPoint = "finished"
        guard let key, let sealedResult = prepared.sealedResult else { return }
        try claim(in: tx)
        guard
            var record = try tx.idempotencyRecord(merchantID: merchant.id, environment: merchant.environment, key: key)
        else { return }
        record.recoveryPoint = "finished"
        record.responseSealed = sealedResult
        record.lockedAt = nil
        try tx.updateIdempotencyRecord(record)
        try prepared.answer?.store(in: tx)
    }

    /// Records `point` inside the transaction `tx` (a no-op without a key).
    package func checkpoint(_ point: String, in tx: any StoreTransaction) throws {
        currentPoint = point
        guard let key else { return }
        try claim(in: tx)
        guard
            var record = try tx.idempotencyRecord(merchantID: merchant.id, environment: merchant.environment, key: key)
        else { return }
        record.recoveryPoint = point
        try tx.updateIdempotencyRecord(record)
    }

    /// The id after `prefix:` in the resume point, when it has that prefix.
    package func resumed(_ prefix: String) -> String? {
        guard let point = resumePoint, point.hasPrefix(prefix + ":") else { return nil }
        return String(point.dropFirst(prefix.count + 1))
    }
}

/// How a request holds its idempotency key.
private enum IdempotencyClaim {
    case fresh
    case resume(String)
    case replay(Data)
}

/// A stored result: the value or the error, replayed as is.
struct StoredResult<T: Codable>: Codable {
    var value: T?
    var error: GatewayError?
}

extension GatewayService {
    /// The one rule for an idempotency key (the `Idempotency-Key` header, or a key derived from a request):
    /// 1 to 255 printable ASCII characters, no spaces.
    public static func isValidIdempotencyKey(_ key: String) -> Bool {
        FieldLimits.idempotencyKeyBytes.contains(key.utf8.count) && key.utf8.allSatisfy { (0x21...0x7E).contains($0) }
    }

    /// Refuses a token outside ``FieldLimits/tokenBytes`` with `parameter_invalid` on `token`.
    static func checkTokenSize(_ token: Data) throws(GatewayError) {
        guard FieldLimits.tokenBytes.contains(token.count) else { throw .invalid("token", "1 byte to 64 KiB") }
    }

    /// The idempotency key of a session pay sent without one: the token's `transactionIdentifier`, as the
    /// gateway and the HTTP layer's stored answers both derive it.
    public static func transactionIdempotencyKey(_ transactionIdentifier: String) -> String {
        "txn:" + String(transactionIdentifier.prefix(200))
    }

    /// Runs `body` at most once per (merchant, environment, key): a finished result (success or final
    /// error) is replayed for the retention period; different parameters are `idempotency_conflict`; a
    /// request holding the key is `idempotency_in_flight`; a request whose holder died (stale lock) is
    /// resumed from its recovery point. With `claimInFirstWrite`, a key not seen before is claimed by the
    /// body's first checkpoint or completion, in that transaction (the body must call
    /// ``IdempotencyScope/claimCommitted()`` once it committed); a final error thrown before is stored with
    /// the claim in one transaction. A replay is reported on `requestScope` (``RequestScope/replayed``), and its
    /// answer recorder's answer is stored with the result.
    package func idempotent<T: Codable>(
        _ merchant: Merchant, key: String?, operation: String, fingerprint parts: [String],
        claimInFirstWrite: Bool = false, requestScope: RequestScope,
        _ body: (IdempotencyScope) throws(GatewayError) -> T
    ) throws(GatewayError) -> T {
        guard let key else { return try body(IdempotencyScope(merchant: merchant, key: nil, resumePoint: nil)) }
        guard Self.isValidIdempotencyKey(key) else {
            throw GatewayError(
                .idempotencyKeyInvalid, "1 to 255 printable ASCII characters", param: "idempotency_key")
        }
        let fingerprint = Identifiers.sha256Hex(([operation] + parts).joined(separator: "\u{1f}"))
        let now = clock.now()
        let context = "idempotency:\(merchant.id):\(key)"
        let cipher = self.cipher
        let seal: (Data) throws -> Data = { try cipher.seal(Array($0), context: context) }
        let recorder = requestScope.answerRecorder
        let prepareAnswer: (Any, any AnswerRecords) throws -> PreparedAnswer? = { [self] value, records in
            try self.prepareAnswer(value, recorder: recorder, merchant: merchant, key: key, records: records)
        }
        let fresh = IdempotencyRecord(
            merchantID: merchant.id, environment: merchant.environment, key: key, operation: operation,
            fingerprint: fingerprint, recoveryPoint: "started", lockedAt: now, responseSealed: nil,
            createdAt: now)
        if claimInFirstWrite,
            try read({ try $0.idempotencyRecord(merchantID: merchant.id, environment: merchant.environment, key: key) })
                == nil
        {
            let scope = IdempotencyScope(
                merchant: merchant, key: key, resumePoint: nil, seal: seal, prepareAnswer: prepareAnswer,
                pendingClaim: fresh)
            let result: Result<T, GatewayError>
            do { result = .success(try body(scope)) } catch { result = .failure(error) }
            if !scope.claimLost {
                finish(result, scope: scope, key: key, context: context, recorder: recorder)
                return try result.get()
            }
            // Another request claimed the key first: answer as a claim made now would.
        }
        let claim: IdempotencyClaim = try gatewayThrowing {
            try store.write { tx in
                if try tx.claimIdempotencyKey(fresh) { return .fresh }
                guard
                    var existing = try tx.idempotencyRecord(
                        merchantID: merchant.id, environment: merchant.environment, key: key)
                else { throw GatewayError(.storageFailure, "idempotency row vanished") }
                if existing.createdAt < now.addingTimeInterval(-configuration.idempotencyRetention),
                    existing.responseSealed != nil
                {
                    try tx.deleteIdempotencyRecord(merchantID: merchant.id, environment: merchant.environment, key: key)
                    _ = try tx.claimIdempotencyKey(fresh)
                    return .fresh
                }
                guard existing.operation == operation, existing.fingerprint == fingerprint else {
                    throw GatewayError(
                        .idempotencyConflict, "this key was used with different parameters", param: "idempotency_key")
                }
                if let sealed = existing.responseSealed { return .replay(sealed) }
                if let lockedAt = existing.lockedAt,
                    lockedAt > now.addingTimeInterval(-configuration.idempotencyLockTimeout)
                {
                    throw GatewayError(
                        .idempotencyInFlight, "a request with this key is in progress", param: "idempotency_key")
                }
                existing.lockedAt = now
                try tx.updateIdempotencyRecord(existing)
                return .resume(existing.recoveryPoint)
            }
        }
        let scope: IdempotencyScope
        switch claim {
        case .replay(let sealed):
            requestScope.replayed = true
            let bytes = try cipher.open(sealed, context: context)
            let stored = try gatewayThrowing {
                // Stored format (sealed idempotent results), written by Codable.
                try JSONDecoder().decode(StoredResult<T>.self, from: Data(bytes.copyBytes()))
            }
            if let error = stored.error { throw error }
            guard let value = stored.value else { throw GatewayError(.internalError, "empty stored result") }
            return value
        case .fresh:
            scope = IdempotencyScope(
                merchant: merchant, key: key, resumePoint: nil, seal: seal, prepareAnswer: prepareAnswer)
        case .resume(let point):
            scope = IdempotencyScope(
                merchant: merchant, key: key, resumePoint: point == "started" ? nil : point, seal: seal,
                prepareAnswer: prepareAnswer)
        }
        let result: Result<T, GatewayError>
        do { result = .success(try body(scope)) } catch { result = .failure(error) }
        finish(result, scope: scope, key: key, context: context, recorder: recorder)
        return try result.get()
    }

    /// Stores a final result (success or final error) for the key, or releases it: deleted when nothing was
    /// done, unlocked at its recovery point otherwise. A claim never committed is inserted with a final result,
    /// unless another request holds the key by now.
    private func finish<T: Codable>(
        _ result: Result<T, GatewayError>, scope: IdempotencyScope, key: String, context: String,
        recorder: StoredAnswerRecorder?
    ) {
        let merchant = scope.merchant
        let cipher = self.cipher
        let finalResult: StoredResult<T>?
        switch result {
        case .success(let value): finalResult = StoredResult(value: value, error: nil)
        case .failure(let error) where error.isFinal: finalResult = StoredResult(value: nil, error: error)
        case .failure: finalResult = nil
        }
        // A result stored by the body's last transaction (the common case) needs no write: the body reported
        // its commit, or a read says so without waiting for a group commit. The transport's answer written
        // with it committed then too.
        if scope.pendingClaim == nil, scope.resultCommitted {
            if recorder?.key == key { recorder?.committed() }
            return
        }
        if scope.pendingClaim == nil,
            let stored = try? store.read({
                try $0.idempotencyRecord(merchantID: merchant.id, environment: merchant.environment, key: key)
            }), stored.responseSealed != nil
        {
            if recorder?.key == key { recorder?.committed() }
            return
        }
        if recorder?.key == key { recorder?.candidate = nil }
        do {
            try store.write { tx in
                if var claim = scope.pendingClaim {
                    guard let finalResult else { return }
                    claim.recoveryPoint = "finished"
                    claim.lockedAt = nil
                    // Stored format (sealed idempotent results), read back by Codable.
                    claim.responseSealed = try cipher.seal(
                        Array(try JSONEncoder().encode(finalResult)), context: context)
                    _ = try tx.claimIdempotencyKey(claim)
                    return
                }
                guard
                    var record = try tx.idempotencyRecord(
                        merchantID: merchant.id, environment: merchant.environment, key: key)
                else { return }
                if record.responseSealed != nil { return }
                if let finalResult {
                    // Stored format (sealed idempotent results), read back by Codable.
                    record.responseSealed = try cipher.seal(
                        Array(try JSONEncoder().encode(finalResult)), context: context)
                    record.lockedAt = nil
                    try tx.updateIdempotencyRecord(record)
                } else if scope.currentPoint == "started" {
                    try tx.deleteIdempotencyRecord(merchantID: merchant.id, environment: merchant.environment, key: key)
                } else {
                    // Unlock so a retry resumes from the recovery point at once.
                    record.lockedAt = nil
                    try tx.updateIdempotencyRecord(record)
                }
            }
        } catch {
            // The work is done; a retry after the lock timeout resumes from the recovery point.
        }
    }
}
