import Foundation
import OrchardCrypto

/// The clocks the HTTP layer reads: wall time for log lines, a monotonic clock for latencies and rate limits.
/// Tests inject fixed or stepped clocks.
public struct HTTPClock: Sendable {
    /// The wall-clock time.
    public var now: @Sendable () -> Date
    /// A monotonic time in seconds (any origin).
    public var monotonicSeconds: @Sendable () -> Double

    /// A clock from its two readings.
    public init(now: @escaping @Sendable () -> Date, monotonicSeconds: @escaping @Sendable () -> Double) {
        self.now = now
        self.monotonicSeconds = monotonicSeconds
    }

    /// The system clocks.
    public static let system = HTTPClock(
        now: { Date() }, monotonicSeconds: { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 })
}

/// Makes the request ids put on every response (`Request-Id`) and in every log line and error body.
public struct RequestIDGenerator: Sendable {
    /// Returns a new id.
    public var next: @Sendable () -> String

    /// A generator from a function.
    public init(next: @escaping @Sendable () -> String) { self.next = next }

    /// `req_` and 24 random base-62 characters (about 143 bits) from the package's one secure identifier maker,
    /// ``SecureRandom/alphanumeric(_:)`` (a request id correlates, it guards nothing: should the generator ever
    /// fail, the id is `req_` and zeros rather than no answer).
    public static let random = RequestIDGenerator {
        "req_" + ((try? SecureRandom.alphanumeric(24)) ?? String(repeating: "0", count: 24))
    }
}

/// The authenticated caller of a request, as established by the authentication hook.
public struct Principal: Sendable {
    /// A stable, non-secret id of the credential used (an app id, a key id): the rate limit key and log field.
    public var credentialID: String
    /// The kind of credential (e.g. `app_key`, `secret_key`), for route checks.
    public var kind: String
    /// The domain's own value for the caller (e.g. the merchant), read back with ``value(as:)``.
    public var value: (any Sendable)?

    /// A principal.
    public init(credentialID: String, kind: String, value: (any Sendable)? = nil) {
        self.credentialID = credentialID
        self.kind = kind
        self.value = value
    }

    /// ``value`` as `T`, if it is one.
    public func value<T>(as type: T.Type) -> T? { value as? T }
}

/// A key for a value stored in a ``RequestContext`` by a middleware for later middleware or the handler.
public protocol RequestContextKey {
    /// The stored value's type.
    associatedtype Value: Sendable
}

/// Per-request state shared by the middleware chain and the handler: request id, matched route, path parameters,
/// principal, and typed extension values.
///
/// A context belongs to one request and is used on that request's worker thread only.
// Unchecked: one request's context, read and written on that request's worker thread only.
public final class RequestContext: @unchecked Sendable {
    /// The request id (`req_…`), answered in `Request-Id`.
    public let requestID: String
    /// When the request reached the application (wall clock).
    public let receivedAt: Date
    /// When the request reached the application (monotonic seconds of ``clock``).
    public let startedAt: Double
    /// The clocks in use.
    public let clock: HTTPClock
    /// The matched route, if any.
    public internal(set) var route: Route?
    /// The decoded path parameters of the matched route.
    public internal(set) var parameters: [String: String] = [:]
    /// The authenticated caller, once the authentication middleware has run.
    public var principal: Principal?
    /// The code of the error answered, if the response is an error (for logs and metrics).
    public package(set) var errorCode: HTTPAPIError.Code?
    /// What caused a 5xx answer, as codes and type names (for the access log only; never answered).
    public package(set) var errorDetail: String?
    private var values: [ObjectIdentifier: any Sendable] = [:]

    /// A context (the application makes one per request).
    public init(requestID: String, clock: HTTPClock = .system) {
        self.requestID = requestID
        self.clock = clock
        self.receivedAt = clock.now()
        self.startedAt = clock.monotonicSeconds()
    }

    /// The matched route's template, or `unmatched` (bounded cardinality for logs and metrics).
    public var routeTemplate: String { route?.template.text ?? "unmatched" }

    /// The path parameter `name`; a missing one is a programming error answered as 500.
    public func parameter(_ name: String) throws(HTTPAPIError) -> String {
        guard let value = parameters[name] else { throw .internalError() }
        return value
    }

    /// A value stored under `key`.
    public subscript<Key: RequestContextKey>(_ key: Key.Type) -> Key.Value? {
        get { values[ObjectIdentifier(key)] as? Key.Value }
        set { values[ObjectIdentifier(key)] = newValue }
    }
}

