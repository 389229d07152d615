import Foundation
import GatewayCurl

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `Tests/Support/processor-standin.py` running: a local stand-in for Adyen's Checkout API or Checkout.com's payments
/// API on 127.0.0.1, driven through its control routes (its docstring describes them). Stopped by ``stop()`` (or
/// when released).
public final class ProcessorStandIn: @unchecked Sendable {
    /// Which API it stands in for.
    public enum API: String, Sendable {
        case adyen
        case checkoutCom = "checkout_com"
    }

    /// The script.
    public static var scriptPath: String {
        TestPaths.packageRoot.appendingPathComponent("Tests/Support/processor-standin.py").path
    }

    public let api: API
    /// The port it listens on.
    public let port: Int
    private let script: StandInScript
    private let client = CurlHTTPClient()

    /// Starts the script for `api` on `port` (0: a free one).
    public init(api: API, port: Int = 0) throws {
        self.api = api
        script = try StandInScript(
            script: Self.scriptPath, arguments: ["--api", api.rawValue, "--port", String(port)],
            name: "processor stand-in")
        self.port = script.port
    }

    deinit { stop() }

    /// The base URL a connector is given (`--processor-base-url`): Adyen's includes its version path.
    public var baseURL: String { api == .adyen ? "http://127.0.0.1:\(port)/v71" : "http://127.0.0.1:\(port)" }

    /// Stops the script (SIGKILL: a child inherits the test runner's blocked signals).
    public func stop() { script.stop() }

    /// A free loopback port, for a stand-in started later on a port known now (a refused connection first).
    public static func freePort() -> Int {
        let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socketFD) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socketFD, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        var bound = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &bound) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socketFD, $0, &length) }
        }
        return Int(UInt16(bigEndian: bound.sin_port))
    }

    // MARK: Control

    private func control(_ method: CurlHTTPClient.Method, _ path: String, _ body: Any? = nil) throws -> Any {
        let data = try body.map { try JSONSerialization.data(withJSONObject: $0) } ?? Data()
        let response = try client.perform(
            CurlHTTPClient.Request(
                method: method, url: "http://127.0.0.1:\(port)/_standin/\(path)",
                headers: [("Content-Type", "application/json")], body: data, timeout: 60))
        guard response.status == 200 else {
            throw TestCertificateAuthority.Failure(description: "stand-in \(path): HTTP \(response.status)")
        }
        return try JSONSerialization.jsonObject(with: response.body)
    }

    /// Sets the account (credentials, secrets, the gateway's notification URL).
    public func configure(_ fields: [String: String]) throws { _ = try control(.post, "config", fields) }

    /// The next calls of `kind` (`authorize`, `capture`, `void`, `refund`) are answered so, in order.
    public func script(_ kind: String, _ answers: [[String: Any]]) throws {
        _ = try control(.post, "script", ["kind": kind, "answers": answers])
    }

    /// Every API request it received: `method`, `path`, `headers`, `body`.
    public func requests() throws -> [[String: Any]] { try control(.get, "requests") as? [[String: Any]] ?? [] }

    /// The payments as the processor keeps them.
    public func ledger() throws -> [[String: Any]] { try control(.get, "ledger") as? [[String: Any]] ?? [] }

    /// The notifications waiting to be sent.
    public func queued() throws -> [[String: Any]] { try control(.get, "queued") as? [[String: Any]] ?? [] }

    /// Sends the waiting notifications (`order`, `duplicate`, `tamper`, `keep`, `batch`); each answer's status and
    /// body.
    @discardableResult
    public func deliver(_ options: [String: Any] = [:]) throws -> [(status: Int, body: String)] {
        answers(try control(.post, "deliver", options))
    }

    /// Sends the given notifications (Adyen `items`, Checkout.com `events`), signed as the processor signs them.
    @discardableResult
    public func notify(_ payload: [String: Any]) throws -> [(status: Int, body: String)] {
        answers(try control(.post, "notify", payload))
    }

    private func answers(_ value: Any) -> [(status: Int, body: String)] {
        (value as? [[String: Any]] ?? []).map { ($0["status"] as? Int ?? 0, $0["body"] as? String ?? "") }
    }

    /// The requests made with `method` to `path` (`/v71/payments`, `/payments`).
    public func requests(to path: String, method: String = "POST") throws -> [[String: Any]] {
        try requests().filter { ($0["path"] as? String) == path && ($0["method"] as? String) == method }
    }

    /// The JSON body of the `index`th request to `path`.
    public func body(of path: String, _ index: Int = 0) throws -> [String: Any] {
        let matching = try requests(to: path)
        guard matching.count > index, let body = matching[index]["body"] as? [String: Any] else {
            throw TestCertificateAuthority.Failure(description: "no JSON request \(index) to \(path)")
        }
        return body
    }

    /// The headers of the `index`th request to `path`, by lower-cased name.
    public func headers(of path: String, _ index: Int = 0) throws -> [String: String] {
        let matching = try requests(to: path)
        guard matching.count > index, let headers = matching[index]["headers"] as? [String: String] else {
            throw TestCertificateAuthority.Failure(description: "no request \(index) to \(path)")
        }
        return Dictionary(headers.map { ($0.key.lowercased(), $0.value) }) { first, _ in first }
    }
}
