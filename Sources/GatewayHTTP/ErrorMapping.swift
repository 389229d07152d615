import ApplePayModel
import Foundation
import Gateway

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

    /// The status and type of each domain code (the `x-orchard-error-codes` table).
    package static let table: [String: (HTTPStatus, HTTPAPIError.ErrorType)] = [
        "invalid_json": (.badRequest, .invalidRequest), "json_too_deep": (.badRequest, .invalidRequest),
        "string_too_long": (.badRequest, .invalidRequest), "parameter_missing": (.badRequest, .invalidRequest),
        "parameter_invalid": (.badRequest, .invalidRequest), "invalid_amount": (.badRequest, .invalidRequest),
        "too_many_decimals": (.badRequest, .invalidRequest), "negative_amount": (.badRequest, .invalidRequest),
        "amount_out_of_range": (.badRequest, .invalidRequest), "unknown_currency": (.badRequest, .invalidRequest),
        "invalid_country_code": (.badRequest, .invalidRequest), "invalid_cursor": (.badRequest, .invalidRequest),
        "not_found": (.notFound, .invalidRequest), "prime_not_found": (.notFound, .invalidRequest),
        "session_not_found": (.notFound, .invalidRequest), "invalid_credentials": (.unauthorized, .authentication),
        "forbidden": (.forbidden, .authentication), "processor_unavailable": (.serviceUnavailable, .api),
        "merchant_disabled": (.forbidden, .authentication),
        "idempotency_key_invalid": (.badRequest, .idempotency),
        "idempotency_conflict": (.unprocessableContent, .idempotency),
        "idempotency_in_flight": (.conflict, .idempotency), "token_replayed": (.conflict, .token),
        "prime_expired": (.unprocessableContent, .invalidRequest), "prime_already_used": (.conflict, .invalidRequest),
        "amount_mismatch": (.unprocessableContent, .invalidRequest),
        "prime_not_deferred": (.unprocessableContent, .invalidRequest),
        "currency_mismatch": (.unprocessableContent, .invalidRequest),
        "currency_not_supported": (.unprocessableContent, .invalidRequest),
        "network_not_allowed": (.unprocessableContent, .invalidRequest),
        "session_expired": (.unprocessableContent, .invalidRequest),
        "session_already_paid": (.conflict, .invalidRequest), "duplicate_out_trade_no": (.conflict, .invalidRequest),
        "card_declined": (.paymentRequired, .card), "processor_declined": (.paymentRequired, .card),
        "invalid_state_transition": (.conflict, .invalidRequest),
        "capture_exceeds_authorization": (.unprocessableContent, .invalidRequest),
        "refund_exceeds_capture": (.unprocessableContent, .invalidRequest),
        "webhook_endpoint_not_configured": (.conflict, .invalidRequest),
        "certificate_invalid": (.unprocessableContent, .invalidRequest),
        "certificate_key_mismatch": (.unprocessableContent, .invalidRequest),
        "bin_table_invalid": (.unprocessableContent, .invalidRequest),
        "co_brand_table_invalid": (.unprocessableContent, .invalidRequest),
        "last_active_key": (.conflict, .invalidRequest),
        "payment_request_invalid": (.unprocessableContent, .invalidRequest),
        "validation_url_not_allowed": (.badRequest, .invalidRequest),
        "domain_not_registered": (.forbidden, .invalidRequest),
        "domain_already_registered": (.conflict, .invalidRequest),
        "merchant_identity_missing": (.conflict, .invalidRequest),
        "apple_pay_validation_failed": (.badGateway, .api),
    ]

    /// The HTTP status and type the API answers for a domain error code, when it has an entry.
    public static func wireStatus(code: String) -> (status: Int, type: String)? {
        table[code].map { ($0.0.rawValue, $0.1.rawValue) }
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
            (status, type) = code == "token_replayed" ? (.conflict, .token) : (.unprocessableContent, .token)
        } else if let entry = table[code] {
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

extension GatewayAPIError: HTTPAPIErrorConvertible {
    /// The base error (without the extra fields), for callers that render ``HTTPAPIError``s.
    public var httpAPIError: HTTPAPIError { base }
}
