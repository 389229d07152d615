import Foundation
import Gateway
import OrchardCrypto
import OrchardTestSupport
import Testing

@testable import GatewayProcessors

@Suite("Minor units by each processor's own currency table")
struct MinorUnitsTests {
    @Test(
        "ISO minor units to the processor's and back, exactly or not at all",
        arguments: [
            ("adyen", "EUR", 1_000, 1_000 as Int64?), ("adyen", "ISK", 1_000, 100_000), ("adyen", "IDR", 12_300, 123),
            ("adyen", "IDR", 12_345, nil), ("adyen", "CLP", 500, 50_000), ("adyen", "KWD", 1_234, 1_234),
            ("adyen", "JPY", 1_000, 1_000), ("checkout_com", "ISK", 1_000, 1_000), ("checkout_com", "CLP", 500, 50_000),
            ("checkout_com", "KWD", 1_230, 1_230), ("checkout_com", "KWD", 1_234, nil),
            ("checkout_com", "IDR", 12_345, 12_345),
        ] as [(String, String, Int64, Int64?)])
    func conversions(processor: String, currency: String, iso: Int64, expected: Int64?) {
        let table = processor == "adyen" ? MinorUnits.adyen : MinorUnits.checkoutCom
        #expect(table.processorAmount(iso, currency: currency) == expected)
        if let expected { #expect(table.isoAmount(expected, currency: currency) == iso) }
    }
}

@Suite("Adyen against its stand-in: the request, its answers, idempotency, modifications", .serialized)
struct AdyenStandInTests {
    let standIn: ProcessorStandIn
    let processor: any Processor

    init() throws {
        standIn = try ConnectorFixtures.standIn(.adyen)
        let connector = AdyenConnector(configuration: ConnectorFixtures.configuration(standIn))
        processor = try connector.processor(for: try ConnectorFixtures.account(connector, ConnectorFixtures.adyenBody))
    }

