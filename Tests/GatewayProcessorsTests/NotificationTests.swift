import Foundation
import Gateway
import OrchardCrypto
import OrchardJSON
import Testing

@testable import GatewayProcessors

@Suite("Processor notifications: signatures and what their items say")
struct NotificationTests {
    /// Adyen's own vectors (its Python library's tests: `test_notification_request_item_hmac` and the
    /// `test/mocks/util/*_notification.json` webhooks), the merchant references as JSON text.
    static let adyenVectors:
        [(key: String, psp: String, account: String, reference: String, value: Int, signature: String)] = [
            (
                "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056", "7914073381342284", "TestMerchant",
                "TestPayment-1407325143704", 1130, "coqCmt/IZ4E3CzPvMY8zTjQVL5hYJUiBRg8UU+iCWo0="
            ),
            (
                "74F490DD33F7327BAECC88B2947C011FC02D014A473AAA33A8EC93E4DC069174", "T7FD4VM4D3RZNN82",
                "AntoniStroinski",
                #"\\\\slashes are fun"#, 1000, "nIgT81gaB5oJpn2jPXupDq68iRo2wUlBsuYjtYfwKqo="
            ),
            (
                "74F490DD33F7327BAECC88B2947C011FC02D014A473AAA33A8EC93E4DC069174", "M8NB66SBZSGLNK82",
                "AntoniStroinski",
                ":slashes are fun", 1000, "2EQYm7YJpKO4EtHSPu55SQTyWf8dkW5u2nD1tJFpViA="
            ),
            (
                "74F490DD33F7327BAECC88B2947C011FC02D014A473AAA33A8EC93E4DC069174", "X3GWNS6KJ8NKGK82",
                "AntoniStroinski",
                "//slashes are fun", 1000, "9Z0xdpG9Xi3zcmXv14t/BvMBut77O/Xq9D4CQXSDUi4="
            ),
            (
                "74F490DD33F7327BAECC88B2947C011FC02D014A473AAA33A8EC93E4DC069174", "ZVWN7D3WSMK2WN82",
                "AntoniStroinski",
                #"\\:/\\/slashes are fun"#, 1000, "CZErGCNQaSsxbaQfZaJlakqo7KPP+mIa8a+wx3yNs9A="
            ),
        ]

    static func item(psp: String, account: String, reference: String, value: Int, signature: String) -> String {
        """
        {"additionalData":{"hmacSignature":"\(signature)"},"amount":{"currency":"EUR","value":\(value)},\
        "eventCode":"AUTHORISATION","eventDate":"2019-05-06T17:15:34.121+02:00","merchantAccountCode":"\(account)",\
        "merchantReference":"\(reference)","pspReference":"\(psp)","reason":"","success":"true"}
        """
    }

    static func account(hmacKey: String, basic: (String, String)? = nil) -> ProcessorAccount {
        var fields = ["merchant_account": "TestMerchant"]
        var secrets = ["api_key": SecureBytes(Array("k".utf8)), "hmac_key": SecureBytes(Array(hmacKey.utf8))]
        if let (user, password) = basic {
            fields["notification_username"] = user
            secrets["notification_password"] = SecureBytes(Array(password.utf8))
        }
        return ProcessorAccount(
            merchantID: "mch_1", version: 1, type: "adyen", environment: "test", fields: fields, secrets: secrets)
    }

