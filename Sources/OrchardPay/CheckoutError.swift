import Foundation

/// An error of the client SDK: a stable ``code`` and a human-readable ``message``, never a secret.
///
/// The codes are TapPay's cart codes (`"88013"`…`"88016"`), the payment request model's validation codes
/// (`total_mismatch`, `missing_supports_3ds` …, see docs/payment-request.md), the gateway's error codes
/// passed through unchanged (`card_declined`, `amount_mismatch`, `session_expired` …, see openapi.yaml), and
/// the SDK's own codes, the static constants below. Errors are equal when their codes are.
public struct CheckoutError: Error, Hashable, Sendable, CustomStringConvertible, LocalizedError {
    /// The stable code.
    public var code: String
    /// What went wrong, for people.
    public var message: String
    /// The offending field when known: a JSON path of the request or the gateway's `param`.
    public var param: String?
    /// The gateway's HTTP status when the gateway answered the error.
    public var httpStatus: Int?
    /// The gateway's `request_id`, for its logs.
    public var requestID: String?
    /// Every validation issue, when the error comes from validating the cart or the payment request.
    public var issues: [ValidationIssue]

    /// Creates an error.
    public init(
        code: String, message: String, param: String? = nil, httpStatus: Int? = nil, requestID: String? = nil,
        issues: [ValidationIssue] = []
    ) {
        self.code = code
        self.message = message
        self.param = param
        self.httpStatus = httpStatus
        self.requestID = requestID
        self.issues = issues
    }

    /// `code: message`.
    public var description: String { "\(code): \(message)" }

    /// The message, for `localizedDescription`.
    public var errorDescription: String? { description }

    /// Errors are equal when their codes are.
    public static func == (lhs: CheckoutError, rhs: CheckoutError) -> Bool { lhs.code == rhs.code }

    /// Hashes the code only.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    // MARK: The SDK's own codes

    /// `OrchardPaySDK.setup` was not called.
    public static let notSetUp = "not_set_up"
    /// No gateway URL for production (there is no default gateway outside the sandbox).
    public static let gatewayNotConfigured = "gateway_not_configured"
    /// The gateway could not be reached (no network, refused, timed out) after the retries.
    public static let networkError = "network_error"
    /// The gateway answered something that is not the documented JSON.
    public static let invalidResponse = "invalid_response"
    /// The sandbox wallet (``SimulatedPaymentSheet``) is used with a production set-up.
    public static let sandboxOnly = "sandbox_only"
    /// The sheet could not be shown (no Apple Pay on the device, or a sheet already showing).
    public static let sheetUnavailable = "sheet_unavailable"
    /// `start()` or `present()` was called a second time; a checkout runs once.
    public static let alreadyStarted = "already_started"
    /// The merchant reported a failure with `showPaymentResult(false)`.
    public static let merchantDeclined = "merchant_declined"
    /// The app closed the sheet with `abort()` before the customer authorized; nothing was charged.
    public static let aborted = "aborted"
    /// The charge was sent but its outcome is not known yet (the gateway answered `status: unknown`); the
    /// final state arrives by webhook to the merchant's server.
    public static let paymentOutcomeUnknown = "payment_outcome_unknown"
    /// The merchant's order-token handler threw; its error is described in the message.
    public static let orderTokenFailed = "order_token_failed"
}
