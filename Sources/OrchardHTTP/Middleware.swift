import Foundation
import OrchardBase

/// Writes one structured JSON line per request:
/// `{"time","level","request_id","method","route","status","latency_ms","remote"[,"error_code"][,"error_detail"]}`
/// (`error_detail`: what caused a 5xx, e.g. `storage_failure (wrapped GatewaySQLite.SQLiteError)`).
///
/// The route is the matched template (`/v1/payments/{id}`), never the raw path, and no header, query or body is
/// ever written, so ids, keys and card data stay out of the log.
public struct AccessLogMiddleware: HTTPMiddleware {
    /// Receives each line (without a newline).
    public let sink: @Sendable (String) -> Void

    /// A logger writing to `sink`.
    public init(sink: @escaping @Sendable (String) -> Void) { self.sink = sink }

    /// A logger writing lines to standard output.
    public static var standardOutput: AccessLogMiddleware {
        AccessLogMiddleware { line in FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
    }

    /// Logs every request, refused ones included.
    public var runsForRejectedRequests: Bool { true }

    /// Calls `next`, then writes the line.
    public func handle(_ request: HTTPRequest, context: RequestContext, next: HTTPNext) throws -> HTTPResponse {
        let response = next(request, context)
        let latency = max(0, context.clock.monotonicSeconds() - context.startedAt) * 1000
        var fields: [(String, String)] = [
            ("time", jsonString(Self.timestamp(context.clock.now()))),
            ("level", jsonString(response.status.rawValue >= 500 ? "error" : "info")),
            ("request_id", jsonString(context.requestID)),
            ("method", jsonString(request.method.rawValue)),
            ("route", jsonString(context.routeTemplate)),
            ("status", String(response.status.rawValue)),
            ("latency_ms", String(format: "%.3f", latency)),
            ("remote", request.remoteAddress.map(jsonString) ?? "null"),
        ]
        if let code = context.errorCode { fields.append(("error_code", jsonString(code.rawValue))) }
        if let detail = context.errorDetail { fields.append(("error_detail", jsonString(detail))) }
        sink("{" + fields.map { "\(jsonString($0.0)):\($0.1)" }.joined(separator: ",") + "}")
        return response
    }

    static func timestamp(_ date: Date) -> String {
        var formatted = date.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true))
        if !formatted.hasSuffix("Z") { formatted += "Z" }
        return formatted
    }
}

/// A JSON string literal for `text`, escaped.
func jsonString(_ text: String) -> String { JSONString.literal(text) }

/// Request metrics in a ``MetricsRegistry``, with the labels of the specification:
/// `orchard_http_requests_total{route,method,status}` and `orchard_http_request_duration_seconds{route,method}`
/// (route templates, `unmatched` otherwise; the method `other` for unmatched requests).
public struct MetricsMiddleware: HTTPMiddleware {
    private let requests: Counter
    private let latency: Histogram

    /// Registers the two metrics in `registry`.
    public init(registry: MetricsRegistry) {
        requests = registry.counter(
            "orchard_http_requests_total", help: "HTTP requests by route, method and status.",
            labels: ["route", "method", "status"])
        latency = registry.histogram(
            "orchard_http_request_duration_seconds", help: "HTTP request latency.", labels: ["route", "method"])
    }

    /// Counts refused requests too.
    public var runsForRejectedRequests: Bool { true }

    /// Calls `next`, then records the outcome.
    public func handle(_ request: HTTPRequest, context: RequestContext, next: HTTPNext) throws -> HTTPResponse {
        let response = next(request, context)
        let method = context.route == nil ? "other" : request.method.rawValue
        requests.increment(labels: [context.routeTemplate, method, String(response.status.rawValue)])
        latency.observe(
            max(0, context.clock.monotonicSeconds() - context.startedAt), labels: [context.routeTemplate, method])
        return response
    }
}

