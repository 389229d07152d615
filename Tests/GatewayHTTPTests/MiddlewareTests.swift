import Foundation
import GatewayHTTP
import GatewayTestSupport
import OrchardHTTP
import OrchardJSON
import Testing

/// A gateway-like application: client routes (app id + key), server routes (bearer secret), public routes.
struct MiddlewareFixture {
    static let clientScope: RouteScope = "client"
    static let serverScope: RouteScope = "server"
    static let originsByApp: [String: Set<String>] = [
        "app_1": ["https://shop.example"], "app_2": ["https://other.example"],
    ]

    let log = LineCollector()
    let metrics = MetricsRegistry()
    let clock = ManualClock()
    let server: TestServer
    let client = CurlClient()

    init(configuration: ServerConfiguration = ServerConfiguration()) throws {
        var router = Router()
        router.get("/healthz") { _, _ in .text("ok") }
        router.get("/metrics", handler: metrics.handler)
        router.post("/v1/tokens", scope: Self.clientScope) { request, context in
            try .jsonObject(["principal": context.principal?.credentialID ?? "", "bytes": String(request.body.count)])
        }
        router.get("/v1/payments/{id}", scope: Self.serverScope) { _, context in
            try .jsonObject(["id": context.parameter("id"), "principal": context.principal?.credentialID ?? ""])
        }
        router.post("/v1/payments", scope: Self.serverScope) { _, context in
            // The fields read from the one parse the JSON limits middleware made.
            let body = context[ParsedJSONBodyKey.self]?.json
            func field(_ name: String) throws(HTTPAPIError) -> String {
                guard let value = body?[name] else { throw .parameterMissing(name) }
                guard let text = value.string else {
                    throw .parameterInvalid(name, message: "\(name) has the wrong type")
                }
                return text
            }
            let amount = try field("amount")
            let currency = try field("currency")
            return try .jsonObject(["amount": amount, "currency": currency], status: .created)
        }
        router.put("/v1/bin-table", scope: Self.serverScope, accepts: ["text/csv"]) { request, _ in
            .text("rows \(request.body.split(separator: UInt8(ascii: "\n")).count)")
        }
        var configuration = configuration
        configuration.maxJSONDepth = 4
        configuration.maxStringLength = 16
        let clock = self.clock
        let log = self.log
        let application = HTTPApplication.standard(
            router: router, configuration: configuration, accessLog: { log.append($0) }, metrics: metrics,
            cors: CORSPolicy { origin, request, context in
                if let app = context.principal?.credentialID { return Self.originsByApp[app]?.contains(origin) == true }
                if let app = request.headers["X-Orchard-App-Id"] {
                    return Self.originsByApp[app]?.contains(origin) == true
                }
                return Self.originsByApp.values.contains { $0.contains(origin) }
            },
            authenticate: Self.authenticate,
            clock: HTTPClock(now: { Date(timeIntervalSince1970: 1_800_000_000) }, monotonicSeconds: { clock.now }))
        server = try TestServer(configuration: configuration, responder: application)
    }

    @Sendable static func authenticate(_ request: HTTPRequest, _ context: RequestContext) throws -> Principal? {
        guard let route = context.route else { return nil }
        switch route.scope {
        case clientScope:
            guard let app = request.headers["X-Orchard-App-Id"], let key = request.headers["X-Orchard-App-Key"] else {
                throw HTTPAPIError.missingCredentials("send X-Orchard-App-Id and X-Orchard-App-Key")
            }
            guard originsByApp[app] != nil, key == "ak_\(app)" else { throw HTTPAPIError.invalidCredentials() }
            return Principal(credentialID: app, kind: "app_key")
        case serverScope:
            guard let token = request.headers.bearerToken else {
                if request.headers.contains("X-Orchard-App-Key") {
                    throw HTTPAPIError.forbidden("an app key cannot call server routes")
                }
                throw HTTPAPIError.missingCredentials()
            }
            guard token == "sk_good" || token == "sk_other" else { throw HTTPAPIError.invalidCredentials() }
            return Principal(credentialID: token == "sk_good" ? "key_1" : "key_2", kind: "secret_key")
        default:
            return nil
        }
    }

