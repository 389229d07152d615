import ApplePayModel
import Foundation
import OrchardBase
import OrchardCrypto
import OrchardJSON

/// Tunables of the gateway; every field has a sensible default.
public struct GatewayConfiguration: Sendable {
    /// How long an order session can be paid.
    public var sessionLifetime: TimeInterval = 30 * 60
    /// How long finished idempotent results are replayed (24 hours).
    public var idempotencyRetention: TimeInterval = 24 * 3600
    /// After this long a key's holder is presumed dead and a retry resumes its request.
    public var idempotencyLockTimeout: TimeInterval = 60
    /// Reconciliation only touches payments, captures and refunds untouched for this long, so it never races
    /// a live request.
    public var reconciliationDelay: TimeInterval = 5 * 60
    /// The longest an authorization call to the processor may take. A processor query that finds nothing
    /// this long after the call was made proves the authorization never arrived (the payment fails); sooner,
    /// the payment waits in `unknown`. Keep it below ``idempotencyLockTimeout`` and ``reconciliationDelay``.
    public var authorizationTimeout: TimeInterval = 30
    /// The longest capture delay `afterDays` accepts.
    public var maxCaptureDelayDays = 30
    /// How long a console session lasts after its sign-in however it is used (on top of the 8-hour idle timeout,
    /// ``ConsoleSessionRules/idleTimeout``); within ``ConsoleSessionRules/lifetimeRange``. Default 24 hours.
    public var consoleSessionLifetime: TimeInterval = ConsoleSessionRules.defaultLifetime
    /// Host names no merchant may register as Apple Pay domains, each with the names below it: Apple's own
    /// (``MerchantRegistry/appleOwnedDomains``) and the gateway's own host names, which the operator adds
    /// (`orchard serve --apple-pay-denied-domains`).
    public var deniedApplePayDomains: [String] = MerchantRegistry.appleOwnedDomains

    public init() {}
}

/// A refund and the payment it belongs to, after the refund.
public struct RefundResult: Sendable, Hashable, Codable {
    public var refund: Refund
    public var payment: Payment
}

/// What one reconciliation run did.
public struct ReconciliationReport: Sendable, Hashable {
    /// Payments whose authorization outcome was settled from a processor query (or failed as never sent).
    public var settledPayments: [String] = []
    /// Payments captured (automatic captures and finished pending ones).
    public var capturedPayments: [String] = []
    /// Refunds finished.
    public var finishedRefunds: [String] = []
    /// Payments still unknown (the processor has no answer yet).
    public var stillUnknown: [String] = []
    /// Expired primes whose card data was dropped.
    public var purgedPrimes = 0
    /// Finished idempotency records older than the retention period, deleted.
    public var purgedIdempotencyRecords = 0
    /// Idempotent transport answers older than the retention period, deleted.
    public var purgedStoredResponses = 0
    /// Console sessions past their idle expiry (or signed out) for more than a day, deleted.
    public var purgedConsoleSessions = 0
}

/// The payment gateway's domain over a ``Store``, a ``Processor``, a ``PaymentTokenOpener`` and a ``GatewayClock``;
/// every call is synchronous and thread-safe. Its operations are grouped by aggregate: ``payments``, ``refunds``,
/// ``sessions``, ``webhooks``, ``keys`` and ``merchants``; it keeps what spans them (console sessions, processor
/// settings and notifications, the audit log, reports, stored answers) and the machinery they share.
public final class GatewayService: Sendable {
    public let configuration: GatewayConfiguration
    public let store: any Store
    public let processor: any Processor
    public let merchants: MerchantRegistry
    let tokenOpener: any PaymentTokenOpener
    let currencies: any CurrencyCatalog
    let paymentRequests: (any PaymentRequestEvaluator)?
    let clock: any GatewayClock
    let cipher: EnvelopeCipher
    /// The processor connectors merchants may configure, by type.
    let connectors: [String: any ProcessorConnector]
    /// The processors of the settings versions in use, by merchant and version (a version never changes).
    let processorCache = Locked<[String: any Processor]>([:])

    /// A gateway over `store`; `processor` is its own (the sandbox acquirer: a sandbox merchant's default), and
    /// `connectors` the processors merchants may configure (``ProcessorConnector``).
    public init(
        configuration: GatewayConfiguration = .init(), store: any Store, processor: any Processor,
        connectors: [any ProcessorConnector] = [], tokenOpener: any PaymentTokenOpener,
        currencies: any CurrencyCatalog, paymentRequests: (any PaymentRequestEvaluator)?, cipher: EnvelopeCipher,
        clock: any GatewayClock
    ) {
        self.configuration = configuration
        self.store = store
        self.processor = processor
        self.connectors = Dictionary(connectors.map { ($0.type, $0) }) { first, _ in first }
        self.tokenOpener = tokenOpener
        self.currencies = currencies
        self.paymentRequests = paymentRequests
        self.cipher = cipher
        self.clock = clock
        self.merchants = MerchantRegistry(
            store: store, cipher: cipher, clock: clock, deniedApplePayDomains: configuration.deniedApplePayDomains)
    }

