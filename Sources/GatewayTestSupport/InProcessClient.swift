import Foundation
import GatewayHTTP
import OrchardHTTP

/// How a test harness reaches the application: in process, handing an ``HTTPRequest`` value to
/// ``HTTPResponder/respond(to:)`` (the API's behaviour, with no socket, no client library and no server
/// threads), or over loopback HTTP through a started ``HTTPServer`` (what is about the server itself: limits,
/// TLS, shutdown, slow clients, the end-to-end flows).
package enum APITransport {
    case inProcess
    case loopback
}

/// Answers requests by calling the application directly, doing the little the server does around it: the
/// body cap (answered through ``HTTPResponder/respond(to:rejectedWith:)`` as the server does), the peer's
/// address, `Host` and `Content-Length`, and no body for `HEAD`.
package struct InProcessClient {
    package let responder: any HTTPResponder
    /// The server's body cap (`ServerConfiguration.maxBodyBytes`).
    package let maxBodyBytes: Int
    /// The per-route body cap, as the server is given it.
    package let bodyLimit: (@Sendable (HTTPMethod, String) -> Int?)?

    package func request(
        _ method: String, _ target: String, headers: [String: String] = [:], body: Data? = nil
    )
        -> ClientResponse
    {
        var fields = HTTPHeaders([("Host", "127.0.0.1"), ("Accept", "*/*")])
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { fields[name] = value }
        if let body { fields["Content-Length"] = String(body.count) }
        let request = HTTPRequest(
            method: HTTPMethod(rawValue: method), target: target, headers: fields, body: body ?? Data(),
            remoteAddress: "127.0.0.1")
        let limit = bodyLimit?(request.method, request.path) ?? maxBodyBytes
        var response: HTTPResponse
        if request.body.count > limit {
            var refused = request
            refused.body = Data()
            response = responder.respond(to: refused, rejectedWith: .bodyTooLarge(limit: limit))
            response.headers["Connection"] = "close"
        } else {
            response = responder.respond(to: request)
        }
        response.headers["Content-Length"] = String(response.body.count)
        return ClientResponse(
            status: response.status.rawValue, headers: response.headers,
            body: request.method == .head ? Data() : response.body)
    }

    /// A request with a JSON body (`Content-Type: application/json` unless given) or a raw one, as
    /// ``CurlClient/call(_:_:_:headers:json:body:)`` sends it.
    package func call(
        _ method: String, _ path: String, headers: [String: String], json: Any?, body: Data?
    ) throws
        -> ClientResponse
    {
        var headers = headers
        var payload = body
        if let json {
            payload = try JSONSerialization.data(withJSONObject: json)
            if headers["Content-Type"] == nil { headers["Content-Type"] = "application/json" }
        }
        return request(method, path, headers: headers, body: payload)
    }
}