    static func request(_ items: [String], headers: [(String, String)] = []) -> ProcessorNotificationRequest {
        let body =
            #"{"live":"false","notificationItems":["#
            + items.map { #"{"NotificationRequestItem":\#($0)}"# }
            .joined(separator: ",") + "]}"
        return ProcessorNotificationRequest(body: Data(body.utf8), headers: headers)
    }

    @Test("Adyen's vectors verify, their signing strings unescaped; any change to a signed field refuses the batch")
    func adyenVectors() throws {
        let connector = AdyenConnector()
        for vector in Self.adyenVectors {
            let item = Self.item(
                psp: vector.psp, account: vector.account, reference: vector.reference, value: vector.value,
                signature: vector.signature)
            let batch = try connector.notifications(Self.request([item]), account: Self.account(hmacKey: vector.key))
            #expect(batch.acknowledgement == "[accepted]")
            #expect(batch.notifications.first?.paymentReference == vector.psp)
            #expect(batch.notifications.first?.event == .authorization && batch.notifications.first?.success == true)
            let parsed = try #require(try JSONValue.parse(Data(item.utf8)))
            #expect(AdyenSignature.signingString(of: parsed).hasPrefix(vector.psp + "::" + vector.account + ":"))
            let tampered = item.replacingOccurrences(
                of: "\"value\":\(vector.value)", with: "\"value\":\(vector.value + 1)")
            #expect(throws: GatewayError(.processorSignatureInvalid)) {
                try connector.notifications(Self.request([tampered]), account: Self.account(hmacKey: vector.key))
            }
        }
        let first = Self.adyenVectors[0]
        let good = Self.item(
            psp: first.psp, account: first.account, reference: first.reference, value: first.value,
            signature: first.signature)
        let unsigned = good.replacingOccurrences(of: #""hmacSignature":"\#(first.signature)""#, with: #""other":"x""#)
        #expect(throws: GatewayError(.processorSignatureInvalid)) {
            try connector.notifications(Self.request([good, unsigned]), account: Self.account(hmacKey: first.key))
        }
        #expect(throws: GatewayError(.processorSignatureInvalid)) {
            try connector.notifications(Self.request([good]), account: Self.account(hmacKey: Self.adyenVectors[1].key))
        }
    }

    @Test("Adyen's Basic auth, when the settings have a user name")
    func adyenBasicAuth() throws {
        let connector = AdyenConnector()
        let first = Self.adyenVectors[0]
        let item = Self.item(
            psp: first.psp, account: first.account, reference: first.reference, value: first.value,
            signature: first.signature)
        let account = Self.account(hmacKey: first.key, basic: ("orchard", "n0t1f1cat10n"))
        #expect(throws: GatewayError(.processorSignatureInvalid)) {
            try connector.notifications(Self.request([item]), account: account)
        }
        let wrong = "Basic " + Data("orchard:wrong".utf8).base64EncodedString()
        #expect(throws: GatewayError(.processorSignatureInvalid)) {
            try connector.notifications(Self.request([item], headers: [("Authorization", wrong)]), account: account)
        }
        let right = "Basic " + Data("orchard:n0t1f1cat10n".utf8).base64EncodedString()
        let batch = try connector.notifications(
            Self.request([item], headers: [("authorization", right)]), account: account)
        #expect(batch.notifications.count == 1)
    }

    @Test("Adyen's items: the payment by pspReference or originalReference, amounts in ISO units, refusals coded")
    func adyenItems() throws {
        func item(_ json: String) throws -> ProcessorNotification {
            AdyenConnector.notification(try JSONValue.parse(Data(json.utf8)))
        }
        let capture = try item(
            #"{"pspReference":"CAP1","originalReference":"PAY1","merchantReference":"pay_1","eventCode":"CAPTURE","success":"true","amount":{"value":150000,"currency":"ISK"}}"#
        )
        #expect(capture.event == .capture && capture.paymentReference == "PAY1" && capture.operationReference == "CAP1")
        #expect(capture.amount == 1_500 && capture.key == "CAPTURE:CAP1:PAY1:true")
        let refused = try item(
            #"{"pspReference":"PAY2","merchantReference":"pay_2","eventCode":"AUTHORISATION","success":"false","reason":"Not enough balance","amount":{"value":100,"currency":"EUR"}}"#
        )
        #expect(refused.declineCode == "insufficient_funds" && refused.processorCode == "Not enough balance")
        let approved = try item(
            #"{"pspReference":"PAY3","merchantReference":"pay_3","eventCode":"AUTHORISATION","success":"true","reason":"076181:1111:03/2030","amount":{"value":100,"currency":"EUR"}}"#
        )
        #expect(approved.authCode == "076181" && approved.paymentReference == "PAY3")
        for (code, event) in [
            ("CAPTURE_FAILED", ProcessorNotification.Event.captureFailed), ("CANCELLATION", .void), ("REFUND", .refund),
            ("REFUND_FAILED", .refundReversed), ("REFUNDED_REVERSED", .refundReversed), ("CHARGEBACK", .chargeback),
            ("REPORT_AVAILABLE", .other),
        ] {
            #expect(try item(#"{"pspReference":"X","eventCode":"\#(code)","success":"true"}"#).event == event)
        }
    }

    @Test("Checkout.com: Cko-Signature over the raw body, its events in the domain's words")
    func checkoutCom() throws {
        let connector = CheckoutComConnector()
        let account = ProcessorAccount(
            merchantID: "mch_1", version: 1, type: "checkout_com", environment: "sandbox",
            fields: ["processing_channel_id": "pc_1"],
            secrets: [
                "secret_key": SecureBytes(Array("sk_x".utf8)),
                "webhook_secret": SecureBytes(Array("test_secret_key".utf8)),
            ])
        // The research notes' self-computed vector.
        let body = Data(#"{"id":"evt_test","type":"payment_captured","data":{"id":"pay_test","amount":1000}}"#.utf8)
        let signature = "f09a65d666c5f32a1e4035f889832bb952ddbf44c937dc473f5ce095a8ce967a"
        let batch = try connector.notifications(
            ProcessorNotificationRequest(body: body, headers: [("Cko-Signature", signature.uppercased())]),
            account: account)
        let event = try #require(batch.notifications.first)
        #expect(
            event.key == "evt_test" && event.event == .capture && event.success && event.paymentReference == "pay_test")
        #expect(throws: GatewayError(.processorSignatureInvalid)) {
            try connector.notifications(ProcessorNotificationRequest(body: body, headers: []), account: account)
        }
        var changed = body
        changed[changed.count - 3] = UInt8(ascii: "1")
        #expect(throws: GatewayError(.processorSignatureInvalid)) {
            try connector.notifications(
                ProcessorNotificationRequest(body: changed, headers: [("Cko-Signature", signature)]), account: account)
        }
        let declined = CheckoutComConnector.notification(
            id: "evt_2", type: "payment_declined",
            data: try JSONValue.parse(
                Data(#"{"id":"pay_2","reference":"pay_o2","response_code":"20051","amount":100,"currency":"KWD"}"#.utf8)
            ))
        #expect(declined.event == .authorization && !declined.success && declined.declineCode == "insufficient_funds")
        #expect(declined.processorCode == "20051" && declined.merchantReference == "pay_o2" && declined.amount == 100)
    }
}