    // MARK: - Helpers

    func write<T>(_ body: (any StoreTransaction) throws -> T) throws(GatewayError) -> T {
        try gatewayThrowing { try store.write(body) }
    }

    func read<T>(_ body: (any StoreTransaction) throws -> T) throws(GatewayError) -> T {
        try gatewayThrowing { try store.read(body) }
    }

    /// Writes a webhook event about a payment in the current transaction: its body holds the payment in the
    /// API's wire shape (with its refunds and transitions) as it is now.
    /// A session's result notification in another form (``OrderSession/notifyFormat``) goes to its notify URL beside
    /// this event, which then goes to the merchant's endpoint.
    func emit(_ type: WebhookEventType, payment: Payment, in tx: any StoreTransaction, at now: Date) throws {
        let session = try payment.sessionID.flatMap { try tx.session(id: $0) }
        try insert(
            try paymentEvent(
                type, payment: payment, refunds: try tx.refunds(paymentID: payment.id),
                transitions: try tx.transitions(paymentID: payment.id), deliveryURL: session?.orchardEventURL,
                at: now),
            in: tx)
        if let session, session.notifyFormat == .payerMax, let url = session.notifyURL,
            let result = PayerMaxNotification.Result(eventType: type),
            let merchant = try tx.merchant(id: payment.merchantID)
        {
            try insert(
                try PayerMaxNotification.event(
                    result, payment: payment, session: session, merchant: merchant, deliveryURL: url, at: now),
                in: tx)
        }
    }

    /// The outbox row of an event about `payment` with these refunds and transitions (its body rendered now,
    /// also before the transaction that inserts it).
    func paymentEvent(
        _ type: WebhookEventType, payment: Payment, refunds: [Refund], transitions: [PaymentTransition], deliveryURL: String?,
        at now: Date
    ) throws -> PreparedEvent {
        var withRefunds = payment
        withRefunds.refunds = refunds
        return try event(
            type, object: WireFormat.payment(withRefunds, transitions: transitions), objectID: payment.id,
            merchantID: payment.merchantID, deliveryURL: deliveryURL, at: now)
    }

    /// Writes a webhook event about a session in the current transaction (the session in the API's wire shape).
    func emit(_ type: WebhookEventType, session: OrderSession, in tx: any StoreTransaction, at now: Date) throws {
        let merchantName = try tx.merchant(id: session.merchantID)?.name ?? ""
        try emit(
            type, object: WireFormat.session(session, merchantName: merchantName, now: now), objectID: session.id,
            merchantID: session.merchantID, deliveryURL: session.orchardEventURL, in: tx, at: now)
    }

    /// Writes the outbox row of an event whose `data` is `object`: the body is final (``WebhookEventEnvelope``).
    func emit(
        _ type: WebhookEventType, object: [String: Any], objectID: String, merchantID: String, deliveryURL: String?,
        in tx: any StoreTransaction, at now: Date
    ) throws {
        try insert(
            try event(
                type, object: object, objectID: objectID, merchantID: merchantID, deliveryURL: deliveryURL, at: now),
            in: tx)
    }

    /// The outbox row of an event whose `data` is `object`, rendered (``WebhookEventEnvelope``).
    func event(
        _ type: WebhookEventType, object: [String: Any], objectID: String, merchantID: String, deliveryURL: String?, at now: Date
    ) throws -> PreparedEvent {
        let envelope = try WebhookEventEnvelope(
            id: try Identifiers.ordered("evt_", at: now), type: type.rawValue, createdAt: now, data: object)
        return PreparedEvent(
            event: envelope.event(merchantID: merchantID), objectID: objectID, deliveryURL: deliveryURL)
    }

    /// Inserts a rendered event's outbox row in `tx`.
    func insert(_ event: PreparedEvent, in tx: any StoreTransaction) throws {
        try tx.insertEvent(event.event, objectID: event.objectID, deliveryURL: event.deliveryURL)
    }

    func validateAmount(_ amount: Int64, currency: String, merchant: Merchant) throws(GatewayError) {
        guard currency.count == 3, let known = try? Currency(code: currency),
            currencies.numericCode(alphabetic: currency) != nil
        else {
            throw GatewayError(.unknownCurrency, "not an ISO 4217 currency code", param: "currency")
        }
        guard AmountRules.contains(amount, currency: known) else {
            throw .invalid(
                "amount",
                "more than zero, with at most \(AmountRules.maximumIntegerDigits) digits before the decimal point")
        }
        guard merchant.accepts(currency: currency) else {
            throw GatewayError(.currencyNotSupported, "the merchant does not accept \(currency)", param: "currency")
        }
    }

