import ApplePayToken
import Foundation
import Gateway
import OrchardCrypto
import Testing

@Suite("Secrets at rest and in descriptions")
struct SecretHandlingTests {
    @Test(
        "a master key file open to other users is refused, in sandbox and production alike",
        arguments: [0o644, 0o640, 0o604, 0o660, 0o666])
    func masterKeyFilePermissions(mode: Int) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("orchard-mk-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("master.key")
        let key = try MasterKey.load(file: file, environment: .sandbox)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: file.path)
        for environment in [GatewayEnvironment.sandbox, .production] {
            let error = expectGatewayError(.masterKeyInvalid) {
                try MasterKey.load(file: file, environment: environment)
            }
            #expect(error?.reason.contains("chmod 600") == true)
            #expect(error?.description.contains(key.hexString()) == false)
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o400], ofItemAtPath: file.path)
        #expect(try MasterKey.load(file: file, environment: .production).keyID == key.keyID)
    }

    /// Every way Swift turns a value into text.
    static func renderings(_ value: Any) -> [String] {
        var dumped = ""
        dump(value, to: &dumped)
        return [
            String(describing: value), String(reflecting: value), dumped,
            "\(Mirror(reflecting: value).children.map { "\($0.label ?? ""): \($0.value)" })",
        ]
    }

    static let secrets = ["4111111111111111", "U0VDUkVUQ1JZUFRPR1JBTQ==", "E9CX", "Mei Secretname", "291130"]

    @Test("an opened token and an authorization request show neither PAN, cryptogram, ECI, expiry nor cardholder")
    func gatewayValuesHideCardData() {
        let opened = OpenedToken(
            transactionID: "abcd", transactionIdentifier: nil, network: "Visa", methodType: "credit",
            accountNumber: SecureBytes(Array("4111111111111111".utf8)), expirationDate: "291130",
            currencyNumericCode: "901", amount: 10_000,
            cryptogram: SecureBytes(Array("U0VDUkVUQ1JZUFRPR1JBTQ==".utf8)), eci: "E9CX",
            cardholderName: "Mei Secretname", paymentDataType: "3DSecure")
        let request = AuthorizationRequest(
            accountNumber: opened.accountNumber, expirationDate: opened.expirationDate, cryptogram: opened.cryptogram,
            eci: opened.eci, amount: 10_000, currency: "TWD", merchantReference: "pay_1", merchantID: "mch_1")
        for text in Self.renderings(opened) + Self.renderings(request) {
            for secret in Self.secrets { #expect(!text.contains(secret), "\(secret) in \(text)") }
        }
        #expect(opened.description.contains("411111******1111"))
        #expect(String(describing: request).contains("pay_1"))
    }

    @Test("decrypted payment data: dumps and the masked JSON carry no ECI, cryptogram or full PAN")
    func decryptedDataHidesECI() throws {
        let plaintext =
            #"{"applicationPrimaryAccountNumber":"4111111111111111","applicationExpirationDate":"291130","currencyCode":"901","transactionAmount":10000,"cardholderName":"Mei Secretname","paymentDataType":"3DSecure","paymentData":{"onlinePaymentCryptogram":"U0VDUkVUQ1JZUFRPR1JBTQ==","eciIndicator":"E9CX"}}"#
        let payment = try DecryptedPaymentData(json: Array(plaintext.utf8))
        for text in Self.renderings(payment) {
            for secret in ["4111111111111111", "U0VDUkVUQ1JZUFRPR1JBTQ==", "E9CX"] {
                #expect(!text.contains(secret), "\(secret) in \(text)")
            }
        }
        let masked = String(decoding: payment.json(revealing: false), as: UTF8.self)
        for secret in ["4111111111111111", "U0VDUkVUQ1JZUFRPR1JBTQ==", "E9CX"] { #expect(!masked.contains(secret)) }
        #expect(masked.contains("411111******1111"))
        #expect(String(decoding: payment.json(revealing: true), as: UTF8.self).contains("E9CX"))
        #expect(payment.eciIndicator == "E9CX")
    }

    @Test(
        "the database file holds no webhook secret, prime, credential, PAN or cryptogram in plaintext",
        arguments: StoreBackend.all)
    func noPlaintextInDatabase(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let endpoint = try h.gateway.merchants.setWebhookEndpoint(
            merchantID: h.merchant.id, url: "https://hooks.example.com/orchard")
        let prime = try h.gateway.payments.tokenize(merchant: h.merchant, token: h.token(), idempotencyKey: "tok-1")
        let unused = try h.gateway.payments.tokenize(merchant: h.merchant, token: h.token(), idempotencyKey: "tok-2")
        _ = try h.gateway.payments.payByPrime(
            merchant: h.merchant, PayByPrimeRequest(prime: prime.prime, amount: 10_000, currency: "TWD"),
            idempotencyKey: "pay-1")
        _ = try h.gateway.payments.reconcile(delay: 0)
        let needles =
            [
                endpoint.secret, prime.prime, unused.prime, Harness.pan, Harness.cryptogram, h.credentials.appKey,
                h.credentials.secretKey,
            ].map { Data($0.utf8) } + [Data(base64Encoded: Harness.cryptogram)!]
        var scanned = 0
        for (name, bytes) in try h.storedContents() {
            scanned += bytes.count
            for (index, needle) in h.storedForms(needles).enumerated() {
                #expect(bytes.range(of: needle) == nil, "secret #\(index) in \(name)")
            }
        }
        #expect(scanned > 0)
    }

    @Test(
        "a session's notify_url must be an http(s) URL with a host: nothing else is ever called",
        arguments: [
            "http:hooks.example.com", "https://", "https:///path", "ftp://hooks.example.com/x", "file:///etc/passwd",
            "hooks.example.com/x",
        ])
    func notifyURLNeedsHost(url: String) throws {
        let h = try Harness()
        let error = expectGatewayError(.parameterInvalid) {
            try h.gateway.sessions.create(
                merchant: h.merchant,
                CreateSessionRequest(
                    outTradeNo: "n-1", amount: 10_000, currency: "TWD", country: "TW", notifyURL: url))
        }
        #expect(error?.param == "notify_url")
        let accepted = try h.gateway.sessions.create(
            merchant: h.merchant,
            CreateSessionRequest(
                outTradeNo: "n-2", amount: 10_000, currency: "TWD", country: "TW",
                notifyURL: "HTTPS://hooks.example.com/orchard"))
        #expect(accepted.notifyURL == "HTTPS://hooks.example.com/orchard")
    }

    @Test(
        "a BIN table CSV over 8 MiB is refused before parsing, and the current table stays",
        arguments: StoreBackend.all)
    func binTableSize(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        #expect(
            try h.gateway.merchants.loadBINTable(merchantID: h.merchant.id, csv: "bin_prefix,issuer\n4111,Kept\n") == 1)
        let oversized =
            "bin_prefix,issuer\n4111," + String(repeating: "x", count: (8 << 20)) + "\n"
        #expect(oversized.utf8.count > (8 << 20))
        expectGatewayError(.binTableInvalid) {
            try h.gateway.merchants.loadBINTable(merchantID: h.merchant.id, csv: oversized)
        }
        let prime = try h.gateway.payments.tokenize(merchant: h.merchant, token: h.token())
        #expect(prime.cardInfo.issuer == "Kept")
    }

    @Test(
        "a refused card network is named only when it is a short name: the unsigned field is never echoed as it came",
        arguments: [("Discover", true), (String(repeating: "N", count: 200), false), ("<img src=x>", false)])
    func networkNotEchoed(network: String, named: Bool) throws {
        let h = try Harness()
        let (visaOnly, _) = try h.gateway.merchants.create(
            MerchantSpec(
                name: "Visa only", environment: .sandbox, merchantIdentifiers: h.merchant.merchantIdentifiers,
                allowedNetworks: ["Visa"]))
        let key = try #require(try h.gateway.merchants.activeProcessingKeys(merchantID: h.merchant.id).first)
        try h.gateway.keys.addProcessingKey(
            merchantID: visaOnly.id, privateKeyPEM: try key.privateKeyPEM(), certificatePEM: key.certificatePEM)
        let token = h.token(network: network)
        let refused = expectGatewayError(.networkNotAllowed) {
            try h.gateway.payments.tokenize(merchant: visaOnly, token: token)
        }
        #expect(refused?.reason.contains(network) == named)
        #expect((refused?.reason.utf8.count ?? 0) < 100)
        let session = try h.gateway.sessions.create(
            merchant: visaOnly,
            CreateSessionRequest(outTradeNo: "net-1", amount: 10_000, currency: "TWD", country: "TW"))
        let unpaid = expectGatewayError(.networkNotAllowed) {
            try h.gateway.sessions.pay(
                merchant: visaOnly, orderToken: session.orderToken, token: h.token(network: network))
        }
        #expect(unpaid?.reason.contains(network) == named)
        #expect(try h.gateway.payments.tokenize(merchant: visaOnly, token: h.token()).cardInfo.lastFour == "1111")
    }

    @Test(
        "a due webhook and merchant credentials describe, dump and mirror without their secrets",
        arguments: StoreBackend.all)
    func credentialsAndDueWebhooksHideSecrets(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let endpoint = try h.gateway.merchants.setWebhookEndpoint(
            merchantID: h.merchant.id, url: "https://user:pass@hooks.example.com/orchard?token=abc")
        let due = DueWebhook(
            event: WebhookEvent(
                id: "evt_1", merchantID: h.merchant.id, type: "payment.succeeded", payload: Data("{}".utf8),
                createdAt: h.clock.now()),
            url: "https://user:pass@hooks.example.com/orchard?token=abc", secrets: [endpoint.secret], attempts: 2)
        for text in Self.renderings(due) {
            for secret in [endpoint.secret, "pass", "token=abc"] {
                #expect(!text.contains(secret), "\(secret) in \(text)")
            }
        }
        #expect(String(describing: due).contains("evt_1"))
        let credentials = h.credentials
        for text in Self.renderings(credentials) {
            for secret in [credentials.appKey, credentials.secretKey] {
                #expect(!text.contains(secret), "\(secret) in \(text)")
            }
        }
        #expect(String(describing: credentials).contains(credentials.appID))
        #expect(String(describing: credentials).contains("sk_test_…" + credentials.secretKey.suffix(4)))
    }
}
