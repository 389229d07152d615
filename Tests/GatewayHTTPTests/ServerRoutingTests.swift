import Foundation
import GatewayHTTP
import GatewayTestSupport
import OrchardHTTP
import Testing

/// An application with a few routes like the gateway's.
func sampleRouter() -> Router {
    var router = Router()
    router.get("/healthz") { _, _ in .text("ok") }
    router.get("/v1/payments/{id}") { request, context in
        try .jsonObject(["id": context.parameter("id"), "expand": request.query("expand") ?? ""])
    }
    router.post("/v1/payments/{id}/capture") { request, context in
        try .jsonObject(["captured": context.parameter("id"), "bytes": String(request.body.count)], status: .created)
    }
    router.get("/v1/payments/search") { request, _ in
        try .jsonObject(["search": request.query("q") ?? "", "items": String(request.queryItems.count)])
    }
    router.post("/v1/echo") { request, _ in
        HTTPResponse(status: .ok, headers: ["Content-Type": "application/json"], body: request.body)
    }
    router.get("/v1/boom") { _, _ in
        struct Secret: Error { var detail = "database password is hunter2" }
        throw Secret()
    }
    router.get("/v1/teapot") { _, _ in
        throw HTTPAPIError(status: 418, type: .invalidRequest, code: "teapot", message: "short and stout", param: "pot")
    }
    return router
}

@Suite("HTTP server: routing and errors")
struct ServerRoutingTests {
    let server: TestServer
    let client = CurlClient()

    init() throws {
        server = try TestServer(responder: HTTPApplication(router: sampleRouter()))
    }

    @Test("path parameters are decoded per segment and query items are percent-decoded")
    func parameters() throws {
        let response = try client.request("GET", server.base + "/v1/payments/pay%2F1%20x?expand=card+info%26more&x")
        #expect(response.status == 200)
        #expect(response.json["id"] as? String == "pay/1 x")
        #expect(response.json["expand"] as? String == "card info&more")
    }

    @Test("a literal segment wins over a parameter")
    func literalWins() throws {
        let response = try client.request("GET", server.base + "/v1/payments/search?q=a%2Bb&q=2")
        #expect(response.json["search"] as? String == "a+b")
        #expect(response.json["items"] as? String == "2")
    }

    @Test(
        "unknown paths are 404 not_found, known paths with another method 405 with Allow",
        arguments: [
            ("GET", "/nope", 404, "not_found", nil),
            ("GET", "/v1/payments/p1/capture", 405, "method_not_allowed", "POST, OPTIONS"),
            ("DELETE", "/healthz", 405, "method_not_allowed", "GET, HEAD, OPTIONS"),
            ("GET", "/v1/payments/", 404, "not_found", nil),
        ] as [(String, String, Int, String, String?)])
    func notFoundAndMethodNotAllowed(method: String, path: String, status: Int, code: String, allow: String?) throws {
        let response = try client.request(method, server.base + path)
        #expect(response.status == status)
        #expect(response.errorCode == code)
        #expect(response.headers["Allow"] == allow)
        #expect(response.headers["Content-Type"] == "application/json; charset=utf-8")
        let requestID = try #require(response.headers["Request-Id"])
        #expect(response.error["request_id"] as? String == requestID)
        #expect(response.error["type"] as? String == "invalid_request_error")
        #expect(response.error.keys.sorted() == ["code", "message", "param", "request_id", "type"])
    }

    @Test("every response carries a distinct req_ Request-Id", arguments: ["/healthz", "/nope", "/v1/boom"])
    func requestIDs(path: String) throws {
        let first = try client.request("GET", server.base + path)
        let second = try client.request("GET", server.base + path)
        let id1 = try #require(first.headers["Request-Id"])
        let id2 = try #require(second.headers["Request-Id"])
        #expect(id1.hasPrefix("req_") && id1.count == 28)
        #expect(id1 != id2)
    }

    @Test("an unknown error is a 500 internal_error that leaks nothing")
    func internalError() throws {
        let response = try client.request("GET", server.base + "/v1/boom")
        #expect(response.status == 500)
        #expect(response.errorCode == "internal_error")
        #expect(response.error["type"] as? String == "api_error")
        #expect(!response.text.contains("hunter2"))
        #expect(!response.text.contains("Secret"))
    }

    @Test("a thrown HTTPAPIError keeps its status, type, code and param")
    func apiError() throws {
        let response = try client.request("GET", server.base + "/v1/teapot")
        #expect(response.status == 418)
        #expect(response.errorCode == "teapot")
        #expect(response.error["param"] as? String == "pot")
        #expect(response.error["message"] as? String == "short and stout")
    }

    @Test("POST with a body reaches the handler; HEAD answers like GET without a body")
    func postAndHead() throws {
        let body = Data(#"{"amount":"1.00"}"#.utf8)
        let posted = try client.request(
            "POST", server.base + "/v1/payments/p9/capture", headers: ["Content-Type": "application/json"], body: body)
        #expect(posted.status == 201)
        #expect(posted.json["captured"] as? String == "p9")
        #expect(posted.json["bytes"] as? String == String(body.count))
        let head = try client.request("HEAD", server.base + "/healthz")
        #expect(head.status == 200)
        #expect(head.body.isEmpty)
    }

    @Test("keep-alive: two requests on one connection")
    func keepAlive() throws {
        let first = try client.request("GET", server.base + "/healthz")
        #expect(first.status == 200)
        #expect(client.lastNewConnections == 1)
        let second = try client.request(
            "POST", server.base + "/v1/echo", headers: ["Content-Type": "application/json"], body: Data("[1]".utf8))
        #expect(second.status == 200)
        #expect(second.text == "[1]")
        #expect(client.lastNewConnections == 0)
    }

    @Test("OPTIONS on a known path without a preflight answers 204 with Allow")
    func options() throws {
        let response = try client.request("OPTIONS", server.base + "/v1/payments/p1")
        #expect(response.status == 204)
        #expect(response.headers["Allow"] == "GET, HEAD, OPTIONS")
    }
}
