import ApplePayModel
import Foundation
import Gateway
import GatewayAssembly
import GatewayHTTP
import GatewayPostgres
import OrchardCLI
import OrchardHTTP
import OrchardTestSupport
import Testing

/// The gateway over a real SQLite file in a temporary directory, with a manual clock and the sandbox merchant's
/// credentials; its application answers in process (``APITransport/inProcess``, the default) or is served over
/// loopback HTTP on a free port (``APITransport/loopback``, for what is about the server itself).
package final class APIHarness: @unchecked Sendable {
    package let directory: URL
    package let clock = Gateway.ManualClock(Date(timeIntervalSince1970: 1_800_000_000))
    package let runtime: GatewayRuntime
    package let api: GatewayAPI
    package let server: HTTPServer
    package let transport: APITransport
    package let inProcess: InProcessClient
    package let credentials: MerchantCredentials
    package let merchant: Merchant
    package let logs = LineCollector()

    /// The PostgreSQL database the harness made (dropped with it): its name and the server's URL.
    private let postgresDatabase: (name: String, server: String)?

    /// With `database` `.postgres`, the gateway runs on a fresh database of `ORCHARD_TEST_POSTGRES_URL`'s server
    /// (the case is skipped without one).
    package init(
        transport: APITransport = .inProcess, database: APIDatabase = .sqlite,
        configure: (inout ServerConfiguration) -> Void = { _ in },
        acquirer: (inout SandboxAcquirer.Configuration) -> Void = { _ in },
        runtime setUp: (inout GatewayRuntime.Options) -> Void = { _ in }
    ) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("orchard-api-\(UUID().uuidString)")
        var options = GatewayRuntime.Options(databasePath: directory.appendingPathComponent("gateway.db").path)
        if database == .postgres {
            guard let server = TestPostgres.serverURL else {
                try Test.cancel("ORCHARD_TEST_POSTGRES_URL is not set: the PostgreSQL case is skipped")
            }
            let name = "orchard_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
            try PostgresAdmin.createDatabase(name, url: server)
            postgresDatabase = (name, server)
            options.postgres = PostgresStore.Configuration(url: try #require(PostgresAdmin.url(server, database: name)))
            options.masterKeyHex = String(repeating: "6b", count: 32)
        } else {
            postgresDatabase = nil
        }
        options.acquirer.slowDelay = 0
        acquirer(&options.acquirer)
        setUp(&options)
        runtime = try GatewayRuntime(options, clock: clock)
        merchant = try #require(runtime.sandboxMerchant)
        credentials = try runtime.gateway.merchants.credentials(merchantID: merchant.id)
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.perIPConnectionLimit = 0
        configuration.shutdownTimeoutSeconds = 20
        configure(&configuration)
        api = GatewayAPI(
            gateway: runtime.gateway, readinessChecks: ["webhook_dispatcher": { true }],
            sandboxWallet: runtime.sandboxWallet)
        let logs = self.logs
        let application = api.application(configuration: configuration) { logs.append($0) }
        server = HTTPServer(
            configuration: configuration, responder: application, bodyLimit: GatewayAPI.bodyLimit, messages: { _ in })
        inProcess = InProcessClient(
            responder: application, maxBodyBytes: configuration.maxBodyBytes, bodyLimit: GatewayAPI.bodyLimit)
        self.transport = transport
        if transport == .loopback { try server.start() }
    }

    deinit {
        server.stop(timeoutSeconds: 1)
        try? FileManager.default.removeItem(at: directory)
        if let postgresDatabase { try? PostgresAdmin.dropDatabase(postgresDatabase.name, url: postgresDatabase.server) }
    }

    package var base: String { "http://127.0.0.1:\(server.port)" }

    package var appHeaders: [String: String] {
        ["X-Orchard-App-Id": credentials.appID, "X-Orchard-App-Key": credentials.appKey]
    }

    package var serverHeaders: [String: String] { ["Authorization": "Bearer \(credentials.secretKey)"] }

    /// A request with a JSON (or raw) body.
    package func call(
        _ method: String, _ path: String, headers: [String: String] = [:], json: Any? = nil, body: Data? = nil
    ) throws -> ClientResponse {
        let response =
            switch transport {
            case .inProcess: try inProcess.call(method, path, headers: headers, json: json, body: body)
            case .loopback: try CurlClient().call(method, base, path, headers: headers, json: json, body: body)
            }
        exchanges.withLock { $0.append((method, path, response)) }
        return response
    }

    /// Every request made through ``call(_:_:headers:json:body:)`` with its answer, for checking answers
    /// against `openapi.yaml`.
    package let exchanges = ExchangeLog()

    package func client(
        _ method: String, _ path: String, json: Any? = nil, headers: [String: String] = [:]
    ) throws
        -> ClientResponse
    {
        try call(method, path, headers: appHeaders.merging(headers) { $1 }, json: json)
    }

    package func merchantServer(
        _ method: String, _ path: String, json: Any? = nil, headers: [String: String] = [:]
    ) throws
        -> ClientResponse
    {
        try call(method, path, headers: serverHeaders.merging(headers) { $1 }, json: json)
    }

    /// A sandbox token (JSON object) for `amount` of `currency`, signed now on the manual clock.
    package func token(_ amount: String, _ currency: String = "TWD", pan: String? = nil) throws -> Any {
        let currency = try Currency(code: currency)
        let data = try runtime.mintSandboxToken(
            amount: try Money(amount, currency: currency).minorUnits, currency: currency, pan: pan, at: clock.now())
        return try JSONSerialization.jsonObject(with: data)
    }

    /// Tokenizes a fresh token and returns the prime.
    package func prime(_ amount: String, _ currency: String = "TWD") throws -> String {
        let response = try client("POST", "/v1/tokens", json: ["token": try token(amount, currency)])
        try #require(response.status == 200, "\(response.text)")
        return try #require(response.json["prime"] as? String)
    }

    /// Pays a fresh prime; returns the response.
    package func pay(_ amount: String, capture: [String: Any] = ["mode": "now"], key: String? = nil) throws -> ClientResponse {
        let prime = try prime(amount)
        return try merchantServer(
            "POST", "/v1/payments", json: ["prime": prime, "amount": amount, "currency": "TWD", "capture": capture],
            headers: key.map { ["Idempotency-Key": $0] } ?? [:])
    }
}

