import Foundation
import Gateway
import Testing

@Suite("Overview report and card tables on both stores")
struct ReportTests {
    /// The harness clock's start (a whole UTC hour, 08:00).
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    /// A prime-flow payment of `amount` minor units of `currency` at `offset` seconds after ``start``; a decline
    /// is a failed payment, not an error here.
    static func pay(_ h: Harness, _ amount: Int64, _ currency: String = "TWD", at offset: TimeInterval) throws {
        h.clock.set(start.addingTimeInterval(offset))
        let numeric = currency == "USD" ? "840" : "901"
        let prime = try h.gateway.payments.tokenize(merchant: h.merchant, token: h.token(amount: amount, currency: numeric))
        do {
            _ = try h.gateway.payments.payByPrime(
                merchant: h.merchant, PayByPrimeRequest(prime: prime.prime, amount: amount, currency: currency),
                idempotencyKey: nil)
        } catch  where error.code == .cardDeclined {}
    }

    @Test(
        "counts, approval rate, volume per currency and decline codes per hour and per day", arguments: StoreBackend.all
    )
    func overview(backend: StoreBackend) throws {
        let h = try Harness(backend)
        let day: TimeInterval = 86_400
        try Self.pay(h, 10_000, at: 0)  // day 26: TWD 100.00 approved
        try Self.pay(h, 1_005, at: day)  // day 27: declined do_not_honor
        try Self.pay(h, 1_234, "USD", at: 3 * day + 600)  // hour 22: USD 12.34 approved
        try Self.pay(h, 20_051, at: 3 * day + 3600)  // hour 23: declined insufficient_funds
        try Self.pay(h, 5_000, at: 3 * day + 4800)  // hour 23: TWD 50.00 approved, then refunded
        let refunded = try #require(
            try h.gateway.payments.list(merchant: h.merchant, query: PaymentQuery(limit: 1)).payments.first)
        _ = try h.gateway.refunds.refund(merchant: h.merchant, paymentID: refunded.id, amount: nil, idempotencyKey: nil)
        h.clock.set(Self.start.addingTimeInterval(3 * day + 5400))  // 09:30 on the fourth day

        let report = try h.gateway.overview(merchant: h.merchant)
        #expect(report.generatedAt == Self.start.addingTimeInterval(3 * day + 5400))

        let hourly = report.hourly
        #expect(hourly.buckets.count == 24)
        #expect(hourly.from == Self.start.addingTimeInterval(2 * day + 7200))
        #expect(hourly.to == Self.start.addingTimeInterval(3 * day + 7200))
        #expect(hourly.buckets[22].start == Self.start.addingTimeInterval(3 * day))
        #expect(hourly.buckets[22].figures.count == 1)
        #expect(hourly.buckets[22].figures.currencies.map(\.currency) == ["USD"])
        #expect(hourly.buckets[23].figures.count == 2)
        #expect(hourly.buckets[23].figures.approved == 1)
        #expect(hourly.buckets[23].figures.declined == 1)
        #expect(hourly.buckets[23].figures.approvalRate == "50.00")
        #expect(hourly.buckets[0].figures == PaymentFigures())
        #expect(hourly.buckets[0].figures.approvalRate == nil)
        #expect(hourly.totals.count == 3)
        #expect(hourly.totals.approved == 2)
        #expect(hourly.totals.declined == 1)
        #expect(hourly.totals.approvalRate == "66.67")
        #expect(hourly.totals.currencies.map(\.currency) == ["TWD", "USD"])
        #expect(hourly.totals.currencies.map(\.count) == [2, 1])
        #expect(hourly.totals.currencies.map(\.volume) == [5_000, 1_234])
        #expect(hourly.declineCodes == [DeclineCodeCount(code: "insufficient_funds", count: 1)])

