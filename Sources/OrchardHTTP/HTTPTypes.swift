import Foundation
import OrchardBase
import OrchardJSON

/// An HTTP request method (`GET`, `POST` …), compared by its upper-case token.
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The method token, upper case.
    public let rawValue: String

    /// A method from its token; the token is upper-cased.
    public init(rawValue: String) { self.rawValue = rawValue.uppercased() }
    /// A method from a literal token.
    public init(stringLiteral value: String) { self.init(rawValue: value) }

    /// `GET`
    public static let get: HTTPMethod = "GET"
    /// `HEAD`
    public static let head: HTTPMethod = "HEAD"
    /// `POST`
    public static let post: HTTPMethod = "POST"
    /// `PUT`
    public static let put: HTTPMethod = "PUT"
    /// `PATCH`
    public static let patch: HTTPMethod = "PATCH"
    /// `DELETE`
    public static let delete: HTTPMethod = "DELETE"
    /// `OPTIONS`
    public static let options: HTTPMethod = "OPTIONS"

    /// The method token.
    public var description: String { rawValue }
}

/// An HTTP status code.
public struct HTTPStatus: RawRepresentable, Hashable, Sendable, ExpressibleByIntegerLiteral, CustomStringConvertible {
    /// The numeric code, e.g. 404.
    public let rawValue: Int

    /// A status from its code.
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// A status from a literal code.
    public init(integerLiteral value: Int) { self.rawValue = value }

    /// 200 OK
    public static let ok: HTTPStatus = 200
    /// 201 Created
    public static let created: HTTPStatus = 201
    /// 202 Accepted
    public static let accepted: HTTPStatus = 202
    /// 204 No Content
    public static let noContent: HTTPStatus = 204
    /// 400 Bad Request
    public static let badRequest: HTTPStatus = 400
    /// 401 Unauthorized
    public static let unauthorized: HTTPStatus = 401
    /// 402 Payment Required
    public static let paymentRequired: HTTPStatus = 402
    /// 403 Forbidden
    public static let forbidden: HTTPStatus = 403
    /// 404 Not Found
    public static let notFound: HTTPStatus = 404
    /// 405 Method Not Allowed
    public static let methodNotAllowed: HTTPStatus = 405
    /// 409 Conflict
    public static let conflict: HTTPStatus = 409
    /// 413 Content Too Large
    public static let contentTooLarge: HTTPStatus = 413
    /// 415 Unsupported Media Type
    public static let unsupportedMediaType: HTTPStatus = 415
    /// 422 Unprocessable Content
    public static let unprocessableContent: HTTPStatus = 422
    /// 429 Too Many Requests
    public static let tooManyRequests: HTTPStatus = 429
    /// 500 Internal Server Error
    public static let internalServerError: HTTPStatus = 500
    /// 502 Bad Gateway
    public static let badGateway: HTTPStatus = 502
    /// 503 Service Unavailable
    public static let serviceUnavailable: HTTPStatus = 503

    /// The numeric code as text.
    public var description: String { String(rawValue) }
}

/// HTTP header fields: ordered, with case-insensitive name lookup.
public struct HTTPHeaders: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    /// One header field.
    public struct Field: Sendable, Equatable {
        /// The name as received or added (lookups ignore its case).
        public var name: String
        /// The value.
        public var value: String

        /// A field.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    private var fields: [Field] = []

    /// No fields.
    public init() {}

    /// Fields in the given order.
    public init(_ fields: [(String, String)]) {
        self.fields = fields.map { Field(name: $0.0, value: $0.1) }
    }

    /// Fields from a literal, in order.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    /// The first value for `name` (case-insensitive); setting replaces every field of that name, `nil` removes them.
    public subscript(name: String) -> String? {
        get { fields.first { $0.name.equalsIgnoringASCIICase(name) }?.value }
        set {
            if let index = fields.firstIndex(where: { $0.name.equalsIgnoringASCIICase(name) }), let newValue {
                fields[index].value = newValue
                var seen = false
                fields.removeAll { field in
                    guard field.name.equalsIgnoringASCIICase(name) else { return false }
                    defer { seen = true }
                    return seen
                }
            } else {
                remove(name)
                if let newValue { fields.append(Field(name: name, value: newValue)) }
            }
        }
    }

    /// Every value for `name` (case-insensitive), in order.
    public func values(for name: String) -> [String] {
        fields.filter { $0.name.equalsIgnoringASCIICase(name) }.map(\.value)
    }

    /// Whether a field named `name` is present.
    public func contains(_ name: String) -> Bool { fields.contains { $0.name.equalsIgnoringASCIICase(name) } }

    /// Appends a field, keeping any others of the same name.
    public mutating func add(name: String, value: String) { fields.append(Field(name: name, value: value)) }

    /// Removes every field named `name`.
    public mutating func remove(_ name: String) { fields.removeAll { $0.name.equalsIgnoringASCIICase(name) } }

    /// The number of fields.
    public var count: Int { fields.count }

    /// Iterates the fields in order.
    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }

    /// The token of an `Authorization: Bearer <token>` header, if present and non-empty.
    public var bearerToken: String? {
        guard let value = self["Authorization"] else { return nil }
        let parts = value.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].equalsIgnoringASCIICase("bearer") else { return nil }
        let token = parts[1].trimmingHTTPWhitespace()
        return token.isEmpty ? nil : token
    }

    /// The media type of `Content-Type` without parameters, lower-cased (`application/json`).
    public var mediaType: String? {
        guard let value = self["Content-Type"] else { return nil }
        let type = value.split(separator: ";", maxSplits: 1).first.map(String.init) ?? value
        return type.trimmingHTTPWhitespace().lowercased()
    }
}

