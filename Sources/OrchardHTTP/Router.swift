import Foundation

/// A route handler: runs synchronously on a server worker thread and returns the response or throws.
public typealias HTTPHandler = @Sendable (HTTPRequest, RequestContext) throws -> HTTPResponse

/// Who may call a route, for the authentication hook to decide on. Extensible: the gateway adds its own scopes.
public struct RouteScope: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The scope's name.
    public let rawValue: String
    /// A scope from its name.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// A scope from a literal name.
    public init(stringLiteral value: String) { self.rawValue = value }
    /// The scope's name.
    public var description: String { rawValue }

    /// No credentials needed (health checks, metrics).
    public static let `public`: RouteScope = "public"
}

/// A path template such as `/v1/payments/{id}/capture`: literal segments and `{name}` parameters.
public struct PathTemplate: Hashable, Sendable, CustomStringConvertible {
    /// One segment of a template.
    public enum Segment: Hashable, Sendable {
        /// A literal segment, matched exactly.
        case literal(String)
        /// A parameter segment `{name}`, matching any non-empty segment.
        case parameter(String)
    }

    /// The template text.
    public let text: String
    /// The segments after the leading `/`.
    public let segments: [Segment]

    /// Parses a template; it must start with `/`, and parameters must be whole segments with unique names.
    public init(_ text: String) {
        precondition(text.hasPrefix("/"), "a path template starts with '/': \(text)")
        self.text = text
        var names: Set<String> = []
        self.segments = text.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map { part in
            if part.hasPrefix("{") && part.hasSuffix("}") && part.count > 2 {
                let name = String(part.dropFirst().dropLast())
                precondition(names.insert(name).inserted, "duplicate parameter {\(name)} in \(text)")
                return .parameter(name)
            }
            precondition(!part.contains("{") && !part.contains("}"), "a parameter must be a whole segment: \(text)")
            return .literal(String(part))
        }
    }

    /// The parameter names in order.
    public var parameterNames: [String] {
        segments.compactMap { if case .parameter(let name) = $0 { name } else { nil } }
    }

    /// The template text.
    public var description: String { text }

    /// The parameters if `pathSegments` (decoded) match this template.
    func match(_ pathSegments: [String]) -> [String: String]? {
        guard pathSegments.count == segments.count else { return nil }
        var parameters: [String: String] = [:]
        for (segment, value) in zip(segments, pathSegments) {
            switch segment {
            case .literal(let literal):
                guard literal == value else { return nil }
            case .parameter(let name):
                guard !value.isEmpty else { return nil }
                parameters[name] = value
            }
        }
        return parameters
    }

    /// A key that orders more specific templates first: a literal beats a parameter at the first difference.
    var specificity: [Int] { segments.map { if case .literal = $0 { 0 } else { 1 } } }

    /// The template with parameter names erased, to detect two templates that match the same paths.
    var shape: [String?] { segments.map { if case .literal(let text) = $0 { text } else { nil } } }
}

/// A route: a method and path template bound to a handler, with the metadata the middleware and the OpenAPI
/// description use.
public struct Route: Sendable {
    /// The method matched (a `GET` route also answers `HEAD`).
    public var method: HTTPMethod
    /// The path template.
    public var template: PathTemplate
    /// Who may call it; the authentication hook reads this.
    public var scope: RouteScope
    /// The media types accepted for a request body (lower case, without parameters).
    public var accepts: Set<String>
    /// A one-line summary (for listings and the OpenAPI comparison).
    public var summary: String
    /// The handler.
    public var handler: HTTPHandler

    /// A route.
    public init(
        method: HTTPMethod, template: String, scope: RouteScope = .public, accepts: Set<String> = ["application/json"],
        summary: String = "", handler: @escaping HTTPHandler
    ) {
        self.method = method
        self.template = PathTemplate(template)
        self.scope = scope
        self.accepts = accepts
        self.summary = summary
        self.handler = handler
    }
}

/// The outcome of looking a request up in a ``Router``.
public enum RouteResolution: Sendable {
    /// A route matched, with its decoded path parameters.
    case matched(Route, parameters: [String: String])
    /// Some route has this path, but none with this method; `allowed` lists the methods that exist.
    case methodNotAllowed(allowed: [HTTPMethod])
    /// No route has this path.
    case notFound
}

