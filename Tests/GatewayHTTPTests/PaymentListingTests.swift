import ApplePayModel
import Foundation
import Gateway
import GatewayHTTP
import GatewayTestSupport
import OrchardHTTP
import Testing

@Suite("GET /v1/payments filters in SQL", .serialized)
struct PaymentListingTests {
    @Test("an order_number or out_trade_no filter longer than the field it matches is 400 parameter_invalid")
    func overlongFilters() throws {
        let h = try APIHarness()
        let filters = [("order_number", FieldLimits.orderNumber.upperBound), ("out_trade_no", FieldLimits.outTradeNo.upperBound)]
        for (name, limit) in filters {
            let fits = try h.merchantServer("GET", "/v1/payments?\(name)=" + String(repeating: "a", count: limit))
            #expect(fits.status == 200, "\(fits.text)")
            let long = try h.merchantServer("GET", "/v1/payments?\(name)=" + String(repeating: "a", count: limit + 1))
            #expect(long.status == 400)
            let error = long.json["error"] as? [String: Any]
            #expect(error?["code"] as? String == "parameter_invalid")
            #expect(error?["param"] as? String == name)
        }
    }

    @Test("currency and amount filters fill every page up to limit; the cursor walks each match once")
    func currencyPagesAreFull() throws {
        let h = try APIHarness()
        var usd: [String] = []
        for index in 0..<9 {
            let currency = index % 3 == 0 ? "USD" : "TWD"
            let amount = currency == "USD" ? "\(index + 1).00" : "\(index + 100).00"
            let prime = try h.prime(amount, currency)
            let paid = try h.merchantServer(
                "POST", "/v1/payments", json: ["prime": prime, "amount": amount, "currency": currency])
            try #require(paid.status == 200, "\(paid.text)")
            if currency == "USD" { usd.append(try #require(paid.json["id"] as? String)) }
            h.clock.advance(by: 1)
        }
        // Newest first; TWD payments are interleaved but never fill a USD page.
        var seen: [String] = []
        var cursor: String?
        var pages = 0
        repeat {
            let query = "/v1/payments?currency=USD&limit=2" + (cursor.map { "&cursor=\($0)" } ?? "")
            let page = try h.merchantServer("GET", query)
            try #require(page.status == 200, "\(page.text)")
            let data = try #require(page.json["data"] as? [[String: Any]])
            cursor = page.json["next_cursor"] as? String
            if cursor != nil { #expect(data.count == 2) }
            #expect(data.allSatisfy { $0["currency"] as? String == "USD" })
            seen += data.compactMap { $0["id"] as? String }
            pages += 1
        } while cursor != nil && pages < 10
        #expect(seen == usd.reversed())
        #expect(pages == 2)
        let bounded = try h.merchantServer("GET", "/v1/payments?currency=USD&amount_min=2.00&amount_max=7.00&limit=1")
        let first = try #require((bounded.json["data"] as? [[String: Any]])?.first)
        #expect(first["amount"] as? String == "7.00")
        #expect(bounded.json["next_cursor"] is String)
    }
}