    /// Verifies and decrypts `token` with the merchant's active processing keys (`no_processing_key` without
    /// any); the caller erases the opened token when done.
    func openToken(_ token: SubmittedToken, for merchant: Merchant, at now: Date) throws(GatewayError) -> OpenedToken {
        let keys = try merchants.activeProcessingKeys(merchantID: merchant.id)
        guard !keys.isEmpty else { throw GatewayError(.noProcessingKey, "the merchant has no active processing key") }
        return try tokenOpener.open(token: token, environment: merchant.environment, keys: keys, at: now)
    }

    func ownedPayment(_ merchant: Merchant, _ id: String, in tx: any StoreTransaction) throws -> Payment {
        guard let payment = try tx.payment(id: id), payment.merchantID == merchant.id,
            payment.environment == merchant.environment
        else { throw GatewayError(.notFound, "no payment \(id)", param: "payment_id") }
        return payment
    }

    // MARK: - Primes

    /// Turns an opened token into a prime (replay check, card info, sealed storage), storing the result with
    /// the prime in one transaction.
    package func makePrime(
        merchant: Merchant, opened: OpenedToken, terms: PaymentRequestTerms, now: Date, scope: IdempotencyScope
    ) throws(GatewayError) -> PrimeResult {
        guard merchant.accepts(network: opened.network) else {
            throw GatewayError(.networkNotAllowed, "the merchant does not accept \(opened.networkLabel)")
        }
        guard let currency = currencies.alphabeticCode(numeric: opened.currencyNumericCode) else {
            throw GatewayError(.currencyNotSupported, "the token's currency is unknown")
        }
        guard merchant.accepts(currency: currency) else {
            throw GatewayError(.currencyNotSupported, "the merchant does not accept \(currency)")
        }
        if !terms.isDeferred, let totalCurrency = terms.totalCurrency, totalCurrency != currency {
            throw GatewayError(
                .currencyMismatch, "the token's currency differs from the payment request's", param: "token")
        }
        if !terms.isDeferred, let totalAmount = terms.totalAmount, totalAmount != opened.amount {
            throw GatewayError(.amountMismatch, "the token's amount differs from the payment request's", param: "token")
        }
        let cardInfo = try self.cardInfo(merchant: merchant, opened: opened)
        let affiliateCodes = try read { tx in
            try tx.coBrandCodes(
                merchantID: merchant.id, bin: Int64(opened.bin.padding(toLength: 8, withPad: "0", startingAt: 0)) ?? -1)
        }
        let prime = "prm_" + Hex.encode(try gatewayThrowing { try SecureRandom.bytes(24) })
        let hash = Identifiers.sha256Hex(prime)
        var packed = CardSecret.pack(opened)
        defer { SecureBytes.zero(&packed) }
        let sealed = try cipher.seal(packed, context: SealingContext.primeCardData(primeHash: hash))
        let expiresAt = now.addingTimeInterval(terms.primeLifetime)
        let result = PrimeResult(
            prime: prime, expiresAt: expiresAt,
            primeExpiryMillis: expiresAt.unixMilliseconds,
            cardInfo: cardInfo, affiliateCodes: affiliateCodes, totalAmount: opened.amount, currency: currency,
            isDeferred: terms.isDeferred)
        let record = PrimeRecord(
            hash: hash, merchantID: merchant.id, environment: merchant.environment, amount: opened.amount,
            currency: currency, isDeferred: terms.isDeferred, cardInfo: cardInfo, cardDataSealed: sealed,
            createdAt: now,
            expiresAt: expiresAt, claimedAt: nil, paymentID: nil)
        // Encoded, sealed and rendered here, on the request's thread: the write below only binds bytes.
        let completion = try gatewayThrowing { try scope.prepare(result, records: PreparedRecords()) }
        try write { tx in
            // A fresh key is claimed in this transaction: the prime, its replay check and the key's result
            // are one commit.
            try scope.claim(in: tx)
            guard
                try tx.recordTransactionID(
                    merchantID: merchant.id, environment: merchant.environment, transactionID: opened.transactionID,
                    at: now)
            else { throw GatewayError(.tokenReplayed, "this token was already used") }
            try tx.insertPrime(record)
            try scope.complete(completion, in: tx)
        }
        scope.claimCommitted()
        scope.completionCommitted()
        return result
    }

    func cardInfo(merchant: Merchant, opened: OpenedToken) throws(GatewayError) -> CardInfo {
        let bin = opened.bin
        let prefixes = opened.binPrefixes
        let entries = try read { try $0.binEntries(merchantID: merchant.id, prefixes: prefixes) }
        let best = entries.max { $0.prefix.count < $1.prefix.count }
        var funding = CardInfo.fundingNumber(methodType: opened.methodType)
        if let override = best?.funding, override >= 0 { funding = override }
        return CardInfo(
            binCode: String(bin.prefix(6)), lastFour: opened.lastFour,
            type: CardInfo.typeNumber(network: opened.network),
            funding: funding, network: opened.network, issuer: best?.issuer, bankID: best?.bankID, level: best?.level,
            country: best?.country, countryCode: best?.countryCode, issuerZhTW: best?.issuerZhTW)
    }

