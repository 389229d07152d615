import ApplePayModel
import ApplePaySandbox
import Foundation
import Gateway
import GatewayHTTP
import GatewayTestSupport
import OrchardHTTP
import OrchardTestSupport
import Testing

@Suite("Sandbox wallet route (POST /v1/sandbox/wallet/tokens)", .serialized)
struct SandboxWalletTests {
    @Test(
        "every test card mints a token that tokenizes with complete card_info and pays as the acquirer decides",
        arguments: SandboxTestCard.all)
    func everyCard(_ card: SandboxTestCard) throws {
        let h = try APIHarness()
        let minted = try h.client(
            "POST", "/v1/sandbox/wallet/tokens", json: ["amount": "123.00", "currency": "TWD", "card": card.id])
        #expect(minted.status == 200, "\(minted.text)")
        let token = try #require(minted.json["token"] as? [String: Any])
        let method = try #require(token["paymentMethod"] as? [String: Any])
        #expect(method["network"] as? String == card.network)
        #expect(method["type"] as? String == card.type)
        #expect(method["displayName"] as? String == "\(card.network) \(card.pan.suffix(4))")
        let paymentData = try #require(token["paymentData"] as? [String: Any])
        #expect(paymentData["version"] as? String == "EC_v1")
        #expect(!minted.text.contains(card.pan), "the token carries the PAN only encrypted")

        let tokenized = try h.client("POST", "/v1/tokens", json: ["token": token])
        #expect(tokenized.status == 200, "\(tokenized.text)")
        #expect(tokenized.json["total_amount"] as? String == "123.00")
        let info = try #require(tokenized.json["card_info"] as? [String: Any])
        #expect(info["bin_code"] as? String == String(card.pan.prefix(6)))
        #expect(info["last_four"] as? String == String(card.pan.suffix(4)))
        #expect(info["issuer"] as? String == card.issuer)
        #expect(info["issuer_zh_tw"] as? String == card.issuerZhTW)
        #expect(info["bank_id"] as? String == card.bankID)
        #expect(info["level"] as? String == card.level)
        #expect(info["country"] as? String == "TAIWAN")
        #expect(info["country_code"] as? String == "TW")
        #expect(info["type"] as? Int == CardInfo.typeNumber(network: card.network))
        #expect(info["funding"] as? Int == CardInfo.fundingNumber(methodType: card.type))

        let prime = try #require(tokenized.json["prime"] as? String)
        let paid = try h.merchantServer(
            "POST", "/v1/payments", json: ["prime": prime, "amount": "123.00", "currency": "TWD"])
        if card == .declined {
            #expect(paid.status == 402, "\(paid.text)")
            #expect(paid.error["code"] as? String == "card_declined")
        } else {
            #expect(paid.status == 200, "\(paid.text)")
            #expect(paid.json["status"] as? String == "captured")
        }
    }

