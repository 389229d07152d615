import Foundation
import GatewaySQLite
import Testing

/// The durable commits (one `fdatasync` each under `synchronous=FULL`) of the benchmark's request pair, over
/// HTTP: they set its throughput on a real disk, so their number is kept from growing back.
@Suite("Durable commits over HTTP")
struct CommitCountHTTPTests {
    @Test("POST /v1/tokens then POST /v1/payments (capture now, Idempotency-Key) make 1 + 5 durable commits")
    func pair() throws {
        let h = try APIHarness()
        let start = h.runtime.store.durableCommitCount
        let prime = try h.prime("150.00")
        let tokenized = h.runtime.store.durableCommitCount
        #expect(tokenized - start == 1)
        let body: [String: Any] = ["prime": prime, "amount": "150.00", "currency": "TWD", "capture": ["mode": "now"]]
        let response = try h.merchantServer("POST", "/v1/payments", json: body, headers: ["Idempotency-Key": "pair-1"])
        try #require(response.status == 200, "\(response.text)")
        #expect(response.json["status"] as? String == "captured")
        // The domain's four (two of them the sandbox acquirer's books, see CommitCountTests) and the transport's
        // stored answer. With group commit, concurrent requests' commits share fsyncs.
        let paid = h.runtime.store.durableCommitCount
        #expect(paid - tokenized == 5)
        let again = try h.merchantServer("POST", "/v1/payments", json: body, headers: ["Idempotency-Key": "pair-1"])
        #expect(again.status == 200)
        #expect(again.body == response.body)
        #expect(h.runtime.store.durableCommitCount == paid)
    }
}
