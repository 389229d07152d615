import Foundation
import Gateway
import GatewayHTTP
import GatewayAssembly
import OrchardHTTP
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A real gateway for the SDK's tests: `orchard serve`'s runtime over a SQLite file in a temporary directory,
/// served on a free loopback port, with a manual clock and the sandbox merchant's credentials. The tests act as
/// the merchant's server with the secret key.
final class LiveGateway: @unchecked Sendable {
    let directory: URL
    let clock = ManualClock(Date(timeIntervalSince1970: 1_800_000_000))
    let runtime: GatewayRuntime
    let server: HTTPServer
    let appID: String
    let appKey: String
    let secretKey: String
    let merchantIdentifier: String

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("orchardpay-\(UUID().uuidString)")
        var options = GatewayRuntime.Options(databasePath: directory.appendingPathComponent("gateway.db").path)
        options.acquirer.slowDelay = 0
        runtime = try GatewayRuntime(options, clock: clock)
        let merchant = try #require(runtime.sandboxMerchant)
        let credentials = try runtime.gateway.merchants.credentials(merchantID: merchant.id)
        appID = credentials.appID
        appKey = credentials.appKey
        secretKey = credentials.secretKey
        merchantIdentifier = merchant.merchantIdentifiers.first ?? "merchant.dev.orchard.sandbox"
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.perIPConnectionLimit = 0
        configuration.shutdownTimeoutSeconds = 5
        let api = GatewayAPI(
            gateway: runtime.gateway, readinessChecks: ["webhook_dispatcher": { true }],
            sandboxWallet: runtime.sandboxWallet)
        server = api.server(configuration: configuration, accessLog: { _ in }, messages: { _ in })
        try server.start()
    }

    deinit {
        server.stop(timeoutSeconds: 1)
        try? FileManager.default.removeItem(at: directory)
    }

    var url: URL { URL(string: "http://127.0.0.1:\(server.port)")! }

    /// The gateway's clock in Unix milliseconds.
    var nowMillis: Int64 { Int64((clock.now().timeIntervalSince1970 * 1000).rounded()) }

    /// A merchant-server call with the secret key; answers the status, the JSON body and the headers.
    func merchantServer(_ method: String, _ path: String, json: [String: Any]? = nil) async throws -> Answer {
        var request = URLRequest(url: URL(string: url.absoluteString + path)!)
        request.httpMethod = method
        request.setValue("Bearer \(secretKey)", forHTTPHeaderField: "Authorization")
        if let json {
            request.httpBody = try JSONSerialization.data(withJSONObject: json)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        return try await send(request)
    }

    /// A client-route call with the app's credentials.
    func client(_ method: String, _ path: String) async throws -> Answer {
        var request = URLRequest(url: URL(string: url.absoluteString + path)!)
        request.httpMethod = method
        request.setValue(appID, forHTTPHeaderField: "X-Orchard-App-Id")
        request.setValue(appKey, forHTTPHeaderField: "X-Orchard-App-Key")
        return try await send(request)
    }

    struct Answer: @unchecked Sendable {
        var status: Int
        var json: [String: Any]
        var headers: [AnyHashable: Any]
        var errorCode: String? { (json["error"] as? [String: Any])?["code"] as? String }
    }

    private func send(_ request: URLRequest) async throws -> Answer {
        try await withCheckedThrowingContinuation { continuation in
            URLSession.shared.dataTask(with: request) { data, response, error in
                if let error { return continuation.resume(throwing: error) }
                let http = response as! HTTPURLResponse
                let json = data.flatMap { try? JSONSerialization.jsonObject(with: $0) } as? [String: Any] ?? [:]
                continuation.resume(
                    returning: Answer(status: http.statusCode, json: json, headers: http.allHeaderFields))
            }.resume()
        }
    }

    /// Pays a prime as the merchant's server does (`POST /v1/payments`).
    func payPrime(
        _ prime: String, amount: String, currency: String = "TWD", deferred: Bool = false
    ) async throws
        -> Answer
    {
        var body: [String: Any] = ["prime": prime, "amount": amount, "currency": currency, "order_number": "order-1"]
        if deferred { body["deferred"] = true }
        return try await merchantServer("POST", "/v1/payments", json: body)
    }

    /// Creates an order session as the merchant's server does (`POST /v1/sessions`).
    func createSession(amount: String, outTradeNo: String) async throws -> Answer {
        try await merchantServer(
            "POST", "/v1/sessions",
            json: [
                "out_trade_no": outTradeNo, "amount": amount, "currency": "TWD", "country": "TW", "subject": "Tea",
                "user_id": "user-1",
            ])
    }
}
