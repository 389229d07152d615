import CCurl
import Foundation
import Gateway
import OrchardBase
import OrchardCrypto

/// Why an outbound HTTP request failed, with a stable code.
///
/// Equality compares codes only. Reasons carry libcurl's message (never a header value or body).
public struct CurlError: CodedError, Sendable {
    /// A stable, documented error code.
    public struct Code: Hashable, Sendable, RawRepresentable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The URL's scheme is not allowed (only http and https, or https alone) or the URL is malformed.
        public static let urlRefused = Code(rawValue: "url_refused")
        /// A header name or value is not allowed (control characters, an empty or invalid name).
        public static let invalidRequest = Code(rawValue: "invalid_request")
        /// The host could not be resolved or refused the connection.
        public static let connectFailed = Code(rawValue: "connect_failed")
        /// TLS failed: the peer's certificate, the client certificate or key, the CA bundle, or a TLS alert from the peer.
        public static let tlsFailed = Code(rawValue: "tls_failed")
        /// The request did not complete within its timeout.
        public static let timeout = Code(rawValue: "timeout")
        /// Any other libcurl failure while sending or receiving.
        public static let transferFailed = Code(rawValue: "transfer_failed")
        /// libcurl could not be initialized or refused an option.
        public static let curlFailure = Code(rawValue: "curl_failure")
    }

    /// What went wrong, as a stable code.
    public var code: Code
    /// libcurl's explanation, when there is one.
    public var reason: String
    /// The libcurl result code, when libcurl reported the failure.
    public var curlCode: Int?

    public init(code: Code, reason: String = "", curlCode: Int? = nil) {
        self.code = code
        self.reason = reason
        self.curlCode = curlCode
    }
}

/// A small HTTP client on libcurl easy handles: GET and POST with headers, a body and a timeout, giving
/// the status, the response headers and a size-capped body. No redirects are followed, only http and
/// https are spoken, and mutual TLS is available (for Apple Pay merchant validation).
///
/// Safe to share between threads: each request takes an idle easy handle (kept for connection reuse)
/// or makes a new one.
// Unchecked: idle libcurl handles (not Sendable) sit in `idle`; a handle taken from it is used by one transfer on one thread.
public final class CurlHTTPClient: @unchecked Sendable {
    /// How the client connects.
    public struct Configuration: Sendable {
        /// A PEM client certificate (and chain) for mutual TLS, e.g. the Apple Pay merchant identity certificate.
        public var clientCertificatePath: String?
        /// The PEM private key of ``clientCertificatePath``.
        public var clientKeyPath: String?
        /// The passphrase of ``clientKeyPath``, when it is encrypted.
        public var clientKeyPassword: String?
        /// A PEM bundle of trusted CA certificates instead of the system's.
        public var caBundlePath: String?
        /// Refuse plain http (for calls to Apple); by default http and https are allowed.
        public var httpsOnly = false
        /// Refuse TLS older than 1.2 (for calls to Apple); by default libcurl's minimum applies.
        public var requiresTLS12 = false
        /// Close each connection after its request instead of keeping it for reuse (for requests with a
        /// ``Request/clientIdentity``, so the key does not outlive the request inside an idle TLS connection).
        public var forbidsConnectionReuse = false
        /// The longest the connection phase may take, in seconds (capped by each request's timeout).
        public var connectTimeout: TimeInterval = 10
        /// The most response body bytes kept; a longer body is cut there and the transfer ends
        /// (``CurlHTTPClient/Response/bodyTruncated``). Default 1 MiB.
        public var maximumResponseBytes = 1 << 20
        /// Whether the `http_proxy`/`https_proxy`/`no_proxy` environment variables apply (default no).
        public var usesEnvironmentProxy = false
        /// How many idle handles are kept for connection reuse (default 4).
        public var maximumIdleHandles = 4

        /// The defaults: system CAs, no client certificate, http and https.
        public init() {}

        /// Mutual TLS with a PEM certificate and key, https only.
        public static func mutualTLS(certificatePath: String, keyPath: String, keyPassword: String? = nil) -> Self {
            var configuration = Configuration()
            configuration.clientCertificatePath = certificatePath
            configuration.clientKeyPath = keyPath
            configuration.clientKeyPassword = keyPassword
            configuration.httpsOnly = true
            return configuration
        }
    }

    /// The request methods supported.
    public enum Method: String, Sendable, Hashable {
        case get = "GET"
        case post = "POST"
        /// PUT, with a body like POST.
        case put = "PUT"
    }

