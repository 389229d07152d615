import Foundation
import Gateway
import OrchardCrypto
import OrchardHTTP

/// Whether the cookies set for the request carry `Secure` (``ServerConfiguration/usesSecureCookies``).
struct SecureCookiesKey: RequestContextKey {
    typealias Value = Bool
}

/// Records in the context whether cookies are `Secure` (`--cookie-secure`: always, or when serving TLS or a trusted
/// proxy forwarded an HTTPS request), for the
/// routes that set cookies.
struct TransportSecurityMiddleware: HTTPMiddleware {
    let secureCookies: Bool

    func handle(_ request: HTTPRequest, context: RequestContext, next: HTTPNext) throws -> HTTPResponse {
        context[SecureCookiesKey.self] = secureCookies || request.forwardedHTTPS
        return next(request, context)
    }
}

/// The merchant console's sign-in rules at the HTTP edge: failed sign-ins per client address.
public struct ConsoleSignInLimit: Sendable {
    /// Failed sign-ins an address may make at once. Default 10.
    public var burst = 10
    /// Failed sign-ins an address regains per second once the burst is spent. Default one per 30 seconds.
    public var ratePerSecond = 1.0 / 30

    /// The defaults.
    public init() {}
}

extension GatewayAPI {
    /// The name of the console's session cookie.
    public static let consoleCookieName = "orchard_console"

    /// The console's routes: its page and files, and its session (sign-in, the current session, sign-out, and
    /// "sign out everywhere").
    func mountConsoleRoutes(_ router: inout Router) {
        router.get("/console", summary: "getConsole") { request, _ in try Self.consoleFile("console.html", request) }
        router.get("/console/{file}", summary: "getConsoleFile") { request, context in
            try Self.consoleFile(try context.parameter("file"), request)
        }
        router.post("/console/session", summary: "createConsoleSession") { [self] request, context in
            try signIn(request, context)
        }
        router.get("/console/session", summary: "getConsoleSession") { [self] request, _ in
            let token = try Self.consoleToken(request)
            return Self.sessionResponse(try consoleSession(token: token))
        }
        router.delete("/console/session", summary: "deleteConsoleSession") { [self] request, context in
            let token = try Self.consoleToken(request)
            _ = try consoleSession(token: token)
            try Self.checkCSRF(request, token: token)
            do { try gateway.signOutOfConsole(token: token) } catch { throw GatewayAPIError.from(error) }
            return Self.signedOut(HTTPResponse(status: .noContent), context)
        }
        router.delete("/console/sessions", summary: "deleteConsoleSessions") { [self] request, context in
            let token = try Self.consoleToken(request)
            _ = try consoleSession(token: token)
            try Self.checkCSRF(request, token: token)
            let ended: Int
            do { ended = try gateway.signOutOfConsoleEverywhere(token: token) } catch {
                throw GatewayAPIError.from(error)
            }
            return Self.signedOut(Wire.response(["ended_sessions": ended]), context)
        }
    }

    /// `response` with the session cookie cleared and not cached: the answer of a sign-out.
    static func signedOut(_ response: HTTPResponse, _ context: RequestContext) -> HTTPResponse {
        var response = response
        response.headers["Set-Cookie"] =
            Self.cookie(value: "", secure: context[SecureCookiesKey.self] ?? false) + "; Max-Age=0"
        response.headers["Cache-Control"] = "no-store"
        return response
    }

    /// A file of the console (`console.html`, `console.js`, `payments.js` …): the page itself is never cached
    /// and may not be framed; scripts and styles are cacheable like orchard.js.
    static func consoleFile(_ name: String, _ request: HTTPRequest) throws -> HTTPResponse {
        var response = try WebAssets.shared.response("console/" + name, for: request)
        response.headers["X-Content-Type-Options"] = "nosniff"
        if name.hasSuffix(".html") {
            response.headers["Cache-Control"] = "no-store"
            response.headers["Content-Security-Policy"] =
                "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
                + "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
            response.headers["X-Frame-Options"] = "DENY"
            response.headers["Referrer-Policy"] = "no-referrer"
        }
        return response
    }

