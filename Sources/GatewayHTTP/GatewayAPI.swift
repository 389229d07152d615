import OrchardBase
import Foundation
import Gateway
import OrchardCrypto
import OrchardHTTP
import OrchardJSON

extension RouteScope {
    /// Client routes: the app id and app key (`X-Orchard-App-Id`, `X-Orchard-App-Key`); CORS for web origins.
    public static let client: RouteScope = "client"
    /// Server routes: the secret key (`Authorization: Bearer sk_…`).
    public static let server: RouteScope = "server"
}

/// The gateway's HTTP API (`openapi.yaml`): every route mounted on a ``Router`` with its scope, the
/// authentication, CORS, idempotency and error mapping the specification describes, and the operations routes.
///
/// ```swift
/// let api = GatewayAPI(gateway: service, metrics: metrics)
/// let server = api.server(configuration: configuration, accessLog: { print($0) })
/// ```
public final class GatewayAPI: Sendable {
    /// The domain.
    public let gateway: GatewayService
    /// Where the request, payment and webhook metrics go.
    public let metrics: MetricsRegistry
    /// Extra readiness checks by name (e.g. `webhook_dispatcher`), each true when healthy.
    let readinessChecks: [String: @Sendable () -> Bool]
    /// The sandbox token minter: given only when the gateway runs in the sandbox, it mounts the sandbox-only
    /// routes (`POST /v1/sandbox/wallet/tokens`); without it they are absent (404).
    public let sandboxWallet: (any SandboxTokenMinter)?
    /// Merchant validation for Apple Pay on the Web; without it `POST /v1/apple-pay/merchant-sessions` answers
    /// `502 apple_pay_validation_failed`.
    public let merchantValidation: MerchantValidationService?
    private let draining = Locked(false)
    /// Failed console sign-ins per client address, on the gateway's clock.
    let consoleSignInThrottle: AuthenticationThrottle
    /// Failed API authentications (app key, secret key) per client address, on the gateway's clock.
    let apiAuthenticationThrottle: AuthenticationThrottle

    /// An API over `gateway`, registering the payments and webhook backlog gauges in `metrics`; the sandbox-only
    /// routes are mounted when `sandboxWallet` is given.
    public init(
        gateway: GatewayService, metrics: MetricsRegistry = MetricsRegistry(),
        readinessChecks: [String: @Sendable () -> Bool] = [:], sandboxWallet: (any SandboxTokenMinter)? = nil,
        merchantValidation: MerchantValidationService? = nil,
        consoleSignInLimit: ConsoleSignInLimit = ConsoleSignInLimit(),
        authenticationLimit: APIAuthenticationLimit = APIAuthenticationLimit()
    ) {
        self.gateway = gateway
        consoleSignInThrottle = AuthenticationThrottle(
            scope: "console", burst: consoleSignInLimit.burst, ratePerSecond: consoleSignInLimit.ratePerSecond
        ) { [gateway] in gateway.now }
        apiAuthenticationThrottle = AuthenticationThrottle(
            scope: "api", burst: authenticationLimit.burst, ratePerSecond: authenticationLimit.ratePerSecond
        ) { [gateway] in gateway.now }
        self.metrics = metrics
        self.readinessChecks = readinessChecks
        self.sandboxWallet = sandboxWallet
        self.merchantValidation = merchantValidation
        metrics.gauge("orchard_payments", help: "Payments in each status.", labels: ["status"]) { [gateway] in
            let counts = (try? gateway.paymentCountsByStatus()) ?? [:]
            return PaymentStatus.allCases.map { ([$0.rawValue], Double(counts[$0] ?? 0)) }
        }
        metrics.gauge("orchard_webhook_backlog", help: "Events waiting for delivery.") { [gateway] in
            Double((try? gateway.webhooks.webhookBacklog()) ?? 0)
        }
    }

