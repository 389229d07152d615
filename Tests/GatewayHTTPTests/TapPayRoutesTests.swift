import Foundation
import Gateway
import GatewayHTTP
import GatewayTestSupport
import Testing

@Suite("TapPay-compatible backend routes (/tpc/…) over the same domain as /v1", .serialized)
struct TapPayRoutesTests {
    /// A TapPay call: the secret key in `x-api-key` and in the body's `partner_key`.
    func tappay(
        _ h: APIHarness, _ path: String, _ body: [String: Any], key: String? = nil, partnerKey: String? = nil
    ) throws -> [String: Any] {
        var json = body
        json["partner_key"] = partnerKey ?? key ?? h.credentials.secretKey
        let response = try h.call(
            "POST", path, headers: ["x-api-key": key ?? h.credentials.secretKey], json: json)
        #expect(response.status == 200, "\(response.text)")
        return response.json
    }

    func payBody(_ h: APIHarness, prime: String, amount: Int, _ extra: [String: Any] = [:]) -> [String: Any] {
        var body: [String: Any] = [
            "prime": prime, "merchant_id": h.merchant.id, "amount": amount, "currency": "TWD", "details": "tea",
            "cardholder": ["phone_number": "+886923456789", "name": "Wang", "email": "wang@example.com"],
        ]
        body.merge(extra) { $1 }
        return body
    }

    /// Pays each whole-TWD amount through pay-by-prime, one second apart; their `rec_trade_id`s in order.
    func payEach(_ h: APIHarness, _ amounts: [Int]) throws -> [String] {
        try amounts.map { amount in
            h.clock.advance(by: 1)
            let paid = try tappay(
                h, "/tpc/payment/pay-by-prime", payBody(h, prime: try h.prime("\(amount).00"), amount: amount))
            return try #require(paid["rec_trade_id"] as? String)
        }
    }

    @Test("pay-by-prime: TapPay's whole-dollar TWD amount, card_info enums, rec_trade_id is the /v1 payment")
    func payByPrime() throws {
        let h = try APIHarness()
        let prime = try h.prime("100.00")
        let paid = try tappay(
            h, "/tpc/payment/pay-by-prime",
            payBody(h, prime: prime, amount: 100, ["order_number": "ORD-1", "bank_transaction_id": "BT-1"]))
        #expect(paid["status"] as? Int == 0)
        #expect(paid["msg"] as? String == "Success")
        #expect(paid["amount"] as? Int == 100)
        #expect(paid["currency"] as? String == "TWD")
        #expect(paid["order_number"] as? String == "ORD-1")
        #expect(paid["bank_transaction_id"] as? String == "BT-1")
        #expect(paid["orchard_code"] == nil)
        let card = try #require(paid["card_info"] as? [String: Any])
        #expect(card["bin_code"] as? String == "476112")
        #expect(card["last_four"] as? String == "0492")
        #expect(card["type"] as? Int == 1)
        #expect(card["funding"] as? Int == 0)
        #expect(paid["transaction_time_millis"] as? Int64 == 1_800_000_000_000)
        let times = try #require(paid["bank_transaction_time"] as? [String: Any])
        #expect(times["start_time_millis"] is String)
        let recTradeID = try #require(paid["rec_trade_id"] as? String)
        let read = try h.merchantServer("GET", "/v1/payments/\(recTradeID)")
        #expect(read.status == 200)
        #expect(read.json["amount"] as? String == "100.00")
        #expect(read.json["status"] as? String == "captured")
        #expect(read.json["bank_transaction_id"] as? String == "BT-1")
        let listed = try h.merchantServer("GET", "/v1/payments?limit=1")
        let first = try #require((listed.json["data"] as? [[String: Any]])?.first)
        #expect(first["bank_transaction_id"] as? String == "BT-1")
        // A payment made without one shows null.
        let own = try h.pay("20.00")
        #expect(own.json["bank_transaction_id"] is NSNull, "\(own.json)")
    }