    /// One request.
    public struct Request: Sendable {
        public var method: Method
        public var url: String
        /// Header `(name, value)` pairs, sent in order.
        public var headers: [(String, String)]
        /// The body (POST and PUT only).
        public var body: Data
        /// The longest the whole request may take, in seconds.
        public var timeout: TimeInterval
        /// A client certificate and key for this request's mutual TLS, instead of the configuration's files:
        /// handed to libcurl from memory (`CURLOPT_SSLCERT_BLOB`, `CURLOPT_SSLKEY_BLOB`), never through a file.
        public var clientIdentity: MerchantIdentityMaterial?
        /// A body holding secrets (card data), sent instead of ``body`` from its zeroing buffer: libcurl reads it
        /// in place (`CURLOPT_POSTFIELDS`, no copy), so it is never copied into memory that is freed unzeroed.
        public var secureBody: SecureBytes?

        public init(
            method: Method, url: String, headers: [(String, String)] = [], body: Data = Data(), timeout: TimeInterval,
            clientIdentity: MerchantIdentityMaterial? = nil, secureBody: SecureBytes? = nil
        ) {
            self.method = method
            self.url = url
            self.headers = headers
            self.body = body
            self.timeout = timeout
            self.clientIdentity = clientIdentity
            self.secureBody = secureBody
        }
    }

    /// One response.
    public struct Response: Sendable {
        /// The HTTP status.
        public var status: Int
        /// The final response's header `(name, value)` pairs, in order.
        public var headers: [(String, String)]
        /// The body, at most ``Configuration/maximumResponseBytes``.
        public var body: Data
        /// Whether the body was longer than the cap and was cut.
        public var bodyTruncated: Bool

        public init(status: Int, headers: [(String, String)], body: Data, bodyTruncated: Bool) {
            self.status = status
            self.headers = headers
            self.body = body
            self.bodyTruncated = bodyTruncated
        }

        /// The first value of the header `name` (case-insensitive).
        public func header(_ name: String) -> String? {
            headers.first { $0.0.equalsIgnoringASCIICase(name) }?.1
        }
    }

    /// The configuration in force.
    public let configuration: Configuration
    private let idle = Locked<[CurlEasyHandle]>([])

    /// A client with `configuration`.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// POSTs `body` to `url`.
    public func post(
        url: String, headers: [(String, String)] = [], body: Data, timeout: TimeInterval
    )
        throws(CurlError) -> Response
    {
        try perform(Request(method: .post, url: url, headers: headers, body: body, timeout: timeout))
    }

    /// GETs `url`.
    public func get(url: String, headers: [(String, String)] = [], timeout: TimeInterval) throws(CurlError) -> Response
    {
        try perform(Request(method: .get, url: url, headers: headers, timeout: timeout))
    }

    /// Performs `request`.
    ///
    /// - Throws: ``CurlError`` with `url_refused`, `invalid_request`, `connect_failed`, `tls_failed`, `timeout`,
    ///   `transfer_failed` or `curl_failure`. An HTTP error status is a response, not an error.
    public func perform(_ request: Request) throws(CurlError) -> Response {
        try Self.validate(request, httpsOnly: configuration.httpsOnly)
        let handle = try takeHandle()
        let result: Result<Response, CurlError>
        do {
            result = .success(try handle.perform(request, configuration: configuration))
        } catch {
            result = .failure(error)
        }
        returnHandle(handle)
        return try result.get()
    }

    private func takeHandle() throws(CurlError) -> CurlEasyHandle {
        if let handle = idle.withLock({ $0.popLast() }) {
            handle.reset()
            return handle
        }
        return try CurlEasyHandle()
    }

    private func returnHandle(_ handle: CurlEasyHandle) {
        idle.withLock { idle in
            if idle.count < configuration.maximumIdleHandles { idle.append(handle) }
        }
    }

    private static func validate(_ request: Request, httpsOnly: Bool) throws(CurlError) {
        let lowered = request.url.lowercased()
        guard lowered.hasPrefix("https://") || (!httpsOnly && lowered.hasPrefix("http://")) else {
            throw CurlError(code: .urlRefused, reason: httpsOnly ? "only https URLs" : "only http and https URLs")
        }
        guard !request.url.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7f }) else {
            throw CurlError(code: .urlRefused, reason: "the URL contains whitespace or control characters")
        }
        let tokenCharacters = Set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8)
        for (name, value) in request.headers {
            guard !name.isEmpty, name.utf8.allSatisfy({ tokenCharacters.contains($0) }) else {
                throw CurlError(code: .invalidRequest, reason: "a header name is not an HTTP token")
            }
            guard !value.unicodeScalars.contains(where: { ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7f }) else {
                throw CurlError(code: .invalidRequest, reason: "the value of \(name) contains control characters")
            }
        }
    }
}

