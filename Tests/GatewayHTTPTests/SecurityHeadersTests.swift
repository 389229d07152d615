import Foundation
import GatewayHTTP
import GatewayTestSupport
import OrchardHTTP
import Testing

/// `X-Content-Type-Options` everywhere, HSTS over TLS, the demo page's CSP, and the console cookie's `Secure`.
@Suite("HTTP: security headers")
struct SecurityHeadersTests {
    @Test("every answer carries X-Content-Type-Options: nosniff, errors and files included")
    func noSniff() throws {
        let h = try APIHarness(transport: .loopback)
        for (path, status) in [
            ("/healthz", 200), ("/v1/payments", 401), ("/nope", 404), ("/sdk/v1/orchard.js", 200), ("/demo", 200),
            ("/console", 200),
        ] {
            let response = try h.call("GET", path)
            #expect(response.status == status, "\(path)")
            #expect(response.headers["X-Content-Type-Options"] == "nosniff", "\(path)")
        }
        #expect(try h.merchantServer("GET", "/v1/payments").headers["X-Content-Type-Options"] == "nosniff")
    }

    @Test("over TLS every answer carries Strict-Transport-Security; over plain HTTP none does")
    func strictTransportSecurity() throws {
        let (tls, client, router) = try TLSFixture.healthzServer()
        for path in ["/healthz", "/missing"] {
            let response = try client.request("GET", "https://127.0.0.1:\(tls.port)\(path)")
            #expect(response.headers["Strict-Transport-Security"] == "max-age=31536000", "\(path)")
        }
        let plain = try TestServer(responder: HTTPApplication(router: router))
        #expect(try CurlClient().request("GET", plain.base + "/healthz").headers["Strict-Transport-Security"] == nil)
    }

    @Test(
        "/demo has the CSP default-src 'self' without inline script or style, loads orchard.js by versioned path with its integrity, and its own files are served"
    )
    func demoContentSecurityPolicy() throws {
        let h = try APIHarness()
        let page = try h.call("GET", "/demo")
        let policy = try #require(page.headers["Content-Security-Policy"])
        // The only fetch directive is default-src 'self'; the others only forbid more.
        #expect(policy == "default-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
        let script = try h.call("GET", "/sdk/v1/orchard.js")
        let tag =
            "<script src=\"/sdk/v1/orchard.\(WebRoutesTests.digest(script.body)).js\" "
            + "integrity=\"\(WebRoutesTests.integrity(script.body))\" crossorigin=\"anonymous\"></script>"
        #expect(page.text.contains(tag))
        #expect(page.text.contains("data-app-id=\"\(h.credentials.appID)\""))
        #expect(page.text.contains("data-app-key=\"\(h.credentials.appKey)\""))
        // No inline script (every <script> has a src) and no <style> or style attribute.
        let scripts = page.text.components(separatedBy: "<script").dropFirst()
        #expect(!scripts.isEmpty && scripts.allSatisfy { $0.hasPrefix(" src=") })
        #expect(!page.text.contains("<style") && !page.text.contains(" style="))
        for (file, type) in [("demo.js", "text/javascript"), ("demo.css", "text/css")] {
            let response = try h.call("GET", "/demo/" + file)
            #expect(response.status == 200 && response.headers["Content-Type"]?.hasPrefix(type) == true, "\(file)")
            #expect(!response.text.contains("{{"), "\(file) has a placeholder left")
        }
        #expect(try h.call("GET", "/demo/console.js").status == 404)
    }

    /// The console cookie's attributes after a sign-in over plain loopback HTTP.
    static func signInCookie(_ configure: @escaping (inout ServerConfiguration) -> Void) throws -> String {
        let h = try APIHarness(transport: .loopback, configure: configure)
        let response = try h.call("POST", "/console/session", json: ["secret_key": h.credentials.secretKey])
        #expect(response.status == 200)
        return try #require(response.headers["Set-Cookie"])
    }

    @Test("--cookie-secure always makes the console cookie Secure over plain HTTP (behind a TLS proxy); auto does not")
    func cookieSecure() throws {
        #expect(try Self.signInCookie { $0.cookieSecure = .always }.hasSuffix("; Secure"))
        #expect(try !Self.signInCookie { _ in }.contains("Secure"))
        var secured = ServerConfiguration()
        secured.tlsCertificatePath = "/cert.pem"
        #expect(secured.usesSecureCookies)
    }
}
