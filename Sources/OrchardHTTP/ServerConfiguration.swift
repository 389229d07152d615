import Foundation

/// How the HTTP server listens and what it bounds. Every setting has a documented default; see
/// ``ServerConfiguration/settings`` for their names in config files, environment variables and flags.
public struct ServerConfiguration: Sendable, Equatable {
    /// The IPv4 or IPv6 address to bind (`127.0.0.1`, `0.0.0.0`, `::1`; `localhost` means `127.0.0.1`).
    /// Default `127.0.0.1`.
    public var host: String = "127.0.0.1"
    /// The TCP port; 0 picks a free one (read it back from ``HTTPServer/port``). Default 8080.
    public var port: Int = 8080
    /// The largest request body accepted; larger ones are answered 413 `body_too_large` without being read.
    /// Default 65 536 (64 KiB).
    public var maxBodyBytes: Int = 65_536
    /// The deepest JSON nesting accepted (400 `json_too_deep`). Default 16, as openapi.yaml says.
    public var maxJSONDepth: Int = JSONLimits().maxDepth
    /// The longest JSON string accepted, in UTF-8 bytes (400 `string_too_long`). Default 16 384, as openapi.yaml
    /// says.
    public var maxStringLength: Int = JSONLimits().maxStringLength
    /// The most connections open at once. Default 1 000.
    public var connectionLimit: Int = 1_000
    /// The most connections open at once from one IP address; 0 for no limit (behind a proxy every client has
    /// the proxy's address). Default 64.
    public var perIPConnectionLimit: Int = 64
    /// Seconds of inactivity after which a connection is closed (slow clients, idle keep-alive). Default 30.
    public var connectionTimeoutSeconds: Int = 30
    /// Seconds a client has to send a whole request head, however steadily it sends: from the connection's start
    /// for its first request, from the request line for later ones on a keep-alive connection; then the connection
    /// is closed. 0 for no deadline. Default 10.
    public var requestHeadTimeoutSeconds: Int = 10
    /// Seconds a client has to send a whole request body once its head is complete; then the connection is closed
    /// and the request is not handled. 0 for no deadline. Default 30.
    public var requestBodyTimeoutSeconds: Int = 30
    /// When more than this percentage of ``connectionLimit`` is open, idle keep-alive connections are closed, longest
    /// idle first, down to it; 100 never closes them early. Default 75.
    public var keepAliveTrimPercent: Int = 75
    /// The percentage of ``connectionLimit`` that idle and slow connections (idle keep-alive, or still sending a
    /// request head or body) may not take: when they would, the longest idle one is closed, else the oldest slow
    /// one, so that new clients always find a slot. 0 for no reserve. Default 10.
    public var reservedConnectionPercent: Int = 10
    /// Milliseconds a keep-alive connection must have been idle before the trim or the reserve may close it; until
    /// then slow connections are closed instead. A client that has just read its answer is sending its next request
    /// on the connection (tokenize, then pay), so a connection that became idle moments ago is never the one to go.
    /// Default 500.
    public var keepAliveTrimMinimumIdleMilliseconds: Int = 500
    /// Worker threads; handlers run synchronously on them, and a handler waiting for its durable commit holds
    /// its thread, so the pool is sized for the writes that share one group commit rather than for the
    /// cores. Default: 16 per processor, at least 32.
    public var threadPoolSize: Int = max(32, 16 * ProcessInfo.processInfo.activeProcessorCount)
    /// Requests per second allowed per credential on average; 0 disables the rate limit. Default 50.
    public var rateLimitPerSecond: Double = 50
    /// Requests a credential may make at once before the rate applies. Default 100.
    public var rateLimitBurst: Int = 100
    /// A PEM certificate chain for HTTPS, with ``tlsKeyPath``; `nil` for plain HTTP. Default `nil`.
    public var tlsCertificatePath: String? = nil
    /// The PEM private key for HTTPS. Default `nil`.
    public var tlsKeyPath: String? = nil
    /// Seconds ``HTTPServer/stop()`` waits for requests in flight before closing. Default 10.
    public var shutdownTimeoutSeconds: Int = 10
    /// When the cookies the server sets (the console's session) carry `Secure`. Default ``CookieSecurity/auto``.
    public var cookieSecure: CookieSecurity = .auto
    /// The reverse proxies whose `Forwarded`, `X-Forwarded-For` and `X-Forwarded-Proto` name the client and its
    /// scheme. Default none: the headers are ignored and the client is the connection's peer.
    public var trustedProxies = TrustedProxies()

    /// When cookies carry `Secure`: `always` behind a TLS-terminating proxy (the server itself speaks plain HTTP
    /// to the proxy, the browser speaks HTTPS), `auto` when the server itself serves TLS or a trusted proxy says
    /// the browser spoke HTTPS (``HTTPRequest/forwardedHTTPS``).
    public enum CookieSecurity: String, Sendable, Equatable, CaseIterable {
        /// Every cookie is `Secure`.
        case always
        /// Cookies are `Secure` when the server serves TLS, or a trusted proxy forwards an HTTPS request.
        case auto
    }

    /// Whether cookies are to be `Secure` under these settings.
    public var usesSecureCookies: Bool { cookieSecure == .always || usesTLS }

    /// `max-age` of `Strict-Transport-Security`, sent on every response when the server serves TLS: one year.
    public static let strictTransportSecurity = "max-age=31536000"

    /// The defaults.
    public init() {}

    /// The JSON limits these settings describe.
    public var jsonLimits: JSONLimits { JSONLimits(maxDepth: maxJSONDepth, maxStringLength: maxStringLength) }

    /// Whether HTTPS is configured.
    public var usesTLS: Bool { tlsCertificatePath != nil || tlsKeyPath != nil }
}
