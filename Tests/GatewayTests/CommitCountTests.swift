import Foundation
import Gateway
import GatewaySQLite
import Testing

/// Each write transaction that changes a row is one `fdatasync` under `synchronous=FULL`: these counts are the
/// durable cost of the prime flow, kept from growing back.
@Suite("Durable commits of the prime flow")
struct CommitCountTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var key: String?
        /// Tokenize: the prime, its replay check, card data and (with a key) the stored result.
        var tokenize: Int
        /// Pay by prime with capture now.
        var pay: Int
        var testDescription: String { key == nil ? "without idempotency keys" : "with idempotency keys" }
    }

    // With a key, pay by prime commits: (1) the key's claim; (2) the prime claimed, the payment created and
    // marked as sent, the recovery point; (3) the acquirer's authorization (its own books); (4) the outcome
    // with its event and the capture recorded as pending; (5) the acquirer's capture; (6) the capture's
    // outcome with its event and the key's finished result. Tokenize with a key: the claim, then the prime
    // with its result.
    @Test(
        "tokenize and pay by prime (capture now) make a fixed number of durable commits",
        arguments: [Case(key: nil, tokenize: 1, pay: 5), Case(key: "order", tokenize: 2, pay: 6)])
    func primeFlow(_ c: Case) throws {
        let h = try Harness()
        let start = h.store.durableCommitCount
        let prime = try h.gateway.tokenize(
            merchant: h.merchant, token: h.token(amount: 12_300), idempotencyKey: c.key.map { "tok-" + $0 })
        let tokenized = h.store.durableCommitCount
        #expect(tokenized - start == c.tokenize)
        let payment = try h.gateway.payByPrime(
            merchant: h.merchant, PayByPrimeRequest(prime: prime.prime, amount: 12_300, currency: "TWD"),
            idempotencyKey: c.key.map { "pay-" + $0 })
        #expect(payment.status == .captured)
        #expect(h.store.durableCommitCount - tokenized == c.pay)
        #expect(try h.authorizations(payment.id) == 1)
        // A retry replays the stored result without writing.
        let replayed = h.store.durableCommitCount
        if let key = c.key {
            let again = try h.gateway.payByPrime(
                merchant: h.merchant, PayByPrimeRequest(prime: prime.prime, amount: 12_300, currency: "TWD"),
                idempotencyKey: "pay-" + key)
            #expect(again == payment)
            #expect(h.store.durableCommitCount == replayed)
        }
    }
}
