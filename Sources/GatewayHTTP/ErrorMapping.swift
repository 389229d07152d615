import ApplePayModel
import Foundation
import Gateway
import OrchardHTTP

extension HTTPAPIError.ErrorType {
    /// A declined card (402).
    public static let card: HTTPAPIError.ErrorType = "card_error"
    /// An idempotency key problem.
    public static let idempotency: HTTPAPIError.ErrorType = "idempotency_error"
    /// The token library refused the token.
    public static let token: HTTPAPIError.ErrorType = "token_error"
}

/// The gateway's errors on the wire, per `openapi.yaml`'s `x-orchard-error-codes`: status, type, code, and the
/// extra fields (`decline_code`, `payment_id`) of `card_declined`, `processor_declined` and
/// `processor_unavailable` when a payment is concerned.
public struct GatewayAPIError: Error, Sendable {
    /// The status, type, code, message and param.
    public var base: HTTPAPIError
    /// Fields added to the error object (`decline_code`, `payment_id`).
    public var extra: [String: String]
    /// The status Apple answered, added as `apple_status` (`apple_pay_validation_failed`).
    public var appleStatus: Int?
    /// The bad rows of a refused table upload, added as `rows` (`bin_table_invalid`, `co_brand_table_invalid`).
    public var rows: [GatewayError.RowProblem]?

    /// An error from its parts.
    public init(_ base: HTTPAPIError, extra: [String: String] = [:], appleStatus: Int? = nil) {
        self.base = base
        self.extra = extra
        self.appleStatus = appleStatus
    }

    /// The rendered response (`request_id` in the body).
    public func response(requestID: String) -> HTTPResponse {
        var fields: [String: Any] = [
            "type": base.type.rawValue, "code": base.code.rawValue, "message": base.message,
            "param": base.param ?? NSNull(), "request_id": requestID,
        ]
        for (key, value) in extra { fields[key] = value }
        if let appleStatus { fields["apple_status"] = appleStatus }
        if let rows { fields["rows"] = rows.map { ["row": $0.row, "message": $0.message] as [String: Any] } }
        var headers = base.headers
        headers["Content-Type"] = JSONCoding.contentType
        return HTTPResponse(status: base.status, headers: headers, body: Wire.data(["error": fields]))
    }

    static func make(
        _ status: HTTPStatus, _ type: HTTPAPIError.ErrorType, _ code: String, _ message: String,
        param: String? = nil
    ) -> GatewayAPIError {
        GatewayAPIError(
            HTTPAPIError(status: status, type: type, code: .init(rawValue: code), message: message, param: param))
    }

    /// The status and type of each domain code (the `x-orchard-error-codes` table), keyed by the code constants
    /// so that a misspelt code does not compile.
    package static let table: [GatewayError.Code: (HTTPStatus, HTTPAPIError.ErrorType)] = [
        .invalidJSON: (.badRequest, .invalidRequest), .jsonTooDeep: (.badRequest, .invalidRequest),
        .stringTooLong: (.badRequest, .invalidRequest), .parameterMissing: (.badRequest, .invalidRequest),
        .parameterInvalid: (.badRequest, .invalidRequest), .invalidAmount: (.badRequest, .invalidRequest),
        .tooManyDecimals: (.badRequest, .invalidRequest), .negativeAmount: (.badRequest, .invalidRequest),
        .amountOutOfRange: (.badRequest, .invalidRequest), .unknownCurrency: (.badRequest, .invalidRequest),
        .invalidCountryCode: (.badRequest, .invalidRequest), .invalidCursor: (.badRequest, .invalidRequest),
        .notFound: (.notFound, .invalidRequest), .primeNotFound: (.notFound, .invalidRequest),
        .sessionNotFound: (.notFound, .invalidRequest), .invalidCredentials: (.unauthorized, .authentication),
        .forbidden: (.forbidden, .authentication), .processorUnavailable: (.serviceUnavailable, .api),
        .merchantDisabled: (.forbidden, .authentication),
        .idempotencyKeyInvalid: (.badRequest, .idempotency),
        .idempotencyConflict: (.unprocessableContent, .idempotency),
        .idempotencyInFlight: (.conflict, .idempotency), .tokenReplayed: (.conflict, .token),
        .primeExpired: (.unprocessableContent, .invalidRequest), .primeAlreadyUsed: (.conflict, .invalidRequest),
        .amountMismatch: (.unprocessableContent, .invalidRequest),
        .primeNotDeferred: (.unprocessableContent, .invalidRequest),
        .currencyMismatch: (.unprocessableContent, .invalidRequest),
        .currencyNotSupported: (.unprocessableContent, .invalidRequest),
        .networkNotAllowed: (.unprocessableContent, .invalidRequest),
        .sessionExpired: (.unprocessableContent, .invalidRequest),
        .sessionAlreadyPaid: (.conflict, .invalidRequest), .duplicateOutTradeNo: (.conflict, .invalidRequest),
        .duplicateBankTransactionID: (.conflict, .invalidRequest), .tappayAppIDTaken: (.conflict, .invalidRequest),
        .cardDeclined: (.paymentRequired, .card), .processorDeclined: (.paymentRequired, .card),
        .invalidStateTransition: (.conflict, .invalidRequest),
        .captureExceedsAuthorization: (.unprocessableContent, .invalidRequest),
        .refundExceedsCapture: (.unprocessableContent, .invalidRequest),
        .webhookEndpointNotConfigured: (.conflict, .invalidRequest),
        .certificateInvalid: (.unprocessableContent, .invalidRequest), .publicKeyInvalid: (.unprocessableContent, .invalidRequest),
        .certificateKeyMismatch: (.unprocessableContent, .invalidRequest),
        .binTableInvalid: (.unprocessableContent, .invalidRequest),
        .coBrandTableInvalid: (.unprocessableContent, .invalidRequest),
        .lastActiveKey: (.conflict, .invalidRequest),
        .paymentRequestInvalid: (.unprocessableContent, .invalidRequest),
        .validationURLNotAllowed: (.badRequest, .invalidRequest),
        .domainNotRegistered: (.forbidden, .invalidRequest),
        .merchantIdentifierNotRegistered: (.forbidden, .invalidRequest),
        .domainAlreadyRegistered: (.conflict, .invalidRequest),
        .merchantIdentityMissing: (.conflict, .invalidRequest),
        .applePayValidationFailed: (.badGateway, .api),
        .processorNotAllowed: (.unprocessableContent, .invalidRequest),
        .processorSignatureInvalid: (.unauthorized, .authentication),
        .processorNotConfigured: (.conflict, .invalidRequest),
        .paymentDataTypeUnsupported: (.unprocessableContent, .invalidRequest),
    ]