/// What the chain calls to go on: the rest of the middleware and the handler. It never throws: errors from
/// further in are already rendered as error responses.
public typealias HTTPNext = (HTTPRequest, RequestContext) -> HTTPResponse

/// A cross-cutting step around every request (logging, limits, authentication …).
///
/// Middleware run in the order given to the ``HTTPApplication``, the first outermost. A middleware may answer
/// itself (return a response or throw an error) or call `next`. A thrown error is rendered as the JSON error
/// response at that point, so outer middleware (logging, CORS, metrics) still see it.
public protocol HTTPMiddleware: Sendable {
    /// Handles the request, calling `next` to go on.
    func handle(_ request: HTTPRequest, context: RequestContext, next: HTTPNext) throws -> HTTPResponse

    /// Whether the middleware also runs for requests the server refused before routing (a body over the cap).
    /// Observers (logging, metrics, CORS) say `true`; checks (auth, limits) keep the default `false`.
    var runsForRejectedRequests: Bool { get }
}

extension HTTPMiddleware {
    /// By default a middleware runs only for requests that were not refused by the server.
    public var runsForRejectedRequests: Bool { false }
}

/// A middleware from a closure.
public struct ClosureMiddleware: HTTPMiddleware {
    private let body: @Sendable (HTTPRequest, RequestContext, HTTPNext) throws -> HTTPResponse
    /// Whether it runs for refused requests as well.
    public let runsForRejectedRequests: Bool

    /// A middleware running `body`.
    public init(
        runsForRejectedRequests: Bool = false,
        _ body: @escaping @Sendable (HTTPRequest, RequestContext, HTTPNext) throws -> HTTPResponse
    ) {
        self.body = body
        self.runsForRejectedRequests = runsForRejectedRequests
    }

    /// Runs the closure.
    public func handle(_ request: HTTPRequest, context: RequestContext, next: HTTPNext) throws -> HTTPResponse {
        try body(request, context, next)
    }
}

/// What the server calls for each complete request.
public protocol HTTPResponder: Sendable {
    /// Answers a complete request.
    func respond(to request: HTTPRequest) -> HTTPResponse
    /// Answers a request the server refused before reading it all (`error` is e.g. `body_too_large`); `request`
    /// has no body.
    func respond(to request: HTTPRequest, rejectedWith error: HTTPAPIError) -> HTTPResponse
}

/// A router and a middleware chain: the ``HTTPResponder`` the gateway hands to the ``HTTPServer``.
///
/// For each request it makes a ``RequestContext`` (with a new request id), resolves the route, runs the middleware
/// and then the route's handler, renders thrown errors as JSON error responses (unknown errors as 500
/// `internal_error`), and sets `Request-Id` and `X-Content-Type-Options: nosniff` on the response.
public struct HTTPApplication: HTTPResponder {
    /// The routes.
    public let router: Router
    /// The middleware, outermost first.
    public let middlewares: [any HTTPMiddleware]
    /// Makes request ids.
    public let requestIDs: RequestIDGenerator
    /// The clocks.
    public let clock: HTTPClock
    /// Called with an error that is not an API error before it is answered as 500 (to log its type; never
    /// forward it to the client).
    public let onUnexpectedError: (@Sendable (any Error, RequestContext) -> Void)?

    /// An application.
    public init(
        router: Router, middlewares: [any HTTPMiddleware] = [], requestIDs: RequestIDGenerator = .random,
        clock: HTTPClock = .system, onUnexpectedError: (@Sendable (any Error, RequestContext) -> Void)? = nil
    ) {
        self.router = router
        self.middlewares = middlewares
        self.requestIDs = requestIDs
        self.clock = clock
        self.onUnexpectedError = onUnexpectedError
    }

    /// Answers a complete request.
    public func respond(to request: HTTPRequest) -> HTTPResponse {
        run(request, rejection: nil)
    }

    /// Answers a request refused by the server: only middleware with ``HTTPMiddleware/runsForRejectedRequests``
    /// run, then `error` is answered.
    public func respond(to request: HTTPRequest, rejectedWith error: HTTPAPIError) -> HTTPResponse {
        run(request, rejection: error)
    }