    /// Checks that `processor` takes `payment` with `card` (``Processor/check(_:)``: `payment_data_type_unsupported`
    /// …) and returns the card data sealed for the payment when the processor resends a lost authorization (it
    /// keeps it until the outcome is recorded), else nil.
    func admit(_ payment: Payment, card: SecureBytes, processor: any Processor) throws(GatewayError) -> Data? {
        var secret = try CardSecret.unpack(card)
        defer {
            secret.accountNumber.erase()
            secret.cryptogram?.erase()
        }
        try processor.check(Self.authorizationRequest(payment, card: secret))
        guard processor.authorizationRecovery == .resend else { return nil }
        return try cipher.seal(card, context: SealingContext.paymentCardData(paymentID: payment.id))
    }

    func validate(cardholder: Cardholder?) throws(GatewayError) {
        guard let cardholder else { return }
        let fields: [(String, String?)] = [
            ("name", cardholder.name), ("email", cardholder.email), ("phone_number", cardholder.phoneNumber),
            ("zip_code", cardholder.zipCode), ("address", cardholder.address), ("national_id", cardholder.nationalID),
        ]
        for (name, value) in fields {
            try FieldLimits.checkText(value, atMost: FieldLimits.cardholder[name] ?? 0, param: "cardholder." + name)
        }
        if let email = cardholder.email, !Self.isEmailAddress(email) {
            throw .invalid("cardholder.email", "an email address (local@domain.example)")
        }
    }

    /// An addr-spec's shape (openapi.yaml's `format: email`): one `@` between a non-empty local part and a
    /// domain of dot-separated labels, with no spaces, control characters, quotes or brackets.
    static func isEmailAddress(_ text: String) -> Bool {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, let local = parts.first, let domain = parts.last, !local.isEmpty,
            !local.hasPrefix("."), !local.hasSuffix("."), !local.contains("..")
        else { return false }
        let allowedLocal = Set("!#$%&'*+-/=?^_`{|}~.")
        guard local.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || allowedLocal.contains($0)) }) else {
            return false
        }
        let labels = domain.split(separator: ".", omittingEmptySubsequences: false)
        return labels.count >= 2
            && labels.allSatisfy { label in
                (1...63).contains(label.count) && !label.hasPrefix("-") && !label.hasSuffix("-")
                    && label.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
            }
    }

    func validate(metadata: [String: String]) throws(GatewayError) {
        guard metadata.count <= FieldLimits.metadataEntries else {
            throw .invalid("metadata", "at most \(FieldLimits.metadataEntries) keys")
        }
        for (key, value) in metadata {
            guard FieldLimits.fits(key, FieldLimits.metadataKey), FieldLimits.fits(value, FieldLimits.metadataValue)
            else {
                throw .invalid(
                    "metadata",
                    "keys of \(FieldLimits.text(FieldLimits.metadataKey)) characters, "
                        + "values of at most \(FieldLimits.metadataValue)")
            }
            try FieldLimits.checkCharacters(key, param: "metadata", layout: .line)
            try FieldLimits.checkCharacters(value, param: "metadata")
        }
    }

    // MARK: - Order sessions

    func checkPayable(_ session: OrderSession, now: Date) throws(GatewayError) {
        switch session.status {
        case .completed: throw GatewayError(.sessionAlreadyPaid, "the session was paid", paymentID: session.paymentID)
        case .processing:
            throw GatewayError(
                .sessionAlreadyPaid, "a payment of the session is in progress", paymentID: session.paymentID)
        case .open: break
        }
        guard now < session.expiresAt else { throw GatewayError(.sessionExpired, "the session expired") }
    }

    package func paySession(
        merchant: Merchant, session: OrderSession, opened: OpenedToken, scope: IdempotencyScope, now: Date
    ) throws(GatewayError) -> Payment {
        guard merchant.accepts(network: opened.network) else {
            throw GatewayError(.networkNotAllowed, "the merchant does not accept \(opened.networkLabel)")
        }
        guard currencies.numericCode(alphabetic: session.currency) == opened.currencyNumericCode else {
            throw GatewayError(.currencyMismatch, "the token's currency differs from the session's", param: "token")
        }
        guard opened.amount == session.amount else {
            throw GatewayError(.amountMismatch, "the token's amount differs from the session's", param: "token")
        }
        let cardInfo = try self.cardInfo(merchant: merchant, opened: opened)
        let paymentID = try Identifiers.ordered("pay_", at: now)
        var card = CardSecret.pack(opened)
        defer { SecureBytes.zero(&card) }
        let (processor, version) = try newPaymentProcessor(for: merchant)
        var payment = Payment.created(
            id: paymentID, merchantID: merchant.id, environment: merchant.environment, amount: session.amount,
            currency: session.currency,
            orderNumber: session.outTradeNo, outTradeNo: session.outTradeNo, sessionID: session.id,
            details: session.subject.map { String($0.prefix(100)) }, cardholder: nil, metadata: [:],
            cardInfo: cardInfo, captureMode: .now, acquirer: processor.name, authorizationSentAt: nil, at: now)
        payment.processorSettingsVersion = version
        _ = try admit(payment, card: SecureBytes(card), processor: processor)
        let sealed = try cipher.seal(card, context: SealingContext.paymentCardData(paymentID: paymentID))
        try write { tx in
            guard let current = try tx.session(orderToken: session.orderToken) else {
                throw GatewayError(.sessionNotFound, "no such session")
            }
            try checkPayable(current, now: now)
            guard
                try tx.recordTransactionID(
                    merchantID: merchant.id, environment: merchant.environment, transactionID: opened.transactionID,
                    at: now)
            else { throw GatewayError(.tokenReplayed, "this token was already used") }
            try apply(PaymentStateMachine.begin(payment, cause: .sessionPaid, cardData: sealed), in: tx, at: now)
            try scope.checkpoint("payment:\(paymentID)", in: tx)
        }
        return try drive(paymentID: paymentID, scope: scope)
    }

    // MARK: - Queries

}