        let daily = report.daily
        #expect(daily.buckets.count == 30)
        #expect(daily.to == Date(timeIntervalSince1970: 1_800_230_400 + 86_400))  // the end of the fourth day (UTC)
        #expect(daily.from == daily.to.addingTimeInterval(-30 * day))
        #expect(daily.buckets[26].figures.count == 1)
        #expect(daily.buckets[26].figures.currencies.first?.volume == 10_000)
        #expect(daily.buckets[27].figures.declined == 1)
        #expect(daily.buckets[27].figures.approvalRate == "0.00")
        #expect(daily.buckets[28].figures.count == 0)
        #expect(daily.buckets[29].figures.count == 3)
        #expect(daily.totals.count == 5)
        #expect(daily.totals.approvalRate == "60.00")
        #expect(daily.totals.currencies.map(\.currency) == ["TWD", "USD"])
        #expect(daily.totals.currencies.map(\.count) == [4, 1])
        #expect(daily.totals.currencies.map(\.approved) == [2, 1])
        #expect(daily.totals.currencies.map(\.volume) == [15_000, 1_234])
        #expect(
            daily.declineCodes == [
                DeclineCodeCount(code: "do_not_honor", count: 1),
                DeclineCodeCount(code: "insufficient_funds", count: 1),
            ])

        // Thirty days on, every payment has left both windows.
        h.clock.set(Self.start.addingTimeInterval(40 * day))
        let later = try h.gateway.overview(merchant: h.merchant)
        #expect(later.daily.totals.count == 0)
        #expect(later.hourly.totals.count == 0)
    }

    @Test("the co-brand table: rows as written, errors by row, the table read back", arguments: StoreBackend.all)
    func coBrandTable(backend: StoreBackend) throws {
        let h = try Harness(backend)
        let stored = try h.gateway.merchants.setCoBrandTable(
            merchantID: h.merchant.id,
            rows: [
                CoBrandRow(binLow: "41111111", binHigh: "41111199", affiliateCode: "TEA01"),
                CoBrandRow(binLow: "356000", binHigh: "356099", affiliateCode: "JCB2026"),
            ])
        #expect(stored.count == 2)
        #expect(
            try h.gateway.merchants.coBrandTable(merchantID: h.merchant.id) == [
                CoBrandRange(low: 35_600_000, high: 35_609_999, code: "JCB2026"),
                CoBrandRange(low: 41_111_111, high: 41_111_199, code: "TEA01"),
            ])
        let prime = try h.gateway.payments.tokenize(merchant: h.merchant, token: h.token(amount: 100))
        #expect(prime.affiliateCodes == ["TEA01"])

        let error = expectGatewayError(.coBrandTableInvalid) {
            try h.gateway.merchants.setCoBrandTable(
                merchantID: h.merchant.id,
                rows: [
                    CoBrandRow(binLow: "41111111", binHigh: "41111199", affiliateCode: "OK1"),
                    CoBrandRow(binLow: "4111", binHigh: "41111199", affiliateCode: "OK2"),
                    CoBrandRow(binLow: "41111199", binHigh: "41111111", affiliateCode: "TOO-LONG-AND-NOT-ALNUM"),
                ])
        }
        #expect(
            error?.rows == [
                .init(row: 2, message: "bin_low must be 6 to 8 digits"),
                .init(
                    row: 3,
                    message:
                        "affiliate_code must be 1 to 20 ASCII letters or digits; bin_low must not be above bin_high"),
            ])
        #expect(error?.reason == "row 2: bin_low must be 6 to 8 digits (and 1 more bad row)")
        // A refused table leaves the stored one.
        #expect(try h.gateway.merchants.coBrandTable(merchantID: h.merchant.id).count == 2)

        let csvError = expectGatewayError(.coBrandTableInvalid) {
            try h.gateway.merchants.loadCoBrandTable(
                merchantID: h.merchant.id,
                csv: "bin_low,bin_high,affiliate_code\n41111111,41111199,A1\n\n41111111,41111199,ÄÖ\n1,2\n")
        }
        #expect(
            csvError?.rows == [
                .init(row: 4, message: "affiliate_code must be 1 to 20 ASCII letters or digits"),
                .init(row: 5, message: "3 fields (bin_low,bin_high,affiliate_code), not 2"),
            ])
        #expect(csvError?.reason.hasPrefix("line 4: ") == true)
        let header = expectGatewayError(.coBrandTableInvalid) {
            try h.gateway.merchants.loadCoBrandTable(merchantID: h.merchant.id, csv: "low,high,code\n")
        }
        #expect(header?.rows == [.init(row: 1, message: "the header must be bin_low,bin_high,affiliate_code")])
        #expect(
            try h.gateway.merchants.loadCoBrandTable(
                merchantID: h.merchant.id, csv: "bin_low,bin_high,affiliate_code\r\n41111111,41111199,A1\r\n"
            ).count == 1)
        #expect(try h.gateway.merchants.coBrandTable(merchantID: h.merchant.id).map(\.code) == ["A1"])
    }

    @Test("a refused BIN table names each bad line")
    func binTableRows() throws {
        let h = try Harness()
        let error = expectGatewayError(.binTableInvalid) {
            try h.gateway.merchants.loadBINTable(
                merchantID: h.merchant.id,
                csv: "bin_prefix,issuer,country_code\n476112,Bank,TW\n41x1,Bad,TW\n476112,Again,TWN\n")
        }
        #expect(
            error?.rows == [
                .init(row: 3, message: "bin_prefix must be 4 to 11 digits"),
                .init(
                    row: 4,
                    message: "bin_prefix 476112 is already on line 2; country_code is longer than 2 characters"),
            ])
        #expect(error?.reason == "line 3: bin_prefix must be 4 to 11 digits (and 1 more bad row)")
    }
}