/// Routes by method and path template. Build it, then hand it to an ``HTTPApplication``.
///
/// Matching is on percent-decoded path segments (so `%2F` inside an id does not split it); the most specific
/// template wins (a literal segment beats a parameter); a trailing slash is a different path.
public struct Router: Sendable {
    /// Every route, in registration order (for listings and the OpenAPI comparison).
    public private(set) var routes: [Route] = []

    /// An empty router.
    public init() {}

    /// Adds a route. Registering the same method twice for templates that match the same paths is a programming
    /// error.
    public mutating func add(_ route: Route) {
        precondition(
            !routes.contains { $0.method == route.method && $0.template.shape == route.template.shape },
            "duplicate route \(route.method) \(route.template)")
        routes.append(route)
    }

    /// Adds a route from its parts.
    public mutating func on(
        _ method: HTTPMethod, _ template: String, scope: RouteScope = .public,
        accepts: Set<String> = ["application/json"], summary: String = "", handler: @escaping HTTPHandler
    ) {
        add(
            Route(
                method: method, template: template, scope: scope, accepts: accepts, summary: summary, handler: handler))
    }

    /// Adds a `GET` route.
    public mutating func get(
        _ template: String, scope: RouteScope = .public, summary: String = "", handler: @escaping HTTPHandler
    ) {
        on(.get, template, scope: scope, summary: summary, handler: handler)
    }

    /// Adds a `POST` route.
    public mutating func post(
        _ template: String, scope: RouteScope = .public, accepts: Set<String> = ["application/json"],
        summary: String = "", handler: @escaping HTTPHandler
    ) {
        on(.post, template, scope: scope, accepts: accepts, summary: summary, handler: handler)
    }

    /// Adds a `PUT` route.
    public mutating func put(
        _ template: String, scope: RouteScope = .public, accepts: Set<String> = ["application/json"],
        summary: String = "", handler: @escaping HTTPHandler
    ) {
        on(.put, template, scope: scope, accepts: accepts, summary: summary, handler: handler)
    }

    /// Adds a `DELETE` route.
    public mutating func delete(
        _ template: String, scope: RouteScope = .public, summary: String = "", handler: @escaping HTTPHandler
    ) {
        on(.delete, template, scope: scope, summary: summary, handler: handler)
    }

    /// The `(method, template)` pairs of every route, sorted by template then method.
    public var routeList: [(method: HTTPMethod, template: String)] {
        routes.map { ($0.method, $0.template.text) }
            .sorted { ($0.template, $0.method.rawValue) < ($1.template, $1.method.rawValue) }
    }

    /// Looks up `method` and `path` (as sent, percent-encoded).
    public func resolve(method: HTTPMethod, path: String) -> RouteResolution {
        guard let segments = HTTPRequest.decodePathSegments(path) else { return .notFound }
        var candidates: [(Route, [String: String])] = []
        for route in routes {
            if let parameters = route.template.match(segments) { candidates.append((route, parameters)) }
        }
        guard !candidates.isEmpty else { return .notFound }
        candidates.sort { $0.0.template.specificity.lexicographicallyPrecedes($1.0.template.specificity) }
        // The most specific templates own the path: `/console/sessions` is that route's, never `/console/{file}`'s
        // with the file `sessions`, whatever the method (its Allow lists only that route's methods).
        let owner = candidates[0].0.template.specificity
        candidates.removeAll { $0.0.template.specificity != owner }
        let effective = method == .head ? HTTPMethod.get : method
        if let exact = candidates.first(where: { $0.0.method == method })
            ?? candidates.first(where: { $0.0.method == effective })
        {
            return .matched(exact.0, parameters: exact.1)
        }
        var allowed: [HTTPMethod] = []
        for (route, _) in candidates where !allowed.contains(route.method) { allowed.append(route.method) }
        if allowed.contains(.get) && !allowed.contains(.head) { allowed.append(.head) }
        allowed.append(.options)
        return .methodNotAllowed(allowed: allowed)
    }
}
