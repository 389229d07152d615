import Foundation
import GatewayHTTP
import GatewayTestSupport
import OrchardHTTP
import Testing

/// A self-signed P-256 certificate for 127.0.0.1 and its key: a test fixture only, never trusted anywhere else.
enum TLSFixture {
    static let certificate = """
        -----BEGIN CERTIFICATE-----
        MIIBrzCCAVWgAwIBAgIURj89r7Qdc0W+5ayeqOGNfYc6+gUwCgYIKoZIzj0EAwIw
        HjEcMBoGA1UEAwwTT3JjaGFyZCB0ZXN0IHNlcnZlcjAgFw0yNjExMzAwMzIzMTha
        GA8yMTI2MTEwNjAzMjMxOFowHjEcMBoGA1UEAwwTT3JjaGFyZCB0ZXN0IHNlcnZl
        cjBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABBj82QPE0UKvFXXHykY//tZNPqq4
        kawXu7FEQVQP2rqwYLaakELV7mkzPXGwlqj1FhF+cRxe+Nqb6cLDUoncdKijbzBt
        MB0GA1UdDgQWBBQFWM1VTerYIxVNdbCVOVQ+1TfwxDAfBgNVHSMEGDAWgBQFWM1V
        TerYIxVNdbCVOVQ+1TfwxDAPBgNVHRMBAf8EBTADAQH/MBoGA1UdEQQTMBGHBH8A
        AAGCCWxvY2FsaG9zdDAKBggqhkjOPQQDAgNIADBFAiEAuGI6tJLqIXijbPpEV27e
        7UC0Om0/h2NC9maYn0CP4KECIGpMoQX1xfyksQ7SGabtBRJRMRznbb+pIty2nEGr
        2SQU
        -----END CERTIFICATE-----
        """

    static let privateKey = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgky0fsJGe2nGtwwOR
        70DRT6awVXhnrUDpOMR0r+194t2hRANCAAQY/NkDxNFCrxV1x8pGP/7WTT6quJGs
        F7uxREFUD9q6sGC2mpBC1e5pMz1xsJao9RYRfnEcXvjam+nCw1KJ3HSo
        -----END PRIVATE KEY-----
        """

    /// Writes both to fresh temporary files and returns their paths.
    static func write() throws -> (certificate: String, key: String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "orchard-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let certificatePath = directory.appendingPathComponent("cert.pem")
        let keyPath = directory.appendingPathComponent("key.pem")
        try Data(certificate.utf8).write(to: certificatePath)
        try Data(privateKey.utf8).write(to: keyPath)
        return (certificatePath.path, keyPath.path)
    }

    /// A server on loopback serving HTTPS with the fixture, answering `GET /healthz` with `ok`, and a client
    /// that trusts it.
    static func healthzServer() throws -> (server: TestServer, client: CurlClient, router: Router) {
        let files = try write()
        var configuration = ServerConfiguration()
        configuration.tlsCertificatePath = files.certificate
        configuration.tlsKeyPath = files.key
        var router = Router()
        router.get("/healthz") { _, _ in .text("ok") }
        let server = try TestServer(configuration: configuration, responder: HTTPApplication(router: router))
        let client = CurlClient()
        client.caFile = files.certificate
        return (server, client, router)
    }
}

@Suite("HTTPS straight from libmicrohttpd")
struct TLSTests {
    @Test("serves HTTPS with a PEM certificate and key")
    func https() throws {
        let (server, client, _) = try TLSFixture.healthzServer()
        let response = try client.request("GET", "https://127.0.0.1:\(server.port)/healthz")
        #expect(response.status == 200)
        #expect(response.text == "ok")
        #expect(response.headers["Request-Id"] != nil)
        #expect(server.server.baseURL.hasPrefix("https://127.0.0.1:"))
        let plain = try? CurlClient().request("GET", "http://127.0.0.1:\(server.port)/healthz")
        #expect(plain?.status != 200)
    }

    @Test("missing TLS files are a clear error")
    func missingFiles() throws {
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.tlsCertificatePath = "/nonexistent/cert.pem"
        configuration.tlsKeyPath = "/nonexistent/key.pem"
        let server = HTTPServer(configuration: configuration, responder: HTTPApplication(router: Router()))
        #expect(throws: HTTPServerError(.tlsFileUnreadable, "")) { try server.start() }
    }
}