/// The database an ``APIHarness`` runs on.
package enum APIDatabase: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgres

    package var testDescription: String { rawValue }
}

/// The `paths` of `openapi.yaml` as `(METHOD, template)` pairs, scanned line by line.
package func openAPIOperations() throws -> Set<String> {
    let text = try String(contentsOf: TestPaths.packageRoot.appendingPathComponent("openapi.yaml"), encoding: .utf8)
    var operations: Set<String> = []
    var inPaths = false
    var path: String?
    for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
        if line == "paths:" {
            inPaths = true
            continue
        }
        guard inPaths else { continue }
        if let first = line.first, first != " ", first != "#" { break }
        if line.hasPrefix("  /"), line.hasSuffix(":"), !line.hasPrefix("   ") {
            path = String(line.dropFirst(2).dropLast())
        } else if let path, line.hasPrefix("    "), !line.hasPrefix("     "), line.hasSuffix(":") {
            let method = line.trimmingCharacters(in: .whitespaces).dropLast()
            if ["get", "post", "put", "delete"].contains(String(method)) {
                operations.insert("\(method.uppercased()) \(path)")
            }
        }
    }
    return operations
}

/// The requests an ``APIHarness`` made, in order.
package final class ExchangeLog: @unchecked Sendable {
    package init() {}
    private var entries: [(method: String, path: String, response: ClientResponse)] = []
    private let lock = NSLock()

    package func withLock<R>(_ body: (inout [(method: String, path: String, response: ClientResponse)]) -> R) -> R {
        lock.withLock { body(&entries) }
    }
}

extension APIHarness {
    /// Signs in to the console; returns the cookie header value to send back, the CSRF token and the answer.
    package func signInToConsole(key: String? = nil) throws -> (cookie: String, csrf: String, response: ClientResponse) {
        let response = try call("POST", "/console/session", json: ["secret_key": key ?? credentials.secretKey])
        try #require(response.status == 200, "\(response.text)")
        let setCookie = try #require(response.headers["Set-Cookie"])
        let pair = try #require(setCookie.split(separator: ";").first.map(String.init))
        return (pair, try #require(response.json["csrf_token"] as? String), response)
    }
}