    /// Marks the instance as shutting down: `/readyz` answers 503 from now on.
    public func beginDraining() { draining.withLock { $0 = true } }

    /// The body cap for a request, for ``HTTPServer/init(configuration:responder:bodyLimit:messages:)``.
    @Sendable public static func bodyLimit(_ method: HTTPMethod, _ path: String) -> Int? {
        guard method == .put else { return nil }
        switch path {
        case "/v1/bin-table": return FieldLimits.binTableBytes
        case "/v1/co-brand-table": return FieldLimits.coBrandTableBytes
        default: return nil
        }
    }

    // MARK: Application

    /// The application: the router behind access log, metrics, CORS, authentication, origin check, rate limit,
    /// content type and JSON limits. `accessLog` also gets one line each time an address starts being refused
    /// for its failed authentications (`"event":"authentication_throttled"`).
    public func application(
        configuration: ServerConfiguration, accessLog: @escaping @Sendable (String) -> Void,
        clock: HTTPClock = .system, requestIDs: RequestIDGenerator = .random,
        onUnexpectedError: (@Sendable (any Error, RequestContext) -> Void)? = nil
    ) -> HTTPApplication {
        let router = makeRouter()
        for throttle in [apiAuthenticationThrottle, consoleSignInThrottle] { throttle.logging(to: accessLog) }
        var middlewares: [any HTTPMiddleware] = [
            AccessLogMiddleware(sink: accessLog), MetricsMiddleware(registry: metrics),
            TransportSecurityMiddleware(secureCookies: configuration.usesSecureCookies),
            CORSMiddleware(policy: corsPolicy(router: router), router: router),
            AuthenticationMiddleware { [self] request, context in try authenticate(request, context) },
            OriginCheckMiddleware(),
        ]
        if configuration.rateLimitPerSecond > 0 {
            let limiter = TokenBucketRateLimiter(
                ratePerSecond: configuration.rateLimitPerSecond, burst: configuration.rateLimitBurst,
                monotonicSeconds: clock.monotonicSeconds)
            middlewares.append(RateLimitMiddleware(limiter: limiter))
        }
        middlewares.append(ContentTypeMiddleware())
        middlewares.append(JSONLimitsMiddleware(limits: configuration.jsonLimits, ownErrorScopes: [.payerMax, .tappay]))
        return HTTPApplication(
            router: router, middlewares: middlewares, requestIDs: requestIDs, clock: clock,
            onUnexpectedError: onUnexpectedError)
    }

    /// An ``HTTPServer`` (not started) answering with ``application(configuration:accessLog:clock:requestIDs:onUnexpectedError:)``
    /// under the API's body caps (``bodyLimit(_:_:)``); `messages` gets libmicrohttpd's diagnostics (standard
    /// error by default).
    public func server(
        configuration: ServerConfiguration, accessLog: @escaping @Sendable (String) -> Void,
        messages: (@Sendable (String) -> Void)? = nil
    ) -> HTTPServer {
        let application = application(configuration: configuration, accessLog: accessLog)
        guard let messages else {
            return HTTPServer(configuration: configuration, responder: application, bodyLimit: Self.bodyLimit)
        }
        return HTTPServer(
            configuration: configuration, responder: application, bodyLimit: Self.bodyLimit, messages: messages)
    }

    // MARK: CORS

