import ApplePayModel
import Foundation
import Gateway
import GatewaySQLite
import Testing

@Suite("Prime flow")
struct PrimeFlowTests {
    @Test(
        "tokenize → prime with card info → pay by prime → captured, with events and transitions",
        arguments: StoreBackend.all)
    func endToEnd(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let prime = try h.gateway.payments.tokenize(merchant: h.merchant, token: h.token(amount: 12_300))
        #expect(prime.prime.hasPrefix("prm_"))
        #expect(prime.totalAmount == 12_300)
        #expect(prime.currency == "TWD")
        #expect(prime.cardInfo.binCode == "411111")
        #expect(prime.cardInfo.lastFour == "1111")
        #expect(prime.cardInfo.type == 1)
        #expect(prime.cardInfo.funding == 0)
        #expect(prime.expiresAt == h.clock.now().addingTimeInterval(90))
        #expect(prime.primeExpiryMillis == Int64(h.clock.now().timeIntervalSince1970 * 1000) + 90_000)
        let payment = try h.gateway.payments.payByPrime(
            merchant: h.merchant,
            PayByPrimeRequest(
                prime: prime.prime, amount: 12_300, currency: "TWD", orderNumber: "order-1", details: "Tea",
                cardholder: Cardholder(name: "Mei", email: "mei@example.com"), metadata: ["cart": "42"]))
        #expect(payment.status == .captured)
        #expect(payment.capturedAmount == 12_300)
        #expect(payment.authCode?.count == 6)
        #expect(payment.acquirer == "sandbox")
        #expect(payment.cardInfo.lastFour == "1111")
        #expect(try h.authorizations(payment.id) == 1)
        let transitions = try h.gateway.payments.transitions(merchant: h.merchant, paymentID: payment.id)
        #expect(transitions.map(\.to) == [.processing, .authorized, .captured])
        #expect(try h.eventTypes() == ["payment.succeeded", "payment.captured"])
        let stored = try h.gateway.payments.payment(merchant: h.merchant, id: payment.id)
        #expect(stored == payment)
    }

    @Test(
        "tokens share one validated Apple chain: the opener keeps its decryptor and its chain cache",
        arguments: StoreBackend.all)
    func chainValidatedOnce(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        for amount in [Int64(1_000), 2_000, 3_000] {
            _ = try h.gateway.payments.tokenize(merchant: h.merchant, token: h.token(amount: amount))
        }
        #expect(h.tokenOpener.cachedCertificateSets == 1)
    }

    @Test("a prime is used once", arguments: StoreBackend.all)
    func primeReuse(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let prime = try h.gateway.payments.tokenize(merchant: h.merchant, token: h.token())
        let request = PayByPrimeRequest(prime: prime.prime, amount: 10_000, currency: "TWD")
        _ = try h.gateway.payments.payByPrime(merchant: h.merchant, request)
        expectGatewayError(.primeAlreadyUsed) { try h.gateway.payments.payByPrime(merchant: h.merchant, request) }
    }

    @Test("an unknown prime, or another merchant's prime, is not found", arguments: StoreBackend.all)
    func primeNotFound(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        expectGatewayError(.primeNotFound) {
            try h.payByPrime("prm_0000", amount: 100, currency: "TWD")
        }
        let prime = try h.gateway.payments.tokenize(merchant: h.merchant, token: h.token())
        let (other, _) = try h.gateway.merchants.create(
            MerchantSpec(name: "Other", environment: .sandbox, merchantIdentifiers: ["merchant.other"]))
        expectGatewayError(.primeNotFound) {
            try h.gateway.payments.payByPrime(
                merchant: other, PayByPrimeRequest(prime: prime.prime, amount: 10_000, currency: "TWD"))
        }
    }

    @Test("an immediate prime expires after 90 seconds", arguments: StoreBackend.all)
    func immediateExpiry(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let prime = try h.gateway.payments.tokenize(merchant: h.merchant, token: h.token())
        h.clock.advance(by: 90)
        expectGatewayError(.primeExpired) {
            try h.payByPrime(prime.prime, amount: 10_000, currency: "TWD")
        }
        let fresh = try h.gateway.payments.tokenize(merchant: h.merchant, token: h.token())
        h.clock.advance(by: 89)
        #expect(try h.payByPrime(fresh.prime, amount: 10_000, currency: "TWD").status == .captured)
    }

