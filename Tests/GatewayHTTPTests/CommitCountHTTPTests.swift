import Foundation
import GatewaySQLite
import GatewayTestSupport
import Testing

/// The durable commits (one `fdatasync` each under `synchronous=FULL`) of the benchmark's request pair, over
/// HTTP: they set its throughput on a real disk, so their number is kept from growing back.
@Suite("Durable commits over HTTP")
struct CommitCountHTTPTests {
    @Test("POST /v1/tokens then POST /v1/payments (capture now, Idempotency-Key) make 1 + 4 durable commits")
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
        // The domain's four (two of them the sandbox acquirer's books, see CommitCountTests); the transport's
        // stored answer is written in the outcome's commit. With group commit, concurrent requests' commits
        // share fsyncs.
        let paid = h.runtime.store.durableCommitCount
        #expect(paid - tokenized == 4)
        #expect(response.headers["Idempotent-Replayed"] == nil)
        let again = try h.merchantServer("POST", "/v1/payments", json: body, headers: ["Idempotency-Key": "pair-1"])
        #expect(again.status == 200)
        #expect(again.headers["Idempotent-Replayed"] == "true")
        #expect(again.body == response.body)
        #expect(h.runtime.store.durableCommitCount == paid)
        // The fingerprint stored with that answer tells a different request under the same key.
        var other = body
        other["order_number"] = "another"
        let conflict = try h.merchantServer(
            "POST", "/v1/payments", json: other, headers: ["Idempotency-Key": "pair-1"])
        #expect(conflict.status == 422)
        #expect((conflict.json["error"] as? [String: Any])?["code"] as? String == "idempotency_conflict")
    }

    @Test("POST /v1/tokens with an Idempotency-Key stores its answer in the prime's one commit")
    func tokenizeWithKey() throws {
        let h = try APIHarness()
        let token = try h.token("150.00")
        let start = h.runtime.store.durableCommitCount
        let first = try h.client("POST", "/v1/tokens", json: ["token": token], headers: ["Idempotency-Key": "tok-1"])
        try #require(first.status == 200, "\(first.text)")
        #expect(h.runtime.store.durableCommitCount - start == 1)
        let again = try h.client("POST", "/v1/tokens", json: ["token": token], headers: ["Idempotency-Key": "tok-1"])
        #expect(again.status == 200)
        #expect(again.headers["Idempotent-Replayed"] == "true")
        #expect(again.body == first.body)
        #expect(h.runtime.store.durableCommitCount - start == 1)
    }

    @Test(
        "concurrent pays, their bodies run by another request's batch: each answer is still stored in its outcome's commit"
    )
    func concurrentPairs() throws {
        let h = try APIHarness()
        let count = 16
        let primes = try (0..<count).map { _ in try h.prime("150.00") }
        let start = h.runtime.store.durableCommitCount
        let answers = LockedAnswers()
        DispatchQueue.concurrentPerform(iterations: count) { index in
            let body: [String: Any] = [
                "prime": primes[index], "amount": "150.00", "currency": "TWD", "capture": ["mode": "now"],
            ]
            if let response = try? h.merchantServer(
                "POST", "/v1/payments", json: body, headers: ["Idempotency-Key": "concurrent-\(index)"])
            {
                answers.append(response)
            }
        }
        #expect(answers.all.count == count)
        #expect(answers.all.allSatisfy { $0.status == 200 })
        // Two of the gateway's and two of the sandbox acquirer's books per payment: no separate stored answer.
        #expect(h.runtime.store.durableCommitCount - start == 4 * count)
        for index in 0..<count {
            let body: [String: Any] = [
                "prime": primes[index], "amount": "150.00", "currency": "TWD", "capture": ["mode": "now"],
            ]
            let again = try h.merchantServer(
                "POST", "/v1/payments", json: body, headers: ["Idempotency-Key": "concurrent-\(index)"])
            #expect(again.headers["Idempotent-Replayed"] == "true")
            #expect(answers.all.contains { $0.body == again.body })
        }
        #expect(h.runtime.store.durableCommitCount - start == 4 * count)
    }
}
