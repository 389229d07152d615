import Foundation
import OrchardBase

/// An error from the gateway, with a stable code the HTTP layer maps to a status and returns to clients.
///
/// Equality compares codes only. Descriptions never contain secrets: no PAN, cryptogram, key or prime.
public struct GatewayError: CodedError, Sendable, Codable {
    /// A stable, documented error code (snake_case).
    public struct Code: Hashable, Sendable, RawRepresentable, Codable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public init(from decoder: any Decoder) throws {
            rawValue = try decoder.singleValueContainer().decode(String.self)
        }
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(rawValue)
        }
        public var description: String { rawValue }

        /// A parameter is malformed or out of bounds (`param` names it).
        public static let parameterInvalid = Code(rawValue: "parameter_invalid")
        /// A required parameter is absent (`param` names it).
        public static let parameterMissing = Code(rawValue: "parameter_missing")
        /// Not an ISO 4217 currency code.
        public static let unknownCurrency = Code(rawValue: "unknown_currency")
        /// The cursor was not issued by this gateway.
        public static let invalidCursor = Code(rawValue: "invalid_cursor")
        /// The Idempotency-Key is empty, too long or not printable ASCII.
        public static let idempotencyKeyInvalid = Code(rawValue: "idempotency_key_invalid")
        /// A BIN table CSV line is malformed (the reason gives the line).
        public static let binTableInvalid = Code(rawValue: "bin_table_invalid")
        /// A co-brand table row is malformed (``GatewayError/rows`` gives each bad row).
        public static let coBrandTableInvalid = Code(rawValue: "co_brand_table_invalid")
        /// No such object (payment, event …) for this merchant and environment.
        public static let notFound = Code(rawValue: "not_found")
        /// Credentials are wrong.
        public static let invalidCredentials = Code(rawValue: "invalid_credentials")
        /// The operation is not allowed for this merchant or environment.
        public static let forbidden = Code(rawValue: "forbidden")
        /// No merchant with that id in this environment.
        public static let merchantNotFound = Code(rawValue: "merchant_not_found")
        /// The merchant was disabled (`orchard merchant disable`): its credentials open no route until it is
        /// enabled again.
        public static let merchantDisabled = Code(rawValue: "merchant_disabled")
        /// The merchant has no active processing key to open tokens with.
        public static let noProcessingKey = Code(rawValue: "no_processing_key")
        /// A token whose transactionId was already seen.
        public static let tokenReplayed = Code(rawValue: "token_replayed")
        /// No such prime for this merchant and environment.
        public static let primeNotFound = Code(rawValue: "prime_not_found")
        /// The prime's lifetime is over.
        public static let primeExpired = Code(rawValue: "prime_expired")
        /// The prime was already used by a payment.
        public static let primeAlreadyUsed = Code(rawValue: "prime_already_used")
        /// A pay request confirmed `deferred` for a prime that is not deferred.
        public static let primeNotDeferred = Code(rawValue: "prime_not_deferred")
        /// The charge's amount differs from the token's transactionAmount (or the session's).
        public static let amountMismatch = Code(rawValue: "amount_mismatch")
        /// The charge's currency differs from the token's currencyCode (or the session's).
        public static let currencyMismatch = Code(rawValue: "currency_mismatch")
        /// The merchant does not accept the currency.
        public static let currencyNotSupported = Code(rawValue: "currency_not_supported")
        /// The card network is not allowed for the merchant.
        public static let networkNotAllowed = Code(rawValue: "network_not_allowed")
        /// No order session with that token.
        public static let sessionNotFound = Code(rawValue: "session_not_found")
        /// The order session expired.
        public static let sessionExpired = Code(rawValue: "session_expired")
        /// The order session was already paid.
        public static let sessionAlreadyPaid = Code(rawValue: "session_already_paid")
        /// Another session of this merchant has the same out_trade_no.
        public static let duplicateOutTradeNo = Code(rawValue: "duplicate_out_trade_no")
        /// Another payment of this merchant has the same bank_transaction_id.
        public static let duplicateBankTransactionID = Code(rawValue: "duplicate_bank_transaction_id")
        /// Another merchant has the TapPay numeric app id (`PUT /v1/compat/tappay`).
        public static let tappayAppIDTaken = Code(rawValue: "tappay_app_id_taken")
        /// The idempotency key was used with different parameters or another operation.
        public static let idempotencyConflict = Code(rawValue: "idempotency_conflict")
        /// A request with the same idempotency key is still being processed.
        public static let idempotencyInFlight = Code(rawValue: "idempotency_in_flight")
        /// The payment's state does not allow the operation (capture twice, void after capture …).
        public static let invalidStateTransition = Code(rawValue: "invalid_state_transition")
        /// The refunds would exceed the captured amount.
        public static let refundExceedsCapture = Code(rawValue: "refund_exceeds_capture")
        /// The capture would exceed the authorized amount.
        public static let captureExceedsAuthorization = Code(rawValue: "capture_exceeds_authorization")
        /// The issuer or acquirer declined; `declineCode` says why.
        public static let cardDeclined = Code(rawValue: "card_declined")
        /// The processor refused an operation (capture, void, refund); `declineCode` says why.
        public static let processorDeclined = Code(rawValue: "processor_declined")
        /// The processor did not answer; the operation is retried by reconciliation.
        public static let processorUnavailable = Code(rawValue: "processor_unavailable")
        /// The processor settings are not allowed for this merchant: a live or production processor environment
        /// for a sandbox merchant, the sandbox acquirer for a production merchant.
        public static let processorNotAllowed = Code(rawValue: "processor_not_allowed")
        /// A processor notification whose signature (or Basic auth) does not verify with the merchant's settings:
        /// nothing of it is applied.
        public static let processorSignatureInvalid = Code(rawValue: "processor_signature_invalid")
        /// A production merchant has no processor settings yet (`PUT /v1/processor`), so it cannot be charged.
        public static let processorNotConfigured = Code(rawValue: "processor_not_configured")
        /// The merchant's processor cannot take this token's payment data (an `EMV` token, a currency or amount
        /// it cannot express): refused before anything was sent or claimed.
        public static let paymentDataTypeUnsupported = Code(rawValue: "payment_data_type_unsupported")
        /// No master key was configured where one is required (production).
        public static let masterKeyMissing = Code(rawValue: "master_key_missing")
        /// The master key is malformed or does not open the stored secrets.
        public static let masterKeyInvalid = Code(rawValue: "master_key_invalid")
        /// The payment request JSON given with a token is invalid.
        public static let paymentRequestInvalid = Code(rawValue: "payment_request_invalid")
        /// An event cannot be (re)delivered: no webhook endpoint nor notify_url.
        public static let webhookEndpointNotConfigured = Code(rawValue: "webhook_endpoint_not_configured")
        /// The database failed (transient; the request can be retried with its idempotency key).
        public static let storageFailure = Code(rawValue: "storage_failure")
        /// An unexpected internal failure.
        public static let internalError = Code(rawValue: "internal_error")
    }

    /// What went wrong, as a stable code.
    public var code: Code
    /// A human-readable reason (no secrets).
    public var reason: String
    /// The request parameter at fault, for `parameter_invalid`, `parameter_missing` and mismatches.
    public var param: String?
    /// The issuer's or processor's decline code (`do_not_honor`, `insufficient_funds` …).
    public var declineCode: String?
    /// The token library's error code (`signature_invalid` …), for a token the library refused (answered with that code).
    public var tokenErrorCode: String?
    /// The payment the error is about, when one was created (a declined payment keeps its record).
    public var paymentID: String?
    /// The HTTP status another service answered (Apple's, for `apple_pay_validation_failed`).
    public var upstreamStatus: Int?
    /// The type of the foreign error ``wrap(_:)`` made this from (`SQLiteError` …), for logs and ``description``
    /// only: never encoded, never in a client's response.
    public var wrapped: String?

    /// The bad rows of a refused table upload (`bin_table_invalid`, `co_brand_table_invalid`), in row order.
    public var rows: [RowProblem]?

    /// What is wrong with one row of an uploaded table.
    public struct RowProblem: Sendable, Hashable, Codable {
        /// The CSV line (the header is line 1), or the 1-based position in a JSON list.
        public var row: Int
        public var message: String

        public init(row: Int, message: String) {
            self.row = row
            self.message = message
        }
    }

    private enum CodingKeys: String, CodingKey {
        case code, reason, param, declineCode, tokenErrorCode, paymentID, upstreamStatus, rows
    }

    public init(
        _ code: Code, _ reason: String = "", param: String? = nil, declineCode: String? = nil,
        tokenErrorCode: String? = nil, paymentID: String? = nil, upstreamStatus: Int? = nil
    ) {
        self.code = code
        self.reason = reason
        self.param = param
        self.declineCode = declineCode
        self.tokenErrorCode = tokenErrorCode
        self.paymentID = paymentID
        self.upstreamStatus = upstreamStatus
    }

    public var description: String {
        var text = code.rawValue
        if let param { text += " (\(param))" }
        if let declineCode { text += " [\(declineCode)]" }
        if let tokenErrorCode { text += " [\(tokenErrorCode)]" }
        if !reason.isEmpty { text += ": \(reason)" }
        if let wrapped { text += " (wrapped \(wrapped))" }
        return text
    }

    /// Whether the error is a complete answer that idempotency stores and replays (transient failures are not).
    public var isFinal: Bool {
        code != .storageFailure && code != .internalError && code != .processorUnavailable
            && code != .idempotencyInFlight
    }

    /// A token the token library refused: the code is the library's (`signature_invalid` …), also kept in
    /// ``tokenErrorCode`` so callers can tell token errors apart.
    public static func token(code: String, reason: String) -> GatewayError {
        GatewayError(Code(rawValue: code), reason, param: "token", tokenErrorCode: code)
    }

    /// A `parameter_invalid` naming `param`.
    public static func invalid(_ param: String, _ reason: String) -> GatewayError {
        GatewayError(.parameterInvalid, reason, param: param)
    }

    /// Wraps any error from a store or a helper: gateway errors pass through, a ``StoreConflict`` becomes the
    /// domain's answer to it, others become `storage_failure` naming the wrapped error's type in ``wrapped``.
    package static func wrap(_ error: any Error) -> GatewayError {
        if let error = error as? GatewayError { return error }
        if let conflict = error as? StoreConflict { return conflict.gatewayError }
        var wrapping = GatewayError(.storageFailure, String(describing: error))
        wrapping.wrapped = String(reflecting: type(of: error))
        return wrapping
    }
}

/// Runs `body`, turning any error into a ``GatewayError``.
package func gatewayThrowing<T>(_ body: () throws -> T) throws(GatewayError) -> T {
    do { return try body() } catch { throw GatewayError.wrap(error) }
}