    @Test("the card defaults to visa_credit; amounts follow the currency's exponent; bad input is refused")
    func validation() throws {
        let h = try APIHarness()
        let plain = try h.client("POST", "/v1/sandbox/wallet/tokens", json: ["amount": "100", "currency": "JPY"])
        #expect(plain.status == 200, "\(plain.text)")
        let method = (plain.json["token"] as? [String: Any])?["paymentMethod"] as? [String: Any]
        #expect(method?["displayName"] as? String == "Visa 0492")
        func code(_ body: [String: Any], headers: [String: String]? = nil) throws -> (Int, String?) {
            let response =
                try headers.map { try h.call("POST", "/v1/sandbox/wallet/tokens", headers: $0, json: body) }
                ?? h.client("POST", "/v1/sandbox/wallet/tokens", json: body)
            return (response.status, response.error["code"] as? String)
        }
        #expect(try code(["amount": "1.5", "currency": "JPY"]) == (400, "too_many_decimals"))
        #expect(try code(["amount": "1.001", "currency": "TWD"]) == (400, "too_many_decimals"))
        #expect(try code(["amount": 100, "currency": "TWD"]) == (400, "invalid_amount"))
        #expect(try code(["amount": "0", "currency": "TWD"]) == (400, "invalid_amount"))
        #expect(try code(["amount": "10.00", "currency": "XYZ"]) == (400, "unknown_currency"))
        #expect(try code(["currency": "TWD"]) == (400, "parameter_missing"))
        #expect(try code(["amount": "10.00", "currency": "TWD", "card": "diners"]) == (400, "parameter_invalid"))
        #expect(try code(["amount": "10.00", "currency": "TWD"], headers: h.serverHeaders) == (403, "forbidden"))
        #expect(try code(["amount": "10.00", "currency": "TWD"], headers: [:]).0 == 401)
        let replayedToken = try #require(plain.json["token"])
        #expect(try h.client("POST", "/v1/tokens", json: ["token": replayedToken]).status == 200)
        let again = try h.client("POST", "/v1/tokens", json: ["token": replayedToken])
        #expect(again.status == 409)

        let checker = try OpenAPIChecker.load()
        for exchange in h.exchanges.withLock({ $0 }) where exchange.path == "/v1/sandbox/wallet/tokens" {
            let schema = try #require(
                checker.responseSchema(method: exchange.method, path: exchange.path, status: exchange.response.status),
                "\(exchange.response.status) is not documented")
            let body = try JSONSerialization.jsonObject(with: exchange.response.body)
            #expect(checker.problems(body, schema).isEmpty, "\(checker.problems(body, schema))")
        }
    }

    @Test("PUT /v1/bin-table takes an optional issuer_zh_tw column, which card_info carries")
    func chineseIssuerName() throws {
        let h = try APIHarness()
        let csv =
            "bin_prefix,issuer,bank_id,funding,level,country,country_code,issuer_zh_tw\n"
            + "476112,Orchard Bank,812,credit,PLATINUM,TAIWAN,TW,果園銀行\n"
        let loaded = try h.call(
            "PUT", "/v1/bin-table", headers: h.serverHeaders.merging(["Content-Type": "text/csv"]) { $1 },
            body: Data(csv.utf8))
        #expect(loaded.status == 200, "\(loaded.text)")
        let minted = try h.client("POST", "/v1/sandbox/wallet/tokens", json: ["amount": "5.00", "currency": "TWD"])
        let tokenized = try h.client("POST", "/v1/tokens", json: ["token": try #require(minted.json["token"])])
        let info = try #require(tokenized.json["card_info"] as? [String: Any])
        #expect(info["issuer"] as? String == "Orchard Bank")
        #expect(info["issuer_zh_tw"] as? String == "果園銀行")
        let wrong = try h.call(
            "PUT", "/v1/bin-table", headers: h.serverHeaders.merging(["Content-Type": "text/csv"]) { $1 },
            body: Data("bin_prefix,issuer_zh_tw\n476112,x\n".utf8))
        #expect(wrong.status == 422)
    }

    @Test("a cross-origin page gets CORS on the wallet route when its origin is listed, 403 when not")
    func cors() throws {
        let h = try APIHarness()
        try h.runtime.gateway.merchants.setWebOrigins(merchantID: h.merchant.id, origins: ["https://shop.example"])
        let allowed = try h.client(
            "POST", "/v1/sandbox/wallet/tokens", json: ["amount": "1.00", "currency": "TWD"],
            headers: ["Origin": "https://shop.example"])
        #expect(allowed.status == 200)
        #expect(allowed.headers["Access-Control-Allow-Origin"] == "https://shop.example")
        let refused = try h.client(
            "POST", "/v1/sandbox/wallet/tokens", json: ["amount": "1.00", "currency": "TWD"],
            headers: ["Origin": "https://evil.example"])
        #expect(refused.status == 403)
    }
}
