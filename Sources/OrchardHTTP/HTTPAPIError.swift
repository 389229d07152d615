import Foundation
import OrchardBase

/// An error answered to an API client, rendered as
/// `{"error": {"type", "code", "message", "param", "request_id"}}`.
///
/// Two errors are equal when their codes are equal. The message is meant for the client: it never carries secrets,
/// card data or internal details. Handlers throw these (or errors conforming to ``HTTPAPIErrorConvertible``); any
/// other error becomes a 500 `internal_error` with a generic message.
public struct HTTPAPIError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A stable, documented error code (snake_case).
    public struct Code: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
        /// The code string, e.g. `not_found`.
        public let rawValue: String
        /// A code from its string.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// A code from a literal string.
        public init(stringLiteral value: String) { self.rawValue = value }
        /// The code string.
        public var description: String { rawValue }

        /// No route matches the path (404).
        public static let notFound: Code = "not_found"
        /// The path exists but not with this method (405).
        public static let methodNotAllowed: Code = "method_not_allowed"
        /// The body exceeds the configured cap (413).
        public static let bodyTooLarge: Code = "body_too_large"
        /// A body with a content type the route does not accept (415).
        public static let unsupportedMediaType: Code = "unsupported_media_type"
        /// The body is not well-formed JSON (400).
        public static let invalidJSON: Code = "invalid_json"
        /// The JSON body nests deeper than allowed (400).
        public static let jsonTooDeep: Code = "json_too_deep"
        /// A JSON string (or key) in the body is longer than allowed (400).
        public static let stringTooLong: Code = "string_too_long"
        /// A required field is missing (400).
        public static let parameterMissing: Code = "parameter_missing"
        /// A field has the wrong type or an invalid value (400).
        public static let parameterInvalid: Code = "parameter_invalid"
        /// The credential exceeded its request rate (429).
        public static let rateLimited: Code = "rate_limited"
        /// The route needs credentials and none were given (401).
        public static let missingCredentials: Code = "missing_credentials"
        /// The credentials given are unknown or wrong (401).
        public static let invalidCredentials: Code = "invalid_credentials"
        /// The credentials are valid but may not use this route (403).
        public static let forbidden: Code = "forbidden"
        /// A state-changing request made with the console's session cookie lacks the session's `X-CSRF-Token` (403).
        public static let csrfTokenInvalid: Code = "csrf_token_invalid"
        /// The server is shutting down or not ready (503).
        public static let unavailable: Code = "service_unavailable"
        /// An unexpected failure on the server; details are not disclosed (500).
        public static let internalError: Code = "internal_error"
    }

    /// The broad class of an error, the `type` field.
    public struct ErrorType: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
        /// The type string, e.g. `invalid_request_error`.
        public let rawValue: String
        /// A type from its string.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// A type from a literal string.
        public init(stringLiteral value: String) { self.rawValue = value }
        /// The type string.
        public var description: String { rawValue }

        /// The request is malformed, refused or names something that does not exist.
        public static let invalidRequest: ErrorType = "invalid_request_error"
        /// Credentials are missing or wrong.
        public static let authentication: ErrorType = "authentication_error"
        /// Credentials are valid but not allowed here.
        public static let permission: ErrorType = "permission_error"
        /// Too many requests.
        public static let rateLimit: ErrorType = "rate_limit_error"
        /// A failure on the server's side.
        public static let api: ErrorType = "api_error"
    }

    /// The HTTP status answered.
    public var status: HTTPStatus
    /// The error's class.
    public var type: ErrorType
    /// The stable code.
    public var code: Code
    /// A human-readable explanation for the client; never secrets.
    public var message: String
    /// The request field the error is about, if any (dotted path).
    public var param: String?
    /// Extra response header fields (`Allow`, `Retry-After` …).
    public var headers: HTTPHeaders

    /// An error.
    public init(
        status: HTTPStatus, type: ErrorType, code: Code, message: String, param: String? = nil,
        headers: HTTPHeaders = HTTPHeaders()
    ) {
        self.status = status
        self.type = type
        self.code = code
        self.message = message
        self.param = param
        self.headers = headers
    }

    /// Equal when the codes are equal.
    public static func == (lhs: HTTPAPIError, rhs: HTTPAPIError) -> Bool { lhs.code == rhs.code }

    /// `code (status): message`
    public var description: String { "\(code) (\(status)): \(message)" }

    /// The JSON response for this error, carrying `requestID` in the body.
    public func response(requestID: String?) -> HTTPResponse {
        // Keys in sorted order, as the gateway's JSON writer orders them.
        let fields: [(String, String?)] = [
            ("code", code.rawValue), ("message", message), ("param", param), ("request_id", requestID),
            ("type", type.rawValue),
        ]
        var out = Array("{\"error\":{".utf8)
        for (index, (key, value)) in fields.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            JSONString.write(key, to: &out)
            out.append(UInt8(ascii: ":"))
            if let value { JSONString.write(value, to: &out) } else { out.append(contentsOf: "null".utf8) }
        }
        out.append(contentsOf: "}}".utf8)
        let body = Data(out)
        var headers = self.headers
        headers["Content-Type"] = JSONCoding.contentType
        return HTTPResponse(status: status, headers: headers, body: body)
    }
}