    @Test(
        "a deferred prime lives 30 days and skips the amount check when the pay request confirms deferred",
        arguments: StoreBackend.all)
    func deferredPrime(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let taxi = h.paymentRequest(PaymentRequestExamples.deferredTaxiFare)
        let prime = try h.gateway.payments.tokenize(merchant: h.merchant, token: h.token(amount: 100), paymentRequest: taxi)
        #expect(prime.isDeferred)
        #expect(prime.expiresAt == h.clock.now().addingTimeInterval(30 * 86_400))
        h.clock.advance(by: 29 * 86_400)
        expectGatewayError(.currencyMismatch) {
            try h.payByPrime(prime.prime, amount: 45_600, currency: "USD", deferred: true)
        }
        let payment = try h.payByPrime(prime.prime, amount: 45_600, currency: "TWD", deferred: true)
        #expect(payment.amount == 45_600)
        let late = try h.gateway.payments.tokenize(merchant: h.merchant, token: h.token(amount: 100), paymentRequest: taxi)
        h.clock.advance(by: 30 * 86_400)
        expectGatewayError(.primeExpired) {
            try h.payByPrime(late.prime, amount: 100, currency: "TWD")
        }
    }

    @Test(
        "a deferred prime without the server's confirmation is checked strictly; not consumed when refused",
        arguments: StoreBackend.all)
    func deferredWithoutConfirmation(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let taxi = h.paymentRequest(PaymentRequestExamples.deferredTaxiFare)
        let prime = try h.gateway.payments.tokenize(merchant: h.merchant, token: h.token(amount: 100), paymentRequest: taxi)
        #expect(prime.isDeferred)
        let mismatch = expectGatewayError(.amountMismatch) {
            try h.payByPrime(prime.prime, amount: 45_600, currency: "TWD")
        }
        #expect(mismatch?.param == "amount")
        let payment = try h.payByPrime(prime.prime, amount: 100, currency: "TWD")
        #expect(payment.amount == 100)
    }

    @Test(
        "deferred: true on a prime that is not deferred is refused and does not consume it",
        arguments: StoreBackend.all)
    func deferredOnImmediatePrime(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let prime = try h.gateway.payments.tokenize(merchant: h.merchant, token: h.token(amount: 10_000))
        #expect(!prime.isDeferred)
        for amount: Int64 in [10_000, 45_600] {
            let refused = expectGatewayError(.primeNotDeferred) {
                try h.payByPrime(prime.prime, amount: amount, currency: "TWD", deferred: true)
            }
            #expect(refused?.param == "deferred")
        }
        #expect(try h.payByPrime(prime.prime, amount: 10_000, currency: "TWD").status == .captured)
    }

    @Test("an immediate payment request: 90 s prime, and the token must match its total", arguments: StoreBackend.all)
    func immediateRequest(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let cart = h.paymentRequest(PaymentRequestExamples.twdCartWithDebitDiscount)
        let prime = try h.gateway.payments.tokenize(merchant: h.merchant, token: h.token(amount: 40_050), paymentRequest: cart)
        #expect(!prime.isDeferred)
        #expect(prime.expiresAt == h.clock.now().addingTimeInterval(90))
        expectGatewayError(.amountMismatch) {
            try h.gateway.payments.tokenize(merchant: h.merchant, token: h.token(amount: 40_000), paymentRequest: cart)
        }
        expectGatewayError(.currencyMismatch) {
            try h.gateway.payments.tokenize(
                merchant: h.merchant, token: h.token(amount: 40_050, currency: "840"), paymentRequest: cart)
        }
        expectGatewayError(.paymentRequestInvalid) {
            try h.gateway.payments.tokenize(merchant: h.merchant, token: h.token(), paymentRequest: Data("[1]".utf8))
        }
    }

    @Test(
        "amount and currency must equal the token's; a mismatch does not consume the prime",
        arguments: StoreBackend.all)
    func mismatches(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let prime = try h.gateway.payments.tokenize(merchant: h.merchant, token: h.token(amount: 10_000))
        let mismatch = expectGatewayError(.amountMismatch) {
            try h.payByPrime(prime.prime, amount: 10_001, currency: "TWD")
        }
        #expect(mismatch?.param == "amount")
        expectGatewayError(.currencyMismatch) {
            try h.payByPrime(prime.prime, amount: 10_000, currency: "USD")
        }
        #expect(try h.payByPrime(prime.prime, amount: 10_000, currency: "TWD").status == .captured)
    }

