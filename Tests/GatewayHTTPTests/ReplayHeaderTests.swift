import Foundation
import GatewayTestSupport
import Testing

@Suite("Idempotent replays are always marked")
struct ReplayHeaderTests {
    /// Forgets the transport's stored answers, as when a retry arrives after the domain committed its result
    /// but before the answer was stored (another instance, a crash, or simply a concurrent request).
    static func forgetStoredAnswers(_ h: APIHarness) throws {
        _ = try h.runtime.store.write { try $0.purgeStoredResponses(before: .distantFuture) }
    }

    @Test("a retry answered from the domain's stored result says Idempotent-Replayed, for a payment and an error")
    func replayFromDomain() throws {
        let h = try APIHarness()
        let prime = try h.prime("100")
        let json: [String: Any] = ["prime": prime, "amount": "100", "currency": "TWD"]
        let first = try h.merchantServer("POST", "/v1/payments", json: json, headers: ["Idempotency-Key": "gap-1"])
        #expect(first.status == 200, "\(first.text)")
        #expect(first.headers["Idempotent-Replayed"] == nil)
        try Self.forgetStoredAnswers(h)
        let retry = try h.merchantServer("POST", "/v1/payments", json: json, headers: ["Idempotency-Key": "gap-1"])
        #expect(retry.status == 200, "\(retry.text)")
        #expect(retry.headers["Idempotent-Replayed"] == "true")
        #expect(retry.json["id"] as? String == first.json["id"] as? String)

        let declinedJSON: [String: Any] = ["prime": try h.prime("1.05"), "amount": "1.05", "currency": "TWD"]
        let declined = try h.merchantServer(
            "POST", "/v1/payments", json: declinedJSON, headers: ["Idempotency-Key": "gap-2"])
        #expect(declined.status == 402, "\(declined.text)")
        #expect(declined.headers["Idempotent-Replayed"] == nil)
        try Self.forgetStoredAnswers(h)
        let again = try h.merchantServer(
            "POST", "/v1/payments", json: declinedJSON, headers: ["Idempotency-Key": "gap-2"])
        #expect(again.status == 402, "\(again.text)")
        #expect(again.headers["Idempotent-Replayed"] == "true")
    }

    @Test("20 concurrent requests with one key and body: one execution, every other 200 marked as a replay")
    func concurrentBurst() throws {
        let h = try APIHarness()
        let prime = try h.prime("100")
        let answers = LockedAnswers()
        DispatchQueue.concurrentPerform(iterations: 20) { _ in
            let json: [String: Any] = ["prime": prime, "amount": "100", "currency": "TWD"]
            if let response = try? h.merchantServer(
                "POST", "/v1/payments", json: json, headers: ["Idempotency-Key": "burst-1"])
            {
                answers.append(response)
            }
        }
        let all = answers.all
        #expect(all.count == 20)
        let ok = all.filter { $0.status == 200 }
        #expect(all.allSatisfy { $0.status == 200 || $0.status == 409 }, "\(all.map(\.status))")
        #expect(Set(ok.compactMap { $0.json["id"] as? String }).count == 1)
        #expect(ok.filter { $0.headers["Idempotent-Replayed"] != "true" }.count == 1, "one original execution")
        // Later retries replay too.
        let json: [String: Any] = ["prime": prime, "amount": "100", "currency": "TWD"]
        let late = try h.merchantServer("POST", "/v1/payments", json: json, headers: ["Idempotency-Key": "burst-1"])
        #expect(late.headers["Idempotent-Replayed"] == "true")
    }
}

final class LockedAnswers: @unchecked Sendable {  // every access holds the lock
    private let lock = NSLock()
    private var answers: [ClientResponse] = []
    func append(_ answer: ClientResponse) { lock.withLock { answers.append(answer) } }
    var all: [ClientResponse] { lock.withLock { answers } }
}