    /// The HTTP status and type the API answers for a domain error code, when it has an entry.
    public static func wireStatus(code: String) -> (status: Int, type: String)? {
        table[GatewayError.Code(rawValue: code)].map { ($0.0.rawValue, $0.1.rawValue) }
    }

    /// The wire form of a domain error. Storage and internal failures are a generic 500 `internal_error`.
    public static func from(_ error: GatewayError) -> GatewayAPIError {
        var code = error.code.rawValue
        var param = error.param
        if error.code == .noProcessingKey {
            code = "unknown_merchant_key"
            param = "token"
        }
        let message = error.reason.isEmpty ? code.replacingOccurrences(of: "_", with: " ") : error.reason
        let status: HTTPStatus
        let type: HTTPAPIError.ErrorType
        if error.tokenErrorCode != nil || code == "unknown_merchant_key" {
            (status, type) = error.code == .tokenReplayed ? (.conflict, .token) : (.unprocessableContent, .token)
        } else if let entry = table[error.code] {
            (status, type) = entry
        } else if error.code == .merchantNotFound {
            return make(.unauthorized, .authentication, "invalid_credentials", "the credentials are not valid")
        } else {
            return GatewayAPIError(.internalError())
        }
        if param == "idempotency_key" { param = nil }
        var result = make(status, type, code, message, param: param)
        if [.cardDeclined, .processorDeclined, .processorUnavailable].contains(error.code) {
            if let declineCode = error.declineCode { result.extra["decline_code"] = declineCode }
            if let paymentID = error.paymentID { result.extra["payment_id"] = paymentID }
        }
        if error.code == .applePayValidationFailed { result.appleStatus = error.upstreamStatus }
        result.rows = error.rows
        return result
    }

    /// The wire form of an amount or currency error for the request field `param`.
    public static func from(_ error: MoneyError, param: String) -> GatewayAPIError {
        make(.badRequest, .invalidRequest, error.code.rawValue, error.reason, param: param)
    }

    /// The wire form of any error thrown by an endpoint.
    static func from(_ error: any Error) -> GatewayAPIError {
        switch error {
        case let error as GatewayAPIError: return error
        case let error as GatewayError: return from(error)
        case let error as HTTPAPIError: return GatewayAPIError(error)
        default: return GatewayAPIError(HTTPAPIError.from(error))
        }
    }
}

extension RequestContext {
    /// Notes the error a request is answered with: its code (logs and metrics) and, when the answer is a 5xx, what
    /// caused it (the access log's `error_detail`, never the response): the domain code and the type of the error
    /// it wrapped (`storage_failure (wrapped GatewaySQLite.SQLiteError)`), or the type of an unexpected error. Only
    /// codes and type names: no reason text, which could carry values.
    func record(_ error: GatewayAPIError, cause: any Error) {
        errorCode = error.base.code
        guard error.base.status.rawValue >= 500 else { return }
        if let cause = cause as? GatewayError {
            errorDetail = cause.code.rawValue + (cause.wrapped.map { " (wrapped \($0))" } ?? "")
        } else {
            errorDetail = String(reflecting: type(of: cause))
        }
    }
}

/// The codes of the table that gateway errors share with the HTTP layer's JSON limits and the money rules, as
/// gateway error codes: the same constants, so that each string is written once.
extension GatewayError.Code {
    static let invalidJSON = Self(rawValue: HTTPAPIError.Code.invalidJSON.rawValue)
    static let jsonTooDeep = Self(rawValue: HTTPAPIError.Code.jsonTooDeep.rawValue)
    static let stringTooLong = Self(rawValue: HTTPAPIError.Code.stringTooLong.rawValue)
    static let invalidAmount = Self(rawValue: MoneyError.Code.invalidAmount.rawValue)
    static let tooManyDecimals = Self(rawValue: MoneyError.Code.tooManyDecimals.rawValue)
    static let negativeAmount = Self(rawValue: MoneyError.Code.negativeAmount.rawValue)
    static let amountOutOfRange = Self(rawValue: MoneyError.Code.amountOutOfRange.rawValue)
    static let invalidCountryCode = Self(rawValue: MoneyError.Code.invalidCountryCode.rawValue)
}

extension GatewayAPIError: HTTPAPIErrorConvertible {
    /// The base error (without the extra fields), for callers that render ``HTTPAPIError``s.
    public var httpAPIError: HTTPAPIError { base }
}