    @Test("a token is tokenized once: the same transactionId is a replay", arguments: StoreBackend.all)
    func tokenReplay(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let token = h.token()
        _ = try h.gateway.payments.tokenize(merchant: h.merchant, token: token)
        expectGatewayError(.tokenReplayed) { try h.gateway.payments.tokenize(merchant: h.merchant, token: token) }
    }

    @Test("token library errors carry the library's code", arguments: StoreBackend.all)
    func tokenErrors(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let error = expectGatewayError(GatewayError.Code(rawValue: "signature_invalid")) {
            try h.gateway.payments.tokenize(merchant: h.merchant, token: h.token(tamper: .flipCiphertextAfterSigning))
        }
        #expect(error?.tokenErrorCode == "signature_invalid")
        h.clock.advance(by: 3600)
        let stale = h.token()
        h.clock.advance(by: 3600)
        expectGatewayError(GatewayError.Code(rawValue: "signing_time_out_of_window")) {
            try h.gateway.payments.tokenize(merchant: h.merchant, token: stale)
        }
    }

    @Test(
        "card type and funding numbers",
        arguments: [
            ("Visa", "credit", 1, 0), ("MasterCard", "debit", 2, 1), ("JCB", "prepaid", 3, 2),
            ("ChinaUnionPay", "credit", 4, 0), ("Amex", "store", 5, -1), ("Discover", "credit", -1, 0),
        ])
    func cardTypes(network: String, type: String, number: Int, funding: Int) throws {
        let h = try Harness()
        let prime = try h.gateway.payments.tokenize(merchant: h.merchant, token: h.token(network: network, type: type))
        #expect(prime.cardInfo.type == number)
        #expect(prime.cardInfo.funding == funding)
    }

    @Test(
        "issuer data from the merchant's BIN table (longest prefix) and co-brand affiliate codes",
        arguments: StoreBackend.all)
    func binTableAndCoBrand(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let empty = try h.gateway.payments.tokenize(merchant: h.merchant, token: h.token())
        #expect(empty.cardInfo.issuer == nil)
        #expect(empty.affiliateCodes.isEmpty)
        let csv = """
            bin_prefix,issuer,bank_id,funding,level,country,country_code
            4111,Short Bank,001,credit,CLASSIC,TAIWAN,TW
            41111111,"Sandbox Bank, Ltd.",999,debit,PLATINUM,TAIWAN,TW

            """
        #expect(try h.gateway.merchants.loadBINTable(merchantID: h.merchant.id, csv: csv) == 2)
        try h.gateway.merchants.setCoBrandTable(
            merchantID: h.merchant.id,
            ranges: [
                CoBrandRange(low: 41_110_000, high: 41_119_999, code: "TEA01"),
                CoBrandRange(low: 52_000_000, high: 52_999_999, code: "OTHER"),
            ])
        let prime = try h.gateway.payments.tokenize(merchant: h.merchant, token: h.token())
        #expect(prime.cardInfo.issuer == "Sandbox Bank, Ltd.")
        #expect(prime.cardInfo.bankID == "999")
        #expect(prime.cardInfo.level == "PLATINUM")
        #expect(prime.cardInfo.countryCode == "TW")
        #expect(prime.cardInfo.funding == 1)
        #expect(prime.affiliateCodes == ["TEA01"])
        expectGatewayError(.binTableInvalid) {
            try h.gateway.merchants.loadBINTable(merchantID: h.merchant.id, csv: "bin_prefix,issuer\n41x1,Bad\n")
        }
        expectGatewayError(.coBrandTableInvalid) {
            try h.gateway.merchants.setCoBrandTable(
                merchantID: h.merchant.id, ranges: [CoBrandRange(low: 1, high: 2, code: "TOO-LONG-AND-NOT-ALNUM")])
        }
    }

    @Test(
        "request validation",
        arguments: [
            (Int64(0), "TWD", String?.none, "amount"), (Int64(100), "XXX", String?.none, "currency"),
            (Int64(100), "TWD", String(repeating: "x", count: 101), "details"),
        ])
    func validation(amount: Int64, currency: String, details: String?, param: String) throws {
        let h = try Harness()
        let prime = try h.gateway.payments.tokenize(merchant: h.merchant, token: h.token(amount: 100))
        do {
            _ = try h.gateway.payments.payByPrime(
                merchant: h.merchant,
                PayByPrimeRequest(prime: prime.prime, amount: amount, currency: currency, details: details))
            Issue.record("accepted")
        } catch {
            #expect(error.param == param)
        }
    }
}
