import Foundation
import Gateway
import GatewayAssembly
import GatewaySQLite
import OrchardCrypto
import Testing

@Suite("Sandbox acquirer")
struct SandboxAcquirerTests {
    static func request(
        amount: Int64, pan: String = "4111111111111111", expiry: String = "301231", cryptogram: String? = "AAEC",
        reference: String = "pay_1"
    ) -> AuthorizationRequest {
        AuthorizationRequest(
            accountNumber: SecureBytes(Array(pan.utf8)), expirationDate: expiry,
            cryptogram: cryptogram.map { SecureBytes(Array($0.utf8)) }, eci: "05", amount: amount, currency: "TWD",
            merchantReference: reference, merchantID: "mch_1")
    }

    @Test(
        "documented scenarios",
        arguments: [
            (Int64(10_000), "4111111111111111", "301231", "AAEC", "approved"),
            (Int64(10_005), "4111111111111111", "301231", "AAEC", "do_not_honor"),
            (Int64(151), "4111111111111111", "301231", "AAEC", "insufficient_funds"),
            (Int64(10_091), "4111111111111111", "301231", "AAEC", "timeout"),
            (Int64(10_099), "4111111111111111", "301231", "AAEC", "approved"),
            (Int64(10_000), "4000000000000002", "301231", "AAEC", "do_not_honor"),
            (Int64(10_000), "4000000000009995", "301231", "AAEC", "insufficient_funds"),
            (Int64(10_000), "4000000000000069", "301231", "AAEC", "expired_card"),
            (Int64(10_000), "4000000000000119", "301231", "AAEC", "processing_error"),
            (Int64(10_000), "4111111111111111", "261231", "AAEC", "expired_card"),
            (Int64(10_000), "4111111111111111", "301231", "", "invalid_cryptogram"),
        ])
    func scenarios(amount: Int64, pan: String, expiry: String, cryptogram: String, expected: String) throws {
        let h = try Harness()
        let outcome = h.acquirer.authorize(
            Self.request(amount: amount, pan: pan, expiry: expiry, cryptogram: cryptogram.isEmpty ? nil : cryptogram))
        switch outcome {
        case .approved(let approval):
            #expect(expected == "approved")
            #expect(approval.authCode.count == 6)
            #expect(approval.reference.hasPrefix("acq_"))
        case .declined(let code, _): #expect(code == expected)
        case .timeout: #expect(expected == "timeout")
        case .unknown: Issue.record("unknown")
        }
        #expect(try h.store.acquirerAuthorizations(merchantReference: "pay_1").count == 1)
    }

