import CCurl
import Foundation
import GatewayHTTP
import OrchardHTTP

#if canImport(Glibc)
    import Glibc
#endif

/// A response as the test client saw it.
package struct ClientResponse {
    package var status: Int
    package var headers: HTTPHeaders
    package var body: Data

    package var text: String { String(decoding: body, as: UTF8.self) }

    /// The body as a JSON object.
    package var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }

    /// The `error` object of an error body.
    package var error: [String: Any] { json["error"] as? [String: Any] ?? [:] }

    /// The error code of an error body.
    package var errorCode: String? { error["code"] as? String }
}

package struct ClientError: Error, CustomStringConvertible {
    package var description: String
}

/// An HTTP client on libcurl. One handle keeps its connection alive between requests.
package final class CurlClient {
    private let handle: UnsafeMutableRawPointer
    /// Verify TLS peers against this CA file (tests with a self-signed certificate).
    package var caFile: String?
    /// Seconds a whole request may take before it fails.
    package var timeoutSeconds = 30

    package init() {
        handle = curl_easy_init()
    }

    deinit { curl_easy_cleanup(handle) }

    private final class Sink {
        var body = Data()
        var headerLines: [String] = []
    }

    /// The number of new connections the last request opened (0 when it reused one).
    package var lastNewConnections: Int {
        var count = 0
        _ = orchard_curl_getinfo_long(handle, CURLINFO_NUM_CONNECTS, &count)
        return count
    }

    package func request(
        _ method: String, _ url: String, headers: [String: String] = [:], body: Data? = nil
    ) throws -> ClientResponse {
        curl_easy_reset(handle)
        let sink = Sink()
        let sinkPointer = Unmanaged.passUnretained(sink).toOpaque()
        _ = orchard_curl_setopt_string(handle, CURLOPT_URL, url)
        _ = orchard_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
        _ = orchard_curl_setopt_long(handle, CURLOPT_TIMEOUT, timeoutSeconds)
        if let caFile {
            _ = orchard_curl_setopt_string(handle, CURLOPT_CAINFO, caFile)
        }
        if method == "HEAD" {
            _ = orchard_curl_setopt_long(handle, CURLOPT_NOBODY, 1)
        } else if method != "GET" {
            _ = orchard_curl_setopt_string(handle, CURLOPT_CUSTOMREQUEST, method)
        }
        var list: UnsafeMutablePointer<curl_slist>? = nil
        var headerLines = headers.map { "\($0.key): \($0.value)" }
        headerLines.append("Expect:")
        for line in headerLines { list = curl_slist_append(list, line) }
        defer { curl_slist_free_all(list) }
        _ = orchard_curl_setopt_slist(handle, CURLOPT_HTTPHEADER, list)
        let writeBody: orchard_curl_write_callback = { pointer, size, count, context in
            let sink = Unmanaged<Sink>.fromOpaque(context!).takeUnretainedValue()
            if let pointer {
                sink.body.append(UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self), count: size * count)
            }
            return size * count
        }
        let writeHeader: orchard_curl_write_callback = { pointer, size, count, context in
            let sink = Unmanaged<Sink>.fromOpaque(context!).takeUnretainedValue()
            if let pointer {
                let data = Data(bytes: pointer, count: size * count)
                sink.headerLines.append(String(decoding: data, as: UTF8.self))
            }
            return size * count
        }
        _ = orchard_curl_setopt_write_function(handle, CURLOPT_WRITEFUNCTION, writeBody)
        _ = orchard_curl_setopt_pointer(handle, CURLOPT_WRITEDATA, sinkPointer)
        _ = orchard_curl_setopt_write_function(handle, CURLOPT_HEADERFUNCTION, writeHeader)
        _ = orchard_curl_setopt_pointer(handle, CURLOPT_HEADERDATA, sinkPointer)
        let bodyCopy = body ?? Data()
        let code: CURLcode = bodyCopy.withUnsafeBytes { bytes in
            if body != nil {
                _ = orchard_curl_setopt_long(handle, CURLOPT_POSTFIELDSIZE, bytes.count)
                _ = orchard_curl_setopt_pointer(
                    handle, CURLOPT_POSTFIELDS,
                    UnsafeMutableRawPointer(mutating: bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!))
            }
            return curl_easy_perform(handle)
        }
        guard code == CURLE_OK else {
            throw ClientError(description: "curl: \(String(cString: curl_easy_strerror(code)))")
        }
        var status = 0
        _ = orchard_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        var parsed = HTTPHeaders()
        for line in sink.headerLines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = String(line[..<colon])
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespacesAndNewlines)
            parsed.add(name: name, value: value)
        }
        return ClientResponse(status: status, headers: parsed, body: sink.body)
    }
}

extension CurlClient {
    /// A request to `base + path` with a JSON body (`Content-Type: application/json` unless given) or a raw one.
    package func call(
        _ method: String, _ base: String, _ path: String, headers: [String: String], json: Any?, body: Data?
    ) throws -> ClientResponse {
        var headers = headers
        var payload = body
        if let json {
            payload = try JSONSerialization.data(withJSONObject: json)
            if headers["Content-Type"] == nil { headers["Content-Type"] = "application/json" }
        }
        return try request(method, base + path, headers: headers, body: payload)
    }
}

