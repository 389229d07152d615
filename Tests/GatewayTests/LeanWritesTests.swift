import Foundation
import Gateway
import Testing

@Suite("Lean writes")
struct LeanWritesTests {
    @Test("ordered identifiers keep the opaque format and sort by their time")
    func orderedIdentifiers() throws {
        let start = Date(timeIntervalSince1970: 1_796_009_005)
        let times = [0, 0.001, 0.999, 1, 60, 86_400, 365 * 86_400].map { start.addingTimeInterval($0) }
        let ids = try times.map { try Identifiers.ordered("pay_", at: $0) }
        for id in ids {
            #expect(id.hasPrefix("pay_"))
            #expect(id.dropFirst(4).count == 24)
            #expect(id.dropFirst(4).allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) })
        }
        // The time digits are digits and lower-case letters, so the ids sort by their time both by bytes (SQLite,
        // PostgreSQL's C collation) and with case folded (PostgreSQL's locale collations).
        for id in ids {
            #expect(id.dropFirst(4).prefix(9).allSatisfy { ("0"..."9").contains($0) || ("a"..."z").contains($0) })
        }
        #expect(ids.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) } == ids)
        #expect(ids.sorted { $0.lowercased() < $1.lowercased() } == ids)
        // The same millisecond: still two identifiers.
        #expect(try Identifiers.ordered("pay_", at: start) != Identifiers.ordered("pay_", at: start))
        // A shorter count keeps the time digits and the prefix.
        #expect(try Identifiers.ordered("acq_", 20, at: start).count == 24)
    }

    @Test("an update writes what a payment's life changes and leaves what it was made with")
    func updateColumns() {
        let written = Set(Payment.storeWriteColumns)
        #expect(Payment.storeCreationColumns.isSubset(of: written))
        // The listing index and the foreign keys read only creation columns.
        for fixed in ["id", "merchant_id", "environment", "created_at", "session_id"] {
            #expect(!Payment.storeUpdateColumns.contains(fixed))
        }
        for changing in ["status", "captured_amount", "refunded_amount", "updated_at", "capture_at", "pending_kind"] {
            #expect(Payment.storeUpdateColumns.contains(changing))
        }
    }

    @Test("a payment's change reads back whole; its creation facts stay as made", arguments: StoreBackend.all)
    func updateRoundTrip(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let payment = try h.pay()
        var changed = payment
        changed.status = .refunded
        changed.refundedAmount = payment.capturedAmount
        changed.updatedAt = payment.updatedAt.addingTimeInterval(5)
        changed.failureCode = "test_code"
        changed.authCode = "123456"
        try h.store.write { try $0.updatePayment(changed) }
        let read = try #require(try h.store.read { try $0.payment(id: payment.id) })
        #expect(read.status == .refunded)
        #expect(read.refundedAmount == payment.capturedAmount)
        #expect(read.failureCode == "test_code")
        #expect(read.authCode == "123456")
        #expect(read.updatedAt == changed.updatedAt)
        // A creation fact changed in memory is not written: the row keeps what the payment was made with.
        var rewritten = read
        rewritten.orderNumber = "changed-order"
        rewritten.amount = payment.amount + 1
        try h.store.write { try $0.updatePayment(rewritten) }
        let again = try #require(try h.store.read { try $0.payment(id: payment.id) })
        #expect(again.orderNumber == payment.orderNumber)
        #expect(again.amount == payment.amount)
        #expect(again.merchantID == payment.merchantID)
        #expect(again.createdAt == payment.createdAt)
    }
}

@Suite("Merchant records read per request")
struct MerchantRecordReadTests {
    @Test(
        "a merchant read after its change is the changed record, by id and by app id",
        arguments: StoreBackend.all)
    func changeIsReadBack(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let id = h.merchant.id
        let before = try #require(try h.store.read { try $0.merchant(id: id) })
        // Read it many times (the SQLite store decodes each distinct stored text once), then change it.
        for _ in 0..<3 { _ = try h.store.read { try $0.merchant(id: id) } }
        var renamed = before
        renamed.name = before.name + " (renamed)"
        renamed.allowedCurrencies = ["TWD", "USD"]
        try h.store.write { try $0.updateMerchant(renamed) }
        let byID = try #require(try h.store.read { try $0.merchant(id: id) })
        let byApp = try #require(try h.store.read { try $0.merchant(appID: before.appID) })
        #expect(byID == renamed)
        #expect(byApp == renamed)
        // And back: the first text again gives the first record.
        try h.store.write { try $0.updateMerchant(before) }
        #expect(try h.store.read { try $0.merchant(id: id) } == before)
    }
}
