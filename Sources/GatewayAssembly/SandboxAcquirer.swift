import ApplePaySandbox
import Foundation
import Gateway
import OrchardCrypto

/// A deterministic acquirer for the sandbox, tests and load tests. Its scenarios (also in docs/gateway.md):
///
/// By amount (minor units, last two digits): `…05` declined `do_not_honor`; `…51` declined
/// `insufficient_funds`; `…91` issuer timeout — the call answers `timeout`, and a query after
/// ``Configuration/unknownResolutionDelay`` reports it approved; `…99` approved after
/// ``Configuration/slowDelay``. By account number: see ``declinedAccountNumbers``. An expired card is
/// declined `expired_card`; a missing cryptogram `invalid_cryptogram`.
/// Captures: once, at most the authorized amount, not after a void. Voids: only before capture.
/// Refunds: captured payments, total at most the captured amount. Repeated operation ids answer the first
/// outcome. Every call waits ``Configuration/latency`` first.
///
/// Its books are the ledger's (``SandboxAcquirerLedger``): each capture, void or refund is one conditional update
/// there, so instances sharing a database keep them exact without a lock of their own; a read beforehand only
/// names the decline.
public final class SandboxAcquirer: Processor, Sendable {
    /// Delays and clocks of the sandbox acquirer.
    public struct Configuration: Sendable {
        /// Waited at the start of every call (load tests inject latency here).
        public var latency: TimeInterval = 0
        /// The extra wait of `…99` amounts.
        public var slowDelay: TimeInterval = 2
        /// How long after a `…91` timeout a query reports the authorization approved.
        public var unknownResolutionDelay: TimeInterval = 60
        public init() {}
    }

    /// Test account numbers that always decline, with their codes (``SandboxTestCard/declined`` among them).
    public static let declinedAccountNumbers: [String: String] = [
        SandboxTestCard.declined.pan: "do_not_honor",
        "4000000000009995": "insufficient_funds",
        "4000000000000069": "expired_card",
        "4000000000000119": "processing_error",
        "5100000000000511": "do_not_honor",
    ]

    public let name = "sandbox"
    private let ledger: any SandboxAcquirerLedger
    private let clock: any GatewayClock
    private let configuration: Configuration

    public init(ledger: any SandboxAcquirerLedger, clock: any GatewayClock, configuration: Configuration = .init()) {
        self.ledger = ledger
        self.clock = clock
        self.configuration = configuration
    }

    private func wait(_ seconds: TimeInterval) {
        if seconds > 0 { Thread.sleep(forTimeInterval: seconds) }
    }

    public func authorize(_ request: AuthorizationRequest) -> AuthorizationOutcome {
        wait(configuration.latency)
        // The account number is compared and cut as bytes: it never becomes a String here either.
        let testDecline = request.accountNumber.withUnsafeBytes { digits in
            Self.declinedAccountNumbers.first { $0.key.utf8.elementsEqual(digits) }?.value
        }
        let lastFour = request.accountNumber.withUnsafeBytes { String(decoding: $0.suffix(4), as: UTF8.self) }
        let now = clock.now()
        var decline: String?
        var pending = false
        if let code = testDecline {
            decline = code
        } else if isExpired(request.expirationDate, now: now) {
            decline = "expired_card"
        } else if (request.cryptogram?.count ?? 0) == 0 {
            decline = "invalid_cryptogram"
        } else {
            switch request.amount % 100 {
            case 5: decline = "do_not_honor"
            case 51: decline = "insufficient_funds"
            case 91: pending = true
            case 99: wait(configuration.slowDelay)
            default: break
            }
        }
        let authorization = SandboxAuthorization(
            reference: (try? Identifiers.ordered("acq_", 20, at: now)) ?? "acq_" + UUID().uuidString,
            merchantReference: request.merchantReference, merchantID: request.merchantID, amount: request.amount,
            currency: request.currency, lastFour: lastFour,
            status: decline != nil ? .declined : pending ? .pending : .approved, declineCode: decline,
            authCode: Self.authCode(), capturedAmount: 0, refundedAmount: 0, voided: false, createdAt: now,
            resolvesAt: pending ? now.addingTimeInterval(configuration.unknownResolutionDelay) : nil)
        do { try ledger.insertAcquirerAuthorization(authorization) } catch { return .unknown }
        if let decline { return .declined(code: decline) }
        if pending { return .timeout }
        return .approved(ProcessorApproval(reference: authorization.reference, authCode: authorization.authCode))
    }

