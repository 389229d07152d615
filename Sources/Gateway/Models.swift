import Foundation

/// Where a merchant's data lives: sandbox and production data never mix (every lookup is scoped by it).
public enum GatewayEnvironment: String, Sendable, Codable, CaseIterable {
    case sandbox
    case production
}

/// A payment's state. Transitions are checked by ``canTransition(to:)`` and recorded with time and cause.
///
///     processing → authorized → captured → partially_refunded → refunded
///     processing → failed | unknown;  unknown → authorized | failed;  authorized → voided
///
/// A processor that answers a capture, void or refund "accepted, outcome to follow" puts the payment in a pending
/// state its notification (or a query) ends:
///
///     authorized → capture_pending → captured | authorized (the capture refused)
///     authorized → void_pending → voided | authorized (the void refused)
///     captured | partially_refunded → refund_pending → partially_refunded | refunded | captured (all refused)
///
/// and later notifications undo or dispute what was done: a capture that failed after it was reported
/// (captured → authorized), a refund that failed or was reversed after it succeeded (refunded | partially_refunded
/// → partially_refunded | captured), a chargeback (→ charged_back).
public enum PaymentStatus: String, Sendable, Codable, CaseIterable {
    case processing
    case authorized
    /// The processor accepted a capture and answers its outcome later.
    case capturePending = "capture_pending"
    case captured
    /// The processor accepted a refund and answers its outcome later.
    case refundPending = "refund_pending"
    case partiallyRefunded = "partially_refunded"
    case refunded
    /// The processor accepted a void and answers its outcome later.
    case voidPending = "void_pending"
    case voided
    /// The cardholder's bank took the money back (a chargeback notification).
    case chargedBack = "charged_back"
    case failed
    case unknown

    /// Whether the state machine allows moving from this state to `next`.
    public func canTransition(to next: PaymentStatus) -> Bool {
        switch (self, next) {
        case (.processing, .authorized), (.processing, .failed), (.processing, .unknown): true
        case (.unknown, .authorized), (.unknown, .failed): true
        case (.authorized, .captured), (.authorized, .voided), (.authorized, .capturePending),
            (.authorized, .voidPending):
            true
        case (.capturePending, .captured), (.capturePending, .authorized): true
        case (.voidPending, .voided), (.voidPending, .authorized): true
        case (.captured, .partiallyRefunded), (.captured, .refunded), (.captured, .refundPending),
            (.captured, .authorized), (.captured, .chargedBack):
            true
        case (.refundPending, .refundPending), (.refundPending, .captured), (.refundPending, .partiallyRefunded),
            (.refundPending, .refunded), (.refundPending, .chargedBack):
            true
        case (.partiallyRefunded, .partiallyRefunded), (.partiallyRefunded, .refunded),
            (.partiallyRefunded, .refundPending), (.partiallyRefunded, .captured), (.partiallyRefunded, .chargedBack):
            true
        case (.refunded, .partiallyRefunded), (.refunded, .captured), (.refunded, .chargedBack): true
        default: false
        }
    }

    /// States that a processor outcome settled and that must have an event (`processing`/`unknown` are not).
    public var isSettled: Bool { self != .processing && self != .unknown }

    /// Whether the processor approved the payment's authorization (whatever followed it).
    public var wasAuthorized: Bool { self != .processing && self != .unknown && self != .failed }
}

/// When an authorized payment is captured.
public enum CaptureMode: Sendable, Hashable, Codable {
    /// Right after authorization, in the same request.
    case now
    /// Automatically, this many days after authorization (the reconciliation job captures it).
    case afterDays(Int)
    /// Only when the merchant calls capture.
    case manual
}

