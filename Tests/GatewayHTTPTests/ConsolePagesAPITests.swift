import ApplePaySandbox
import Foundation
import Gateway
import GatewayAssembly
import GatewayHTTP
import GatewayTestSupport
import Testing

/// The routes under the console's Overview, Card data and Keys pages, over loopback HTTP, each answer checked
/// against `openapi.yaml`.
@Suite("Reports, co-brand table and key listing over HTTP", .serialized)
struct ConsolePagesAPITests {
    @Test("GET /v1/reports/overview: exact figures of a known set of payments")
    func overview() throws {
        let h = try APIHarness()
        #expect(try h.pay("100.00").status == 200)
        #expect(try h.pay("10.05").status == 402)  // declined do_not_honor
        h.clock.advance(by: 3600)
        #expect(try h.pay("20.51").status == 402)  // declined insufficient_funds
        #expect(try h.pay("7.50").status == 200)
        let response = try h.merchantServer("GET", "/v1/reports/overview")
        #expect(response.status == 200, "\(response.text)")
        #expect(response.json["generated_at"] as? String == "2027-01-15T09:00:00Z")
        let hourly = try #require(response.json["hourly"] as? [String: Any])
        #expect(hourly["interval"] as? String == "hour")
        #expect(hourly["from"] as? String == "2027-01-14T10:00:00Z")
        #expect(hourly["to"] as? String == "2027-01-15T10:00:00Z")
        let buckets = try #require(hourly["buckets"] as? [[String: Any]])
        #expect(buckets.count == 24)
        #expect(buckets[22]["start"] as? String == "2027-01-15T08:00:00Z")
        #expect(buckets[22]["count"] as? Int == 2)
        #expect(buckets[22]["approval_rate"] as? String == "50.00")
        #expect(buckets[21]["approval_rate"] is NSNull)
        #expect(buckets[21]["currencies"] as? [Any] != nil)
        let totals = try #require(hourly["totals"] as? [String: Any])
        #expect(totals["count"] as? Int == 4)
        #expect(totals["approved"] as? Int == 2)
        #expect(totals["declined"] as? Int == 2)
        #expect(totals["pending"] as? Int == 0)
        #expect(totals["approval_rate"] as? String == "50.00")
        let currencies = try #require(totals["currencies"] as? [[String: Any]])
        #expect(currencies.count == 1)
        #expect(currencies.first?["currency"] as? String == "TWD")
        #expect(currencies.first?["count"] as? Int == 4)
        #expect(currencies.first?["approved"] as? Int == 2)
        #expect(currencies.first?["volume"] as? String == "107.50")
        let codes = try #require(hourly["decline_codes"] as? [[String: Any]])
        #expect(codes.map { $0["code"] as? String } == ["do_not_honor", "insufficient_funds"])
        #expect(codes.map { $0["count"] as? Int } == [1, 1])
        let daily = try #require(response.json["daily"] as? [String: Any])
        #expect((daily["buckets"] as? [Any])?.count == 30)
        #expect(daily["from"] as? String == "2026-12-17T00:00:00Z")
        #expect((daily["totals"] as? [String: Any])?["count"] as? Int == 4)
        #expect(try h.call("GET", "/v1/reports/overview").status == 401)
        try Self.checkAgainstSpec(h)
    }