    private func run(_ request: HTTPRequest, rejection: HTTPAPIError?) -> HTTPResponse {
        let context = RequestContext(requestID: requestIDs.next(), clock: clock)
        let resolution = router.resolve(method: request.method, path: request.path)
        if case .matched(let route, let parameters) = resolution {
            context.route = route
            context.parameters = parameters
        }
        let chain = rejection == nil ? middlewares : middlewares.filter(\.runsForRejectedRequests)
        let terminal: HTTPNext = { request, context in
            render {
                if let rejection { throw rejection }
                switch resolution {
                case .matched(let route, _):
                    return try route.handler(request, context)
                case .methodNotAllowed(let allowed):
                    if request.method == .options {
                        let allow = allowed.map(\.rawValue).joined(separator: ", ")
                        return HTTPResponse(status: .noContent, headers: ["Allow": allow])
                    }
                    throw HTTPAPIError.methodNotAllowed(request.method, allowed: allowed)
                case .notFound:
                    throw HTTPAPIError.notFound("no route for \(request.method) on this path")
                }
            }(context)
        }
        let next = chain.reversed().reduce(terminal) { next, middleware in
            { request, context in
                render { try middleware.handle(request, context: context, next: next) }(context)
            }
        }
        var response = next(request, context)
        response.headers["Request-Id"] = context.requestID
        // No answer is ever sniffed into another type than the one it declares.
        if !response.headers.contains("X-Content-Type-Options") { response.headers["X-Content-Type-Options"] = "nosniff" }
        return response
    }

    private func render(_ body: @escaping () throws -> HTTPResponse) -> (RequestContext) -> HTTPResponse {
        { context in
            do {
                return try body()
            } catch {
                let apiError = HTTPAPIError.from(error)
                if !(error is HTTPAPIError) && !(error is any HTTPAPIErrorConvertible) {
                    onUnexpectedError?(error, context)
                }
                context.errorCode = apiError.code
                return apiError.response(requestID: context.requestID)
            }
        }
    }
}

extension HTTPApplication {
    /// The standard chain for the API, outermost first: access log, metrics, CORS, authentication, rate limit
    /// (when `configuration.rateLimitPerSecond` > 0), content type, JSON limits.
    ///
    /// - Parameters:
    ///   - router: the routes.
    ///   - configuration: the limits (JSON depth and string length, rate limit).
    ///   - accessLog: receives one JSON line per request.
    ///   - metrics: the registry for request counts and latencies.
    ///   - cors: the CORS policy, or `nil` to answer no CORS headers.
    ///   - authenticate: the authentication hook (see ``AuthenticationMiddleware``).
    ///   - rateLimitKey: the rate limit key of a request, by default the principal's credential id.
    ///   - clock: the clocks (also the rate limiter's).
    ///   - requestIDs: makes request ids.
    ///   - onUnexpectedError: sees errors answered as 500.
    public static func standard(
        router: Router, configuration: ServerConfiguration, accessLog: @escaping @Sendable (String) -> Void,
        metrics: MetricsRegistry, cors: CORSPolicy?,
        authenticate: @escaping @Sendable (HTTPRequest, RequestContext) throws -> Principal?,
        rateLimitKey: @escaping @Sendable (HTTPRequest, RequestContext) -> String? = { _, context in
            context.principal?.credentialID
        },
        clock: HTTPClock = .system, requestIDs: RequestIDGenerator = .random,
        onUnexpectedError: (@Sendable (any Error, RequestContext) -> Void)? = nil
    ) -> HTTPApplication {
        var middlewares: [any HTTPMiddleware] = [
            AccessLogMiddleware(sink: accessLog), MetricsMiddleware(registry: metrics),
        ]
        if let cors { middlewares.append(CORSMiddleware(policy: cors)) }
        middlewares.append(AuthenticationMiddleware(authenticate: authenticate))
        if configuration.rateLimitPerSecond > 0 {
            let limiter = TokenBucketRateLimiter(
                ratePerSecond: configuration.rateLimitPerSecond, burst: configuration.rateLimitBurst,
                monotonicSeconds: clock.monotonicSeconds)
            middlewares.append(RateLimitMiddleware(limiter: limiter, key: rateLimitKey))
        }
        middlewares.append(ContentTypeMiddleware())
        middlewares.append(JSONLimitsMiddleware(limits: configuration.jsonLimits))
        return HTTPApplication(
            router: router, middlewares: middlewares, requestIDs: requestIDs, clock: clock,
            onUnexpectedError: onUnexpectedError)
    }
}
