import Foundation
import GatewayCurl
import OrchardTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The libcurl client's mutual TLS against `openssl s_server` on loopback, with a throwaway CA made by the
/// `openssl` command (``TestCertificateAuthority``) (the test is skipped when the command is absent).
@Suite("libcurl HTTP client: mutual TLS")
struct WebhooksMutualTLSTests {
    static let opensslPath = TestCertificateAuthority.opensslPath

    /// A free loopback port (bound and released; the server binds it right after).
    static func freePort() throws -> UInt16 {
        let receiver = try LoopbackHTTPReceiver()
        defer { receiver.stop() }
        return receiver.port
    }

    /// Whether something accepts TCP connections on 127.0.0.1:`port`.
    static func accepts(port: UInt16) -> Bool {
        #if canImport(Glibc)
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { return false }
        defer { _ = close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    @Test(
        "a client certificate gets through a server that requires one; no certificate or an untrusted server fails",
        .enabled(if: opensslPath != nil, "the openssl command is not installed"))
    func mutualTLS() throws {
        let openssl = try #require(Self.opensslPath)
        let pki = try TestCertificateAuthority()
        try pki.issue("client")
        defer { pki.remove() }
        let port = try Self.freePort()
        let server = Process()
        server.executableURL = URL(fileURLWithPath: openssl)
        server.arguments = [
            "s_server", "-accept", "127.0.0.1:\(port)", "-cert", pki.path("server.pem"), "-key", pki.path("server.key"),
            "-CAfile", pki.path("ca.pem"), "-Verify", "1", "-www", "-quiet",
        ]
        server.standardOutput = FileHandle.nullDevice
        server.standardError = FileHandle.nullDevice
        try server.run()
        defer {
            // SIGKILL: the child inherits the test runner's blocked signals, so SIGTERM would wait forever.
            _ = kill(server.processIdentifier, SIGKILL)
            server.waitUntilExit()
        }
        // Bounded wait for the server to listen (not a measurement).
        let deadline = Date().addingTimeInterval(30)
        while !Self.accepts(port: port), Date() < deadline { usleep(20_000) }
        try #require(Self.accepts(port: port), "openssl s_server did not start")

        let url = "https://127.0.0.1:\(port)/"
        var mutual = CurlHTTPClient.Configuration.mutualTLS(
            certificatePath: pki.path("client.pem"), keyPath: pki.path("client.key"))
        mutual.caBundlePath = pki.path("ca.pem")
        let response = try CurlHTTPClient(configuration: mutual).get(url: url, timeout: 20)
        #expect(response.status == 200)

        var anonymous = CurlHTTPClient.Configuration()
        anonymous.caBundlePath = pki.path("ca.pem")
        // Under TLS 1.3 the server's "certificate required" alert arrives after the handshake, on the first read.
        #expect(throws: CurlError(code: .tlsFailed)) {
            try CurlHTTPClient(configuration: anonymous).get(url: url, timeout: 20)
        }

        var untrusting = mutual
        untrusting.caBundlePath = nil
        #expect(throws: CurlError(code: .tlsFailed)) {
            try CurlHTTPClient(configuration: untrusting).get(url: url, timeout: 20)
        }
    }
}