    @Test("an authorization: the card as scheme, the cryptogram in mpiData, applepay, e-commerce, manual capture")
    func request() throws {
        let outcome = processor.authorize(ConnectorFixtures.request(amount: 12_345, currency: "EUR"))
        guard case .approved(let approval) = outcome else { Issue.record("\(outcome)"); return }
        #expect(approval.reference.count == 16 && approval.authCode.count == 6 && approval.capture == nil)
        let body = try standIn.body(of: "/v71/payments")
        #expect(body["reference"] as? String == "pay_test_1")
        #expect(body["merchantAccount"] as? String == "OrchardShopECOM")
        #expect(body["returnUrl"] as? String != nil && body["shopperInteraction"] as? String == "Ecommerce")
        #expect((body["amount"] as? [String: Any])?["value"] as? Int == 12_345)
        let method = try #require(body["paymentMethod"] as? [String: String])
        #expect(
            method == ["type": "scheme", "number": ConnectorFixtures.pan, "expiryMonth": "12", "expiryYear": "2030"])
        let mpi = try #require(body["mpiData"] as? [String: String])
        #expect(mpi["cavv"] == ConnectorFixtures.cryptogram && mpi["eci"] == "07")
        #expect(mpi["directoryResponse"] == "Y" && mpi["authenticationResponse"] == "Y")
        #expect(
            body["additionalData"] as? [String: String] == [
                "paymentdatasource.type": "applepay", "manualCapture": "true",
            ])
        let headers = try standIn.headers(of: "/v71/payments")
        #expect(headers["x-api-key"] == ConnectorFixtures.adyenBody["api_key"])
        #expect(headers["idempotency-key"] == GatewayService.authorizationOperationID("pay_test_1"))
    }

    @Test("declines with several codes keep Adyen's code; unknown ones are do_not_honor")
    func declines() throws {
        try standIn.script(
            "authorize",
            [
                ["result": "Refused", "code": "12", "reason": "Not enough balance"],
                ["result": "Refused", "code": "6", "reason": "Expired Card"],
                ["result": "Refused", "code": "77", "reason": "Something new"],
                ["result": "Error", "code": "4", "reason": "Acquirer Error"],
            ])
        let expected = [
            ("insufficient_funds", "12"), ("expired_card", "6"), ("do_not_honor", "77"), ("processing_error", "4"),
        ]
        for (index, (code, raw)) in expected.enumerated() {
            let outcome = processor.authorize(ConnectorFixtures.request(reference: "pay_decline_\(index)"))
            #expect(outcome == .declined(code: code, processorCode: raw))
        }
    }

    @Test("a resend with the same key is answered with the first outcome: one authorization at Adyen")
    func idempotentResend() throws {
        let first = processor.authorize(ConnectorFixtures.request(reference: "pay_again"))
        let second = processor.authorize(ConnectorFixtures.request(reference: "pay_again"))
        #expect(first == second)
        #expect(try standIn.ledger().filter { $0["reference"] as? String == "pay_again" }.count == 1)
        // Another body under the same key is refused, as a key is for one request only.
        let other = processor.authorize(ConnectorFixtures.request(amount: 1, reference: "pay_again"))
        guard case .declined(GatewayService.processorRefusedCode, _) = other else { Issue.record("\(other)"); return }
    }

    @Test("lost answers: a timeout, a 500 and a cut body are not outcomes; a resend gets the real one")
    func lostAnswers() throws {
        try standIn.script("authorize", [["fail": "timeout", "seconds": 5], ["fail": "500"], ["fail": "truncated"]])
        let timedOut = processor.authorize(ConnectorFixtures.request(reference: "pay_lost_0"))
        #expect(timedOut == .timeout)
        #expect(processor.authorize(ConnectorFixtures.request(reference: "pay_lost_1")) == .unknown)
        #expect(processor.authorize(ConnectorFixtures.request(reference: "pay_lost_2")) == .unknown)
        for index in 0..<3 {
            let resent = processor.authorize(ConnectorFixtures.request(reference: "pay_lost_\(index)"))
            guard case .approved = resent else { Issue.record("resend \(index): \(resent)"); continue }
        }
        let ledger = try standIn.ledger()
        for index in 0..<3 {
            #expect(
                ledger.filter { $0["reference"] as? String == "pay_lost_\(index)" }.map { $0["authorizations"] as? Int }
                    == [1])
        }
        #expect(processor.query(merchantReference: "pay_lost_0") == .unsupported)
    }

    @Test("what the API refuses: a wrong key, an EMV token, an amount its currency table cannot express")
    func refusals() throws {
        let connector = AdyenConnector(configuration: ConnectorFixtures.configuration(standIn))
        var body = ConnectorFixtures.adyenBody
        body["api_key"] = "AQE-wrong-key"
        let wrong = try connector.processor(for: try ConnectorFixtures.account(connector, body))
        #expect(
            wrong.authorize(ConnectorFixtures.request(reference: "pay_wrong"))
                == .declined(code: "processor_refused", processorCode: "000"))
        #expect(throws: GatewayError.self) { try processor.check(ConnectorFixtures.request(cryptogram: nil)) }
        #expect(throws: GatewayError.self) {
            try processor.check(ConnectorFixtures.request(amount: 12_345, currency: "IDR"))
        }
        try processor.check(ConnectorFixtures.request(amount: 12_300, currency: "IDR"))
        #expect(try standIn.requests(to: "/v71/payments").count == 1, "nothing sent for what check refused")
    }

    @Test("capture, cancel and refund are received, with the operation id as key and reference")
    func modifications() throws {
        guard case .approved(let approval) = processor.authorize(ConnectorFixtures.request(reference: "pay_mod")) else {
            Issue.record("not approved"); return
        }
        let capture = processor.capture(
            reference: approval.reference, amount: 6_000, currency: "EUR", operationID: "capture_pay_mod")
        guard case .accepted(let captureReference?) = capture else { Issue.record("\(capture)"); return }
        #expect(captureReference.count == 16 && captureReference != approval.reference)
        let path = "/v71/payments/\(approval.reference)/captures"
        #expect(try standIn.headers(of: path)["idempotency-key"] == "capture_pay_mod")
        let body = try standIn.body(of: path)
        #expect(
            body["reference"] as? String == "capture_pay_mod" && body["merchantAccount"] as? String == "OrchardShopECOM"
        )
        #expect((body["amount"] as? [String: Any])?["value"] as? Int == 6_000)
        let refund = processor.refund(
            reference: approval.reference, amount: 2_000, currency: "EUR", operationID: "re_1")
        guard case .accepted = refund else { Issue.record("\(refund)"); return }
        #expect(
            processor.refund(reference: approval.reference, amount: 9_000, currency: "EUR", operationID: "re_2")
                == .declined(code: "processor_refused"))
        guard case .approved(let other) = processor.authorize(ConnectorFixtures.request(reference: "pay_cancel")) else {
            Issue.record("not approved"); return
        }
        guard case .accepted = processor.void(reference: other.reference, operationID: "void_pay_cancel") else {
            Issue.record("cancel refused"); return
        }
        #expect(
            processor.capture(reference: "UNKNOWN000000000", amount: 1, currency: "EUR", operationID: "c")
                == .declined(code: "processor_refused"))
    }

    @Test("the connection test: POST /paymentMethods, refused for a wrong merchant account")
    func connectionTest() throws {
        let connector = AdyenConnector(configuration: ConnectorFixtures.configuration(standIn))
        #expect(
            connector.testConnection(try ConnectorFixtures.account(connector, ConnectorFixtures.adyenBody)).outcome
                == .ok)
        var body = ConnectorFixtures.adyenBody
        body["merchant_account"] = "SomeoneElse"
        let refused = connector.testConnection(try ConnectorFixtures.account(connector, body))
        #expect(refused.outcome == .failed && refused.httpStatus == 403)
        standIn.stop()
        #expect(
            connector.testConnection(try ConnectorFixtures.account(connector, ConnectorFixtures.adyenBody)).outcome
                == .failed)
    }
}

