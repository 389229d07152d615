import Foundation
import Gateway
import GatewayCurl
import OrchardBase
import OrchardCrypto
import OrchardJSON

/// How the connectors reach their processors; every field has a documented default.
public struct ProcessorConnectorConfiguration: Sendable {
    /// Base URLs that replace a processor's own, by connector type (`adyen`, `checkout_com`): local stand-ins for
    /// tests (`orchard serve --processor-base-url`, sandbox only). Plain `http://` is taken only to the loopback.
    public var baseURLs: [String: String] = [:]
    /// The longest the connection phase of one call may take (TCP and TLS), in seconds. Default 5.
    public var connectTimeout: TimeInterval = 5
    /// The longest one whole call may take, in seconds. Default 20: below the gateway's authorization timeout
    /// (``GatewayConfiguration/authorizationTimeout``, 30), so a call's outcome is known before a query may
    /// conclude that it never arrived.
    public var timeout: TimeInterval = 20
    /// PEM CA certificates trusted instead of the system's (a TLS stand-in in tests); nil for the system's.
    public var caBundlePath: String?

    /// The defaults: the processors' own URLs, 5 s to connect, 20 s per call, the system's CAs.
    public init() {}

    /// Whether `url` may be used as a base URL: `https://` to any host, or `http://` to the loopback only.
    public static func isAcceptableBaseURL(_ url: String) -> Bool {
        guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(), let host = parsed.host,
            !host.isEmpty, parsed.query == nil, parsed.fragment == nil
        else { return false }
        if scheme == "https" { return true }
        return scheme == "http" && isLoopback(host)
    }

    /// Whether `host` names the loopback (`127.0.0.1`, `::1`, `localhost`).
    public static func isLoopback(_ host: String) -> Bool {
        ["127.0.0.1", "::1", "[::1]", "localhost"].contains(host.lowercased())
    }
}

/// What one call to a processor came to, as a connector decides on it.
enum ProcessorCallResult {
    /// The processor answered: its status, headers and body (parsed when it is JSON; nil when it is not, is empty or
    /// was cut short).
    case answered(status: Int, headers: [(String, String)], body: Data, json: JSONValue?)
    /// The connection could not be made: the request never left.
    case notSent(String)
    /// No answer in time: the request may have been done.
    case timedOut(String)
    /// The connection broke after the request was sent, or the answer was cut short: it may have been done.
    case broken(String)
}

extension ProcessorConnectionTest {
    /// A connection test's outcome for what the processor's own cases leave: `401` (the key), another status, or no
    /// answer. `processor` names it in the message; `call` is the request made (`POST /paymentMethods`).
    static func failure(_ result: ProcessorCallResult, processor: String, key: String, call: String) -> Self {
        switch result {
        case .answered(401, _, _, _):
            return Self(outcome: .failed, message: "\(processor) refused the \(key) (401)", httpStatus: 401)
        case .answered(let status, _, _, _):
            return Self(
                outcome: .failed, message: "\(processor) answered HTTP \(status) to \(call)", httpStatus: status)
        case .notSent(let reason), .timedOut(let reason), .broken(let reason):
            return Self(outcome: .failed, message: "\(processor) could not be reached (\(reason))")
        }
    }
}

/// The HTTP side of the connectors: JSON over libcurl with TLS verification, separate connect and total timeouts,
/// no redirects; `http://` only to a loopback base URL. Never logs a body or a header value.
final class ProcessorHTTP: Sendable {
    private let secure: CurlHTTPClient
    private let loopback: CurlHTTPClient
    let configuration: ProcessorConnectorConfiguration

    init(configuration: ProcessorConnectorConfiguration) {
        self.configuration = configuration
        var https = CurlHTTPClient.Configuration()
        https.httpsOnly = true
        https.requiresTLS12 = true
        https.connectTimeout = configuration.connectTimeout
        https.caBundlePath = configuration.caBundlePath
        https.maximumResponseBytes = 1 << 20
        secure = CurlHTTPClient(configuration: https)
        var plain = https
        plain.httpsOnly = false
        loopback = CurlHTTPClient(configuration: plain)
    }

    /// The base URL of connector `type`: the configured override, else `standard`.
    func baseURL(_ type: String, standard: String) -> String {
        let base = configuration.baseURLs[type] ?? standard
        return base.hasSuffix("/") ? String(base.dropLast()) : base
    }

    /// Sends one request; `secureBody` (card data) goes from its zeroing buffer.
    func call(
        _ method: CurlHTTPClient.Method, _ url: String, headers: [(String, String)], body: Data = Data(),
        secureBody: SecureBytes? = nil
    ) -> ProcessorCallResult {
        let isLoopbackHTTP =
            url.lowercased().hasPrefix("http://")
            && URL(string: url).flatMap(\.host).map(ProcessorConnectorConfiguration.isLoopback) == true
        let client = isLoopbackHTTP ? loopback : secure
        var allHeaders = headers
        allHeaders.append(("Accept", "application/json"))
        if method != .get { allHeaders.append(("Content-Type", "application/json")) }
        let request = CurlHTTPClient.Request(
            method: method, url: url, headers: allHeaders, body: body, timeout: configuration.timeout,
            secureBody: secureBody)
        do {
            let response = try client.perform(request)
            let json =
                response.bodyTruncated || response.body.isEmpty ? nil : try? JSONValue.parse(response.body)
            return .answered(status: response.status, headers: response.headers, body: response.body, json: json)
        } catch {
            switch error.code {
            case .connectFailed, .urlRefused, .invalidRequest, .curlFailure: return .notSent(error.code.rawValue)
            case .tlsFailed:
                // A TLS failure during the handshake leaves nothing sent; after it, it is like a broken connection.
                return .notSent(error.code.rawValue)
            case .timeout: return .timedOut(error.code.rawValue)
            default: return .broken(error.code.rawValue)
            }
        }
    }
}