    var base: String { server.base }
}

@Suite("HTTP middleware over a live server")
struct MiddlewareTests {
    let fixture: MiddlewareFixture
    var client: CurlClient { fixture.client }
    var base: String { fixture.base }
    let json = ["Content-Type": "application/json"]
    let secret = ["Authorization": "Bearer sk_good", "Content-Type": "application/json"]

    init() throws {
        var configuration = ServerConfiguration()
        configuration.rateLimitPerSecond = 1
        configuration.rateLimitBurst = 2
        fixture = try MiddlewareFixture(configuration: configuration)
    }

    @Test("CORS preflight lists methods and the Orchard headers, with Vary: Origin")
    func preflight() throws {
        let response = try client.request(
            "OPTIONS", base + "/v1/tokens",
            headers: [
                "Origin": "https://shop.example", "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "x-orchard-app-id, x-orchard-app-key, content-type",
            ])
        #expect(response.status == 204)
        #expect(response.headers["Access-Control-Allow-Origin"] == "https://shop.example")
        let methods = try #require(response.headers["Access-Control-Allow-Methods"])
        #expect(methods.contains("POST") && methods.contains("GET"))
        let headers = try #require(response.headers["Access-Control-Allow-Headers"]).lowercased()
        for name in ["x-orchard-app-id", "x-orchard-app-key", "idempotency-key", "content-type"] {
            #expect(headers.contains(name))
        }
        #expect(response.headers["Vary"] == "Origin")
        #expect(response.headers["Request-Id"] != nil)
    }

    @Test("a preflight from an unknown origin is refused")
    func preflightRefused() throws {
        let response = try client.request(
            "OPTIONS", base + "/v1/tokens",
            headers: ["Origin": "https://evil.example", "Access-Control-Request-Method": "POST"])
        #expect(response.status == 403)
        #expect(response.headers["Access-Control-Allow-Origin"] == nil)
    }

    @Test("an actual CORS request is allowed only for the credential's own origins")
    func actualRequest() throws {
        let headers = [
            "X-Orchard-App-Id": "app_1", "X-Orchard-App-Key": "ak_app_1", "Content-Type": "application/json",
        ]
        let allowed = try client.request(
            "POST", base + "/v1/tokens", headers: headers.merging(["Origin": "https://shop.example"]) { $1 },
            body: Data("{}".utf8))
        #expect(allowed.status == 200)
        #expect(allowed.headers["Access-Control-Allow-Origin"] == "https://shop.example")
        #expect(allowed.headers["Access-Control-Expose-Headers"]?.contains("Request-Id") == true)
        #expect(allowed.headers["Vary"] == "Origin")
        let otherOrigin = try client.request(
            "POST", base + "/v1/tokens", headers: headers.merging(["Origin": "https://other.example"]) { $1 },
            body: Data("{}".utf8))
        #expect(otherOrigin.status == 200)
        #expect(otherOrigin.headers["Access-Control-Allow-Origin"] == nil)
        #expect(otherOrigin.headers["Vary"] == "Origin")
    }

