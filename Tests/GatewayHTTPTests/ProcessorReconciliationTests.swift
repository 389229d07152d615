import ApplePayModel
import ApplePaySandbox
import Foundation
import Gateway
import GatewayHTTP
import GatewayProcessors
import GatewayTestSupport
import OrchardTestSupport
import Testing

/// Lost answers from the processors' stand-ins, and reconciliation: each ends with the payment settled and exactly
/// one authorization at the processor (Adyen: sent again with its Idempotency-Key; Checkout.com: looked up by its
/// reference first, sent again only when it has none).
@Suite("Processors: lost answers reconciled with exactly one authorization", .serialized)
struct ProcessorReconciliationTests {
    static let apis: [ProcessorStandIn.API] = [.adyen, .checkoutCom]
    static let failures = ["timeout", "500", "truncated"]

    @Test(
        "a timeout after the request was sent, a 500 and a truncated body: unknown, then one authorization",
        arguments: apis, failures)
    func lostAnswer(_ api: ProcessorStandIn.API, failure: String) throws {
        let p = try ProcessorHarness(api, timeout: 2)
        try p.standIn.script("authorize", [["fail": failure, "seconds": 4]])
        let paid = try p.pay(capture: "manual")
        #expect(paid.status == 200 && paid.json["status"] as? String == "unknown", "\(paid.text)")
        let id = try #require(paid.json["id"] as? String)
        #expect(try p.authorizations(id) == 1, "the processor made the payment; only its answer was lost")
        // The card data waits sealed for the recovery; nothing is settled before the reconciliation delay.
        #expect(try p.h.runtime.store.read { try $0.cardData(paymentID: id) } != nil)
        let early = try p.reconcile(after: 0)
        #expect(early.settledPayments.isEmpty)
        let report = try p.reconcile()
        #expect(report.settledPayments == [id] && report.stillUnknown.isEmpty)
        let payment = try p.payment(id)
        #expect(payment["status"] as? String == "authorized" && payment["processor_reference"] as? String != nil)
        #expect(try p.authorizations(id) == 1, "reconciled without a second authorization")
        #expect(try p.events(id) == ["payment.unknown_resolved"])
        #expect(try p.h.runtime.store.read { try $0.cardData(paymentID: id) } == nil, "dropped once settled")
        let sends = try p.standIn.requests(to: api == .adyen ? "/v71/payments" : "/payments").count
        #expect(sends == (api == .adyen ? 2 : 1), "Adyen is sent the same request again; Checkout.com is looked up")
        // And the payment goes on: captured at the processor that authorized it.
        let capture = try p.h.merchantServer("POST", "/v1/payments/\(id)/capture")
        #expect(capture.json["status"] as? String == "capture_pending", "\(capture.text)")
        try p.standIn.deliver()
        #expect(try p.status(id) == "captured")
    }

    @Test("a refused connection: unknown, then sent once the processor is back: one authorization", arguments: apis)
    func connectionRefused(_ api: ProcessorStandIn.API) throws {
        let p = try ProcessorHarness(api, timeout: 2)
        let port = p.standIn.port
        p.standIn.stop()
        let paid = try p.pay(capture: "now")
        #expect(paid.status == 200 && paid.json["status"] as? String == "unknown", "\(paid.text)")
        let id = try #require(paid.json["id"] as? String)
        // Still down: nothing settles, nothing is lost.
        #expect(try p.reconcile().stillUnknown == [id])
        let back = try ProcessorStandIn(api: api, port: port)
        p.standIn = back
        try p.configureStandIn()
        let report = try p.reconcile()
        #expect(report.settledPayments == [id])
        #expect(try p.authorizations(id) == 1)
        // Capture mode now: captured at the processor as the payment asked.
        try p.standIn.deliver()
        if try p.status(id) != "captured" {
            _ = try p.reconcile()
            try p.standIn.deliver()
        }
        #expect(try p.status(id) == "captured")
        #expect(try p.events(id) == ["payment.unknown_resolved", "payment.captured"])
        #expect(try p.authorizations(id) == 1)
    }

    @Test(
        "a capture whose answer was lost is asked about (Checkout.com) or sent again with its key (Adyen): one capture",
        arguments: apis)
    func lostCaptureAnswer(_ api: ProcessorStandIn.API) throws {
        let p = try ProcessorHarness(api, timeout: 2)
        let id = try #require(try p.pay(capture: "manual").json["id"] as? String)
        try p.standIn.script("capture", [["fail": "timeout", "seconds": 4]])
        let capture = try p.h.merchantServer("POST", "/v1/payments/\(id)/capture")
        #expect(capture.status == 503 && capture.errorCode == "processor_unavailable", "\(capture.text)")
        _ = try p.reconcile()
        try p.standIn.deliver()
        #expect(try p.status(id) == "captured")
        let ledger = try p.standIn.ledger().first { $0["reference"] as? String == id }
        if api == .adyen {
            #expect(
                (ledger?["modifications"] as? [[String: Any]])?.filter { $0["kind"] as? String == "capture" }.count == 1
            )
        } else {
            #expect((ledger?["actions"] as? [[String: Any]])?.filter { $0["type"] as? String == "Capture" }.count == 1)
        }
    }
}
