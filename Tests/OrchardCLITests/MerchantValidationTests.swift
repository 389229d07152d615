import Foundation
import Gateway
import GatewayHTTP
import GatewayTestSupport
import OrchardCLI
import OrchardCrypto
import OrchardHTTP
import OrchardTestSupport
import Testing

/// `orchard serve` started in process on loopback over a real SQLite file, with the settings given, and the
/// sandbox merchant allowing `https://shop.test`.
final class ServedGateway: @unchecked Sendable {
    static let origin = "https://shop.test"

    let directory: URL
    let running: ServeCommand.Running
    let credentials: MerchantCredentials
    let output = CapturedOutput()
    let client = CurlClient()

    init(_ arguments: [String] = []) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("orchard-web-\(UUID().uuidString)")
        let settings = try ServeCommand.registry().resolve(
            arguments: [
                "--database", "sqlite:\(directory.appendingPathComponent("gateway.db").path)", "--port", "0",
                "--web-origins", Self.origin, "--reconcile-interval", "0",
            ] + arguments, environment: [:])
        running = try ServeCommand.start(settings: settings, io: output.output)
        let merchant = try #require(running.runtime.sandboxMerchant)
        credentials = try running.runtime.gateway.merchants.credentials(merchantID: merchant.id)
    }

    deinit {
        running.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// A gateway whose merchant validation may call `apple` (trusting `caFile`), with `shop.test` registered.
    convenience init(calling apple: ApplePayStandIn, trusting caFile: String) throws {
        try self.init(["--apple-pay-extra-validation-host", apple.hostAndPort, "--apple-pay-ca-file", caFile])
        let domains = try server("PUT", "/v1/apple-pay/domains", json: ["domains": ["shop.test"]])
        try #require(domains.status == 200, "\(domains.text)")
    }

    var databasePath: String { directory.appendingPathComponent("gateway.db").path }

    func call(
        _ method: String, _ path: String, headers: [String: String] = [:], json: Any? = nil, body: Data? = nil
    ) throws -> ClientResponse {
        let response = try client.call(
            method, "http://127.0.0.1:\(running.server.port)", path, headers: headers, json: json, body: body)
        exchanges.withLock { $0.append((method, path, response)) }
        return response
    }

    /// Every request made through ``call(_:_:headers:json:body:)`` with its answer.
    let exchanges = ExchangeLog()

    /// Checks every answer so far against `openapi.yaml` (status documented, JSON body matching its schema).
    func checkAnswersAgainstSpecification() throws {
        let checker = try OpenAPIChecker.load()
        for exchange in exchanges.withLock({ $0 }) { checker.check(exchange) }
    }

    /// A call with the secret key.
    func server(
        _ method: String, _ path: String, json: Any? = nil, headers: [String: String] = [:]
    ) throws
        -> ClientResponse
    {
        try call(
            method, path, headers: ["Authorization": "Bearer \(credentials.secretKey)"].merging(headers) { $1 },
            json: json)
    }

    /// `POST /v1/apple-pay/merchant-sessions` as a page on `origin` would send it.
    func merchantSession(
        _ validationURL: String, domain: String = "shop.test", origin: String? = ServedGateway.origin,
        displayName: String? = nil
    ) throws -> ClientResponse {
        var headers = ["X-Orchard-App-Id": credentials.appID, "X-Orchard-App-Key": credentials.appKey]
        if let origin { headers["Origin"] = origin }
        var body: [String: Any] = ["validation_url": validationURL, "domain": domain]
        if let displayName { body["display_name"] = displayName }
        return try call("POST", "/v1/apple-pay/merchant-sessions", headers: headers, json: body)
    }

    /// Makes the identity CSR, has `authority` sign it (standing in for Apple) and uploads the certificate as DER.
    @discardableResult
    func provisionIdentity(signedBy authority: TestCertificateAuthority) throws -> ClientResponse {
        let csr = try server("POST", "/v1/merchant-identity/csr")
        try #require(csr.status == 200, "\(csr.text)")
        let pem = try authority.sign(csrPEM: try #require(csr.json["csr_pem"] as? String))
        return try call(
            "POST", "/v1/merchant-identity/certificate",
            headers: ["Authorization": "Bearer \(credentials.secretKey)", "Content-Type": "application/pkix-cert"],
            body: Data(try X509Certificate(pem: pem).der))
    }
}

@Suite(
    "Apple Pay on the Web: merchant validation over mutual TLS, identity, domains", .serialized,
    .enabled(
        if: TestCertificateAuthority.opensslPath != nil && ApplePayStandIn.pythonPath != nil,
        "needs the openssl command and python3 for the stand-in for Apple"))
struct MerchantValidationTests {
    @Test("the full round trip: 409 without an identity, then Apple's body byte for byte through mutual TLS")
    func roundTrip() throws {
        let authority = try TestCertificateAuthority()
        defer { authority.remove() }
        let apple = try ApplePayStandIn(authority: authority)
        let gateway = try ServedGateway(calling: apple, trusting: authority.path("ca.pem"))

        let missing = try gateway.merchantSession(apple.validationURL)
        #expect(missing.status == 409)
        #expect(missing.errorCode == "merchant_identity_missing")
        #expect(apple.answers().isEmpty)

        let uploaded = try gateway.provisionIdentity(signedBy: authority)
        #expect(uploaded.status == 200, "\(uploaded.text)")
        #expect(uploaded.json["purpose"] as? String == "identity")
        #expect(uploaded.json["active"] as? Bool == true)

        let session = try gateway.merchantSession(apple.validationURL, displayName: "Orchard Tea")
        #expect(session.status == 200, "\(session.text)")
        let answered = try #require(apple.answers().last)
        #expect(session.body == answered)
        #expect(session.headers["Cache-Control"] == "no-store")
        #expect(session.headers["Access-Control-Allow-Origin"] == ServedGateway.origin)
        #expect(session.json["merchantIdentifier"] as? String == "merchant.invalid.orchard.sandbox")
        #expect(session.json["domainName"] as? String == "shop.test")
        #expect(session.json["displayName"] as? String == "Orchard Tea")
        // The client certificate presented is the identity's (its CSR's subject CN is the merchant identifier).
        #expect(session.json["clientCertificateSubject"] as? String == "merchant.invalid.orchard.sandbox")
        // The display name defaults to the merchant's name.
        let named = try gateway.merchantSession(apple.validationURL)
        #expect(named.json["displayName"] as? String == "Orchard Sandbox Store")
        // A page on the allowed origin may call it cross-origin (the CORS layer's preflight).
        let preflight = try gateway.client.request(
            "OPTIONS", "http://127.0.0.1:\(gateway.running.server.port)/v1/apple-pay/merchant-sessions",
            headers: [
                "Origin": ServedGateway.origin, "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "content-type,x-orchard-app-id,x-orchard-app-key",
            ])
        #expect(preflight.status == 204)
        #expect(preflight.headers["Access-Control-Allow-Origin"] == ServedGateway.origin)
        try gateway.checkAnswersAgainstSpecification()

        // Nothing of the session reaches the log; the key is sealed in the database.
        let identifier = try #require(session.json["merchantSessionIdentifier"] as? String)
        let signature = try #require(session.json["signature"] as? String)
        let log = gateway.output.stdout + gateway.output.stderr
        #expect(log.contains("/v1/apple-pay/merchant-sessions"))
        #expect(!log.contains(identifier) && !log.contains(String(signature.prefix(40))))
        for suffix in ["", "-wal"] {
            let stored = FileManager.default.contents(atPath: gateway.databasePath + suffix) ?? Data()
            #expect(stored.range(of: Data("PRIVATE KEY".utf8)) == nil, "gateway.db\(suffix)")
        }
    }

    @Test("the page's merchant identifier, when it is one of the merchant's, is the one Apple validates; another is 403")
    func pagesMerchantIdentifier() throws {
        let authority = try TestCertificateAuthority()
        defer { authority.remove() }
        let apple = try ApplePayStandIn(authority: authority)
        let gateway = try ServedGateway([
            "--apple-pay-extra-validation-host", apple.hostAndPort, "--apple-pay-ca-file", authority.path("ca.pem"),
        ])
        // A merchant with two identifiers (a shop and its gift-card store), served from shop.test.
        let (merchant, credentials) = try gateway.running.runtime.gateway.merchants.create(
            MerchantSpec(
                name: "Orchard Two Shops", environment: .sandbox,
                merchantIdentifiers: ["merchant.test.orchard.shop", "merchant.test.orchard.giftcards"],
                webOrigins: [ServedGateway.origin]))
        let secret = ["Authorization": "Bearer \(credentials.secretKey)"]
        let domains = try gateway.call("PUT", "/v1/apple-pay/domains", headers: secret, json: ["domains": ["shop.test"]])
        try #require(domains.status == 200, "\(domains.text)")
        let csr = try gateway.call("POST", "/v1/merchant-identity/csr", headers: secret)
        let pem = try authority.sign(csrPEM: try #require(csr.json["csr_pem"] as? String))
        let uploaded = try gateway.call(
            "POST", "/v1/merchant-identity/certificate", headers: secret, json: ["certificate": pem])
        try #require(uploaded.status == 200, "\(uploaded.text)")
        let client = [
            "X-Orchard-App-Id": credentials.appID, "X-Orchard-App-Key": credentials.appKey, "Origin": ServedGateway.origin,
        ]
        func session(_ identifier: String?) throws -> ClientResponse {
            var body: [String: Any] = ["validation_url": apple.validationURL, "domain": "shop.test"]
            if let identifier { body["merchant_identifier"] = identifier }
            return try gateway.call("POST", "/v1/apple-pay/merchant-sessions", headers: client, json: body)
        }
        let second = try session("merchant.test.orchard.giftcards")
        #expect(second.status == 200, "\(second.text)")
        #expect(second.json["merchantIdentifier"] as? String == "merchant.test.orchard.giftcards")
        let first = try session(nil)
        #expect(first.json["merchantIdentifier"] as? String == "merchant.test.orchard.shop")
        #expect(apple.answers().count == 2)
        // Another merchant's identifier (the sandbox merchant's) is refused before Apple is called.
        let foreign = try session(gateway.running.runtime.sandboxMerchant?.merchantIdentifiers.first)
        #expect(foreign.status == 403)
        #expect(foreign.errorCode == "merchant_identifier_not_registered")
        #expect(foreign.error["param"] as? String == "merchant_identifier")
        let tooLong = try session("merchant." + String(repeating: "x", count: 250))
        #expect(tooLong.status == 400)
        #expect(apple.answers().count == 2)
        #expect(merchant.merchantIdentifiers.count == 2)
        try gateway.checkAnswersAgainstSpecification()
    }

    @Test("Apple's error status is 502 apple_pay_validation_failed with apple_status")
    func appleError() throws {
        let authority = try TestCertificateAuthority()
        defer { authority.remove() }
        let apple = try ApplePayStandIn(authority: authority, status: 400)
        let gateway = try ServedGateway(calling: apple, trusting: authority.path("ca.pem"))
        try gateway.provisionIdentity(signedBy: authority)
        let failed = try gateway.merchantSession(apple.validationURL)
        #expect(failed.status == 502)
        #expect(failed.errorCode == "apple_pay_validation_failed")
        #expect(failed.error["apple_status"] as? Int == 400)
        #expect(failed.error["type"] as? String == "api_error")
        try gateway.checkAnswersAgainstSpecification()
    }

    @Test("a server the CA file does not trust, or an identity its CA did not issue, fails the handshake: 502")
    func untrusted() throws {
        let authority = try TestCertificateAuthority()
        let stranger = try TestCertificateAuthority()
        defer {
            authority.remove()
            stranger.remove()
        }
        let apple = try ApplePayStandIn(authority: authority)
        // The identity is issued by a CA the stand-in does not accept.
        let gateway = try ServedGateway(calling: apple, trusting: authority.path("ca.pem"))
        try gateway.provisionIdentity(signedBy: stranger)
        let refused = try gateway.merchantSession(apple.validationURL)
        #expect(refused.status == 502)
        #expect(refused.errorCode == "apple_pay_validation_failed")
        #expect(refused.error["apple_status"] == nil)
        #expect(apple.answers().isEmpty)
        // The gateway does not trust the stand-in's server certificate.
        let doubting = try ServedGateway(calling: apple, trusting: stranger.path("ca.pem"))
        try doubting.provisionIdentity(signedBy: authority)
        #expect(try doubting.merchantSession(apple.validationURL).status == 502)
        #expect(apple.answers().isEmpty)
    }

    @Test("refusals in order: validation URL 400, domain 403, identity 409; Origin 403")
    func refusals() throws {
        let authority = try TestCertificateAuthority()
        defer { authority.remove() }
        let apple = try ApplePayStandIn(authority: authority)
        let gateway = try ServedGateway(calling: apple, trusting: authority.path("ca.pem"))
        let refusedURLs = [
            "https://apple-pay-gateway.apple.com.evil.test/paymentservices/startSession",
            "https://evil.test/apple-pay-gateway.apple.com/paymentservices/startSession",
            "http://apple-pay-gateway.apple.com/paymentservices/startSession",
            "https://apple-pay-gateway.apple.com/other/startSession",
            "https://apple-pay-gateway.apple.com/paymentservicesX/startSession",
            "https://apple-pay-gateway.apple.com/paymentservices/../admin",
            "https://apple-pay-gateway.apple.com/paymentservices/startSession?next=https://evil.test",
            "https://apple-pay-gateway.apple.com/paymentservices/start%2e%2e",
            "https://apple-pay-gateway.apple.com:8443/paymentservices/startSession",
            "https://user@apple-pay-gateway.apple.com/paymentservices/startSession",
            "https://apple-pay-gateway.apple.com@evil.test/paymentservices/startSession",
            "https://apple-pay-gateway-nc-pod6.apple.com/paymentservices/startSession",
            "https://cn-apple-pay-gateway-sh-pod4.apple.com/paymentservices/startSession",
            "https://127.0.0.1:\(apple.port + 1)/paymentservices/startSession",
            "https://localhost:\(apple.port)/paymentservices/startSession",
            "ftp://apple-pay-gateway.apple.com/paymentservices/startSession",
            "apple-pay-gateway.apple.com/paymentservices/startSession",
        ]
        for url in refusedURLs {
            // An unregistered domain too: the URL is checked first.
            let response = try gateway.merchantSession(url, domain: "unregistered.test")
            #expect(response.status == 400, "\(url)")
            #expect(response.errorCode == "validation_url_not_allowed", "\(url)")
            #expect(response.error["param"] as? String == "validation_url")
        }
        let unregistered = try gateway.merchantSession(apple.validationURL, domain: "other.test")
        #expect(unregistered.status == 403)
        #expect(unregistered.errorCode == "domain_not_registered")
        let noIdentity = try gateway.merchantSession(apple.validationURL)
        #expect(noIdentity.errorCode == "merchant_identity_missing")
        // An Apple host passes the URL check (and stops at the identity: nothing is sent).
        let apples = try gateway.merchantSession(
            "https://apple-pay-gateway-cert.apple.com/paymentservices/startSession")
        #expect(apples.errorCode == "merchant_identity_missing")

        let strangerOrigin = try gateway.merchantSession(apple.validationURL, origin: "https://evil.test")
        #expect(strangerOrigin.status == 403)
        #expect(strangerOrigin.errorCode == "origin_not_allowed")
        let noOrigin = try gateway.merchantSession(apple.validationURL, origin: nil)
        #expect(noOrigin.status == 403)
        #expect(noOrigin.errorCode == "origin_not_allowed")
        let longName = try gateway.merchantSession(apple.validationURL, displayName: String(repeating: "n", count: 65))
        #expect(longName.status == 400)
        // The name Apple shows on the sheet: no control character, line break or bidi override reaches Apple.
        for name in ["Tea\u{0}Shop", "Tea\nShop", "Tea\u{7F}", "\u{202E}pohS aeT", "Tea \u{2066}Shop\u{2069}"] {
            let refused = try gateway.merchantSession(apple.validationURL, displayName: name)
            #expect(refused.status == 400, "\(refused.text)")
            #expect(refused.errorCode == "parameter_invalid")
            #expect(refused.error["param"] as? String == "display_name")
        }
        let secretKey = try gateway.call(
            "POST", "/v1/apple-pay/merchant-sessions",
            headers: ["Authorization": "Bearer \(gateway.credentials.secretKey)", "Origin": ServedGateway.origin],
            json: ["validation_url": apple.validationURL, "domain": "shop.test"])
        #expect(secretKey.status == 403)
        #expect(secretKey.errorCode == "forbidden")
        #expect(apple.answers().isEmpty)
        try gateway.checkAnswersAgainstSpecification()
    }

    @Test("identity: an RSA 2048 CSR; a certificate for another key, junk, or before any CSR is refused; expiry shown")
    func identity() throws {
        let authority = try TestCertificateAuthority()
        defer { authority.remove() }
        let gateway = try ServedGateway()
        try authority.issue("client")
        let clientPEM = try String(contentsOfFile: authority.path("client.pem"), encoding: .utf8)
        let early = try gateway.server("POST", "/v1/merchant-identity/certificate", json: ["certificate": clientPEM])
        #expect(early.status == 409)
        #expect(early.errorCode == "merchant_identity_missing")

        let csr = try gateway.server("POST", "/v1/merchant-identity/csr", json: [:])
        #expect(csr.status == 200, "\(csr.text)")
        #expect(csr.json["type"] as? String == "rsa" && csr.json["purpose"] as? String == "identity")
        let csrPEM = try #require(csr.json["csr_pem"] as? String)
        let (key, subject) = try CertificateSigningRequest.publicKey(csrPEM: csrPEM)
        #expect(key.kind == .rsa && key.bits == 2048)
        #expect(subject.contains("merchant.invalid.orchard.sandbox"))

        let mismatched = try gateway.server(
            "POST", "/v1/merchant-identity/certificate", json: ["certificate": clientPEM])
        #expect(mismatched.status == 422)
        #expect(mismatched.errorCode == "certificate_key_mismatch")
        #expect(mismatched.error["param"] as? String == "certificate")
        let junk = try gateway.server("POST", "/v1/merchant-identity/certificate", json: ["certificate": "junk!"])
        #expect(junk.status == 422)
        #expect(junk.errorCode == "certificate_invalid")

        let issued = try X509Certificate(pem: try authority.sign(csrPEM: csrPEM, days: 30))
        // As JSON with the base64 of the DER, then as the raw PEM body: both attach.
        let json = try gateway.server(
            "POST", "/v1/merchant-identity/certificate", json: ["certificate": Data(issued.der).base64EncodedString()])
        #expect(json.status == 200, "\(json.text)")
        #expect(json.json["not_after"] as? String == WireFormat.time(issued.notAfter))
        #expect(json.json["id"] as? String == csr.json["id"] as? String)
        let raw = try gateway.call(
            "POST", "/v1/merchant-identity/certificate",
            headers: [
                "Authorization": "Bearer \(gateway.credentials.secretKey)", "Content-Type": "application/x-pem-file",
            ],
            body: Data(issued.pem.utf8))
        #expect(raw.status == 200, "\(raw.text)")
        let identity = try #require(
            try gateway.running.runtime.gateway.merchants.identity(merchantID: gateway.credentials.merchantID))
        #expect(identity.certificatePEM == issued.pem)
        let appKey = try gateway.call(
            "POST", "/v1/merchant-identity/csr",
            headers: ["X-Orchard-App-Id": gateway.credentials.appID, "X-Orchard-App-Key": gateway.credentials.appKey])
        #expect(appKey.status == 403)
        try gateway.checkAnswersAgainstSpecification()
    }

    @Test("domains and the association file: served only for a registered Host")
    func domainAssociation() throws {
        let gateway = try ServedGateway()
        let path = "/.well-known/apple-developer-merchantid-domain-association"
        let domains = try gateway.server(
            "PUT", "/v1/apple-pay/domains", json: ["domains": ["Shop.Test", "shop.test", "pay.shop.test."]])
        #expect(domains.status == 200)
        #expect(domains.json["domains"] as? [String] == ["shop.test", "pay.shop.test"])
        #expect(try gateway.call("GET", path, headers: ["Host": "shop.test"]).status == 404)

        let file = Data("7B2270737049\r\n6422:\"ABC\"}".utf8)
        let put = try gateway.call(
            "PUT", "/v1/apple-pay/domain-association",
            headers: ["Authorization": "Bearer \(gateway.credentials.secretKey)", "Content-Type": "text/plain"],
            body: file)
        #expect(put.status == 200, "\(put.text)")
        #expect(put.json["bytes"] as? Int == file.count)
        for host in ["shop.test", "SHOP.test:8443", "pay.shop.test"] {
            let served = try gateway.call("GET", path, headers: ["Host": host])
            #expect(served.status == 200, "\(host)")
            #expect(served.body == file, "\(host)")
        }
        for host in ["evil.test", "127.0.0.1", "shop.test.evil.test"] {
            let refused = try gateway.call("GET", path, headers: ["Host": host])
            #expect(refused.status == 404, "\(host)")
            #expect(refused.errorCode == "not_found")
        }

        for bad in [["https://shop.test"], ["shop.test/path"], ["shop test"], [""], ["-shop.test"]] {
            let refused = try gateway.server("PUT", "/v1/apple-pay/domains", json: ["domains": bad])
            #expect(refused.status == 400, "\(bad)")
            #expect(refused.errorCode == "parameter_invalid")
        }
        #expect(try gateway.server("PUT", "/v1/apple-pay/domains", json: ["domains": "shop.test"]).status == 400)
        let appKey = try gateway.call(
            "PUT", "/v1/apple-pay/domain-association",
            headers: [
                "X-Orchard-App-Id": gateway.credentials.appID, "X-Orchard-App-Key": gateway.credentials.appKey,
                "Content-Type": "text/plain",
            ], body: file)
        #expect(appKey.status == 403)
        let json = try gateway.server("PUT", "/v1/apple-pay/domain-association", json: ["file": "x"])
        #expect(json.status == 415)

        // Another merchant cannot take a registered domain.
        let registry = gateway.running.runtime.gateway.merchants
        let (other, _) = try registry.create(
            MerchantSpec(name: "Other", environment: .sandbox, merchantIdentifiers: ["merchant.test.other"]))
        #expect(throws: GatewayError(.domainAlreadyRegistered)) {
            try registry.setApplePayDomains(merchantID: other.id, domains: ["pay.shop.test"])
        }
        #expect(try registry.setApplePayDomains(merchantID: other.id, domains: ["other.test"]) == ["other.test"])
        // An empty list removes them all.
        #expect(
            try gateway.server("PUT", "/v1/apple-pay/domains", json: ["domains": []]).json["domains"] as? [String] == []
        )
        #expect(try gateway.call("GET", path, headers: ["Host": "shop.test"]).status == 404)
        try gateway.checkAnswersAgainstSpecification()
    }
}