    @Test("GET/PUT /v1/co-brand-table: JSON and CSV, errors by row, the code in merchant_reference_info")
    func coBrandTable() throws {
        let h = try APIHarness()
        #expect((try h.merchantServer("GET", "/v1/co-brand-table").json["ranges"] as? [Any])?.isEmpty == true)
        // The sandbox wallet's default card is a Visa with BIN 476112.
        let put = try h.merchantServer(
            "PUT", "/v1/co-brand-table",
            json: [
                "ranges": [
                    ["bin_low": "476112", "bin_high": "476112", "affiliate_code": "TEA01"],
                    ["bin_low": "35600000", "bin_high": "35699999", "affiliate_code": "JCB2026"],
                ]
            ])
        #expect(put.status == 200, "\(put.text)")
        let ranges = try #require(put.json["ranges"] as? [[String: String]])
        #expect(
            ranges == [
                ["bin_low": "35600000", "bin_high": "35699999", "affiliate_code": "JCB2026"],
                ["bin_low": "47611200", "bin_high": "47611299", "affiliate_code": "TEA01"],
            ])
        #expect(try h.merchantServer("GET", "/v1/co-brand-table").json["ranges"] as? [[String: String]] == ranges)
        let tokenized = try h.client("POST", "/v1/tokens", json: ["token": try h.token("5.00")])
        let reference = try #require(tokenized.json["merchant_reference_info"] as? [String: Any])
        #expect(reference["affiliate_codes"] as? [String] == ["TEA01"])

