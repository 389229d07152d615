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

    // Pay by prime commits: (1) the key's claim (with a key), the prime claimed, the payment created and
    // marked as sent, the recovery point; (2) the acquirer's authorization (its own books); (3) the acquirer's
    // capture, called at once after the approval; (4) the authorization and capture outcomes with their events
    // and the key's finished result. The gateway's own commits are (1) and (4), one before the processor calls
    // and one after. Tokenize: the prime, its replay check, card data and (with a key) the claim and result.
    @Test(
        "tokenize and pay by prime (capture now) make a fixed number of durable commits",
        arguments: [Case(key: nil, tokenize: 1, pay: 4), Case(key: "order", tokenize: 1, pay: 4)])
    func primeFlow(_ c: Case) throws {
        let h = try Harness()
        let start = h.store.durableCommitCount
        let prime = try h.gateway.payments.tokenize(
            merchant: h.merchant, token: h.token(amount: 12_300), idempotencyKey: c.key.map { "tok-" + $0 })
        let tokenized = h.store.durableCommitCount
        #expect(tokenized - start == c.tokenize)
        let payment = try h.gateway.payments.payByPrime(
            merchant: h.merchant, PayByPrimeRequest(prime: prime.prime, amount: 12_300, currency: "TWD"),
            idempotencyKey: c.key.map { "pay-" + $0 })
        #expect(payment.status == .captured)
        #expect(h.store.durableCommitCount - tokenized == c.pay)
        #expect(try h.authorizations(payment.id) == 1)
        // A retry replays the stored result without writing.
        let replayed = h.store.durableCommitCount
        if let key = c.key {
            let again = try h.gateway.payments.payByPrime(
                merchant: h.merchant, PayByPrimeRequest(prime: prime.prime, amount: 12_300, currency: "TWD"),
                idempotencyKey: "pay-" + key)
            #expect(again == payment)
            #expect(h.store.durableCommitCount == replayed)
        }
    }

    @Test("a final error before the payment is created is stored with the key's claim in one commit and replayed")
    func finalErrorStoredWithClaim() throws {
        let h = try Harness()
        let request = PayByPrimeRequest(prime: "prm_" + String(repeating: "0", count: 48), amount: 100, currency: "TWD")
        let start = h.store.durableCommitCount
        expectGatewayError(.primeNotFound) {
            try h.gateway.payments.payByPrime(merchant: h.merchant, request, idempotencyKey: "k")
        }
        #expect(h.store.durableCommitCount - start == 1)
        // A retry replays the stored error without writing.
        expectGatewayError(.primeNotFound) {
            try h.gateway.payments.payByPrime(merchant: h.merchant, request, idempotencyKey: "k")
        }
        #expect(h.store.durableCommitCount - start == 1)
        var other = request
        other.amount = 200
        expectGatewayError(.idempotencyConflict) {
            try h.gateway.payments.payByPrime(merchant: h.merchant, other, idempotencyKey: "k")
        }
        // Another key pays as usual.
        let prime = try h.gateway.payments.tokenize(merchant: h.merchant, token: h.token(amount: 12_300))
        let unlisted = PayByPrimeRequest(prime: prime.prime, amount: 12_300, currency: "TWD")
        let payment = try h.gateway.payments.payByPrime(merchant: h.merchant, unlisted, idempotencyKey: "k2")
        #expect(payment.status == .captured)
    }
}