@Suite("Checkout.com against its stand-in: the request, its answers, lookups, actions", .serialized)
struct CheckoutComStandInTests {
    let standIn: ProcessorStandIn
    let processor: any Processor

    init() throws {
        standIn = try ConnectorFixtures.standIn(.checkoutCom)
        let connector = CheckoutComConnector(configuration: ConnectorFixtures.configuration(standIn))
        processor = try connector.processor(
            for: try ConnectorFixtures.account(connector, ConnectorFixtures.checkoutBody))
    }

    @Test("an authorization: a network_token source of type applepay, capture as asked, the channel, the key")
    func request() throws {
        let outcome = processor.authorize(ConnectorFixtures.request(amount: 1_230, currency: "KWD"))
        guard case .approved(let approval) = outcome else { Issue.record("\(outcome)"); return }
        #expect(approval.reference.hasPrefix("pay_") && approval.capture == nil)
        let body = try standIn.body(of: "/payments")
        let source = try #require(body["source"] as? [String: Any])
        #expect(source["type"] as? String == "network_token" && source["token_type"] as? String == "applepay")
        #expect(
            source["token"] as? String == ConnectorFixtures.pan
                && source["cryptogram"] as? String == ConnectorFixtures.cryptogram)
        #expect(
            source["expiry_month"] as? Int == 12 && source["expiry_year"] as? Int == 2030
                && source["eci"] as? String == "07")
        #expect(body["amount"] as? Int == 1_230 && body["currency"] as? String == "KWD")
        #expect(body["capture"] as? Bool == false && body["reference"] as? String == "pay_test_1")
        #expect(body["processing_channel_id"] as? String == "pc_w2njpb6jbjjujgcz5dgzxdn5mm")
        let headers = try standIn.headers(of: "/payments")
        #expect(headers["authorization"] == "Bearer sk_sbox_test_secret_0001")
        #expect(headers["cko-idempotency-key"] == GatewayService.authorizationOperationID("pay_test_1"))
        let now = processor.authorize(ConnectorFixtures.request(reference: "pay_now", captureNow: true))
        guard case .approved(let captured) = now else { Issue.record("\(now)"); return }
        #expect(captured.capture != nil)
        #expect(try standIn.body(of: "/payments", 1)["capture"] as? Bool == true)
    }

    @Test("declines with several response codes; unknown ones are do_not_honor with the code kept")
    func declines() throws {
        try standIn.script(
            "authorize",
            [
                ["approved": false, "response_code": "20051"], ["approved": false, "response_code": "20054"],
                ["approved": false, "response_code": "20059"], ["approved": false, "response_code": "29998"],
            ])
        let expected = ["insufficient_funds", "expired_card", "fraud_suspected", "do_not_honor"]
        let raws = ["20051", "20054", "20059", "29998"]
        for index in 0..<4 {
            #expect(
                processor.authorize(ConnectorFixtures.request(reference: "pay_decline_\(index)"))
                    == .declined(code: expected[index], processorCode: raws[index]))
        }
    }

    @Test("a 500 after the payment was made is looked up by reference, not sent again")
    func lookup() throws {
        try standIn.script("authorize", [["fail": "500"]])
        #expect(processor.authorize(ConnectorFixtures.request(reference: "pay_500")) == .unknown)
        guard case .approved = processor.query(merchantReference: "pay_500") else { Issue.record("not found"); return }
        #expect(processor.query(merchantReference: "pay_never") == .notFound)
        #expect(try standIn.ledger().filter { $0["reference"] as? String == "pay_500" }.count == 1)
    }

    @Test("captures, voids and refunds are accepted; their outcome is read from the payment's actions")
    func actions() throws {
        guard case .approved(let approval) = processor.authorize(ConnectorFixtures.request(reference: "pay_act")) else {
            Issue.record("not approved"); return
        }
        try standIn.script("refund", [["success": false, "response_code": "20006"]])
        let capture = processor.capture(
            reference: approval.reference, amount: 10_000, currency: "EUR", operationID: "capture_pay_act")
        guard case .accepted(let action?) = capture else { Issue.record("\(capture)"); return }
        #expect(action.hasPrefix("act_"))
        #expect(
            try standIn.headers(of: "/payments/\(approval.reference)/captures")["cko-idempotency-key"]
                == "capture_pay_act")
        #expect(
            processor.operationStatus(
                .capture, reference: approval.reference, operationID: "capture_pay_act", amount: 10_000) == .succeeded)
        guard
            case .accepted = processor.refund(
                reference: approval.reference, amount: 4_000, currency: "EUR", operationID: "re_act")
        else {
            Issue.record("refund refused"); return
        }
        #expect(
            processor.operationStatus(.refund, reference: approval.reference, operationID: "re_act", amount: 4_000)
                == .declined(code: "processing_error"))
        #expect(
            processor.operationStatus(.refund, reference: approval.reference, operationID: "re_none", amount: 1)
                == .accepted(reference: nil))
        #expect(
            processor.void(reference: approval.reference, operationID: "void_pay_act")
                == .declined(code: "processor_refused"))
    }

    @Test("what the API refuses: a wrong key, a wrong channel, a 3-decimal amount not ending in 0; the test")
    func refusals() throws {
        let connector = CheckoutComConnector(configuration: ConnectorFixtures.configuration(standIn))
        var body = ConnectorFixtures.checkoutBody
        body["secret_key"] = "sk_sbox_wrong"
        let wrong = try connector.processor(for: try ConnectorFixtures.account(connector, body))
        #expect(
            wrong.authorize(ConnectorFixtures.request(reference: "pay_k"))
                == .declined(code: "processor_refused", processorCode: "401"))
        #expect(connector.testConnection(try ConnectorFixtures.account(connector, body)).httpStatus == 401)
        body = ConnectorFixtures.checkoutBody
        body["processing_channel_id"] = "pc_someoneelse"
        let channel = try connector.processor(for: try ConnectorFixtures.account(connector, body))
        #expect(
            channel.authorize(ConnectorFixtures.request(reference: "pay_c"))
                == .declined(code: "processor_refused", processorCode: "processing_channel_id_invalid"))
        #expect(throws: GatewayError.self) {
            try processor.check(ConnectorFixtures.request(amount: 1_234, currency: "KWD"))
        }
        #expect(throws: GatewayError.self) { try processor.check(ConnectorFixtures.request(cryptogram: nil)) }
        #expect(
            connector.testConnection(try ConnectorFixtures.account(connector, ConnectorFixtures.checkoutBody)).outcome
                == .ok)
    }
}