    @Test(
        "a body with a content type the route does not take is 415",
        arguments: [
            ("/v1/payments", "POST", "text/plain", 415),
            ("/v1/payments", "POST", nil, 415),
            ("/v1/payments", "POST", "application/json; charset=latin1", 415),
            ("/v1/payments", "POST", "application/json; charset=UTF-8", 201),
            ("/v1/bin-table", "PUT", "application/json", 415),
            ("/v1/bin-table", "PUT", "text/csv", 200),
        ] as [(String, String, String?, Int)])
    func contentType(path: String, method: String, contentType: String?, status: Int) throws {
        var headers = ["Authorization": "Bearer sk_good"]
        if let contentType { headers["Content-Type"] = contentType }
        let body = path == "/v1/payments" ? #"{"amount":"1.00","currency":"TWD"}"# : "a,b\nc,d\n"
        let response = try client.request(method, base + path, headers: headers, body: Data(body.utf8))
        #expect(response.status == status)
        if status == 415 { #expect(response.errorCode == "unsupported_media_type") }
    }

    @Test(
        "JSON bodies are scanned: malformed, too deep, strings too long",
        arguments: [
            (#"{"amount": "1.00", "currency": "TWD""#, "invalid_json"),
            (#"{"amount": "1.00",}"#, "invalid_json"),
            (#"{"a":[[[{"b":1}]]]}"#, "json_too_deep"),
            (#"{"amount": "12345678901234567", "currency": "TWD"}"#, "string_too_long"),
            (
                #"{"amount": "\u0041\u0042\u0043\u0044\u0045\u0046\u0047\u0048\u0049\u004a\u004b\u004c\u004d\u004e\u004f\u0050\u0051"}"#,
                "string_too_long"
            ),
            (#"{"amountamountamount": "1"}"#, "string_too_long"),
            (#"{"currency": "TWD"}"#, "parameter_missing"),
            (#"{"amount": 1, "currency": "TWD"}"#, "parameter_invalid"),
        ])
    func jsonLimits(body: String, code: String) throws {
        let response = try client.request("POST", base + "/v1/payments", headers: secret, body: Data(body.utf8))
        #expect(response.status == 400)
        #expect(response.errorCode == code)
        if code == "parameter_missing" { #expect(response.error["param"] as? String == "amount") }
        if code == "parameter_invalid" { #expect(response.error["param"] as? String == "amount") }
    }

    @Test("JSON at the limits passes")
    func jsonWithinLimits() throws {
        let body = #"{"amount": "1234567890123456", "currency": "TWD", "x": [[{"y": 1}]]}"#
        let response = try client.request("POST", base + "/v1/payments", headers: secret, body: Data(body.utf8))
        #expect(response.status == 201)
        #expect(response.json["amount"] as? String == "1234567890123456")
    }

    @Test(
        "the authentication hook's rejections",
        arguments: [
            ("GET", "/v1/payments/p1", [:], 401, "missing_credentials"),
            ("GET", "/v1/payments/p1", ["Authorization": "Bearer sk_wrong"], 401, "invalid_credentials"),
            ("GET", "/v1/payments/p1", ["Authorization": "Basic abc"], 401, "missing_credentials"),
            (
                "GET", "/v1/payments/p1", ["X-Orchard-App-Id": "app_1", "X-Orchard-App-Key": "ak_app_1"], 403,
                "forbidden"
            ),
            ("POST", "/v1/tokens", ["X-Orchard-App-Id": "app_1"], 401, "missing_credentials"),
            (
                "POST", "/v1/tokens", ["X-Orchard-App-Id": "app_1", "X-Orchard-App-Key": "ak_app_2"], 401,
                "invalid_credentials"
            ),
        ] as [(String, String, [String: String], Int, String)])
    func authentication(method: String, path: String, headers: [String: String], status: Int, code: String) throws {
        let response = try client.request(method, base + path, headers: headers, body: method == "POST" ? Data() : nil)
        #expect(response.status == status)
        #expect(response.errorCode == code)
        let expectedType = status == 403 ? "permission_error" : "authentication_error"
        #expect(response.error["type"] as? String == expectedType)
    }

    @Test("authenticated requests see their principal")
    func principal() throws {
        let response = try client.request("GET", base + "/v1/payments/p7", headers: ["Authorization": "Bearer sk_good"])
        #expect(response.status == 200)
        #expect(response.json["principal"] as? String == "key_1")
    }

    @Test("the rate limit is per credential and answers 429 with Retry-After until the bucket refills")
    func rateLimit() throws {
        let good = ["Authorization": "Bearer sk_good"]
        #expect(try client.request("GET", base + "/v1/payments/a", headers: good).status == 200)
        #expect(try client.request("GET", base + "/v1/payments/a", headers: good).status == 200)
        let limited = try client.request("GET", base + "/v1/payments/a", headers: good)
        #expect(limited.status == 429)
        #expect(limited.errorCode == "rate_limited")
        #expect(limited.error["type"] as? String == "rate_limit_error")
        #expect(limited.headers["Retry-After"] == "1")
        let other = try client.request("GET", base + "/v1/payments/a", headers: ["Authorization": "Bearer sk_other"])
        #expect(other.status == 200)
        #expect(try client.request("GET", base + "/healthz").status == 200)
        fixture.clock.advance(1)
        #expect(try client.request("GET", base + "/v1/payments/a", headers: good).status == 200)
        #expect(try client.request("GET", base + "/v1/payments/a", headers: good).status == 429)
    }

    @Test("one access log line per request: template not path, no headers or secrets")
    func accessLog() throws {
        let response = try client.request(
            "GET", base + "/v1/payments/pay_secret_id?card=4111111111111111",
            headers: ["Authorization": "Bearer sk_good"])
        let missing = try client.request("GET", base + "/nowhere")
        let lines = fixture.log.lines
        #expect(lines.count == 2)
        let first = try #require(
            try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        #expect(first["route"] as? String == "/v1/payments/{id}")
        #expect(first["method"] as? String == "GET")
        #expect(first["status"] as? Int == 200)
        #expect(first["request_id"] as? String == response.headers["Request-Id"])
        #expect(first["remote"] as? String == "127.0.0.1")
        #expect(first["time"] as? String == "2027-01-15T08:00:00.000Z")
        #expect(first["latency_ms"] is NSNumber)
        #expect(
            Set(first.keys) == ["time", "level", "request_id", "method", "route", "status", "latency_ms", "remote"])
        for secret in ["pay_secret_id", "4111", "sk_good", "Bearer"] { #expect(!lines[0].contains(secret)) }
        let second = try #require(try JSONSerialization.jsonObject(with: Data(lines[1].utf8)) as? [String: Any])
        #expect(second["route"] as? String == "unmatched")
        #expect(second["status"] as? Int == 404)
        #expect(second["error_code"] as? String == "not_found")
        #expect(second["request_id"] as? String == missing.headers["Request-Id"])
    }

    @Test("metrics count requests by route template and status and observe latency")
    func metrics() throws {
        _ = try client.request("GET", base + "/healthz")
        _ = try client.request("GET", base + "/healthz")
        _ = try client.request("GET", base + "/v1/payments/x", headers: ["Authorization": "Bearer sk_good"])
        _ = try client.request("GET", base + "/v1/payments/y")
        let response = try client.request("GET", base + "/metrics")
        #expect(response.headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8")
        let text = response.text
        #expect(text.contains("# TYPE orchard_http_requests_total counter\n"))
        #expect(text.contains(#"orchard_http_requests_total{route="/healthz",method="GET",status="200"} 2"#))
        #expect(text.contains(#"orchard_http_requests_total{route="/v1/payments/{id}",method="GET",status="200"} 1"#))
        #expect(text.contains(#"orchard_http_requests_total{route="/v1/payments/{id}",method="GET",status="401"} 1"#))
        #expect(text.contains("# TYPE orchard_http_request_duration_seconds histogram\n"))
        #expect(text.contains(#"orchard_http_request_duration_seconds_bucket{route="/healthz",method="GET",le="+Inf"} 2"#))
        #expect(text.contains(#"orchard_http_request_duration_seconds_count{route="/v1/payments/{id}",method="GET"} 2"#))
    }
}