/// A query item of the request target, percent-decoded (`+` is a space).
public struct QueryItem: Sendable, Equatable {
    /// The decoded name.
    public var name: String
    /// The decoded value; `nil` when the item had no `=`.
    public var value: String?

    /// A query item.
    public init(name: String, value: String?) {
        self.name = name
        self.value = value
    }
}

/// A request as the router and handlers see it: complete, with its body read.
public struct HTTPRequest: Sendable {
    /// The request method.
    public var method: HTTPMethod
    /// The path of the request target as sent (still percent-encoded), e.g. `/v1/payments/pay_1`.
    public var path: String
    /// The query items, percent-decoded (`+` is a space), in order.
    public var queryItems: [QueryItem]
    /// The header fields.
    public var headers: HTTPHeaders
    /// The body (empty when there is none).
    public var body: Data
    /// The client's IP address as text, if known: the peer's, or behind a trusted proxy the address it forwarded
    /// (``TrustedProxies``).
    public var remoteAddress: String?
    /// Whether a trusted proxy said the browser spoke HTTPS to it (`X-Forwarded-Proto: https`); the server itself
    /// may speak plain HTTP to the proxy.
    public var forwardedHTTPS = false

    /// A request from its parts.
    public init(
        method: HTTPMethod, path: String, queryItems: [QueryItem] = [], headers: HTTPHeaders = HTTPHeaders(),
        body: Data = Data(), remoteAddress: String? = nil
    ) {
        self.method = method
        self.path = path.isEmpty ? "/" : path
        self.queryItems = queryItems
        self.headers = headers
        self.body = body
        self.remoteAddress = remoteAddress
    }

    /// A request from a request target (`/path?query`) as sent; the query is parsed into ``queryItems``.
    public init(
        method: HTTPMethod, target: String, headers: HTTPHeaders = HTTPHeaders(), body: Data = Data(),
        remoteAddress: String? = nil
    ) {
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        var path = parts.first.map(String.init) ?? "/"
        if let fragment = path.firstIndex(of: "#") { path = String(path[..<fragment]) }
        self.init(
            method: method, path: path, queryItems: parts.count > 1 ? QueryItem.parse(String(parts[1])) : [],
            headers: headers, body: body, remoteAddress: remoteAddress)
    }

    /// The first value of the query item `name`, if any (an item without `=` gives an empty string).
    public func query(_ name: String) -> String? {
        queryItems.first { $0.name == name }.map { $0.value ?? "" }
    }

    /// The path's segments, each percent-decoded (`/v1/a%2Fb` → `["v1", "a/b"]`); `nil` if a segment is not valid
    /// percent-encoded UTF-8 or decodes to a control character (`%00`, `%0A`, `%7F` …: no resource is named so).
    public var decodedPathSegments: [String]? { Self.decodePathSegments(path) }

    static func decodePathSegments(_ path: String) -> [String]? {
        var segments: [String] = []
        for raw in path.split(separator: "/", omittingEmptySubsequences: false).dropFirst() {
            guard let decoded = String(raw).removingPercentEncoding,
                !decoded.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
            else { return nil }
            segments.append(decoded)
        }
        return segments
    }
}

extension QueryItem {
    /// Parses `a=1&b=x%20y&c` into items; `+` decodes to a space; undecodable items keep their raw text.
    static func parse(_ query: String) -> [QueryItem] {
        query.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ text: Substring) -> String {
                let spaced = text.replacingOccurrences(of: "+", with: " ")
                return spaced.removingPercentEncoding ?? spaced
            }
            return QueryItem(name: decode(parts[0]), value: parts.count > 1 ? decode(parts[1]) : nil)
        }
    }
}

/// A response: status, header fields and body. `Content-Length` and `Date` are added by the server.
public struct HTTPResponse: Sendable {
    /// The status.
    public var status: HTTPStatus
    /// The header fields.
    public var headers: HTTPHeaders
    /// The body.
    public var body: Data

    /// A response.
    public init(status: HTTPStatus = .ok, headers: HTTPHeaders = HTTPHeaders(), body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A body-less response.
    public static func empty(_ status: HTTPStatus = .noContent) -> HTTPResponse {
        HTTPResponse(status: status)
    }

    /// A `text/plain; charset=utf-8` response.
    public static func text(_ text: String, status: HTTPStatus = .ok) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "text/plain; charset=utf-8"], body: Data(text.utf8))
    }

    /// An `application/json` response from a JSON-compatible object (dictionaries, arrays, strings, numbers,
    /// booleans, `NSNull`), keys sorted (``JSONWriter/json(_:)``).
    public static func jsonObject(_ object: Any, status: HTTPStatus = .ok) throws -> HTTPResponse {
        let body = try JSONWriter.json(object)
        return HTTPResponse(status: status, headers: ["Content-Type": JSONCoding.contentType], body: body)
    }
}

/// JSON conventions of the HTTP API.
public enum JSONCoding {
    /// `application/json; charset=utf-8`
    public static let contentType = "application/json; charset=utf-8"
}