// The encoder of the stored request fingerprints above; not a parser of request bodies.
extension JSONEncoder {
    /// An encoder with sorted keys, for request fingerprints.
    static var sorted: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }
}

/// The card data a prime or payment keeps sealed until authorization: account number, expiry,
/// cryptogram, ECI — length-prefixed fields.
struct CardSecret {
    var accountNumber: SecureBytes
    let expirationDate: String
    var cryptogram: SecureBytes?
    let eci: String?

    static func pack(_ opened: OpenedToken) -> [UInt8] {
        var out: [UInt8] = []
        func field(_ bytes: [UInt8]?) {
            guard let bytes else {
                out += [0xff, 0xff]
                return
            }
            out += [UInt8(bytes.count >> 8), UInt8(bytes.count & 0xff)]
            out += bytes
        }
        var pan = opened.accountNumber.copyBytes()
        var cryptogram = opened.cryptogram?.copyBytes()
        field(pan)
        field(Array(opened.expirationDate.utf8))
        field(cryptogram)
        field(opened.eci.map { Array($0.utf8) })
        SecureBytes.zero(&pan)
        if cryptogram != nil { SecureBytes.zero(&cryptogram!) }
        return out
    }

    static func unpack(_ sealed: SecureBytes) throws(GatewayError) -> CardSecret {
        let fields: [[UInt8]?]? = sealed.withUnsafeBytes { raw in
            var fields: [[UInt8]?] = []
            var index = 0
            while index + 2 <= raw.count {
                let length = Int(raw[index]) << 8 | Int(raw[index + 1])
                index += 2
                if length == 0xffff {
                    fields.append(nil)
                    continue
                }
                guard index + length <= raw.count else { return nil }
                fields.append(Array(raw[index..<index + length]))
                index += length
            }
            return fields.count == 4 ? fields : nil
        }
        guard var fields, var pan = fields[0] else { throw GatewayError(.internalError, "malformed card data") }
        defer {
            SecureBytes.zero(&pan)
            if fields[2] != nil { SecureBytes.zero(&fields[2]!) }
        }
        return CardSecret(
            accountNumber: SecureBytes(pan), expirationDate: String(decoding: fields[1] ?? [], as: UTF8.self),
            cryptogram: fields[2].map { SecureBytes($0) }, eci: fields[3].map { String(decoding: $0, as: UTF8.self) })
    }
}

extension Payments {
    /// Verifies and decrypts an Apple Pay token, rejects a replayed one, stores its payment data sealed and
    /// returns a one-time prime with the card's information. With a `paymentRequest` JSON, its rules decide
    /// the prime's lifetime (90 s, or 30 days for a deferred payment).
    public func tokenize(
        merchant: Merchant, token: Data, paymentRequest: Data? = nil, idempotencyKey: String? = nil,
        scope requestScope: RequestScope = .unattributed
    )
        throws(GatewayError) -> PrimeResult
    {
        try GatewayService.checkTokenSize(token)
        return try tokenize(
            merchant: merchant, submitted: SubmittedToken(token), paymentRequest: paymentRequest,
            idempotencyKey: idempotencyKey, scope: requestScope)
    }

    /// ``tokenize(merchant:token:paymentRequest:idempotencyKey:scope:)`` for a token parsed by the caller.
    public func tokenize(
        merchant: Merchant, submitted token: SubmittedToken, paymentRequest: Data? = nil,
        idempotencyKey: String? = nil, scope requestScope: RequestScope = .unattributed
    )
        throws(GatewayError) -> PrimeResult
    {
        try GatewayService.checkTokenSize(token.bytes)
        let parts = [token.fingerprint, Hex.encode(SHA256.hash([UInt8](paymentRequest ?? Data())))]
        return try idempotent(
            merchant, key: idempotencyKey, operation: "tokenize", fingerprint: parts, claimInFirstWrite: true,
            requestScope: requestScope
        ) { scope throws(GatewayError) in
            let now = clock.now()
            var terms = PaymentRequestTerms.immediate
            if let paymentRequest {
                guard let paymentRequests = gateway.paymentRequests else {
                    throw GatewayError(.internalError, "no payment request evaluator configured")
                }
                terms = try paymentRequests.evaluate(
                    paymentRequest: paymentRequest, merchantIdentifier: merchant.merchantIdentifiers.first ?? "",
                    countryCode: merchant.countryCode)
            }
            let opened = try gateway.openToken(token, for: merchant, at: now)
            defer { opened.erase() }
            return try gateway.makePrime(merchant: merchant, opened: opened, terms: terms, now: now, scope: scope)
        }
    }