    @Test("a wrong, missing or mismatched key answers as TapPay does, HTTP 200 with its status")
    func authentication() throws {
        let h = try APIHarness()
        let body = payBody(h, prime: "prm_x", amount: 1)
        let wrong = "sk_test_" + String(repeating: "a", count: 44)
        #expect(try tappay(h, "/tpc/payment/pay-by-prime", body, key: wrong)["status"] as? Int == 81)
        #expect(
            try tappay(h, "/tpc/payment/pay-by-prime", body, partnerKey: wrong)["status"] as? Int == 82)
        let missing = try h.call("POST", "/tpc/payment/pay-by-prime", json: body)
        #expect(missing.status == 200)
        #expect(missing.json["status"] as? Int == 80)
        var other = body
        other["merchant_id"] = "SomeoneElse_CTBC"
        let notMine = try tappay(h, "/tpc/payment/pay-by-prime", other)
        #expect(notMine["status"] as? Int == 61)
        #expect(notMine["orchard_code"] as? String == "merchant_not_found")
    }

    @Test("merchant_id may be the alias set with PUT /v1/compat/tappay")
    func alias() throws {
        let h = try APIHarness()
        let set = try h.merchantServer("PUT", "/v1/compat/tappay", json: ["merchant_alias": "GlobalTesting_CTBC"])
        #expect(set.status == 200, "\(set.text)")
        #expect(set.json["merchant_alias"] as? String == "GlobalTesting_CTBC")
        #expect(try h.merchantServer("GET", "/v1/compat/tappay").json["merchant_alias"] as? String == "GlobalTesting_CTBC")
        let bad = try h.merchantServer("PUT", "/v1/compat/tappay", json: ["merchant_alias": "has space"])
        #expect(bad.status == 400)
        let prime = try h.prime("5.00")
        var body = payBody(h, prime: prime, amount: 5)
        body["merchant_id"] = "GlobalTesting_CTBC"
        let paid = try tappay(h, "/tpc/payment/pay-by-prime", body)
        #expect(paid["status"] as? Int == 0, "\(paid)")
        #expect(paid["merchant_id"] as? String == "GlobalTesting_CTBC")
    }

    @Test("PUT /v1/compat/tappay sets TapPay's numeric app id, which client calls send as X-Orchard-App-Id")
    func numericAppID() throws {
        let h = try APIHarness()
        let numeric = ["X-Orchard-App-Id": "12345", "X-Orchard-App-Key": h.credentials.appKey]
        #expect(try h.call("GET", "/v1/sandbox/wallet/cards", headers: numeric).status == 401)
        let set = try h.merchantServer("PUT", "/v1/compat/tappay", json: ["app_id": 12345])
        #expect(set.status == 200, "\(set.text)")
        #expect(set.json["app_id"] as? Int == 12345)
        #expect(set.json["merchant_alias"] is NSNull)
        let read = try h.merchantServer("GET", "/v1/compat/tappay").json
        #expect(read["app_id"] as? Int == 12345)
        #expect(try h.call("GET", "/v1/sandbox/wallet/cards", headers: numeric).status == 200)
        var wrongKey = numeric
        wrongKey["X-Orchard-App-Key"] = "wrong"
        #expect(try h.call("GET", "/v1/sandbox/wallet/cards", headers: wrongKey).status == 401)
        // The alias is left as it is when only the app id changes, and the other way round.
        _ = try h.merchantServer("PUT", "/v1/compat/tappay", json: ["merchant_alias": "GlobalTesting_CTBC"])
        #expect(try h.merchantServer("GET", "/v1/compat/tappay").json["app_id"] as? Int == 12345)
        for (bad, code) in [
            (["app_id": "12345"] as [String: Any], "parameter_invalid"), (["app_id": 0], "parameter_invalid"),
            (["app_id": 2_147_483_648], "parameter_invalid"), (["app_id": 1.5], "parameter_invalid"),
            ([:], "parameter_missing"),
        ] {
            let refused = try h.merchantServer("PUT", "/v1/compat/tappay", json: bad)
            #expect(refused.status == 400, "\(bad): \(refused.text)")
            #expect(refused.errorCode == code, "\(bad): \(refused.text)")
        }
        let (other, otherCredentials) = try h.runtime.gateway.merchants.create(
            MerchantSpec(name: "Other", environment: .sandbox, merchantIdentifiers: ["merchant.other"]))
        let taken = try h.call(
            "PUT", "/v1/compat/tappay", headers: ["Authorization": "Bearer \(otherCredentials.secretKey)"],
            json: ["app_id": 12345])
        #expect(taken.status == 409, "\(taken.text)")
        #expect(taken.errorCode == "tappay_app_id_taken")
        #expect(try h.runtime.gateway.merchants.merchant(id: other.id).tappayAppID == nil)
        let removed = try h.merchantServer("PUT", "/v1/compat/tappay", json: ["app_id": NSNull()])
        #expect(removed.json["app_id"] is NSNull)
        #expect(removed.json["merchant_alias"] as? String == "GlobalTesting_CTBC")
        #expect(try h.call("GET", "/v1/sandbox/wallet/cards", headers: numeric).status == 401)
    }

    @Test("domain refusals keep their rules and answer TapPay's codes with orchard_code")
    func refusals() throws {
        let h = try APIHarness()
        let prime = try h.prime("100.00")
        let mismatch = try tappay(h, "/tpc/payment/pay-by-prime", payBody(h, prime: prime, amount: 99))
        #expect(mismatch["status"] as? Int == 909)
        #expect(mismatch["orchard_code"] as? String == "amount_mismatch")
        let paid = try tappay(h, "/tpc/payment/pay-by-prime", payBody(h, prime: prime, amount: 100))
        #expect(paid["status"] as? Int == 0)
        let reused = try tappay(h, "/tpc/payment/pay-by-prime", payBody(h, prime: prime, amount: 100))
        #expect(reused["status"] as? Int == 121)
        #expect(reused["orchard_code"] as? String == "prime_already_used")
        let unknown = try tappay(h, "/tpc/payment/pay-by-prime", payBody(h, prime: "prm_nope", amount: 100))
        #expect(unknown["orchard_code"] as? String == "prime_not_found")
        h.clock.advance(by: 1)
        let stale = try h.prime("1.00")
        h.clock.advance(by: 91)
        let expired = try tappay(h, "/tpc/payment/pay-by-prime", payBody(h, prime: stale, amount: 1))
        #expect(expired["status"] as? Int == 91)
        #expect(expired["orchard_code"] as? String == "prime_expired")
    }

    @Test("a declined card answers 10003 with the failed payment's rec_trade_id and the decline code")
    func declined() throws {
        let h = try APIHarness()
        let token = try h.token("10.00", pan: "4000000000000002")
        let tokenized = try h.client("POST", "/v1/tokens", json: ["token": token])
        let prime = try #require(tokenized.json["prime"] as? String)
        let declined = try tappay(h, "/tpc/payment/pay-by-prime", payBody(h, prime: prime, amount: 10))
        #expect(declined["status"] as? Int == 10003)
        #expect(declined["orchard_code"] as? String == "card_declined")
        #expect(declined["bank_result_code"] as? String == "do_not_honor")
        let id = try #require(declined["rec_trade_id"] as? String)
        #expect(try h.merchantServer("GET", "/v1/payments/\(id)").json["status"] as? String == "failed")
    }

    @Test("a repeated bank_transaction_id is refused with 6001 and never charges twice, even with a fresh prime")
    func duplicateBankTransactionID() throws {
        let h = try APIHarness()
        let body = payBody(h, prime: try h.prime("20.00"), amount: 20, ["bank_transaction_id": "BT-7"])
        #expect(try tappay(h, "/tpc/payment/pay-by-prime", body)["status"] as? Int == 0)
        let retry = try tappay(h, "/tpc/payment/pay-by-prime", body)
        #expect(retry["status"] as? Int == 6001)
        #expect(retry["orchard_code"] as? String == "duplicate_bank_transaction_id")
        var fresh = body
        fresh["prime"] = try h.prime("20.00")
        #expect(try tappay(h, "/tpc/payment/pay-by-prime", fresh)["status"] as? Int == 6001)
        let records = try tappay(h, "/tpc/transaction/query", ["filters": ["bank_transaction_id": "BT-7"]])
        #expect(records["number_of_transactions"] as? Int == 1)
        let listed = try h.merchantServer("GET", "/v1/payments")
        #expect((listed.json["data"] as? [Any])?.count == 1)
    }

    @Test("refund, trade history, record paging with status 2 at the end, refund cancel not offered")
    func refundsAndRecords() throws {
        let h = try APIHarness()
        let ids = try payEach(h, [30, 10, 20])
        let refund = try tappay(h, "/tpc/transaction/refund", ["rec_trade_id": ids[0], "amount": 5])
        #expect(refund["status"] as? Int == 0, "\(refund)")
        #expect(refund["refund_amount"] as? Int == 5)
        #expect(refund["is_captured"] as? Bool == true)
        let tooMuch = try tappay(h, "/tpc/transaction/refund", ["rec_trade_id": ids[0], "amount": 500])
        #expect(tooMuch["status"] as? Int == 10051)
        #expect(tooMuch["orchard_code"] as? String == "refund_exceeds_capture")
        let history = try tappay(h, "/tpc/transaction/trade-history", ["rec_trade_id": ids[0]])
        let actions = try #require(history["trade_history"] as? [[String: Any]]).map { $0["action"] as? Int }
        #expect(actions == [0, 1, 3])
        let cancel = try tappay(h, "/tpc/transaction/refund/cancel", ["rec_trade_id": ids[0]])
        #expect(cancel["status"] as? Int == 68)
        let unknown = try tappay(h, "/tpc/transaction/refund", ["rec_trade_id": "pay_nope"])
        #expect(unknown["status"] as? Int == 4002)

        let first = try tappay(
            h, "/tpc/transaction/query",
            ["records_per_page": 2, "page": 0, "order_by": ["attribute": "amount", "is_descending": false]])
        #expect(first["status"] as? Int == 0)
        #expect(first["total_page_count"] as? Int == 2)
        #expect(first["number_of_transactions"] as? Int == 3)
        let records = try #require(first["trade_records"] as? [[String: Any]])
        #expect(records.map { $0["original_amount"] as? Int } == [10, 20])
        let second = try tappay(
            h, "/tpc/transaction/query",
            ["records_per_page": 2, "page": 1, "order_by": ["attribute": "amount", "is_descending": false]])
        let partial = try #require((second["trade_records"] as? [[String: Any]])?.first)
        #expect(partial["record_status"] as? Int == 2)
        #expect(partial["amount"] as? Int == 25)
        #expect(partial["refunded_amount"] as? Int == 5)
        let end = try tappay(h, "/tpc/transaction/query", ["records_per_page": 2, "page": 2])
        #expect(end["status"] as? Int == 2)
        #expect((end["trade_records"] as? [Any])?.isEmpty == true)
        let filtered = try tappay(
            h, "/tpc/transaction/query", ["filters": ["record_status": 1, "amount": ["lower_limit": 15]]])
        #expect(filtered["number_of_transactions"] as? Int == 1)
        let unsupported = try tappay(h, "/tpc/transaction/query", ["filters": ["cardholder": ["name": "x"]]])
        #expect(unsupported["status"] as? Int == 5)
    }

    @Test("cap today captures a delayed payment now; cap cancel leaves it authorized; refund of an auth voids it")
    func captureControls() throws {
        let h = try APIHarness()
        let delayed = try tappay(
            h, "/tpc/payment/pay-by-prime",
            payBody(h, prime: try h.prime("40.00"), amount: 40, ["delay_capture_in_days": 3]))
        let id = try #require(delayed["rec_trade_id"] as? String)
        #expect(try h.merchantServer("GET", "/v1/payments/\(id)").json["status"] as? String == "authorized")
        let cancelled = try tappay(h, "/tpc/transaction/cap/cancel", ["rec_trade_id": id])
        #expect(cancelled["status"] as? Int == 0, "\(cancelled)")
        let read = try h.merchantServer("GET", "/v1/payments/\(id)")
        #expect(read.json["status"] as? String == "authorized")
        #expect(read.json["capture_at"] is NSNull)
        #expect(try tappay(h, "/tpc/transaction/cap/cancel", ["rec_trade_id": id])["status"] as? Int == 935)
        let capped = try tappay(h, "/tpc/transaction/cap", ["rec_trade_id": id])
        #expect(capped["status"] as? Int == 0, "\(capped)")
        #expect(capped["cap_millis"] is Int64)
        #expect(try h.merchantServer("GET", "/v1/payments/\(id)").json["status"] as? String == "captured")
        #expect(try tappay(h, "/tpc/transaction/cap/cancel", ["rec_trade_id": id])["status"] as? Int == 934)

        let held = try tappay(
            h, "/tpc/payment/pay-by-prime",
            payBody(h, prime: try h.prime("8.00"), amount: 8, ["delay_capture_in_days": -1]))
        let heldID = try #require(held["rec_trade_id"] as? String)
        let partial = try tappay(h, "/tpc/transaction/refund", ["rec_trade_id": heldID, "amount": 3])
        #expect(partial["status"] as? Int == 10024)
        let full = try tappay(h, "/tpc/transaction/refund", ["rec_trade_id": heldID])
        #expect(full["status"] as? Int == 0, "\(full)")
        #expect(try h.merchantServer("GET", "/v1/payments/\(heldID)").json["status"] as? String == "voided")
        let tooLong = try tappay(
            h, "/tpc/payment/pay-by-prime",
            payBody(h, prime: try h.prime("8.00"), amount: 8, ["delay_capture_in_days": 1000]))
        #expect(tooLong["status"] as? Int == 514)
    }

    @Test("Record paging: records_per_page 1 to 200 (default 50) and a 0-based page, each refused with TapPay's status")
    func recordPagingParameters() throws {
        let h = try APIHarness()
        let ids = try payEach(h, [11, 12, 13])
        let defaults = try tappay(h, "/tpc/transaction/query", [:])
        #expect(defaults["status"] as? Int == 0, "\(defaults)")
        #expect(defaults["records_per_page"] as? Int == 50)
        #expect(defaults["page"] as? Int == 0)
        #expect(defaults["total_page_count"] as? Int == 1)
        let newestFirst = try #require(defaults["trade_records"] as? [[String: Any]]).map { $0["rec_trade_id"] as? String }
        #expect(newestFirst == ids.reversed())
        // One record a page: page 1 is the second newest, page 3 is past the end.
        let second = try tappay(h, "/tpc/transaction/query", ["records_per_page": 1, "page": 1])
        #expect(second["total_page_count"] as? Int == 3)
        #expect((second["trade_records"] as? [[String: Any]])?.map { $0["rec_trade_id"] as? String } == [ids[1]])
        let past = try tappay(h, "/tpc/transaction/query", ["records_per_page": 1, "page": 3])
        #expect(past["status"] as? Int == 2)
        let atMost = try tappay(h, "/tpc/transaction/query", ["records_per_page": 200])
        #expect(atMost["status"] as? Int == 0)
        let refusals: [([String: Any], Int)] = [
            (["records_per_page": 0], 559), (["records_per_page": 201], 559), (["records_per_page": "50"], 535),
            (["records_per_page": 1.5], 535), (["page": -1], 560), (["page": "0"], 536), (["page": true], 536),
        ]
        for (body, status) in refusals {
            let answer = try tappay(h, "/tpc/transaction/query", body)
            #expect(answer["status"] as? Int == status, "\(body) → \(answer)")
            #expect(answer["trade_records"] == nil)
        }
    }

    @Test("malformed JSON, a duplicate key, a non-object or an empty body answer HTTP 200 status 5, TapPay's shape")
    func malformedJSON() throws {
        for transport in [APITransport.inProcess, .loopback] {
            let h = try APIHarness(transport: transport)
            let key = h.credentials.secretKey
            let bodies = [
                "{\"partner_key\": \"\(key)\", \"prime\": ", "{\"partner_key\": \"\(key)\", \"partner_key\": \"x\"}",
                "[1, 2]", "\"text\"", "{\"partner_key\": \"\(key)\"} trailing", "",
            ]
            for path in ["/tpc/payment/pay-by-prime", "/tpc/transaction/query", "/tpc/transaction/refund"] {
                for text in bodies {
                    let response = try h.call(
                        "POST", path, headers: ["x-api-key": key, "Content-Type": "application/json"],
                        body: Data(text.utf8))
                    #expect(response.status == 200, "\(path) \(text): \(response.text)")
                    #expect(response.json["status"] as? Int == 5, "\(path) \(text): \(response.text)")
                    #expect(response.json["msg"] as? String == "Wrong JSON format")
                    #expect(response.json["orchard_code"] as? String == "invalid_json")
                    #expect(response.json["error"] == nil)
                }
            }
        }
    }
}