    /// CORS for the client routes, per the specification: preflights answered for client routes (origins
    /// configured by any merchant), `Access-Control-Allow-Origin` and `Access-Control-Expose-Headers` on actual
    /// client-route responses whose merchant allows the origin; no CORS on server and operations routes, where
    /// `OPTIONS` is 405. A refused preflight is 403 `origin_not_allowed`.
    func corsPolicy(router: Router) -> CORSPolicy {
        CORSPolicy(
            allowedMethods: [.get, .post],
            allowedHeaders: ["Content-Type", "Idempotency-Key", "X-Orchard-App-Id", "X-Orchard-App-Key"],
            exposedHeaders: ["Request-Id", "Idempotent-Replayed", "Retry-After"],
            refusal: OriginCheckMiddleware.notAllowed, refusesOtherOptions: true,
            appliesTo: { request, context in
                guard request.method == .options else { return context.route?.scope == .client }
                // A preflight asks about the route of the method it announces: a client route is a GET or POST.
                return [HTTPMethod.get, .post].contains { method in
                    if case .matched(let route, _) = router.resolve(method: method, path: request.path) {
                        return route.scope == .client
                    }
                    return false
                }
            },
            isAllowed: { [gateway] origin, _, context in
                if let merchant = context.principal?.value(as: Merchant.self) {
                    return merchant.webOrigins.contains(origin)
                }
                // Whether any merchant has `origin` among its web origins.
                return GatewayEnvironment.allCases.contains { environment in
                    let merchants = (try? gateway.merchants.merchants(environment: environment)) ?? []
                    return merchants.contains { $0.webOrigins.contains(origin) }
                }
            })
    }

    // MARK: Authentication

    /// The client's address, the one source of it for the failed-authentication limits, the console's sign-in
    /// record and what the API shows: the socket's peer address (`nil` when there is none, as in process). A
    /// trusted-proxy setting will make it the forwarded address of requests from the proxy.
    public func clientAddress(_ request: HTTPRequest) -> String? { request.remoteAddress }

    /// Decides from the headers present (see the specification's Authentication section).
    func authenticate(_ request: HTTPRequest, _ context: RequestContext) throws -> Principal? {
        guard let route = context.route, route.scope == .client || route.scope == .server else { return nil }
        let appID = request.headers["X-Orchard-App-Id"]
        let appKey = request.headers["X-Orchard-App-Key"]
        let hasApp = appID != nil || appKey != nil
        let hasAuthorization = request.headers.contains("Authorization")
        // An address that has spent its failed authentications is refused before any key is looked at.
        let address = clientAddress(request)
        if hasApp || hasAuthorization { try apiAuthenticationThrottle.check(address) }
        if route.scope == .client {
            if hasApp {
                guard let appID, let appKey, !appID.isEmpty, !appKey.isEmpty else {
                    throw HTTPAPIError.invalidCredentials("send both X-Orchard-App-Id and X-Orchard-App-Key")
                }
                let merchant: Merchant
                do { merchant = try gateway.merchants.authenticateClient(appID: appID, appKey: appKey) } catch {
                    throw credentialError(error, address: address)
                }
                return Principal(credentialID: "app:" + merchant.appID, kind: "app_key", value: merchant)
            }
            if hasAuthorization {
                throw Self.forbidden("the secret key cannot call client routes; use the app id and app key")
            }
            throw HTTPAPIError.missingCredentials(
                "this route needs the app id and app key (X-Orchard-App-Id, X-Orchard-App-Key)")
        }
        if hasAuthorization {
            guard let token = request.headers.bearerToken else {
                throw HTTPAPIError.invalidCredentials("send Authorization: Bearer sk_…")
            }
            let merchant: Merchant
            do { merchant = try gateway.merchants.authenticateServer(secretKey: token) } catch {
                throw credentialError(error, address: address)
            }
            context[AuditActorKey.self] = AuditActor.api(secretKey: token)
            return Principal(
                credentialID: "sk:" + String(token.prefix(MerchantRegistry.secretKeyPublicLength)),
                kind: "secret_key", value: merchant)
        }
        if hasApp { throw Self.forbidden("app credentials cannot call server routes; use the secret key") }
        if let token = Self.consoleCookie(request) {
            return try consolePrincipal(request, token: token, context: context)
        }
        throw HTTPAPIError.missingCredentials("this route needs the secret key (Authorization: Bearer sk_…)")
    }