/// Cross-origin resource sharing for browsers calling the client-side routes.
public struct CORSPolicy: Sendable {
    /// Whether `origin` may read the response to `request`. Called for preflights (which carry no credentials)
    /// and, after the rest of the chain ran, for actual requests (when ``RequestContext/principal`` may be set).
    public var isAllowed: @Sendable (_ origin: String, _ request: HTTPRequest, _ context: RequestContext) -> Bool
    /// Whether CORS applies to `request` at all (a preflight's route is the one it asks about); requests it does
    /// not apply to pass untouched. All requests by default.
    public var appliesTo: @Sendable (_ request: HTTPRequest, _ context: RequestContext) -> Bool
    /// Methods a preflight allows.
    public var allowedMethods: [HTTPMethod]
    /// Request headers a preflight allows.
    public var allowedHeaders: [String]
    /// Response headers scripts may read.
    public var exposedHeaders: [String]
    /// How long a browser may cache a preflight answer, in seconds.
    public var maxAgeSeconds: Int
    /// The answer to a preflight from a refused origin (403 `forbidden` by default).
    public var refusal: HTTPAPIError
    /// When true, an `OPTIONS` request that is not a preflight this policy answers is 405 `method_not_allowed`
    /// on a known path (instead of 204 with `Allow`).
    public var refusesOtherOptions: Bool

    /// A policy deciding origins with `isAllowed`.
    public init(
        allowedMethods: [HTTPMethod] = [.get, .post, .put, .delete],
        allowedHeaders: [String] = [
            "Content-Type", "Idempotency-Key", "X-Orchard-App-Id", "X-Orchard-App-Key", "Authorization",
        ],
        exposedHeaders: [String] = ["Request-Id", "Retry-After"], maxAgeSeconds: Int = 600,
        refusal: HTTPAPIError = .forbidden("origin not allowed"), refusesOtherOptions: Bool = false,
        appliesTo: @escaping @Sendable (_ request: HTTPRequest, _ context: RequestContext) -> Bool = { _, _ in true },
        isAllowed: @escaping @Sendable (_ origin: String, _ request: HTTPRequest, _ context: RequestContext) -> Bool
    ) {
        self.isAllowed = isAllowed
        self.appliesTo = appliesTo
        self.allowedMethods = allowedMethods
        self.allowedHeaders = allowedHeaders
        self.exposedHeaders = exposedHeaders
        self.maxAgeSeconds = maxAgeSeconds
        self.refusal = refusal
        self.refusesOtherOptions = refusesOtherOptions
    }

    /// A policy allowing exactly `origins` (e.g. `https://shop.example`) for every request.
    public static func origins(_ origins: Set<String>) -> CORSPolicy {
        CORSPolicy { origin, _, _ in origins.contains(origin) }
    }
}

/// Answers CORS preflights (`OPTIONS` with `Access-Control-Request-Method`) and adds
/// `Access-Control-Allow-Origin` to actual responses for allowed origins. Every response to a request with an
/// `Origin` the policy applies to gets `Vary: Origin`. A preflight from a refused origin is answered with the
/// policy's ``CORSPolicy/refusal``.
public struct CORSMiddleware: HTTPMiddleware {
    /// The policy.
    public let policy: CORSPolicy
    /// The routes, to tell a known path from an unknown one (for ``CORSPolicy/refusesOtherOptions``).
    public let router: Router?

    /// A middleware applying `policy`; give `router` when the policy refuses other `OPTIONS` requests.
    public init(policy: CORSPolicy, router: Router? = nil) {
        self.policy = policy
        self.router = router
    }

    /// Refused requests get CORS headers too, so scripts can read the error.
    public var runsForRejectedRequests: Bool { true }