@Suite("Merchant validation settings and the validation URL allow-list")
struct MerchantValidationSettingsTests {
    @Test("Apple's hosts pass; the URL sent is rebuilt from the checked parts")
    func appleHosts() {
        let hosts = MerchantValidationConfiguration.appleHosts
        #expect(hosts.count == 30)
        for host in [
            "apple-pay-gateway.apple.com", "cn-apple-pay-gateway.apple.com", "apple-pay-gateway-cert.apple.com",
            "cn-apple-pay-gateway-cert.apple.com", "apple-pay-gateway-nc-pod1.apple.com",
            "apple-pay-gateway-pr-pod5-dr.apple.com", "cn-apple-pay-gateway-sh-pod3.apple.com",
            "cn-apple-pay-gateway-tj-pod1.apple.com",
        ] {
            #expect(hosts.contains(host), "\(host)")
        }
        var configuration = MerchantValidationConfiguration()
        #expect(
            configuration.allowedURL("HTTPS://Apple-Pay-Gateway.apple.com:443/paymentservices/paymentSession")
                == "https://apple-pay-gateway.apple.com/paymentservices/paymentSession")
        #expect(configuration.allowedURL("https://127.0.0.1:9443/paymentservices/startSession") == nil)
        configuration.extraHosts = ["127.0.0.1:9443"]
        #expect(
            configuration.allowedURL("https://127.0.0.1:9443/paymentservices/startSession")
                == "https://127.0.0.1:9443/paymentservices/startSession")
        #expect(configuration.allowedURL("https://127.0.0.1/paymentservices/startSession") == nil)
        #expect(configuration.timeout == 10)
    }

    @Test("serve --help lists both settings; flags, ORCHARD_ variables and the config file set them")
    func settings() throws {
        let captured = CapturedOutput()
        #expect(CLI.run(["serve", "--help"], output: captured.output) == 0)
        for text in [
            "--apple-pay-extra-validation-host", "--apple-pay-ca-file", "ORCHARD_APPLE_PAY_EXTRA_VALIDATION_HOST",
            "ORCHARD_APPLE_PAY_CA_FILE",
        ] {
            #expect(captured.stdout.contains(text), "\(text)")
        }
        let registry = ServeCommand.registry()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("orchard-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(#"{"apple_pay_extra_validation_host": "127.0.0.1:9443", "apple-pay-ca-file": "/tmp/ca.pem"}"#.utf8)
            .write(to: file)
        let fromFile = try registry.resolve(arguments: ["--config", file.path], environment: [:])
        #expect(fromFile.string("apple-pay-extra-validation-host") == "127.0.0.1:9443")
        #expect(fromFile.string("apple-pay-ca-file") == "/tmp/ca.pem")
        let fromEnvironment = try registry.resolve(
            arguments: [], environment: ["ORCHARD_APPLE_PAY_EXTRA_VALIDATION_HOST": "127.0.0.1:1"])
        let (configuration, caFile) = try ServeCommand.merchantValidation(
            settings: fromEnvironment, environment: .sandbox)
        #expect(configuration.extraHosts == ["127.0.0.1:1"])
        #expect(caFile == nil)
        for bad in ["127.0.0.1", "127.0.0.1:0", ":443", "127.0.0.1:x", "a:1:2"] {
            let settings = try registry.resolve(
                arguments: ["--apple-pay-extra-validation-host", bad], environment: [:])
            #expect(throws: ConfigurationError(.invalidValue, "")) {
                try ServeCommand.merchantValidation(settings: settings, environment: .sandbox)
            }
        }
    }

    @Test("production refuses to start with either sandbox-only setting (sandbox_only_setting)")
    func productionRefuses() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "orchard-prod-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = "sqlite:\(directory.appendingPathComponent("gateway.db").path)"
        let production = [
            "--environment", "production", "--master-key", String(repeating: "ab", count: 32), "--database", database,
            "--port", "0",
        ]
        for (arguments, environment) in [
            (["--apple-pay-extra-validation-host", "127.0.0.1:9443"], [String: String]()),
            (["--apple-pay-ca-file", "/etc/hostname"], [:]),
            ([], ["ORCHARD_APPLE_PAY_CA_FILE": "/etc/hostname"]),
        ] {
            let settings = try ServeCommand.registry().resolve(
                arguments: production + arguments, environment: environment)
            let captured = CapturedOutput()
            #expect(throws: ConfigurationError(.sandboxOnly, "")) {
                _ = try ServeCommand.start(settings: settings, io: captured.output)
            }
            #expect(!FileManager.default.fileExists(atPath: directory.path))
        }
        let captured = CapturedOutput()
        let status = CLI.run(
            ["serve"] + production + ["--apple-pay-ca-file", "/etc/hostname"], output: captured.output)
        #expect(status == 2)
        #expect(captured.stderr.contains("sandbox_only_setting"))
        #expect(captured.stderr.contains("--apple-pay-ca-file"))
    }
}