    /// `POST /console/session {"secret_key"}`: a new session, its cookie and its CSRF token. Failed sign-ins are
    /// limited per client address (``ConsoleSignInLimit``): past the limit every sign-in from that address is
    /// refused, the right key included, until the bucket refills.
    func signIn(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        let address = clientAddress(request)
        try consoleSignInThrottle.check(address)
        guard let object = Self.parse(request, context: context)?.json, object.members != nil else {
            throw HTTPAPIError.invalidJSON("the body must be a JSON object with secret_key")
        }
        guard let value = object["secret_key"] else { throw HTTPAPIError.parameterMissing("secret_key") }
        guard let secretKey = value.string, FieldLimits.fits(secretKey, FieldLimits.secretKey) else {
            throw HTTPAPIError.parameterInvalid(
                "secret_key", message: "secret_key is a string of at most \(FieldLimits.secretKey) characters")
        }
        let signedIn: (session: ConsoleSession, token: String)
        do {
            signedIn = try gateway.signInToConsole(secretKey: secretKey, clientAddress: address)
        } catch  where error.code == .invalidCredentials || error.code == .merchantNotFound {
            consoleSignInThrottle.failed(address)
            throw HTTPAPIError.invalidCredentials("the secret key is not valid")
        } catch { throw GatewayAPIError.from(error) }
        var response = Self.sessionResponse(signedIn.session)
        response.headers["Set-Cookie"] = Self.cookie(
            value: signedIn.token, secure: context[SecureCookiesKey.self] ?? false)
        return response
    }

    /// The session of the request's cookie, or 401 `invalid_credentials`.
    func consoleSession(token: String) throws -> ConsoleSession {
        do { return try gateway.consoleSession(token: token) } catch  where error.code == .invalidCredentials {
            throw HTTPAPIError.invalidCredentials("the console session is unknown, signed out or expired")
        } catch { throw GatewayAPIError.from(error) }
    }

    /// A server-route principal from the console's cookie: the session's merchant, its changes recorded in the
    /// audit log under the session (``ConsoleSessionRules/auditActor(sessionID:)``); a state-changing method
    /// also needs `X-CSRF-Token` (403 `csrf_token_invalid`).
    func consolePrincipal(_ request: HTTPRequest, token: String, context: RequestContext) throws -> Principal {
        let session = try consoleSession(token: token)
        if [.post, .put, .patch, .delete].contains(request.method) { try Self.checkCSRF(request, token: token) }
        context[AuditActorKey.self] = ConsoleSessionRules.auditActor(sessionID: session.id)
        return Principal(credentialID: "console:" + session.id, kind: "console_session", value: session.merchant)
    }

    static func checkCSRF(_ request: HTTPRequest, token: String) throws {
        guard let given = request.headers["X-CSRF-Token"],
            ConsoleSessionRules.isValidCSRFToken(given, sessionToken: token)
        else {
            throw HTTPAPIError(
                status: .forbidden, type: .authentication, code: .csrfTokenInvalid,
                message: "a state-changing request made with the console session needs its X-CSRF-Token")
        }
    }

    /// The `orchard_console` cookie's value, if the request carries one.
    static func consoleCookie(_ request: HTTPRequest) -> String? {
        for header in request.headers.values(for: "Cookie") {
            for pair in header.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                if parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == consoleCookieName {
                    return parts[1].trimmingCharacters(in: .whitespaces)
                }
            }
        }
        return nil
    }

    static func consoleToken(_ request: HTTPRequest) throws -> String {
        guard let token = consoleCookie(request) else {
            throw HTTPAPIError.missingCredentials("sign in to the console first (POST /console/session)")
        }
        return token
    }

    /// `orchard_console=<value>; Path=/; HttpOnly; SameSite=Strict[; Secure]`: a browser-session cookie; the
    /// gateway itself ends the session (idle timeout, absolute lifetime, its secret key, sign-out).
    static func cookie(value: String, secure: Bool) -> String {
        "\(consoleCookieName)=\(value); Path=/; HttpOnly; SameSite=Strict" + (secure ? "; Secure" : "")
    }

    static func sessionResponse(_ session: ConsoleSession) -> HTTPResponse {
        var response = Wire.response([
            "merchant_id": session.merchant.id, "csrf_token": session.csrfToken,
            "expires_at": Wire.time(session.expiresAt),
        ])
        response.headers["Cache-Control"] = "no-store"
        return response
    }
}