    @Test(
        "captures, voids and refunds are checked like an acquirer would, and operation ids are idempotent",
        arguments: StoreBackend.all)
    func operations(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        guard case .approved(let approval) = h.acquirer.authorize(Self.request(amount: 10_000)) else {
            Issue.record("not approved")
            return
        }
        let ref = approval.reference
        #expect(
            h.acquirer.refund(reference: ref, amount: 100, currency: "TWD", operationID: "r0")
                == .declined(code: "not_captured"))
        #expect(
            h.acquirer.capture(reference: ref, amount: 10_001, currency: "TWD", operationID: "c0")
                == .declined(code: "amount_exceeds_authorization"))
        #expect(h.acquirer.capture(reference: ref, amount: 8_000, currency: "TWD", operationID: "c1") == .succeeded)
        #expect(h.acquirer.capture(reference: ref, amount: 8_000, currency: "TWD", operationID: "c1") == .succeeded)
        #expect(
            h.acquirer.capture(reference: ref, amount: 100, currency: "TWD", operationID: "c2")
                == .declined(code: "already_captured"))
        #expect(h.acquirer.void(reference: ref, operationID: "v1") == .declined(code: "already_captured"))
        #expect(h.acquirer.refund(reference: ref, amount: 5_000, currency: "TWD", operationID: "r1") == .succeeded)
        #expect(
            h.acquirer.refund(reference: ref, amount: 3_001, currency: "TWD", operationID: "r2")
                == .declined(code: "amount_exceeds_capture"))
        #expect(h.acquirer.refund(reference: ref, amount: 3_000, currency: "TWD", operationID: "r3") == .succeeded)
        #expect(h.acquirer.refund(reference: ref, amount: 5_000, currency: "TWD", operationID: "r1") == .succeeded)
        let books = try #require(try h.store.acquirerAuthorization(reference: ref))
        #expect(books.capturedAmount == 8_000)
        #expect(books.refundedAmount == 8_000)
        #expect(
            h.acquirer.capture(reference: "acq_nope", amount: 1, currency: "TWD", operationID: "c9")
                == .declined(code: "unknown_reference"))
    }

    @Test("an issuer timeout is pending until the resolution delay, then approved", arguments: StoreBackend.all)
    func timeoutResolution(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        #expect(h.acquirer.authorize(Self.request(amount: 191)) == .timeout)
        #expect(h.acquirer.query(merchantReference: "pay_1") == .pending)
        h.clock.advance(by: 60)
        guard case .approved = h.acquirer.query(merchantReference: "pay_1") else {
            Issue.record("not approved after the delay")
            return
        }
        #expect(h.acquirer.query(merchantReference: "pay_other") == .notFound)
    }

    @Test(
        "refunds at once through two acquirer instances on one database are all in the books, never above the capture",
        arguments: StoreBackend.all)
    func refundsAcrossInstances(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let other = SandboxAcquirer(ledger: try h.reopenedStore(), clock: h.clock)
        let acquirers = [h.acquirer, other]
        guard case .approved(let approval) = h.acquirer.authorize(Self.request(amount: 10_000, reference: "pay_books"))
        else {
            Issue.record("not approved")
            return
        }
        let reference = approval.reference
        #expect(other.capture(reference: reference, amount: 10_000, currency: "TWD", operationID: "cap_1") == .succeeded)
        let describe: @Sendable (any Error) -> String = { "\($0)" }
        // 40 refunds of 1.00, half through each instance: 40.00 refunded, none lost.
        let small = runTogether(40, describe: describe) { index in
            let outcome = acquirers[index % 2].refund(
                reference: reference, amount: 100, currency: "TWD", operationID: "rf_small_\(index)")
            guard outcome == .succeeded else { throw AcquirerTestError(outcome: outcome) }
        }
        #expect(small.allSatisfy { $0 == nil }, "\(small)")
        #expect(try h.store.acquirerAuthorization(reference: reference)?.refundedAmount == 4_000)
        // Four refunds of 30.00 of the 60.00 left, at once: two are taken, two refused, the books at the capture.
        let large = runTogether(4, describe: describe) { index in
            let outcome = acquirers[index % 2].refund(
                reference: reference, amount: 3_000, currency: "TWD", operationID: "rf_large_\(index)")
            guard outcome == .succeeded else { throw AcquirerTestError(outcome: outcome) }
        }
        #expect(large.filter { $0 == nil }.count == 2, "\(large)")
        #expect(large.compactMap { $0 }.allSatisfy { $0.contains("amount_exceeds_capture") }, "\(large)")
        #expect(try h.store.acquirerAuthorization(reference: reference)?.refundedAmount == 10_000)
        // An operation id repeated on the other instance answers its first outcome and changes nothing.
        #expect(other.refund(reference: reference, amount: 100, currency: "TWD", operationID: "rf_small_0") == .succeeded)
        #expect(try h.store.acquirerAuthorization(reference: reference)?.refundedAmount == 10_000)
    }

    @Test("two captures and a void at once through two instances: one of them is taken", arguments: StoreBackend.all)
    func captureOrVoidAcrossInstances(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let acquirers = [h.acquirer, SandboxAcquirer(ledger: try h.reopenedStore(), clock: h.clock)]
        for round in 0..<5 {
            guard case .approved(let approval) = h.acquirer.authorize(
                Self.request(amount: 10_000, reference: "pay_race_\(round)"))
            else {
                Issue.record("not approved")
                return
            }
            let reference = approval.reference
            let outcomes = runTogether(3, describe: { "\($0)" }) { index in
                let acquirer = acquirers[index % 2]
                let outcome =
                    index == 2
                    ? acquirer.void(reference: reference, operationID: "void_\(round)")
                    : acquirer.capture(
                        reference: reference, amount: Int64(5_000 + index), currency: "TWD",
                        operationID: "cap_\(round)_\(index)")
                guard outcome == .succeeded else { throw AcquirerTestError(outcome: outcome) }
            }
            #expect(outcomes.filter { $0 == nil }.count == 1, "round \(round): \(outcomes)")
            let books = try #require(try h.store.acquirerAuthorization(reference: reference))
            #expect(books.voided != (books.capturedAmount > 0), "round \(round): \(books)")
        }
    }
}

/// An acquirer outcome other than success, as a thrown error (``runTogether(_:describe:_:)`` collects them).
struct AcquirerTestError: Error, CustomStringConvertible {
    var outcome: ProcessorOperationOutcome
    var description: String { "\(outcome)" }
}