/// Card information derived from the token and the merchant's BIN table (TapPay's `card_info`).
public struct CardInfo: Sendable, Hashable, Codable {
    /// The first six to eight digits of the (device) account number.
    public var binCode: String
    /// The last four digits.
    public var lastFour: String
    /// 1 VISA, 2 MasterCard, 3 JCB, 4 UnionPay, 5 AMEX, -1 unknown.
    public var type: Int
    /// 0 credit, 1 debit, 2 prepaid, -1 unknown.
    public var funding: Int
    /// The network name as the token gives it (`Visa`, `MasterCard` …).
    public var network: String?
    /// From the merchant's BIN table, when it has the BIN.
    public var issuer: String?
    public var bankID: String?
    public var level: String?
    public var country: String?
    public var countryCode: String?
    /// The issuer's name in Traditional Chinese (TapPay's `issuer_zh_tw`), from the BIN table.
    public var issuerZhTW: String?

    public init(
        binCode: String, lastFour: String, type: Int, funding: Int, network: String? = nil, issuer: String? = nil,
        bankID: String? = nil, level: String? = nil, country: String? = nil, countryCode: String? = nil,
        issuerZhTW: String? = nil
    ) {
        self.binCode = binCode
        self.lastFour = lastFour
        self.type = type
        self.funding = funding
        self.network = network
        self.issuer = issuer
        self.bankID = bankID
        self.level = level
        self.country = country
        self.countryCode = countryCode
        self.issuerZhTW = issuerZhTW
    }

    /// The TapPay card type number of an Apple Pay network name.
    public static func typeNumber(network: String?) -> Int {
        switch network?.lowercased() {
        case "visa": 1
        case "mastercard": 2
        case "jcb": 3
        case "chinaunionpay", "unionpay": 4
        case "amex", "americanexpress": 5
        default: -1
        }
    }

    /// The TapPay funding number of an Apple Pay payment method type.
    public static func fundingNumber(methodType: String?) -> Int {
        switch methodType?.lowercased() {
        case "credit": 0
        case "debit": 1
        case "prepaid": 2
        default: -1
        }
    }
}

/// The cardholder as the merchant server describes them.
public struct Cardholder: Sendable, Hashable, Codable {
    public var name: String?
    public var email: String?
    public var phoneNumber: String?
    public var zipCode: String?
    public var address: String?
    public var nationalID: String?

    public init(
        name: String? = nil, email: String? = nil, phoneNumber: String? = nil, zipCode: String? = nil,
        address: String? = nil, nationalID: String? = nil
    ) {
        self.name = name
        self.email = email
        self.phoneNumber = phoneNumber
        self.zipCode = zipCode
        self.address = address
        self.nationalID = nationalID
    }
}

/// A refund of part or all of a captured payment.
public struct Refund: Sendable, Hashable, Codable {
    /// Where a refund stands.
    public enum Status: String, Sendable, Codable {
        /// Sent (or about to be sent) to the processor; reconciliation finishes it.
        case pending
        case succeeded
        case failed
    }
    /// `re_…`
    public var id: String
    public var paymentID: String
    /// Minor units.
    public var amount: Int64
    /// ISO 4217 alphabetic code.
    public var currency: String
    public var status: Status
    public var reason: String?
    /// The processor's decline code, for `failed`.
    public var declineCode: String?
    public var createdAt: Date
    public var updatedAt: Date
    /// The processor's reference for the refund, once it accepted it (a pending refund with one is answered by a
    /// notification or a query, never sent again).
    package var processorReference: String?