/// libcurl's process-wide initialization, done once before the first handle.
enum CurlGlobal {
    static let initialized: Bool = curl_global_init(Int(CURL_GLOBAL_ALL)) == CURLE_OK
}

/// An owned libcurl easy handle and its error buffer, freed in deinit. Used by one request at a time.
final class CurlEasyHandle {
    let pointer: UnsafeMutableRawPointer
    private let errorBuffer: UnsafeMutablePointer<CChar>

    init() throws(CurlError) {
        guard CurlGlobal.initialized else { throw CurlError(code: .curlFailure, reason: "curl_global_init failed") }
        guard let pointer = curl_easy_init() else {
            throw CurlError(code: .curlFailure, reason: "curl_easy_init failed")
        }
        self.pointer = pointer
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
    }

    deinit {
        curl_easy_cleanup(pointer)
        errorBuffer.deallocate()
    }

    /// Forgets the last request's options; keeps the connection and DNS caches.
    func reset() { curl_easy_reset(pointer) }

    func perform(
        _ request: CurlHTTPClient.Request, configuration: CurlHTTPClient.Configuration
    ) throws(CurlError)
        -> CurlHTTPClient.Response
    {
        errorBuffer[0] = 0
        let headerList = CurlHeaderList()
        for (name, value) in request.headers { headerList.append("\(name): \(value)") }
        // No "Expect: 100-continue" round trip before large bodies.
        if request.method != .get { headerList.append("Expect:") }
        let transfer = CurlTransfer(maximumBodyBytes: max(configuration.maximumResponseBytes, 0))
        let timeoutMilliseconds = Self.milliseconds(request.timeout)
        let connectMilliseconds = min(Self.milliseconds(configuration.connectTimeout), timeoutMilliseconds)
        let protocols = configuration.httpsOnly ? "https" : "http,https"
        // libcurl reads the identity's certificate and key from these buffers (not copied); the handle forgets
        // them before they are released, when this call returns, so no pointer to a key outlives the request.
        let certificate = CurlBlobBuffer()
        let key = CurlBlobBuffer()
        let secureBody = CurlBlobBuffer()
        defer {
            if request.clientIdentity != nil || request.secureBody != nil { reset() }
            certificate.free()
            key.free()
            secureBody.free()
        }

        return try withExtendedLifetime((headerList, transfer)) { () throws(CurlError) -> CurlHTTPClient.Response in
            let transferPointer = Unmanaged.passUnretained(transfer).toOpaque()
            try set(CURLOPT_ERRORBUFFER, pointer: UnsafeMutableRawPointer(errorBuffer))
            try set(CURLOPT_URL, string: request.url)
            try set(CURLOPT_PROTOCOLS_STR, string: protocols)
            try set(CURLOPT_REDIR_PROTOCOLS_STR, string: protocols)
            try set(CURLOPT_FOLLOWLOCATION, long: 0)
            // TLS peers are always verified (libcurl's default, stated so that no later change can drop it).
            try set(CURLOPT_SSL_VERIFYPEER, long: 1)
            try set(CURLOPT_SSL_VERIFYHOST, long: 2)
            try set(CURLOPT_NOSIGNAL, long: 1)
            try set(CURLOPT_TIMEOUT_MS, long: timeoutMilliseconds)
            try set(CURLOPT_CONNECTTIMEOUT_MS, long: connectMilliseconds)
            if !configuration.usesEnvironmentProxy { try set(CURLOPT_PROXY, string: "") }
            try check(orchard_curl_setopt_slist(pointer, CURLOPT_HTTPHEADER, headerList.pointer), "CURLOPT_HTTPHEADER")
            switch request.method {
            case .get:
                try set(CURLOPT_HTTPGET, long: 1)
            case .post where request.secureBody != nil, .put where request.secureBody != nil:
                // Read in place from the zeroing buffer, which outlives the transfer (freed when this call returns,
                // after the handle has forgotten it).
                try set(CURLOPT_POST, long: 1)
                if request.method == .put { try set(CURLOPT_CUSTOMREQUEST, string: "PUT") }
                try secureBody.fill(request.secureBody ?? SecureBytes([]))
                try set(CURLOPT_POSTFIELDSIZE, long: secureBody.count)
                try set(CURLOPT_POSTFIELDS, pointer: secureBody.base)
            case .post, .put:
                try set(CURLOPT_POST, long: 1)
                if request.method == .put { try set(CURLOPT_CUSTOMREQUEST, string: "PUT") }
                try set(CURLOPT_POSTFIELDSIZE, long: request.body.count)
                // COPYPOSTFIELDS copies `POSTFIELDSIZE` bytes, so the body's storage need not outlive this call.
                var bytes = [UInt8](request.body)
                if bytes.isEmpty { bytes = [0] }
                let copied = bytes.withUnsafeMutableBytes {
                    orchard_curl_setopt_pointer(pointer, CURLOPT_COPYPOSTFIELDS, $0.baseAddress)
                }
                try check(copied, "CURLOPT_COPYPOSTFIELDS")
            }
            if let path = configuration.clientCertificatePath {
                try set(CURLOPT_SSLCERT, string: path)
                try set(CURLOPT_SSLCERTTYPE, string: "PEM")
            }
            if let path = configuration.clientKeyPath {
                try set(CURLOPT_SSLKEY, string: path)
                try set(CURLOPT_SSLKEYTYPE, string: "PEM")
            }
            if let password = configuration.clientKeyPassword { try set(CURLOPT_KEYPASSWD, string: password) }
            if let identity = request.clientIdentity {
                try certificate.fill(SecureBytes(Array(identity.certificatePEM.utf8)))
                try key.fill(identity.privateKeyPEM)
                try check(
                    orchard_curl_setopt_blob_nocopy(pointer, CURLOPT_SSLCERT_BLOB, certificate.base, certificate.count),
                    "CURLOPT_SSLCERT_BLOB")
                try set(CURLOPT_SSLCERTTYPE, string: "PEM")
                try check(
                    orchard_curl_setopt_blob_nocopy(pointer, CURLOPT_SSLKEY_BLOB, key.base, key.count),
                    "CURLOPT_SSLKEY_BLOB")
                try set(CURLOPT_SSLKEYTYPE, string: "PEM")
            }
            if configuration.requiresTLS12 { try set(CURLOPT_SSLVERSION, long: Int(CURL_SSLVERSION_TLSv1_2)) }
            if configuration.forbidsConnectionReuse { try set(CURLOPT_FORBID_REUSE, long: 1) }
            if let path = configuration.caBundlePath { try set(CURLOPT_CAINFO, string: path) }
            try check(
                orchard_curl_setopt_write_function(pointer, CURLOPT_WRITEFUNCTION) { data, size, count, context in
                    guard let context else { return 0 }
                    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
                    return transfer.receiveBody(UnsafeRawBufferPointer(start: data, count: size * count))
                }, "CURLOPT_WRITEFUNCTION")
            try set(CURLOPT_WRITEDATA, pointer: transferPointer)
            try check(
                orchard_curl_setopt_write_function(pointer, CURLOPT_HEADERFUNCTION) { data, size, count, context in
                    guard let context else { return 0 }
                    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
                    return transfer.receiveHeader(UnsafeRawBufferPointer(start: data, count: size * count))
                }, "CURLOPT_HEADERFUNCTION")
            try set(CURLOPT_HEADERDATA, pointer: transferPointer)

            let code = curl_easy_perform(pointer)
            let cutShort = code == CURLE_WRITE_ERROR && transfer.bodyTruncated
            var status = 0
            _ = orchard_curl_getinfo_long(pointer, CURLINFO_RESPONSE_CODE, &status)
            let failure = code == CURLE_OK || cutShort ? nil : error(for: code)
            // Never keep the key's passphrase in the handle between requests.
            if configuration.clientKeyPassword != nil { reset() }
            if let failure { throw failure }
            return CurlHTTPClient.Response(
                status: status, headers: transfer.headers, body: transfer.body, bodyTruncated: transfer.bodyTruncated)
        }
    }