    /// Pays with a prime: claims it once, checks the charge against the token (not the amount when the request
    /// confirms a deferred prime), authorizes, and captures according to the capture mode. A decline throws
    /// `card_declined` (the failed payment keeps its id in the error); an unknown processor outcome returns the
    /// payment in `unknown`.
    public func payByPrime(
        merchant: Merchant, _ request: PayByPrimeRequest, idempotencyKey: String? = nil,
        scope requestScope: RequestScope = .unattributed
    )
        throws(GatewayError) -> Payment
    {
        try gateway.validateAmount(request.amount, currency: request.currency, merchant: merchant)
        guard request.prime.hasPrefix("prm_"), FieldLimits.fits(request.prime, FieldLimits.prime) else {
            throw GatewayError(.primeNotFound, "no such prime", param: "prime")
        }
        try FieldLimits.checkText(request.details, atMost: FieldLimits.details, param: "details")
        if let number = request.orderNumber, !FieldLimits.fits(number, FieldLimits.orderNumber) {
            throw .invalid("order_number", "\(FieldLimits.text(FieldLimits.orderNumber)) characters")
        }
        try FieldLimits.checkCharacters(request.orderNumber, param: "order_number")
        if let reference = request.bankTransactionID,
            !FieldLimits.fits(reference, FieldLimits.bankTransactionID)
                || !FieldLimits.isPrintableASCII(reference)
        {
            throw .invalid(
                "bank_transaction_id",
                "\(FieldLimits.text(FieldLimits.bankTransactionID)) printable ASCII characters without spaces")
        }
        try gateway.validate(cardholder: request.cardholder)
        try gateway.validate(metadata: request.metadata)
        if case .afterDays(let days) = request.captureMode, !(1...configuration.maxCaptureDelayDays).contains(days) {
            throw .invalid("capture.delay_days", "1 to \(configuration.maxCaptureDelayDays)")
        }
        let primeHash = Identifiers.sha256Hex(request.prime)
        let fingerprint = try gatewayThrowing {
            // Stored fingerprint (compared with the one kept for a retry): its bytes must not change.
            [primeHash, String(decoding: try JSONEncoder.sorted.encode(request), as: UTF8.self)]
        }
        return try idempotent(
            merchant, key: idempotencyKey, operation: "pay_by_prime", fingerprint: fingerprint, claimInFirstWrite: true,
            requestScope: requestScope
        ) { scope throws(GatewayError) in
            if let paymentID = scope.resumed("payment") { return try gateway.drive(paymentID: paymentID, scope: scope) }
            let now = clock.now()
            let paymentID = try Identifiers.ordered("pay_", at: now)
            // One transaction before the processor call: the prime claimed (its card data dropped), the payment
            // created already marked as sent (its card data kept only in memory) and the recovery point set. A
            // crash after it is settled by querying the processor, never by authorizing again.
            var sending: (payment: Payment, card: SecureBytes) = try write { tx in
                try scope.claim(in: tx)
                if let reference = request.bankTransactionID {
                    let query = PaymentQuery(bankTransactionID: reference, limit: 1)
                    guard
                        try tx.payments(
                            merchantID: merchant.id, environment: merchant.environment, query: query, after: nil
                        ).isEmpty
                    else { throw StoreConflict(.paymentBankTransactionID).gatewayError }
                }
                guard let prime = try tx.prime(hash: primeHash), prime.merchantID == merchant.id,
                    prime.environment == merchant.environment
                else { throw GatewayError(.primeNotFound, "no such prime", param: "prime") }
                if prime.claimedAt != nil {
                    throw GatewayError(.primeAlreadyUsed, "the prime was already used", param: "prime")
                }
                guard now < prime.expiresAt, let primeSealed = prime.cardDataSealed else {
                    throw GatewayError(.primeExpired, "the prime expired", param: "prime")
                }
                if request.deferred, !prime.isDeferred {
                    throw GatewayError(.primeNotDeferred, "the prime is not for a deferred payment", param: "deferred")
                }
                guard prime.currency == request.currency else {
                    throw GatewayError(.currencyMismatch, "the token was for \(prime.currency)", param: "currency")
                }
                guard request.deferred || prime.amount == request.amount else {
                    throw GatewayError(.amountMismatch, "the token was for another amount", param: "amount")
                }
                // Before the prime is claimed: a merchant without a processor, or a processor that cannot take this
                // card or amount, refuses it here.
                let (processor, version) = try gateway.newPaymentProcessor(for: merchant)
                var payment = Payment.created(
                    id: paymentID, merchantID: merchant.id, environment: merchant.environment, amount: request.amount,
                    currency: request.currency,
                    orderNumber: request.orderNumber, details: request.details, cardholder: request.cardholder,
                    metadata: request.metadata, cardInfo: prime.cardInfo, captureMode: request.captureMode,
                    acquirer: processor.name, authorizationSentAt: now, bankTransactionID: request.bankTransactionID,
                    at: now)
                payment.processorSettingsVersion = version
                let card = try cipher.open(primeSealed, context: SealingContext.primeCardData(primeHash: primeHash))
                let kept = try gateway.admit(payment, card: card, processor: processor)
                guard try tx.claimPrime(hash: primeHash, paymentID: paymentID, at: now) else {
                    throw GatewayError(.primeAlreadyUsed, "the prime was already used", param: "prime")
                }
                try gateway.apply(
                    PaymentStateMachine.begin(payment, cause: .paidByPrime, cardData: kept), in: tx, at: now)
                try scope.checkpoint("payment:\(paymentID)", in: tx)
                return (payment, card)
            }
            scope.claimCommitted()
            defer { sending.card.erase() }
            return try gateway.drive(paymentID: paymentID, scope: scope, sending: sending)
        }
    }