    /// The answer to credentials that did not authenticate; a wrong key counts against `address`.
    private func credentialError(_ error: GatewayError, address: String?) -> any Error {
        if error.code == .invalidCredentials || error.code == .merchantNotFound {
            apiAuthenticationThrottle.failed(address)
            return HTTPAPIError.invalidCredentials("the credentials are not valid")
        }
        return GatewayAPIError.from(error)
    }

    static func forbidden(_ message: String) -> HTTPAPIError {
        HTTPAPIError(status: .forbidden, type: .authentication, code: .forbidden, message: message)
    }

    // MARK: Endpoints

    /// What an endpoint gets: the request, its context, the authenticated merchant, the idempotency key and the
    /// request's scope (its actor and stored-answer recorder), passed to every operation the endpoint calls.
    struct Call {
        var request: HTTPRequest
        var context: RequestContext
        var merchant: Merchant
        var idempotencyKey: String?
        var scope: RequestScope
        /// The body parsed as JSON once for the whole request (fingerprint, derived key, fields); nil when the
        /// body is empty or not JSON.
        var parsedBody: JSONBody?
    }

    /// The body as JSON (any top-level value), or nil when it is empty or not JSON: the one parse that
    /// ``JSONLimitsMiddleware`` made, or (for a request that did not pass through it) a strict parse now.
    static func parse(_ request: HTTPRequest, context: RequestContext) -> JSONBody? {
        if let parsed = context[ParsedJSONBodyKey.self] { return parsed }
        guard !request.body.isEmpty else { return nil }
        return try? JSONLimits().parse(request.body)
    }

    /// Wraps an endpoint: merchant from the principal, `Idempotency-Key` validation, replay of a stored answer
    /// (`Idempotent-Replayed: true`), storing of complete answers, and the error mapping. With `answer`, a
    /// successful answer is rendered and stored in the transaction that stores the domain's result for the key
    /// (``StoredAnswerRecorder``), and sent as stored; otherwise (and for a result not rendered so) it is stored
    /// after the endpoint returns.
    func endpoint(
        idempotent: Bool = false, key derive: (@Sendable (_ parsedBody: JSONBody?) -> String?)? = nil,
        answer render: StoredAnswerRecorder.Render? = nil,
        _ body: @escaping @Sendable (Call) throws -> HTTPResponse
    ) -> HTTPHandler {
        { [gateway] request, context in
            guard let merchant = context.principal?.value(as: Merchant.self) else { throw HTTPAPIError.internalError() }
            let parsedBody = Self.parse(request, context: context)
            var key: String?
            var storeKey: String?
            if idempotent {
                key = request.headers["Idempotency-Key"]
                if let key {
                    guard GatewayService.isValidIdempotencyKey(key) else {
                        throw GatewayAPIError.make(
                            .badRequest, .idempotency, "idempotency_key_invalid",
                            "Idempotency-Key must be 1 to 255 printable ASCII characters")
                    }
                }
                storeKey = key ?? derive?(parsedBody)
            }
            // Only an answer that may be stored or replayed needs the fingerprint.
            let fingerprint = storeKey == nil ? "" : Self.fingerprint(request, parsedBody: parsedBody)
            if let storeKey {
                if let stored = try gateway.storedResponse(merchant: merchant, key: storeKey) {
                    guard stored.fingerprint == fingerprint else {
                        throw GatewayAPIError.make(
                            .unprocessableContent, .idempotency, "idempotency_conflict",
                            "this Idempotency-Key was used with a different method, path or parameters")
                    }
                    return HTTPResponse(
                        status: HTTPStatus(rawValue: stored.status),
                        headers: ["Content-Type": JSONCoding.contentType, "Idempotent-Replayed": "true"],
                        body: stored.body)
                }
            }
            var response: HTTPResponse
            var storable: Bool
            let recorder = storeKey.flatMap { storeKey in
                render.map { StoredAnswerRecorder(key: storeKey, fingerprint: fingerprint, render: $0) }
            }
            let scope = RequestScope(actor: context[AuditActorKey.self] ?? .unknown, answerRecorder: recorder)
            let call = Call(
                request: request, context: context, merchant: merchant, idempotencyKey: key, scope: scope,
                parsedBody: parsedBody)
            do {
                response = try body(call)
                storable = response.status == .ok
                if let stored = recorder?.answer {
                    // Stored with the domain's result, in its commit: answered as stored, nothing more to write.
                    response.status = HTTPStatus(rawValue: stored.status)
                    response.body = stored.body
                    storable = false
                }
            } catch {
                let apiError = GatewayAPIError.from(error)
                context.record(apiError, cause: error)
                response = apiError.response(requestID: context.requestID)
                let code = apiError.base.code.rawValue
                storable =
                    [402, 404, 409, 422].contains(apiError.base.status.rawValue)
                    && !["idempotency_in_flight", "idempotency_conflict"].contains(code)
            }
            // The domain answered from its own stored result: a replay, even before the answer below is stored.
            if scope.replayed { response.headers["Idempotent-Replayed"] = "true" }
            if let storeKey, storable {
                try? gateway.storeResponse(
                    StoredResponse(
                        fingerprint: fingerprint, status: response.status.rawValue, body: response.body,
                        createdAt: gateway.now), merchant: merchant, key: storeKey)
            }
            return response
        }
    }