    private func set(_ option: CURLoption, long value: Int) throws(CurlError) {
        try check(orchard_curl_setopt_long(pointer, option, value), "option \(option.rawValue)")
    }

    private func set(_ option: CURLoption, string value: String) throws(CurlError) {
        // libcurl copies string options.
        try check(orchard_curl_setopt_string(pointer, option, value), "option \(option.rawValue)")
    }

    private func set(_ option: CURLoption, pointer value: UnsafeMutableRawPointer?) throws(CurlError) {
        try check(orchard_curl_setopt_pointer(pointer, option, value), "option \(option.rawValue)")
    }

    private func check(_ code: CURLcode, _ what: String) throws(CurlError) {
        guard code == CURLE_OK else {
            throw CurlError(
                code: .curlFailure, reason: "\(what): \(String(cString: curl_easy_strerror(code)))",
                curlCode: Int(code.rawValue))
        }
    }

    private func error(for code: CURLcode) -> CurlError {
        let detail = String(cString: errorBuffer)
        let reason = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
        let mapped: CurlError.Code
        switch code {
        case CURLE_OPERATION_TIMEDOUT: mapped = .timeout
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_PROXY: mapped = .connectFailed
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT: mapped = .urlRefused
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
            CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
            CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CLIENTCERT, CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED,
            CURLE_SSL_ENGINE_INITFAILED, CURLE_SSL_CRL_BADFILE, CURLE_SSL_SHUTDOWN_FAILED:
            mapped = .tlsFailed
        case CURLE_RECV_ERROR where detail.contains("SSL"), CURLE_SEND_ERROR where detail.contains("SSL"):
            // A TLS alert from the peer after the handshake (TLS 1.3 reports a refused client certificate so).
            mapped = .tlsFailed
        default: mapped = .transferFailed
        }
        return CurlError(code: mapped, reason: String(reason.prefix(200)), curlCode: Int(code.rawValue))
    }