    public init(
        id: String, paymentID: String, amount: Int64, currency: String, status: Status, reason: String?,
        declineCode: String?, createdAt: Date, updatedAt: Date
    ) {
        self.id = id
        self.paymentID = paymentID
        self.amount = amount
        self.currency = currency
        self.status = status
        self.reason = reason
        self.declineCode = declineCode
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// A payment: one authorization and what followed it.
public struct Payment: Sendable, Hashable, Codable {
    /// `pay_…`
    public var id: String
    public var merchantID: String
    public var environment: GatewayEnvironment
    public var status: PaymentStatus
    /// The authorized amount, in minor units.
    public var amount: Int64
    /// ISO 4217 alphabetic code.
    public var currency: String
    /// The captured amount (0 until captured).
    public var capturedAmount: Int64
    /// The sum of succeeded refunds.
    public var refundedAmount: Int64
    /// The merchant's order number (prime flow) or the session's out_trade_no (session flow).
    public var orderNumber: String?
    /// The session's out_trade_no, for session payments.
    public var outTradeNo: String?
    /// The order session, for session payments.
    public var sessionID: String?
    public var details: String?
    public var cardholder: Cardholder?
    public var metadata: [String: String]
    public var cardInfo: CardInfo
    public var captureMode: CaptureMode
    /// When the reconciliation job captures it (`now` and `afterDays` modes).
    public var captureAt: Date?
    public var authCode: String?
    /// The processor's name.
    public var acquirer: String
    /// The processor's reference for the authorization.
    public var acquirerReference: String?
    /// Why the payment failed (decline code or a short cause).
    public var failureCode: String?
    /// The processor's own code for a declined authorization, as it answered it (the API's `processor_code`).
    public var processorCode: String?
    public var createdAt: Date
    public var updatedAt: Date
    public var authorizedAt: Date?
    public var capturedAt: Date?
    public var voidedAt: Date?
    /// Refunds, newest last (filled when read).
    public var refunds: [Refund]
    /// When the authorization was handed to the processor; from then on, only a query may settle it.
    package var authorizationSentAt: Date?
    /// A capture or void sent to the processor whose answer is not recorded yet, or that it accepted and answers
    /// later (`capture_pending`, `void_pending`).
    package var pendingOperation: PendingOperation?
    /// The version of the merchant's processor settings the payment was authorized under (its capture, void and
    /// refund go to the same processor); nil for the gateway's own processor (the sandbox acquirer).
    package var processorSettingsVersion: Int?
    /// The merchant's own unique reference for the charge at the bank (TapPay's `bank_transaction_id`): one
    /// payment per value and merchant, ever.
    public var bankTransactionID: String? = nil
}

/// A capture or void in flight at the processor, kept so a crash or timeout is finished with the same id.
package struct PendingOperation: Sendable, Hashable, Codable {
    package enum Kind: String, Sendable, Codable { case capture, void }
    package var kind: Kind
    package var operationID: String
    package var amount: Int64
}

/// One recorded state change of a payment.
public struct PaymentTransition: Sendable, Hashable, Codable {
    public var paymentID: String
    /// nil for the creation.
    public var from: PaymentStatus?
    public var to: PaymentStatus
    public var at: Date
    /// Why (`authorization approved`, `capture`, `reconciled: processor reports approved` …).
    public var cause: String

    public init(paymentID: String, from: PaymentStatus?, to: PaymentStatus, at: Date, cause: String) {
        self.paymentID = paymentID
        self.from = from
        self.to = to
        self.at = at
        self.cause = cause
    }
}

/// What tokenization returns: a one-time prime and the card's information.
public struct PrimeResult: Sendable, Hashable, Codable {
    /// The prime (shown once; only its hash is stored).
    public var prime: String
    /// When the prime expires.
    public var expiresAt: Date
    /// `expiresAt` as Unix milliseconds (TapPay's `prime_expiry_millis`).
    public var primeExpiryMillis: Int64
    public var cardInfo: CardInfo
    /// Co-brand codes for the card's BIN (`merchant_reference_info.affiliate_codes`).
    public var affiliateCodes: [String]
    /// The token's transaction amount, in minor units.
    public var totalAmount: Int64
    /// The token's currency, ISO 4217 alphabetic.
    public var currency: String
    /// Whether the payment request was deferred (30-day prime; pay skips the amount check if it confirms `deferred`).
    public var isDeferred: Bool
}

/// Pay-by-prime parameters (TapPay `pay-by-prime`).
public struct PayByPrimeRequest: Sendable, Hashable, Codable {
    public var prime: String
    /// Minor units.
    public var amount: Int64
    /// ISO 4217 alphabetic code.
    public var currency: String
    public var orderNumber: String?
    /// At most 100 characters.
    public var details: String?
    public var cardholder: Cardholder?
    public var captureMode: CaptureMode
    public var metadata: [String: String]
    /// The merchant's server confirms a deferred payment: only then does a deferred prime skip the amount
    /// check (the prime's deferred flag comes from the client). `true` on a non-deferred prime is refused.
    public var deferred: Bool
    /// The merchant's unique reference for the charge (TapPay's `bank_transaction_id`); a value another payment
    /// of the merchant already has is refused (`duplicate_bank_transaction_id`) before the prime is claimed.
    public var bankTransactionID: String?

    public init(
        prime: String, amount: Int64, currency: String, orderNumber: String? = nil, details: String? = nil,
        cardholder: Cardholder? = nil, captureMode: CaptureMode = .now, metadata: [String: String] = [:],
        deferred: Bool = false, bankTransactionID: String? = nil
    ) {
        self.bankTransactionID = bankTransactionID
        self.prime = prime
        self.amount = amount
        self.currency = currency
        self.orderNumber = orderNumber
        self.details = details
        self.cardholder = cardholder
        self.captureMode = captureMode
        self.metadata = metadata
        self.deferred = deferred
    }
}

/// An order session (PayerMax flow): the amount is fixed on the server before the sheet opens.
public struct OrderSession: Sendable, Hashable, Codable {
    /// Where a session stands.
    public enum Status: String, Sendable, Codable {
        case open
        /// A payment is being authorized for it.
        case processing
        case completed
    }
    /// `ses_…`
    public var id: String
    /// The token the client uses to fetch and pay the session (`ot_…`).
    public var orderToken: String
    public var merchantID: String
    public var environment: GatewayEnvironment
    public var outTradeNo: String
    public var amount: Int64
    public var currency: String
    /// ISO 3166 alpha-2.
    public var country: String
    public var subject: String?
    public var userID: String?
    public var notifyURL: String?
    public var status: Status
    public var paymentID: String?
    /// What the client needs to build the Apple Pay request.
    public var merchantIdentifier: String
    public var supportedNetworks: [String]
    public var merchantCapabilities: [String]
    public var expiresAt: Date
    public var createdAt: Date
    /// The form of the result notification sent to ``notifyURL``: nil for Orchard's own webhook event,
    /// ``SessionNotifyFormat/payerMax`` for a session made through PayerMax's `applyApplePaySession` (Orchard's own
    /// events then go to the merchant's webhook endpoint).
    public var notifyFormat: SessionNotifyFormat? = nil
}

/// The form of a session's result notification to its notify URL.
public struct SessionNotifyFormat: RawRepresentable, Hashable, Sendable, Codable {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// PayerMax's `collectResultNotifyUrl` notification, signed with the gateway's compatibility key (`sign`).
    public static let payerMax = SessionNotifyFormat(rawValue: "payermax")
}

/// Create-session parameters.
public struct CreateSessionRequest: Sendable, Hashable, Codable {
    public var outTradeNo: String
    public var amount: Int64
    public var currency: String
    public var country: String
    public var subject: String?
    public var userID: String?
    public var notifyURL: String?
    /// How long the session can be paid, in seconds; nil for the configured session lifetime.
    public var lifetime: TimeInterval?
    /// The form of the result notification to ``notifyURL`` (``OrderSession/notifyFormat``).
    public var notifyFormat: SessionNotifyFormat?

    public init(
        outTradeNo: String, amount: Int64, currency: String, country: String, subject: String? = nil,
        userID: String? = nil, notifyURL: String? = nil, lifetime: TimeInterval? = nil,
        notifyFormat: SessionNotifyFormat? = nil
    ) {
        self.notifyFormat = notifyFormat
        self.outTradeNo = outTradeNo
        self.amount = amount
        self.currency = currency
        self.country = country
        self.subject = subject
        self.userID = userID
        self.notifyURL = notifyURL
        self.lifetime = lifetime
    }
}

/// Filters of the record query; every field is optional. Results are newest first.
public struct PaymentQuery: Sendable, Hashable, Codable {
    public var createdFrom: Date?
    /// Exclusive.
    public var createdTo: Date?
    /// ISO 4217 alphabetic code; the amount bounds are minor units of it.
    public var currency: String?
    public var minAmount: Int64?
    public var maxAmount: Int64?
    public var statuses: [PaymentStatus]
    public var orderNumber: String?
    public var outTradeNo: String?
    /// The card's last four digits.
    public var lastFour: String?
    /// The payment with this bank transaction id (``Payment/bankTransactionID``).
    public var bankTransactionID: String?
    /// 1…100.
    public var limit: Int
    /// The `nextCursor` of the previous page.
    public var cursor: String?

    public init(
        createdFrom: Date? = nil, createdTo: Date? = nil, currency: String? = nil, minAmount: Int64? = nil,
        maxAmount: Int64? = nil, statuses: [PaymentStatus] = [], orderNumber: String? = nil,
        outTradeNo: String? = nil, lastFour: String? = nil, bankTransactionID: String? = nil, limit: Int = 20,
        cursor: String? = nil
    ) {
        self.bankTransactionID = bankTransactionID
        self.createdFrom = createdFrom
        self.createdTo = createdTo
        self.currency = currency
        self.minAmount = minAmount
        self.maxAmount = maxAmount
        self.statuses = statuses
        self.orderNumber = orderNumber
        self.outTradeNo = outTradeNo
        self.lastFour = lastFour
        self.limit = limit
        self.cursor = cursor
    }
}

/// One page of the record query.
public struct PaymentPage: Sendable, Hashable {
    public var payments: [Payment]
    /// Pass as `cursor` for the next page; nil on the last page.
    public var nextCursor: String?
}

/// A position in the newest-first payment listing (creation time, then id).
public struct PaymentCursor: Sendable, Hashable, ListingCursor {
    public var createdAt: Date
    public var id: String

    public init(createdAt: Date, id: String) {
        self.createdAt = createdAt
        self.id = id
    }
}

/// A position in a newest-first listing, with the one text form every listing's `next_cursor` uses:
/// `cur_<creation time in Unix milliseconds>_<id>` (openapi.yaml's `Cursor` pattern).
public protocol ListingCursor {
    var createdAt: Date { get }
    var id: String { get }
    init(createdAt: Date, id: String)
}

extension ListingCursor {
    /// The text form (`cur_1796009005000_pay_…`).
    public var text: String { "cur_\(createdAt.unixMilliseconds)_\(id)" }

    /// Parses the text form; nil when it is not one: `cur_`, 1 to 15 digits, `_`, and an id of 1 to 64 ASCII
    /// letters, digits and underscores.
    public init?(text: String) {
        let parts = text.utf8.split(separator: UInt8(ascii: "_"), maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].elementsEqual("cur".utf8), (1...15).contains(parts[1].count),
            parts[1].allSatisfy({ (0x30...0x39).contains($0) }), let millis = Int64(Substring(parts[1])),
            (1...64).contains(parts[2].count),
            parts[2].allSatisfy({
                $0 == UInt8(ascii: "_") || ($0 < 0x80 && Character(Unicode.Scalar($0)).isLetter)
                    || (0x30...0x39).contains($0)
            })
        else { return nil }
        self.init(createdAt: Date(unixMilliseconds: millis), id: String(Substring(parts[2])))
    }

    /// The position a listing was asked to start after (its `param`: `cursor`, `starting_after`): nil without
    /// one, `invalid_cursor` with `reason` when `text` is not a cursor.
    package static func parse(
        _ text: String?, param: String, reason: String = "this cursor was not issued by this server"
    ) throws(GatewayError) -> Self? {
        guard let text else { return nil }
        guard let cursor = Self(text: text) else { throw GatewayError(.invalidCursor, reason, param: param) }
        return cursor
    }

    /// The first `limit` of `rows` (read with one row more than `limit`) and the text of the cursor after the
    /// last of them when more follow (nil on the last page). `position` gives a row's creation time and id.
    package static func page<Row>(
        _ rows: [Row], limit: Int, position: (Row) -> (createdAt: Date, id: String)
    ) -> (rows: [Row], next: String?) {
        let page = Array(rows.prefix(limit))
        guard rows.count > limit, let last = page.last else { return (page, nil) }
        let (createdAt, id) = position(last)
        return (page, Self(createdAt: createdAt, id: id).text)
    }
}