    /// A payment with its refunds.
    public func payment(merchant: Merchant, id: String) throws(GatewayError) -> Payment {
        try read { tx in
            var payment = try gateway.ownedPayment(merchant, id, in: tx)
            payment.refunds = try tx.refunds(paymentID: id)
            return payment
        }
    }

    /// The payment's recorded transitions, oldest first.
    public func transitions(merchant: Merchant, paymentID: String) throws(GatewayError) -> [PaymentTransition] {
        try read { tx in
            _ = try gateway.ownedPayment(merchant, paymentID, in: tx)
            return try tx.transitions(paymentID: paymentID)
        }
    }

    /// The record query: filters, newest first, cursor pagination.
    public func list(merchant: Merchant, query: PaymentQuery) throws(GatewayError) -> PaymentPage {
        guard FieldLimits.pageSize.contains(query.limit) else {
            throw .invalid("limit", FieldLimits.text(FieldLimits.pageSize))
        }
        try FieldLimits.checkText(query.orderNumber, atMost: FieldLimits.orderNumber.upperBound, param: "order_number")
        try FieldLimits.checkText(query.outTradeNo, atMost: FieldLimits.outTradeNo.upperBound, param: "out_trade_no")
        let after = try PaymentCursor.parse(query.cursor, param: "cursor", reason: "malformed cursor")
        var limited = query
        limited.limit = query.limit + 1
        return try read { tx in
            var rows = try tx.payments(
                merchantID: merchant.id, environment: merchant.environment, query: limited, after: after)
            let page = PaymentCursor.page(rows, limit: query.limit) { ($0.createdAt, $0.id) }
            rows = page.rows
            for index in rows.indices { rows[index].refunds = try tx.refunds(paymentID: rows[index].id) }
            return PaymentPage(payments: rows, nextCursor: page.next)
        }
    }
}

extension OrderSessions {
    /// Creates an order session (server credentials). `out_trade_no` is unique per merchant.
    public func create(
        merchant: Merchant, _ request: CreateSessionRequest, idempotencyKey: String? = nil,
        scope requestScope: RequestScope = .unattributed
    )
        throws(GatewayError) -> OrderSession
    {
        guard FieldLimits.fits(request.outTradeNo, FieldLimits.outTradeNo) else {
            throw .invalid(
                "out_trade_no", "\(FieldLimits.text(FieldLimits.outTradeNo)) characters")
        }
        try gateway.validateAmount(request.amount, currency: request.currency, merchant: merchant)
        guard request.country.count == 2, request.country.allSatisfy({ $0.isASCII && $0.isLetter }) else {
            throw .invalid("country", "ISO 3166 alpha-2")
        }
        try FieldLimits.checkCharacters(request.outTradeNo, param: "out_trade_no")
        try FieldLimits.checkText(request.subject, atMost: FieldLimits.subject.upperBound, param: "subject")
        try FieldLimits.checkText(request.userID, atMost: FieldLimits.userID.upperBound, param: "user_id")
        try FieldLimits.checkCharacters(request.notifyURL, param: "notify_url")
        if let url = request.notifyURL {
            guard FieldLimits.fits(url, FieldLimits.url), let parsed = URL(string: url),
                ["http", "https"].contains(parsed.scheme?.lowercased() ?? ""), parsed.host?.isEmpty == false
            else { throw .invalid("notify_url", "an http(s) URL with a host") }
        }
        let fingerprint = try gatewayThrowing {
            // Stored fingerprint (compared with the one kept for a retry): its bytes must not change.
            [String(decoding: try JSONEncoder.sorted.encode(request), as: UTF8.self)]
        }
        return try idempotent(
            merchant, key: idempotencyKey, operation: "create_session", fingerprint: fingerprint,
            requestScope: requestScope
        ) { _ throws(GatewayError) in
            let now = clock.now()
            let session = OrderSession(
                id: try Identifiers.make("ses_", 24), orderToken: try Identifiers.make("ot_", 40),
                merchantID: merchant.id,
                environment: merchant.environment, outTradeNo: request.outTradeNo, amount: request.amount,
                currency: request.currency, country: request.country.uppercased(), subject: request.subject,
                userID: request.userID, notifyURL: request.notifyURL, status: .open, paymentID: nil,
                merchantIdentifier: merchant.merchantIdentifiers.first ?? "",
                supportedNetworks: merchant.allowedNetworks.isEmpty
                    ? ["visa", "masterCard", "amex", "jcb", "chinaUnionPay"] : merchant.allowedNetworks,
                merchantCapabilities: ["supports3DS"],
                expiresAt: now.addingTimeInterval(request.lifetime ?? configuration.sessionLifetime),
                createdAt: now, notifyFormat: request.notifyFormat)
            try write { tx in
                guard try tx.insertSession(session) else {
                    throw GatewayError(
                        .duplicateOutTradeNo, "another session has this out_trade_no", param: "out_trade_no")
                }
            }
            return session
        }
    }

