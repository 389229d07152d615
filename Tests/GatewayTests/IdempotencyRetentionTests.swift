import Foundation
import Testing

@testable import Gateway

@Suite("Idempotency retention: the maintenance pass purges what is older than 24 hours")
struct IdempotencyRetentionTests {
    @Test(
        "finished idempotency rows and stored answers are deleted after 24 hours, not only ignored",
        arguments: StoreBackend.all)
    func purge(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let paid = try h.pay(key: "order-1")
        let answer = StoredResponse(
            fingerprint: "POST /v1/payments x", status: 200, body: Data("{}".utf8),
            createdAt: h.clock.now())
        try h.gateway.storeResponse(answer, merchant: h.merchant, key: "order-1")

        h.clock.advance(by: 23 * 3600)
        var report = try h.gateway.payments.reconcile()
        #expect(report.purgedIdempotencyRecords == 0)
        #expect(report.purgedStoredResponses == 0)
        #expect(try h.gateway.storedResponse(merchant: h.merchant, key: "order-1") == answer)
        #expect(
            try h.store.read {
                try $0.idempotencyRecord(merchantID: h.merchant.id, environment: .sandbox, key: "order-1")
            } != nil)

        h.clock.advance(by: 3600 + 1)
        report = try h.gateway.payments.reconcile()
        #expect(report.purgedIdempotencyRecords == 1)
        #expect(report.purgedStoredResponses == 1)
        #expect(
            try h.store.read {
                try $0.idempotencyRecord(merchantID: h.merchant.id, environment: .sandbox, key: "order-1")
            } == nil)
        #expect(try h.gateway.storedResponse(merchant: h.merchant, key: "order-1") == nil)
        // The key is free again: a new request with it is a new payment.
        let again = try h.pay(key: "order-1")
        #expect(again.id != paid.id)
    }
}