        let bad = try h.merchantServer(
            "PUT", "/v1/co-brand-table",
            json: [
                "ranges": [
                    ["bin_low": "476112", "bin_high": "476112", "affiliate_code": "OK"], 7,
                    ["bin_low": "476112", "bin_high": "476112", "affiliate_code": "TOO_LONG_FOR_AN_AFFILIATE_CODE"],
                ]
            ])
        #expect(bad.status == 422)
        #expect(bad.errorCode == "co_brand_table_invalid")
        let error = try #require(bad.json["error"] as? [String: Any])
        let rows = try #require(error["rows"] as? [[String: Any]])
        #expect(rows.map { $0["row"] as? Int } == [2, 3])
        #expect(
            rows.first?["message"] as? String
                == "bin_low must be 6 to 8 digits; bin_high must be 6 to 8 digits; affiliate_code must be 1 to 20 ASCII letters or digits"
        )
        #expect(rows.last?["message"] as? String == "affiliate_code must be 1 to 20 ASCII letters or digits")
        #expect(try h.merchantServer("GET", "/v1/co-brand-table").json["ranges"] as? [[String: String]] == ranges)
        #expect(try h.merchantServer("PUT", "/v1/co-brand-table", json: ["ranges": "x"]).status == 400)
        #expect(try h.merchantServer("PUT", "/v1/co-brand-table", json: [:]).status == 400)

        let csvHeaders = h.serverHeaders.merging(["Content-Type": "text/csv"]) { $1 }
        let csv = try h.call(
            "PUT", "/v1/co-brand-table", headers: csvHeaders,
            body: Data("bin_low,bin_high,affiliate_code\n476100,476199,CSV1\n".utf8))
        #expect(csv.status == 200, "\(csv.text)")
        #expect(
            csv.json["ranges"] as? [[String: String]] == [
                ["bin_low": "47610000", "bin_high": "47619999", "affiliate_code": "CSV1"]
            ])
        let badCSV = try h.call(
            "PUT", "/v1/co-brand-table", headers: csvHeaders,
            body: Data("bin_low,bin_high,affiliate_code\n476100,476199,CSV1\n4761,476199,X\n".utf8))
        #expect(badCSV.status == 422)
        let csvRows = try #require((badCSV.json["error"] as? [String: Any])?["rows"] as? [[String: Any]])
        #expect(csvRows.map { $0["row"] as? Int } == [3])
        #expect(
            (badCSV.json["error"] as? [String: Any])?["message"] as? String
                == "line 3: bin_low must be 6 to 8 digits")

        // The BIN table's refusals have the same rows.
        let badBIN = try h.call(
            "PUT", "/v1/bin-table", headers: csvHeaders,
            body: Data(
                "bin_prefix,issuer,bank_id,funding,level,country,country_code\n12,x,,,,,\n476112,B,,,,,TWN\n".utf8))
        #expect(badBIN.status == 422)
        let binRows = try #require((badBIN.json["error"] as? [String: Any])?["rows"] as? [[String: Any]])
        #expect(binRows.map { $0["row"] as? Int } == [2, 3])
        #expect(binRows.last?["message"] as? String == "country_code is longer than 2 characters")
        let badHeader = try h.call("PUT", "/v1/bin-table", headers: csvHeaders, body: Data("bin,issuer\n".utf8))
        #expect(
            ((badHeader.json["error"] as? [String: Any])?["rows"] as? [[String: Any]])?.first?["row"] as? Int == 1)
        try Self.checkAgainstSpec(h)
    }

    @Test("GET /v1/merchant-keys with expiry warnings, POST …/retire, GET /v1/apple-pay/domains")
    func keys() throws {
        let h = try APIHarness()
        let listed = try h.merchantServer("GET", "/v1/merchant-keys")
        #expect(listed.status == 200, "\(listed.text)")
        let sandboxKey = try #require((listed.json["data"] as? [[String: Any]])?.first)
        let sandboxKeyID = try #require(sandboxKey["id"] as? String)
        #expect(sandboxKey["state"] as? String == "active")

        let csr = try h.merchantServer("POST", "/v1/merchant-keys/csr", json: ["type": "ec", "purpose": "processing"])
        let keyID = try #require(csr.json["id"] as? String)
        let pending = try #require(
            (try h.merchantServer("GET", "/v1/merchant-keys").json["data"] as? [[String: Any]])?.last)
        #expect(pending["id"] as? String == keyID)
        #expect(pending["state"] as? String == "pending")
        #expect(pending["not_after"] is NSNull)

        let pki = try SandboxPKIIssuer.pki(serialized: try #require(h.runtime.sandbox).pki)
        let certificate = try pki.issueMerchantCertificate(
            publicKeyPEM: try #require(csr.json["csr_pem"] as? String),
            merchantIdentifier: h.merchant.merchantIdentifiers[0], notBefore: h.clock.now() - 60,
            notAfter: h.clock.now() + 10 * 86_400)
        let uploaded = try h.merchantServer(
            "POST", "/v1/merchant-keys/\(keyID)/certificate", json: ["certificate_pem": certificate])
        #expect(uploaded.status == 200, "\(uploaded.text)")
        let afterUpload = try h.merchantServer("GET", "/v1/merchant-keys")
        let warnings = try #require(afterUpload.json["warnings"] as? [[String: Any]])
        let warning = try #require(warnings.first { $0["key_id"] as? String == keyID })
        #expect(warning["days_left"] as? Int == 10)
        #expect(warning["expired"] as? Bool == false)
        #expect(warning["not_after"] as? String == "2027-01-25T08:00:00Z")
        #expect(warning["message"] as? String == "the processing certificate of \(keyID) expires in 10 days")

        let retired = try h.merchantServer("POST", "/v1/merchant-keys/\(sandboxKeyID)/retire")
        #expect(retired.status == 200, "\(retired.text)")
        #expect(retired.json["state"] as? String == "retired")
        let last = try h.merchantServer("POST", "/v1/merchant-keys/\(keyID)/retire")
        #expect(last.status == 409)
        #expect(last.errorCode == "last_active_key")
        #expect(try h.merchantServer("POST", "/v1/merchant-keys/mk_nope/retire").status == 404)
        // The sandbox wallet now encrypts for the new key, which opens its tokens.
        let opened = try h.client("POST", "/v1/tokens", json: ["token": try h.token("5.00")])
        #expect(opened.status == 200, "\(opened.text)")

        #expect(try h.merchantServer("GET", "/v1/apple-pay/domains").json["domains"] as? [String] == [])
        _ = try h.merchantServer("PUT", "/v1/apple-pay/domains", json: ["domains": ["Shop.Example"]])
        #expect(try h.merchantServer("GET", "/v1/apple-pay/domains").json["domains"] as? [String] == ["shop.example"])
        try Self.checkAgainstSpec(h)
    }

    /// Every answer the harness got matches its documented status and schema.
    static func checkAgainstSpec(_ h: APIHarness) throws {
        let checker = try OpenAPIChecker.load()
        for exchange in h.exchanges.withLock({ $0 }) where exchange.path.hasPrefix("/v1/") {
            _ = checker.check(exchange)
        }
    }
}