    /// Answers a preflight, or calls `next` and decorates its response.
    public func handle(_ request: HTTPRequest, context: RequestContext, next: HTTPNext) throws -> HTTPResponse {
        let applies = policy.appliesTo(request, context)
        if request.method == .options, applies, let origin = request.headers["Origin"],
            request.headers.contains("Access-Control-Request-Method")
        {
            guard policy.isAllowed(origin, request, context) else {
                var response = policy.refusal.response(requestID: context.requestID)
                context.errorCode = policy.refusal.code
                response.headers.addVary("Origin")
                return response
            }
            var response = HTTPResponse(status: .noContent)
            response.headers["Access-Control-Allow-Origin"] = origin
            response.headers["Access-Control-Allow-Methods"] = policy.allowedMethods.map(\.rawValue).joined(
                separator: ", ")
            response.headers["Access-Control-Allow-Headers"] = policy.allowedHeaders.joined(separator: ", ")
            response.headers["Access-Control-Max-Age"] = String(policy.maxAgeSeconds)
            response.headers.addVary("Origin")
            return response
        }
        if request.method == .options, policy.refusesOtherOptions, let router,
            case .methodNotAllowed(let allowed) = router.resolve(method: .options, path: request.path)
        {
            throw HTTPAPIError.methodNotAllowed(.options, allowed: allowed)
        }
        var response = next(request, context)
        guard let origin = request.headers["Origin"], applies else { return response }
        if policy.isAllowed(origin, request, context) {
            response.headers["Access-Control-Allow-Origin"] = origin
            if !policy.exposedHeaders.isEmpty {
                response.headers["Access-Control-Expose-Headers"] = policy.exposedHeaders.joined(separator: ", ")
            }
        }
        response.headers.addVary("Origin")
        return response
    }
}

extension HTTPHeaders {
    /// Adds `name` to `Vary` unless it is there already.
    package mutating func addVary(_ name: String) {
        let existing = values(for: "Vary").flatMap { $0.split(separator: ",") }.map { $0.trimmingHTTPWhitespace() }
        guard !existing.contains(where: { $0.equalsIgnoringASCIICase(name) }) else { return }
        self["Vary"] = (existing + [name]).joined(separator: ", ")
    }
}

/// Refuses a body whose `Content-Type` the route does not accept (415 `unsupported_media_type`).
///
/// Applies to `POST`, `PUT` and `PATCH` requests with a non-empty body. The accepted media types are the matched
/// route's ``Route/accepts`` (`application/json` by default); a JSON body's `charset`, if given, must be UTF-8.
public struct ContentTypeMiddleware: HTTPMiddleware {
    /// A content-type check.
    public init() {}

    /// Checks, then calls `next`.
    public func handle(_ request: HTTPRequest, context: RequestContext, next: HTTPNext) throws -> HTTPResponse {
        // A path or method without a route is answered 404 or 405 whatever its body.
        guard let route = context.route, [.post, .put, .patch].contains(request.method), !request.body.isEmpty else {
            return next(request, context)
        }
        let accepted = route.accepts
        guard let mediaType = request.headers.mediaType else {
            throw HTTPAPIError.unsupportedMediaType("a request body needs a Content-Type; send application/json")
        }
        guard accepted.contains(mediaType) else {
            let list = accepted.sorted().joined(separator: ", ")
            throw HTTPAPIError.unsupportedMediaType("Content-Type \(mediaType) is not accepted here; send \(list)")
        }
        if mediaType == "application/json", let charset = request.headers.charset,
            !["utf-8", "utf8"].contains(charset)
        {
            throw HTTPAPIError.unsupportedMediaType("JSON bodies must be UTF-8, not \(charset)")
        }
        return next(request, context)
    }
}

extension HTTPHeaders {
    /// The `charset` parameter of `Content-Type`, lower-cased.
    var charset: String? {
        guard let value = self["Content-Type"] else { return nil }
        for parameter in value.split(separator: ";").dropFirst() {
            let parts = parameter.split(separator: "=", maxSplits: 1)
            if parts.count == 2, parts[0].trimmingHTTPWhitespace().equalsIgnoringASCIICase("charset") {
                return parts[1].trimmingHTTPWhitespace().trimmingCharacters(in: ["\""]).lowercased()
            }
        }
        return nil
    }
}