    private static func milliseconds(_ seconds: TimeInterval) -> Int {
        guard seconds.isFinite, seconds > 0 else { return 1 }
        return Int(min((seconds * 1000).rounded(.up), Double(Int32.max)))
    }
}

/// Bytes handed to libcurl as a blob it does not copy: the caller's ``SecureBytes`` (whose allocation never moves
/// and is zeroed when it is freed), kept alive by this object until ``free()``.
final class CurlBlobBuffer {
    private var storage: SecureBytes?
    private(set) var base: UnsafeMutableRawPointer?
    private(set) var count = 0

    init() {}

    func fill(_ bytes: SecureBytes) throws(CurlError) {
        guard !bytes.isEmpty else {
            throw CurlError(code: .invalidRequest, reason: "an empty client certificate or key")
        }
        storage = bytes
        base = bytes.withUnsafeBytes { UnsafeMutableRawPointer(mutating: $0.baseAddress) }
        count = bytes.count
    }

    /// Lets go of the bytes (after the handle has forgotten them).
    func free() {
        storage = nil
        base = nil
        count = 0
    }
}

/// An owned curl_slist of header lines, freed in deinit.
final class CurlHeaderList {
    private(set) var pointer: UnsafeMutablePointer<curl_slist>?

    init() {}

    deinit { curl_slist_free_all(pointer) }

    func append(_ line: String) {
        if let appended = curl_slist_append(pointer, line) { pointer = appended }
    }
}

/// What one transfer received; libcurl's callbacks write into it on the performing thread.
final class CurlTransfer {
    /// The most header bytes kept (libcurl itself refuses far larger).
    static let maximumHeaderBytes = 64 * 1024

    let maximumBodyBytes: Int
    private(set) var body = Data()
    private(set) var bodyTruncated = false
    private(set) var headers: [(String, String)] = []
    private var headerBytes = 0

    init(maximumBodyBytes: Int) { self.maximumBodyBytes = maximumBodyBytes }

    /// Keeps body bytes up to the cap; returns the count consumed (less than offered ends the transfer).
    func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        let room = maximumBodyBytes - body.count
        if bytes.count <= room {
            body.append(contentsOf: bytes)
            return bytes.count
        }
        body.append(contentsOf: bytes.prefix(max(room, 0)))
        bodyTruncated = true
        return 0
    }

    /// Parses one header line; a status line starts a new response (after `100 Continue` or a 1xx).
    func receiveHeader(_ bytes: UnsafeRawBufferPointer) -> Int {
        let line = String(decoding: bytes, as: UTF8.self).trimmingHTTPWhitespace()
        if line.hasPrefix("HTTP/") {
            headers = []
            headerBytes = 0
        } else if let colon = line.firstIndex(of: ":"), headerBytes + bytes.count <= Self.maximumHeaderBytes {
            headerBytes += bytes.count
            headers.append(
                (
                    String(line[..<colon]),
                    line[line.index(after: colon)...].trimmingHTTPWhitespace()
                ))
        }
        return bytes.count
    }
}
