import ApplePaySandbox
import Foundation
import Gateway
import GatewayAssembly
import GatewayTestSupport
import OrchardCrypto
import OrchardTestSupport
import Testing

/// The real development loop's first half: a token signed by Apple's own chain (a device with an Apple sandbox
/// tester account) taken by a sandbox merchant when `--apple-root` is given, decrypted with the merchant's own
/// processing key, and charged at a processor's stand-in. The tokens are ../shared/vectors' (read in place at their
/// frozen signing times, never copied); without them the tests are skipped.
@Suite("Apple's own tokens in the sandbox, beside the test PKI", .serialized)
struct SandboxAppleRootTests {
    /// `$ORCHARD_VECTORS_DIR`, else `<package root>/../shared/vectors` (as the token library's conformance tests).
    static let vectors = TestPaths.vectors ?? TestPaths.sharedVectors
    static let appleRoot = vectors.appendingPathComponent("apple-root-ca-g3.pem").path
    static let available = TestPaths.vectors != nil

    /// A vector of the manifest with what the test needs.
    struct Vector: CustomTestStringConvertible, Sendable {
        var id: String
        var directory: URL
        var token: String
        var privateKey: String
        var certificate: String?
        var merchantID: String?
        var verifyAt: Date
        var expected: String
        var testDescription: String { id }
    }

    /// The vectors that decrypt: with a processing certificate, or (Apple's sandbox token of payu-apple-pay) with
    /// the merchant identifier its certificate would carry.
    static let all: [Vector] = {
        guard let data = try? Data(contentsOf: vectors.appendingPathComponent("manifest.json")),
            let manifest = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let entries = manifest["vectors"] as? [[String: Any]]
        else { return [] }
        return entries.compactMap { entry in
            guard let id = entry["id"] as? String, let dir = entry["dir"] as? String,
                let token = entry["token"] as? String, let key = entry["private_key"] as? String,
                let expected = entry["expected"] as? String, let at = entry["verify_at"] as? String,
                let date = try? Date(at, strategy: .iso8601),
                entry["certificate"] is String || entry["merchant_id"] is String
            else { return nil }
            return Vector(
                id: id, directory: vectors.appendingPathComponent(dir), token: token, privateKey: key,
                certificate: entry["certificate"] as? String, merchantID: entry["merchant_id"] as? String,
                verifyAt: date, expected: expected)
        }
    }()

    /// The processing certificate for `vector`'s key: its own, or one the test CA issues for the key with the
    /// merchant identifier's hash (as Apple's would carry it).
    static func certificate(_ vector: Vector, authority: TestCertificateAuthority) throws -> String {
        if let certificate = vector.certificate {
            return try String(contentsOf: vector.directory.appendingPathComponent(certificate), encoding: .utf8)
        }
        let merchantID = try #require(vector.merchantID)
        let csr = try authority.csr(privateKeyPath: vector.directory.appendingPathComponent(vector.privateKey).path)
        return try authority.signProcessing(
            csrPEM: csr, merchantIdentifierHash: Hex.encode(SHA256.hash(Array(merchantID.utf8))).uppercased())
    }