    /// What makes two requests the same for idempotency: method, path and the body (JSON bodies compared in
    /// their canonical form, ``JSONWriter/canonical(_:)``, so a retry that serializes its object differently is
    /// still a retry).
    static func fingerprint(_ request: HTTPRequest, parsedBody: JSONBody?) -> String {
        var body = request.body
        if let parsedBody { body = JSONWriter.canonical(parsedBody.json) }
        return request.method.rawValue + " " + request.path + " " + Hex.encode(SHA256.hash(Array(body)))
    }

    // MARK: Operations

    func health(_ request: HTTPRequest, _ context: RequestContext) -> HTTPResponse {
        Wire.response(["status": "ok"])
    }

    func readiness(_ request: HTTPRequest, _ context: RequestContext) -> HTTPResponse {
        var checks: [String: String] = ["database": gateway.storeIsReachable() ? "ok" : "failed"]
        for (name, check) in readinessChecks { checks[name] = check() ? "ok" : "failed" }
        let ready = !draining.withLock { $0 } && checks.values.allSatisfy { $0 == "ok" }
        return Wire.response(
            ["status": ready ? "ready" : "not_ready", "checks": checks], status: ready ? .ok : .serviceUnavailable)
    }
}

/// Refuses client-route requests whose `Origin` the authenticated merchant has not configured
/// (403 `origin_not_allowed`), before the endpoint runs. A page of the gateway's own origin (the `Host` it was
/// asked for; the sandbox's demo store) is always allowed.
struct OriginCheckMiddleware: HTTPMiddleware {
    /// Whether `origin` is the gateway's own: its host and port are the request's `Host`.
    static func isSameOrigin(_ origin: String, _ request: HTTPRequest) -> Bool {
        guard let host = request.headers["Host"], let separator = origin.range(of: "://") else { return false }
        return origin[separator.upperBound...].lowercased() == host.lowercased()
    }

    static let notAllowed = HTTPAPIError(
        status: .forbidden, type: .authentication, code: .init(rawValue: "origin_not_allowed"),
        message: "this origin is not one of the merchant's configured web origins")

    func handle(_ request: HTTPRequest, context: RequestContext, next: HTTPNext) throws -> HTTPResponse {
        if context.route?.scope == .client, let origin = request.headers["Origin"],
            let merchant = context.principal?.value(as: Merchant.self), !merchant.webOrigins.contains(origin),
            !Self.isSameOrigin(origin, request)
        {
            throw Self.notAllowed
        }
        return next(request, context)
    }
}