    /// The session for `orderToken` (client or server credentials of its merchant).
    public func session(merchant: Merchant, orderToken: String) throws(GatewayError) -> OrderSession {
        let session = try read { try $0.session(orderToken: orderToken) }
        guard let session, session.merchantID == merchant.id, session.environment == merchant.environment else {
            throw GatewayError(.sessionNotFound, "no such session", param: "order_token")
        }
        return session
    }

    /// Pays an order session with an Apple Pay token (client credentials). Idempotent on `idempotencyKey`, or
    /// on the token's transactionIdentifier when no key is given: a retry answers the first result.
    public func pay(
        merchant: Merchant, orderToken: String, token: Data, idempotencyKey: String? = nil,
        scope requestScope: RequestScope = .unattributed
    )
        throws(GatewayError) -> Payment
    {
        try GatewayService.checkTokenSize(token)
        return try pay(
            merchant: merchant, orderToken: orderToken, submitted: SubmittedToken(token),
            idempotencyKey: idempotencyKey, scope: requestScope)
    }

    /// ``pay(merchant:orderToken:token:idempotencyKey:scope:)`` for a token parsed by the caller.
    public func pay(
        merchant: Merchant, orderToken: String, submitted token: SubmittedToken, idempotencyKey: String? = nil,
        scope requestScope: RequestScope = .unattributed
    )
        throws(GatewayError) -> Payment
    {
        try GatewayService.checkTokenSize(token.bytes)
        let transactionIdentifier = token.parsed?["transactionIdentifier"]?.string
        let key = idempotencyKey ?? transactionIdentifier.map(GatewayService.transactionIdempotencyKey)
        let parts = [orderToken, transactionIdentifier ?? Hex.encode(SHA256.hash([UInt8](token.bytes)))]
        return try idempotent(
            merchant, key: key, operation: "pay_session", fingerprint: parts, requestScope: requestScope
        ) { scope throws(GatewayError) in
            if let paymentID = scope.resumed("payment") { return try gateway.drive(paymentID: paymentID, scope: scope) }
            let now = clock.now()
            let session = try self.session(merchant: merchant, orderToken: orderToken)
            try gateway.checkPayable(session, now: now)
            let opened = try gateway.openToken(token, for: merchant, at: now)
            defer { opened.erase() }
            return try gateway.paySession(merchant: merchant, session: session, opened: opened, scope: scope, now: now)
        }
    }
}

extension Webhooks {
    /// The merchant's webhook events, newest first.
    public func events(merchant: Merchant, limit: Int = 50) throws(GatewayError) -> [WebhookEvent] {
        guard FieldLimits.pageSize.contains(limit) else {
            throw .invalid("limit", FieldLimits.text(FieldLimits.pageSize))
        }
        return try read { try $0.events(merchantID: merchant.id, limit: limit) }
    }

    /// Schedules an event (delivered or dead) for delivery again, due now; `webhook_endpoint_not_configured`
    /// when it has nowhere to go (no notify_url of its own, no merchant endpoint).
    public func redeliverEvent(merchant: Merchant, eventID: String) throws(GatewayError) {
        let now = clock.now()
        try write { tx in
            guard let event = try tx.event(id: eventID), event.merchantID == merchant.id else {
                throw GatewayError(.notFound, "no such event", param: "event_id")
            }
            guard try tx.eventDeliveryURL(eventID: eventID) != nil else {
                throw GatewayError(.webhookEndpointNotConfigured, "no webhook endpoint nor notify_url for this event")
            }
            guard try tx.rescheduleEvent(id: eventID, at: now) else {
                throw GatewayError(.notFound, "no such event", param: "event_id")
            }
        }
    }
}