    @Test(
        "with --apple-root a sandbox merchant takes Apple's token, decrypts it with its own key and charges it",
        .enabled(if: available, "../shared/vectors is absent: the Apple-signed tokens are not tested"),
        .enabled(if: TestCertificateAuthority.opensslPath != nil, "the openssl command is not installed"),
        arguments: all)
    func appleToken(_ vector: Vector) throws {
        let authority = try TestCertificateAuthority()
        defer { authority.remove() }
        let standIn = try ProcessorStandIn(api: .adyen)
        let h = try APIHarness(
            transport: .loopback,
            runtime: { options in
                options.appleRootPath = Self.appleRoot
                options.processors.baseURLs = ["adyen": standIn.baseURL]
            })
        h.clock.set(vector.verifyAt)
        try h.runtime.gateway.keys.addProcessingKey(
            merchantID: h.merchant.id,
            privateKeyPEM: try SecureBytes(contentsOf: vector.directory.appendingPathComponent(vector.privateKey)),
            certificatePEM: try Self.certificate(vector, authority: authority))
        let token = try JSONSerialization.jsonObject(
            with: try Data(contentsOf: vector.directory.appendingPathComponent(vector.token)))
        let tokenized = try h.client("POST", "/v1/tokens", json: ["token": token])
        #expect(tokenized.status == 200, "\(vector.id): \(tokenized.text)")
        let prime = try #require(tokenized.json["prime"] as? String)

        // Charged at the processor's stand-in: the DPAN Apple encrypted for this key is what reaches it.
        let expected = try #require(
            try JSONSerialization.jsonObject(
                with: try Data(contentsOf: vector.directory.appendingPathComponent(vector.expected)))
                as? [String: Any])
        let numeric = try #require(expected["currencyCode"] as? String)
        let currency = try #require(ISO4217Currencies().alphabeticCode(numeric: numeric))
        let minor = try #require(expected["transactionAmount"] as? Int)
        try standIn.configure([
            "api_key": "AQE-vector-key", "merchant_account": "OrchardShopECOM", "hmac_key": ProcessorHarness.hmacKey,
            "notification_url": h.base + "/v1/processors/adyen/notifications/\(h.merchant.id)",
        ])
        let set = try h.merchantServer(
            "PUT", "/v1/processor",
            json: [
                "type": "adyen", "environment": "test", "merchant_account": "OrchardShopECOM",
                "api_key": "AQE-vector-key",
                "hmac_key": ProcessorHarness.hmacKey,
            ])
        #expect(set.status == 200)
        let paid = try h.merchantServer(
            "POST", "/v1/payments",
            json: [
                "prime": prime, "amount": WireFormat.amount(Int64(minor), currency), "currency": currency,
                "capture": ["mode": "manual"],
            ])
        #expect(paid.status == 200 && paid.json["status"] as? String == "authorized", "\(vector.id): \(paid.text)")
        let body = try standIn.body(of: "/v71/payments")
        let number = (body["paymentMethod"] as? [String: Any])?["number"] as? String
        #expect(number == expected["applicationPrimaryAccountNumber"] as? String, "\(vector.id): the DPAN sent")
        let cryptogram = (expected["paymentData"] as? [String: Any])?["onlinePaymentCryptogram"] as? String
        #expect((body["mpiData"] as? [String: Any])?["cavv"] as? String == cryptogram)
    }

    @Test(
        "without --apple-root the sandbox refuses Apple's token; production trusts Apple's root only",
        .enabled(if: available, "../shared/vectors is absent: the Apple-signed tokens are not tested"))
    func trustStaysNarrow() throws {
        let vector = try #require(Self.all.first { $0.certificate != nil })
        let h = try APIHarness()
        h.clock.set(vector.verifyAt)
        try h.runtime.gateway.keys.addProcessingKey(
            merchantID: h.merchant.id,
            privateKeyPEM: try SecureBytes(contentsOf: vector.directory.appendingPathComponent(vector.privateKey)),
            certificatePEM: try String(
                contentsOf: vector.directory.appendingPathComponent(vector.certificate!), encoding: .utf8))
        let token = try JSONSerialization.jsonObject(
            with: try Data(contentsOf: vector.directory.appendingPathComponent(vector.token)))
        let refused = try h.client("POST", "/v1/tokens", json: ["token": token])
        #expect(refused.status == 422 && refused.errorCode == "certificate_untrusted", "\(refused.text)")

        // With Apple's root given, the test PKI's tokens still open for a sandbox merchant, never for a production one.
        let trusting = try APIHarness(runtime: { $0.appleRootPath = Self.appleRoot })
        #expect(try trusting.client("POST", "/v1/tokens", json: ["token": try trusting.token("10.00")]).status == 200)
        let cipher = EnvelopeCipher(
            masterKey: try MasterKey.load(
                forDatabase: trusting.directory.appendingPathComponent("gateway.db").path, environment: .sandbox))
        let pki = try #require(try SandboxPKIIssuer.storedPKI(store: trusting.runtime.store, cipher: cipher))
        let (live, credentials) = try trusting.runtime.gateway.merchants.create(
            MerchantSpec(name: "Live", environment: .production, merchantIdentifiers: ["merchant.com.live"]))
        let context = SealingContext.setting(MerchantRegistry.sandboxPKISetting)
        let serialized = try cipher.open(
            try #require(try trusting.runtime.store.read { try $0.setting(MerchantRegistry.sandboxPKISetting) }),
            context: context)
        let key = try SandboxPKIIssuer().issueProcessingKey(
            pki: serialized, merchantIdentifier: "merchant.com.live", id: "pk_live", now: trusting.clock.now())
        try trusting.runtime.gateway.keys.addProcessingKey(
            merchantID: live.id, privateKeyPEM: try key.privateKeyPEM(), certificatePEM: key.certificatePEM, id: key.id)
        var request = MintRequest(merchantCertificatePEM: key.certificatePEM, signingTime: trusting.clock.now())
        request.amount = 1_000
        request.currencyCode = "901"
        let minted = try JSONSerialization.jsonObject(with: try TokenMinter(pki: pki).mint(request))
        let production = try trusting.call(
            "POST", "/v1/tokens",
            headers: ["X-Orchard-App-Id": credentials.appID, "X-Orchard-App-Key": credentials.appKey],
            json: ["token": minted])
        #expect(production.status == 422 && production.errorCode == "certificate_untrusted", "\(production.text)")
        _ = live
    }
}