/// An error that knows its API form: domain errors conform so that handlers can simply throw them.
public protocol HTTPAPIErrorConvertible: Error {
    /// The error as answered to the client.
    var httpAPIError: HTTPAPIError { get }
}

extension HTTPAPIError {
    /// The API form of any error: itself, its ``HTTPAPIErrorConvertible`` conversion, or 500 `internal_error`.
    public static func from(_ error: any Error) -> HTTPAPIError {
        if let error = error as? HTTPAPIError { return error }
        if let convertible = error as? any HTTPAPIErrorConvertible { return convertible.httpAPIError }
        return .internalError()
    }

    /// 404 `not_found`.
    public static func notFound(_ message: String = "no such resource") -> HTTPAPIError {
        HTTPAPIError(status: .notFound, type: .invalidRequest, code: .notFound, message: message)
    }

    /// 405 `method_not_allowed` with the `Allow` header listing `allowed`.
    public static func methodNotAllowed(_ method: HTTPMethod, allowed: [HTTPMethod]) -> HTTPAPIError {
        let allow = allowed.map(\.rawValue).joined(separator: ", ")
        return HTTPAPIError(
            status: .methodNotAllowed, type: .invalidRequest, code: .methodNotAllowed,
            message: "\(method) is not allowed here; allowed: \(allow)", headers: ["Allow": allow])
    }

    /// 413 `body_too_large`.
    public static func bodyTooLarge(limit: Int) -> HTTPAPIError {
        HTTPAPIError(
            status: .contentTooLarge, type: .invalidRequest, code: .bodyTooLarge,
            message: "the request body exceeds \(limit) bytes")
    }

    /// 415 `unsupported_media_type`.
    public static func unsupportedMediaType(_ message: String) -> HTTPAPIError {
        HTTPAPIError(
            status: .unsupportedMediaType, type: .invalidRequest, code: .unsupportedMediaType, message: message)
    }

    /// 400 `invalid_json`.
    public static func invalidJSON(_ message: String) -> HTTPAPIError {
        HTTPAPIError(status: .badRequest, type: .invalidRequest, code: .invalidJSON, message: message)
    }

    /// 400 `parameter_missing` for `param`.
    public static func parameterMissing(_ param: String) -> HTTPAPIError {
        HTTPAPIError(
            status: .badRequest, type: .invalidRequest, code: .parameterMissing, message: "\(param) is required",
            param: param)
    }

    /// 400 `parameter_invalid` for `param`.
    public static func parameterInvalid(_ param: String?, message: String) -> HTTPAPIError {
        HTTPAPIError(
            status: .badRequest, type: .invalidRequest, code: .parameterInvalid, message: message, param: param)
    }

    /// 429 `rate_limited` with `Retry-After` in whole seconds.
    public static func rateLimited(retryAfterSeconds: Int) -> HTTPAPIError {
        HTTPAPIError(
            status: .tooManyRequests, type: .rateLimit, code: .rateLimited,
            message: "too many requests; retry after \(retryAfterSeconds) s",
            headers: ["Retry-After": String(retryAfterSeconds)])
    }

    /// 401 `missing_credentials`.
    public static func missingCredentials(_ message: String = "this route needs credentials") -> HTTPAPIError {
        HTTPAPIError(status: .unauthorized, type: .authentication, code: .missingCredentials, message: message)
    }

    /// 401 `invalid_credentials`.
    public static func invalidCredentials(_ message: String = "the credentials are not valid") -> HTTPAPIError {
        HTTPAPIError(status: .unauthorized, type: .authentication, code: .invalidCredentials, message: message)
    }

    /// 403 `forbidden`.
    public static func forbidden(_ message: String = "these credentials may not use this route") -> HTTPAPIError {
        HTTPAPIError(status: .forbidden, type: .permission, code: .forbidden, message: message)
    }

    /// 503 `service_unavailable`.
    public static func unavailable(_ message: String = "the service is unavailable") -> HTTPAPIError {
        HTTPAPIError(status: .serviceUnavailable, type: .api, code: .unavailable, message: message)
    }

    /// 500 `internal_error` with a generic message.
    public static func internalError() -> HTTPAPIError {
        HTTPAPIError(
            status: .internalServerError, type: .api, code: .internalError,
            message: "an internal error occurred; quote the request id when reporting it")
    }
}
