import Foundation
import GatewayCurl
import OrchardBase
import OrchardJSON

/// A small JSON client of the gateway's HTTP API on libcurl, for `orchard demo` and `orchard bench http`.
///
/// Shares one ``CurlHTTPClient`` (idle handles kept for keep-alive) between threads.
struct APICaller: Sendable {
    /// An answer: status, headers and the raw body, with the body parsed as a JSON object when it is one.
    struct Reply: Sendable {
        var status: Int
        var headers: [(String, String)]
        var body: Data
        /// The body read once by the one parser; nil when it is not JSON.
        var document: JSONValue?

        init(status: Int, headers: [(String, String)], body: Data) {
            self.status = status
            self.headers = headers
            self.body = body
            document = try? JSONValue.parse(body, maximumDepth: 64)
        }

        /// The body as a JSON object; empty when it is not one.
        var json: [String: Any] {
            // A client reading the gateway's answers, not the server parsing a request.
            ((try? JSONSerialization.jsonObject(with: body)) as? [String: Any]) ?? [:]
        }

        /// The string at `key` of the body (or of a nested object, `"error.code"`).
        func string(_ path: String) -> String? {
            var value = document
            for part in path.split(separator: ".") { value = value?[String(part)] }
            return value?.string
        }

        /// A response header's value (case-insensitive name).
        func header(_ name: String) -> String? {
            headers.first { $0.0.equalsIgnoringASCIICase(name) }?.1
        }

        /// `"<status> <error.type>/<error.code>"` for an error answer, else the status alone.
        var summary: String {
            guard let code = string("error.code") else { return "HTTP \(status)" }
            return "HTTP \(status) \(string("error.type") ?? "?")/\(code)"
        }
    }

    /// A request that could not be made at all (connection refused, timeout …).
    struct TransportError: Error, CustomStringConvertible {
        var method: String
        var path: String
        var underlying: CurlError
        var description: String { "\(method) \(path): \(underlying)" }
    }

    /// The server's base URL, e.g. `http://127.0.0.1:8080`.
    var baseURL: String
    /// The client (connections are kept alive between calls).
    var client: CurlHTTPClient
    /// The longest one call may take, in seconds.
    var timeout: TimeInterval = 30

    init(baseURL: String, client: CurlHTTPClient = CurlHTTPClient()) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.client = client
    }

    /// Client credentials headers (`X-Orchard-App-Id`, `X-Orchard-App-Key`).
    static func appHeaders(appID: String, appKey: String) -> [(String, String)] {
        [("X-Orchard-App-Id", appID), ("X-Orchard-App-Key", appKey)]
    }

    /// Server credentials header (`Authorization: Bearer sk_…`).
    static func secretHeaders(_ secretKey: String) -> [(String, String)] {
        [("Authorization", "Bearer \(secretKey)")]
    }

    /// Calls `method path` with `headers` and, when given, `json` as the body (`Content-Type: application/json`).
    func call(
        _ method: CurlHTTPClient.Method, _ path: String, headers: [(String, String)] = [], json: Any? = nil
    ) throws -> Reply {
        var allHeaders = headers
        var body = Data()
        if let json {
            // A client writing the body it sends, not the server.
            body = try JSONSerialization.data(withJSONObject: json, options: [.withoutEscapingSlashes])
            allHeaders.append(("Content-Type", "application/json"))
        }
        return try call(method, path, headers: allHeaders, body: body)
    }

    /// Calls `method path` with `headers` and a raw body.
    func call(
        _ method: CurlHTTPClient.Method, _ path: String, headers: [(String, String)], body: Data
    ) throws -> Reply {
        do {
            let response = try client.perform(
                CurlHTTPClient.Request(
                    method: method, url: baseURL + path, headers: headers, body: body, timeout: timeout))
            return Reply(status: response.status, headers: response.headers, body: response.body)
        } catch {
            throw TransportError(method: method.rawValue, path: path, underlying: error)
        }
    }
}