    public func query(merchantReference: String) -> ProcessorQueryResult {
        wait(configuration.latency)
        guard let all = try? ledger.acquirerAuthorizations(merchantReference: merchantReference), var latest = all.last
        else { return .notFound }
        if latest.status == .pending, let resolvesAt = latest.resolvesAt, clock.now() >= resolvesAt {
            // Only the status moves (never the amounts another instance may be booking), and only from pending.
            guard (try? ledger.approvePendingAcquirerAuthorization(reference: latest.reference)) != nil else {
                return .pending
            }
            latest.status = .approved
        }
        switch latest.status {
        case .approved: return .approved(ProcessorApproval(reference: latest.reference, authCode: latest.authCode))
        case .declined: return .declined(code: latest.declineCode ?? "declined")
        case .pending: return .pending
        }
    }

    public func capture(
        reference: String, amount: Int64, currency: String, operationID: String
    )
        -> ProcessorOperationOutcome
    {
        operate(
            id: operationID, reference: reference, kind: "capture", amount: amount,
            entry: .capture(amount: amount, currency: currency), lost: "already_captured"
        ) { auth in
            guard auth.status == .approved else { return "authorization_not_approved" }
            if auth.voided { return "authorization_voided" }
            if auth.capturedAmount > 0 { return "already_captured" }
            if currency != auth.currency { return "currency_mismatch" }
            if amount <= 0 || amount > auth.amount { return "amount_exceeds_authorization" }
            return nil
        }
    }

    public func void(reference: String, operationID: String) -> ProcessorOperationOutcome {
        operate(id: operationID, reference: reference, kind: "void", amount: 0, entry: .void, lost: "already_captured") {
            auth in
            guard auth.status == .approved else { return "authorization_not_approved" }
            if auth.voided { return "already_voided" }
            if auth.capturedAmount > 0 { return "already_captured" }
            return nil
        }
    }

    public func refund(
        reference: String, amount: Int64, currency: String, operationID: String
    )
        -> ProcessorOperationOutcome
    {
        operate(
            id: operationID, reference: reference, kind: "refund", amount: amount,
            entry: .refund(amount: amount, currency: currency), lost: "amount_exceeds_capture"
        ) { auth in
            guard auth.capturedAmount > 0 else { return "not_captured" }
            if currency != auth.currency { return "currency_mismatch" }
            if amount <= 0 || auth.refundedAmount + amount > auth.capturedAmount { return "amount_exceeds_capture" }
            return nil
        }
    }

    /// Runs a capture/void/refund once per operation id. `check` names the decline on the books as read now, or
    /// nil; then the ledger books `entry` with its conditional update, which alone decides: an entry another
    /// instance made impossible in the meantime is declined `lost`.
    private func operate(
        id: String, reference: String, kind: String, amount: Int64, entry: SandboxBookEntry, lost: String,
        check: (SandboxAuthorization) -> String?
    ) -> ProcessorOperationOutcome {
        wait(configuration.latency)
        do {
            if let previous = try ledger.acquirerOperation(id: id) { return Self.outcome(previous) }
            var decline: String? = "unknown_reference"
            if let authorization = try ledger.acquirerAuthorization(reference: reference) { decline = check(authorization) }
            let operation = SandboxOperation(
                id: id, reference: reference, kind: kind, amount: amount, succeeded: decline == nil,
                declineCode: decline, createdAt: clock.now())
            return Self.outcome(try ledger.bookAcquirerOperation(operation, entry: entry, declineCode: lost))
        } catch {
            return .unknown
        }
    }

    private static func outcome(_ operation: SandboxOperation) -> ProcessorOperationOutcome {
        operation.succeeded ? .succeeded : .declined(code: operation.declineCode ?? "declined")
    }

    private func isExpired(_ yymmdd: String, now: Date) -> Bool {
        guard yymmdd.count == 6, let yy = Int(yymmdd.prefix(2)), let mm = Int(yymmdd.dropFirst(2).prefix(2)) else {
            return true
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month], from: now)
        let year = 2000 + yy
        return (year, mm) < (parts.year!, parts.month!)
    }

    private static func authCode() -> String {
        let bytes = (try? SecureRandom.bytes(3)) ?? [0, 0, 0]
        let value = (Int(bytes[0]) << 16 | Int(bytes[1]) << 8 | Int(bytes[2])) % 1_000_000
        let text = String(value)
        return String(repeating: "0", count: 6 - text.count) + text
    }
}
