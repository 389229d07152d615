import Foundation
import GatewayCurl
import Testing

/// The libcurl HTTP client against the loopback receiver.
@Suite("libcurl HTTP client")
struct WebhooksCurlClientTests {
    @Test("GET gives the status, the headers and the body")
    func get() throws {
        let receiver = try LoopbackHTTPReceiver(
            otherwise: .respond(status: 202, headers: [("X-Answer", "forty two")], body: Data("hello".utf8)))
        defer { receiver.stop() }
        let client = CurlHTTPClient()
        let response = try client.get(
            url: receiver.url("/status?x=1"), headers: [("Accept", "text/plain")], timeout: 20)
        #expect(response.status == 202)
        #expect(response.header("x-answer") == "forty two")
        #expect(response.body == Data("hello".utf8))
        #expect(!response.bodyTruncated)
        let request = try #require(receiver.requests.first)
        #expect(request.method == "GET")
        #expect(request.path == "/status?x=1")
        #expect(request.header("Accept") == "text/plain")
    }

    @Test(
        "POST sends the body byte for byte, large ones without an Expect round trip", arguments: [0, 1, 1025, 200_000])
    func post(size: Int) throws {
        let receiver = try LoopbackHTTPReceiver()
        defer { receiver.stop() }
        let body = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let response = try CurlHTTPClient().post(
            url: receiver.url(), headers: [("Content-Type", "application/octet-stream")], body: body, timeout: 20)
        #expect(response.status == 200)
        let request = try #require(receiver.requests.first)
        #expect(request.method == "POST")
        #expect(request.body == body)
        #expect(request.header("Expect") == nil)
        #expect(request.header("Content-Type") == "application/octet-stream")
    }

    @Test("a body longer than the cap is cut there and reported", arguments: [0, 10, 1000])
    func cappedBody(cap: Int) throws {
        let receiver = try LoopbackHTTPReceiver(
            otherwise: .respond(status: 200, body: Data(repeating: 0x61, count: 50_000)))
        defer { receiver.stop() }
        var configuration = CurlHTTPClient.Configuration()
        configuration.maximumResponseBytes = cap
        let response = try CurlHTTPClient(configuration: configuration).get(url: receiver.url(), timeout: 20)
        #expect(response.status == 200)
        #expect(response.bodyTruncated)
        #expect(response.body == Data(repeating: 0x61, count: cap))
    }

    @Test("handles are reused across requests")
    func reuse() throws {
        let receiver = try LoopbackHTTPReceiver([.status(500), .status(404)], otherwise: .status(204))
        defer { receiver.stop() }
        let client = CurlHTTPClient()
        let statuses = try (0..<3).map { _ in try client.get(url: receiver.url(), timeout: 20).status }
        #expect(statuses == [500, 404, 204])
    }

    @Test(
        "header names and values that could split the request are refused before sending",
        arguments: [("X-Bad", "a\r\nX-Injected: 1"), ("X-Bad", "a\nb"), ("Bad Name", "v"), ("", "v"), ("X:Y", "v")])
    func headerInjection(name: String, value: String) {
        #expect(throws: CurlError(code: .invalidRequest)) {
            try CurlHTTPClient().post(url: "http://127.0.0.1:9/", headers: [(name, value)], body: Data(), timeout: 5)
        }
    }

    @Test("https-only (mutual TLS) clients refuse http; every client refuses other schemes")
    func schemes() {
        let mutual = CurlHTTPClient(
            configuration: .mutualTLS(certificatePath: "/nonexistent.pem", keyPath: "/nonexistent.key"))
        #expect(mutual.configuration.httpsOnly)
        #expect(throws: CurlError(code: .urlRefused)) { try mutual.get(url: "http://127.0.0.1:9/", timeout: 5) }
        #expect(throws: CurlError(code: .urlRefused)) { try CurlHTTPClient().get(url: "ftp://127.0.0.1/", timeout: 5) }
        #expect(throws: CurlError(code: .urlRefused)) { try CurlHTTPClient().get(url: "HTTP ://x/", timeout: 5) }
    }

    @Test("a missing client certificate is a TLS failure, not a silent plain request")
    func missingClientCertificate() throws {
        let receiver = try LoopbackHTTPReceiver()
        defer { receiver.stop() }
        let client = CurlHTTPClient(
            configuration: .mutualTLS(certificatePath: "/nonexistent.pem", keyPath: "/nonexistent.key"))
        // The certificate cannot be loaded: the request fails before anything is sent, never as plain HTTP.
        #expect(throws: CurlError(code: .tlsFailed)) {
            try client.get(url: "https://127.0.0.1:\(receiver.port)/", timeout: 5)
        }
    }
}