/// Parses a JSON body once, strictly (``JSONLimits/parse(_:)``), and refuses it if it is malformed, has a
/// duplicate key or a number out of range (`invalid_json`), nests deeper than ``JSONLimits/maxDepth``
/// (`json_too_deep`) or holds a string longer than ``JSONLimits/maxStringLength`` (`string_too_long`), all 400.
/// The parsed body is kept in the context under ``ParsedJSONBodyKey`` for the handler. Routes of a scope in
/// ``ownErrorScopes`` are left to parse their body themselves (they answer a refusal in another API's shape).
public struct JSONLimitsMiddleware: HTTPMiddleware {
    /// The limits.
    public let limits: JSONLimits
    /// The scopes whose routes parse (and refuse) their bodies themselves.
    public let ownErrorScopes: Set<RouteScope>

    /// A middleware enforcing `limits`, except on routes of `ownErrorScopes`.
    public init(limits: JSONLimits = JSONLimits(), ownErrorScopes: Set<RouteScope> = []) {
        self.limits = limits
        self.ownErrorScopes = ownErrorScopes
    }

    /// Parses JSON bodies, then calls `next`.
    public func handle(_ request: HTTPRequest, context: RequestContext, next: HTTPNext) throws -> HTTPResponse {
        if let route = context.route, !ownErrorScopes.contains(route.scope), !request.body.isEmpty,
            let mediaType = request.headers.mediaType,
            mediaType == "application/json" || mediaType.hasSuffix("+json")
        {
            context[ParsedJSONBodyKey.self] = try limits.parse(request.body)
        }
        return next(request, context)
    }
}

/// The authentication hook: maps a request (its headers) and the matched route to the caller.
///
/// The closure returns the ``Principal`` for valid credentials, `nil` when the route needs none (its
/// ``Route/scope`` is public), or throws an ``HTTPAPIError`` such as ``HTTPAPIError/missingCredentials(_:)``,
/// ``HTTPAPIError/invalidCredentials(_:)`` or ``HTTPAPIError/forbidden(_:)``. The principal is stored in
/// ``RequestContext/principal``.
public struct AuthenticationMiddleware: HTTPMiddleware {
    /// The hook.
    public let authenticate: @Sendable (HTTPRequest, RequestContext) throws -> Principal?

    /// A middleware calling `authenticate`.
    public init(authenticate: @escaping @Sendable (HTTPRequest, RequestContext) throws -> Principal?) {
        self.authenticate = authenticate
    }

    /// Authenticates, then calls `next`. Unmatched routes skip the hook (they are answered 404/405).
    public func handle(_ request: HTTPRequest, context: RequestContext, next: HTTPNext) throws -> HTTPResponse {
        if context.route != nil {
            context.principal = try authenticate(request, context)
        }
        return next(request, context)
    }
}

/// Limits each credential's request rate with a token bucket (429 `rate_limited` with `Retry-After`).
public struct RateLimitMiddleware: HTTPMiddleware {
    /// The buckets.
    public let limiter: TokenBucketRateLimiter
    /// The key of a request, or `nil` for no limit; by default the principal's credential id.
    public let key: @Sendable (HTTPRequest, RequestContext) -> String?

    /// A middleware limiting with `limiter` per `key`.
    public init(
        limiter: TokenBucketRateLimiter,
        key: @escaping @Sendable (HTTPRequest, RequestContext) -> String? = { _, context in
            context.principal?.credentialID
        }
    ) {
        self.limiter = limiter
        self.key = key
    }

    /// Takes a token for the request's key, then calls `next`.
    public func handle(_ request: HTTPRequest, context: RequestContext, next: HTTPNext) throws -> HTTPResponse {
        if let key = key(request, context), case .limited(let retryAfter) = limiter.acquire(key) {
            throw HTTPAPIError.rateLimited(retryAfterSeconds: retryAfter)
        }
        return next(request, context)
    }
}
