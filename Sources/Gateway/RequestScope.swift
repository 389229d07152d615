/// What one request or command carries into the domain besides its arguments: who makes it (the audit log's
/// actor) and, for an idempotent operation, the transport's answer to store with the result. The domain reports
/// back on it whether an idempotent operation answered from its stored result.
///
/// The transport makes one per request (the HTTP layer, with the credential's actor and its stored-answer
/// recorder) and a command one per command line (``AuditActor/cli(_:)``), and passes it to each operation:
///
/// ```swift
/// let scope = RequestScope(actor: .cli("orchard merchant disable"))
/// try registry.setDisabled(merchantID: id, true, scope: scope)
/// ```
///
/// Every operation that records an audit entry or holds an idempotency key takes one. Its default,
/// ``unattributed``, is for work no caller is named for (tests, in-process tools): recorded as
/// ``AuditActor/unknown``.
public final class RequestScope: @unchecked Sendable {  // made, passed and read on the request's thread
    /// Who the audit log records for the changes made with this scope.
    public let actor: AuditActor
    /// The transport's answer to store in the same transaction as an idempotent operation's result, when the
    /// transport renders one (``StoredAnswerRecorder``).
    public let answerRecorder: StoredAnswerRecorder?
    /// Whether an idempotent operation called with this scope answered from its stored result (a value or a final
    /// error) rather than running, so that the transport's answer can say so (`Idempotent-Replayed: true`), also
    /// when its own stored answer was not written yet.
    public internal(set) var replayed = false

    /// A scope whose changes are recorded as `actor`'s, storing `answerRecorder`'s answer with an idempotent
    /// result.
    public init(actor: AuditActor, answerRecorder: StoredAnswerRecorder? = nil) {
        self.actor = actor
        self.answerRecorder = answerRecorder
    }

    /// A new scope for work no caller is named for: recorded as ``AuditActor/unknown``, with no stored answer.
    public static var unattributed: RequestScope { RequestScope(actor: .unknown) }
}