/// A JSON request body written byte by byte, its card fields from zeroing buffers: the account number and
/// cryptogram never become a `String`, and the finished body is a ``SecureBytes``.
struct SecureJSONBody {
    /// A value of the body.
    indirect enum Value {
        case string(String)
        case secret(SecureBytes)
        case integer(Int64)
        case bool(Bool)
        case object([(String, Value)])
    }

    /// The bytes of `object`, in a zeroing buffer.
    static func bytes(_ object: [(String, Value)]) -> SecureBytes {
        var out: [UInt8] = []
        defer { SecureBytes.zero(&out) }
        write(.object(object), to: &out)
        return SecureBytes(out)
    }

    /// The bytes of `object`, when it holds no secret.
    static func data(_ object: [(String, Value)]) -> Data {
        var out: [UInt8] = []
        write(.object(object), to: &out)
        return Data(out)
    }

    private static func write(_ value: Value, to out: inout [UInt8]) {
        switch value {
        case .string(let text): JSONString.write(text, to: &out)
        case .integer(let number): out += Array(String(number).utf8)
        case .bool(let flag): out += Array((flag ? "true" : "false").utf8)
        case .secret:
            // Only as a member (below), so its name and value are written by the one secure writer.
            out += Array("null".utf8)
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (index, (name, member)) in members.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                if case .secret(let secret) = member {
                    SecureJSON.appendMember(name, secret, to: &out)
                } else {
                    JSONString.write(name, to: &out)
                    out.append(UInt8(ascii: ":"))
                    write(member, to: &out)
                }
            }
            out.append(UInt8(ascii: "}"))
        }
    }
}

/// The decrypted card's expiry in the two forms processors take.
struct CardExpiry {
    /// 1 to 12.
    var month: Int
    /// Four digits.
    var year: Int

    /// From the token's `applicationExpirationDate` (`YYMMDD`); nil when it is not one.
    init?(yymmdd: String) {
        let digits = Array(yymmdd.utf8)
        guard digits.count == 6, digits.allSatisfy({ (0x30...0x39).contains($0) }),
            let yy = Int(String(decoding: digits[0..<2], as: UTF8.self)),
            let mm = Int(String(decoding: digits[2..<4], as: UTF8.self)), (1...12).contains(mm)
        else { return nil }
        month = mm
        year = 2000 + yy
    }

    /// `"03"`.
    var twoDigitMonth: String { month < 10 ? "0\(month)" : String(month) }
}

/// An ECI as processors take it: two digits (`"05"`, `"07"`); nil when the token gives none.
func twoDigitECI(_ eci: String?) -> String? {
    guard let eci, !eci.isEmpty, eci.count <= 2, eci.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
    return eci.count == 1 ? "0" + eci : eci
}

extension JSONValue {
    /// The elements of an array, or nil.
    var array: [JSONValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    /// A boolean's value, or nil.
    var bool: Bool? {
        if case .bool(let flag) = self { return flag }
        return nil
    }

    /// The member `key` as text: a string as it is, a number by its text; nil otherwise.
    func text(_ key: String) -> String? {
        switch self[key] {
        case .string(let text)?: text
        case .number(let text)?: text
        default: nil
        }
    }
}

/// The first header `name` of `headers` (case-insensitive).
func header(_ name: String, in headers: [(String, String)]) -> String? {
    headers.first { $0.0.equalsIgnoringASCIICase(name) }?.1
}

extension ProcessorAccount {
    /// The field `name`, or `internal_error` when the stored settings lack it (they were checked when stored).
    func required(_ name: String) throws(GatewayError) -> String {
        guard let value = fields[name] ?? secretText(name) else {
            throw GatewayError(.internalError, "the \(type) settings have no \(name)")
        }
        return value
    }
}

/// The checks every connector makes on a settings body.
enum SettingsRules {
    /// `parameter_invalid` for a member not in `known`.
    static func onlyKnown(_ body: [String: String], _ known: Set<String>, type: String) throws(GatewayError) {
        if let extra = body.keys.sorted().first(where: { !known.contains($0) }) {
            throw GatewayError.invalid(extra, "not a setting of the \(type) processor")
        }
    }

    /// The member `name`, non-empty; `parameter_missing` when absent.
    static func required(_ body: [String: String], _ name: String) throws(GatewayError) -> String {
        guard let value = body[name] else {
            throw GatewayError(.parameterMissing, "\(name) is required", param: name)
        }
        guard !value.isEmpty else { throw GatewayError.invalid(name, "must not be empty") }
        return value
    }

    /// The member `name` when it is one of `values`.
    static func oneOf(_ body: [String: String], _ name: String, _ values: [String]) throws(GatewayError) -> String {
        let value = try required(body, name)
        guard values.contains(value) else {
            throw GatewayError.invalid(name, "one of \(values.joined(separator: ", "))")
        }
        return value
    }

    /// Whether every character of `text` is a printable ASCII one (keys and ids go into headers).
    static func isPrintableASCII(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy { (0x21...0x7e).contains($0.value) }
    }
}