extension CurlClient {
    /// One load client's pair: tokenizes `token` (a minted token's JSON) at `tokenBase`, then pays its prime, 15.00
    /// TWD, at `payBase`, under an `Idempotency-Key` made from the prime when `keyed`. The payment's id and status
    /// when both answered 200; nil when either answered otherwise; throws when a connection failed.
    package static func tokenizeAndPay(
        _ token: Data, tokenBase: String, payBase: String, appHeaders: [String: String],
        serverHeaders: [String: String], keyed: Bool = false
    ) throws -> (id: String, status: String)? {
        let tokenized = try CurlClient().request(
            "POST", tokenBase + "/v1/tokens", headers: appHeaders,
            body: try JSONSerialization.data(withJSONObject: ["token": try JSONSerialization.jsonObject(with: token)]))
        guard tokenized.status == 200, let prime = tokenized.json["prime"] as? String else { return nil }
        var headers = serverHeaders
        if keyed { headers["Idempotency-Key"] = "pay-\(prime.suffix(24))" }
        let paid = try CurlClient().request(
            "POST", payBase + "/v1/payments", headers: headers,
            body: try JSONSerialization.data(withJSONObject: ["prime": prime, "amount": "15.00", "currency": "TWD"]))
        guard paid.status == 200, let id = paid.json["id"] as? String, let status = paid.json["status"] as? String
        else { return nil }
        return (id, status)
    }
}

/// A raw TCP connection to the server, for clients libcurl will not imitate (partial headers, lying lengths).
package final class RawConnection {
    private let socketFD: Int32

    package init(port: Int, receiveTimeoutSeconds: Int = 20) throws {
        socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socketFD >= 0 else { throw ClientError(description: "socket failed") }
        var timeout = timeval(tv_sec: receiveTimeoutSeconds, tv_usec: 0)
        setsockopt(socketFD, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(socketFD, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socketFD, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        // No close here: the object is fully initialized, so throwing runs deinit, which closes the socket. Closing
        // it twice would close whatever descriptor another thread opened under the same number meanwhile.
        guard result == 0 else { throw ClientError(description: "connect failed") }
    }

    deinit { close(socketFD) }

    /// Sends `bytes`; false if the peer has closed (EPIPE/ECONNRESET).
    @discardableResult
    package func send(_ bytes: Data) -> Bool {
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let sent = Glibc.send(socketFD, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                if sent <= 0 { return false }
                offset += sent
            }
            return true
        }
    }

    package func send(_ text: String) { send(Data(text.utf8)) }

    /// Reads until the peer closes the connection (true) or the receive timeout passes (false).
    package func readUntilClosed() -> (data: Data, closed: Bool) {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = recv(socketFD, &buffer, buffer.count, 0)
            if count == 0 { return (data, true) }
            if count < 0 {
                if errno == ECONNRESET { return (data, true) }
                return (data, false)
            }
            data.append(buffer, count: count)
        }
    }

    /// Waits up to `timeout` seconds for data or the peer's close, and reads what has arrived; `closed` once the
    /// peer has closed the connection.
    package func readAvailable(timeout: Double) -> (data: Data, closed: Bool) {
        var descriptor = pollfd(fd: socketFD, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, Int32(timeout * 1_000)) > 0 else { return (Data(), false) }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let count = recv(socketFD, &buffer, buffer.count, Int32(MSG_DONTWAIT))
        if count == 0 || (count < 0 && errno == ECONNRESET) { return (Data(), true) }
        return (count > 0 ? Data(buffer[..<count]) : Data(), false)
    }

    /// Reads until `data` holds a complete head and `Content-Length` bytes of body (or the peer closes).
    package func readResponse() -> String {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let text = String(decoding: data, as: UTF8.self)
            if let headEnd = text.range(of: "\r\n\r\n") {
                let head = text[..<headEnd.lowerBound].lowercased()
                let length =
                    head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
                    .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
                if text.utf8.count - text.utf8.distance(from: text.startIndex, to: headEnd.upperBound) >= length {
                    return text
                }
            }
            let count = recv(socketFD, &buffer, buffer.count, 0)
            if count <= 0 { return text }
            data.append(buffer, count: count)
        }
    }
}

/// A started server on a free loopback port, stopped when released.
package final class TestServer {
    package let server: HTTPServer
    package var base: String { "http://127.0.0.1:\(server.port)" }
    package var port: Int { server.port }

    package init(configuration: ServerConfiguration = ServerConfiguration(), responder: any HTTPResponder) throws {
        var configuration = configuration
        configuration.host = "127.0.0.1"
        configuration.port = 0
        if configuration.threadPoolSize > 4 { configuration.threadPoolSize = 4 }
        server = HTTPServer(configuration: configuration, responder: responder, messages: { _ in })
        try server.start()
    }

    deinit { server.stop(timeoutSeconds: 5) }
}

/// Collects log lines.
package final class LineCollector: @unchecked Sendable {
    package init() {}
    private let lock = NSLock()
    private var stored: [String] = []

    package func append(_ line: String) { lock.withLock { stored.append(line) } }
    package var lines: [String] { lock.withLock { stored } }
}
