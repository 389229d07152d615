import Foundation
import Gateway
import GatewayCurl
import GatewayHTTP
import GatewayTestSupport
import OrchardCrypto
import OrchardHTTP
import OrchardJSON
import Testing

/// A notify URL on loopback: records each request and answers PayerMax's acknowledgement (or `answer`).
final class NotifyReceiver: HTTPResponder, @unchecked Sendable {
    private let lock = NSLock()
    private var received: [HTTPRequest] = []
    private let answer: Data

    init(answer: String = #"{"code":"SUCCESS","msg":"Success"}"#) { self.answer = Data(answer.utf8) }

    var requests: [HTTPRequest] { lock.withLock { received } }

    func respond(to request: HTTPRequest) -> HTTPResponse {
        lock.withLock { received.append(request) }
        return HTTPResponse(status: .ok, headers: ["Content-Type": "application/json"], body: answer)
    }

    func respond(to request: HTTPRequest, rejectedWith error: HTTPAPIError) -> HTTPResponse {
        HTTPResponse(status: .badRequest, headers: [:], body: Data())
    }
}

@Suite("PayerMax-compatible gateway routes (applyApplePaySession, orderAndPay) and their notification", .serialized)
struct PayerMaxRoutesTests {
    static let merchantNo = "SDP01010115045982"

    /// A harness whose merchant registered `key` (made in the test) under ``merchantNo``.
    func registered(_ h: APIHarness, key: EVPKey) throws {
        let put = try h.merchantServer(
            "PUT", "/v1/compat/payermax",
            json: ["merchant_no": Self.merchantNo, "public_key_pem": key.publicKeyPEM])
        try #require(put.status == 200, "\(put.text)")
    }

    /// The gateway's public key, as `GET /v1/compat/payermax` publishes it.
    func gatewayKey(_ h: APIHarness) throws -> EVPKey {
        let got = try h.merchantServer("GET", "/v1/compat/payermax")
        try #require(got.status == 200, "\(got.text)")
        return try EVPKey(publicKeyPEM: try #require(got.json["gateway_public_key_pem"] as? String))
    }

    /// PayerMax's `requestTime` form, at `offset` seconds from the harness clock, in UTC+8.
    func requestTime(_ h: APIHarness, offset: TimeInterval = 0) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(secondsFromGMT: 8 * 3600)
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss.SSSXXX"
        return formatter.string(from: h.clock.now().addingTimeInterval(offset))
    }

    /// The envelope's exact bytes.
    func envelope(
        _ h: APIHarness, _ data: [String: Any], merchantNo: String = Self.merchantNo, appID: String? = nil,
        offset: TimeInterval = 0
    ) throws -> Data {
        try JSONWriter.json([
            "version": "1.5", "keyVersion": "1", "requestTime": requestTime(h, offset: offset),
            "appId": appID ?? h.credentials.appID, "merchantNo": merchantNo, "data": data,
        ] as [String: Any])
    }

    /// POSTs `body` signed by `key` (SHA256withRSA, Base64 in `sign`) and checks the answer's `sign` with the
    /// gateway's published key.
    func call(
        _ h: APIHarness, _ path: String, _ body: Data, key: EVPKey, signature: String? = nil,
        headers: [String: String] = [:]
    ) throws -> [String: Any] {
        let sign = try signature ?? Data(RSASignature.sign(body, key: key)).base64EncodedString()
        let response = try h.call(
            "POST", "/aggregate-pay/api/gateway/\(path)",
            headers: ["Content-Type": "application/json", "sign": sign].merging(headers) { $1 }, body: body)
        #expect(response.status == 200, "\(response.text)")
        let answerSign = try #require(response.headers["sign"].flatMap { Data(base64Encoded: $0) })
        #expect(RSASignature.isValid(answerSign, of: response.body, key: try gatewayKey(h)))
        return response.json
    }

    func apply(_ h: APIHarness, key: EVPKey, outTradeNo: String = "P1642410680681", amount: Any = 50.00,
        notifyURL: String? = nil
    ) throws -> [String: Any] {
        var data: [String: Any] = [
            "outTradeNo": outTradeNo, "totalAmount": amount, "currency": "TWD", "country": "TW",
            "userId": "u-1", "subject": "Tea",
        ]
        if let notifyURL { data["notifyUrl"] = notifyURL }
        return try call(h, "applyApplePaySession", try envelope(h, data), key: key)
    }

    @Test("registration: an RSA key of 2048 bits or more, PEM or bare Base64 DER; GET shows it and the gateway's key")
    func registration() throws {
        let h = try APIHarness()
        let key = try EVPKey.generateRSA(bits: 2048)
        let bare = Data(key.publicKeyDER).base64EncodedString()
        let put = try h.merchantServer(
            "PUT", "/v1/compat/payermax", json: ["merchant_no": Self.merchantNo, "public_key_pem": bare])
        #expect(put.status == 200, "\(put.text)")
        #expect(put.json["merchant_no"] as? String == Self.merchantNo)
        #expect(put.json["public_key_pem"] as? String == key.publicKeyPEM)
        #expect(put.json["app_id"] as? String == h.credentials.appID)
        let gateway = try gatewayKey(h)
        #expect(gateway.kind == .rsa && gateway.bits == 2048)
        #expect(try gatewayKey(h).hasSamePublicKey(as: gateway))
        for weak in [try EVPKey.generateRSA(bits: 1024), try EVPKey.generateEC()] {
            let refused = try h.merchantServer(
                "PUT", "/v1/compat/payermax",
                json: ["merchant_no": Self.merchantNo, "public_key_pem": weak.publicKeyPEM])
            #expect(refused.status == 422)
            #expect(refused.error["code"] as? String == "public_key_invalid")
            #expect(refused.error["param"] as? String == "public_key_pem")
        }
        let audit = try h.merchantServer("GET", "/v1/audit-log")
        #expect(audit.text.contains("compat.payermax.update"))
    }

    @Test("applyApplePaySession makes an Orchard session: the seed's answer, the order token is the /v1 session's")
    func applySession() throws {
        let h = try APIHarness()
        let key = try EVPKey.generateRSA(bits: 2048)
        try registered(h, key: key)
        let answer = try apply(h, key: key)
        #expect(answer["code"] as? String == "APPLY_SUCCESS")
        #expect(answer["msg"] as? String == "Success.")
        let data = try #require(answer["data"] as? [String: Any])
        #expect(data["amount"] as? String == "50.00")
        #expect(data["currency"] as? String == "TWD")
        #expect(data["country"] as? String == "TW")
        #expect(data["merchantId"] as? String == h.merchant.merchantIdentifiers.first)
        #expect((data["networks"] as? [String])?.contains("masterCard") == true)
        let orderToken = try #require(data["orderToken"] as? String)
        let session = try h.client("GET", "/v1/sessions/\(orderToken)")
        #expect(session.status == 200)
        #expect(session.json["out_trade_no"] as? String == "P1642410680681")
        #expect(session.json["amount"] as? String == "50.00")
        // A string amount is read the same; the same outTradeNo again is PayerMax's ORDER_REPEAT.
        let again = try apply(h, key: key, amount: "50.00")
        #expect(again["code"] as? String == "ORDER_REPEAT")
        #expect(again["orchard_code"] as? String == "duplicate_out_trade_no")
        let tooPrecise = try apply(h, key: key, outTradeNo: "P2", amount: "50.005")
        #expect(tooPrecise["code"] as? String == "AMOUNT_INVALID")
    }

    @Test("refusals: a bad signature, a stale or future requestTime, an unknown merchantNo or appId")
    func refusals() throws {
        let h = try APIHarness()
        let key = try EVPKey.generateRSA(bits: 2048)
        try registered(h, key: key)
        let data: [String: Any] = [
            "outTradeNo": "R1", "totalAmount": 1, "currency": "TWD", "country": "TW", "userId": "u", "subject": "s",
        ]
        let body = try envelope(h, data)
        // Signed by another key, or the body changed after signing (one space added).
        let other = try EVPKey.generateRSA(bits: 2048)
        #expect(try call(h, "applyApplePaySession", body, key: other)["code"] as? String == "SIGN_VERIFY_FAILED")
        let signed = try Data(RSASignature.sign(body, key: key)).base64EncodedString()
        var changed = body
        changed.insert(0x20, at: 1)
        let tampered = try call(h, "applyApplePaySession", changed, key: key, signature: signed)
        #expect(tampered["code"] as? String == "SIGN_VERIFY_FAILED")
        #expect(tampered["msg"] as? String == "The signature verify failed.")
        #expect(try call(h, "applyApplePaySession", body, key: key, signature: "")["code"] as? String == "SIGN_VERIFY_FAILED")
        // ±120 s from the gateway's clock.
        for offset: TimeInterval in [-121, 121] {
            let stale = try call(h, "applyApplePaySession", try envelope(h, data, offset: offset), key: key)
            #expect(stale["code"] as? String == "PARAMS_INVALID")
            #expect(stale["orchard_code"] as? String == "request_time_stale")
        }
        let inWindow = try call(h, "applyApplePaySession", try envelope(h, data, offset: -119), key: key)
        #expect(inWindow["code"] as? String == "APPLY_SUCCESS")
        let unknownNo = try call(h, "applyApplePaySession", try envelope(h, data, merchantNo: "SP0000"), key: key)
        #expect(unknownNo["code"] as? String == "MERCHANT_INVALID")
        let unknownApp = try call(
            h, "applyApplePaySession", try envelope(h, data, appID: "app_unknownunknown1"), key: key)
        #expect(unknownApp["code"] as? String == "MERCHANT_APP_INVALID")
        let notJSON = try call(h, "applyApplePaySession", Data("{".utf8), key: key)
        #expect(notJSON["code"] as? String == "PARAMS_INVALID")
        // Nothing was made by the refused calls: R1 exists once.
        #expect(try call(h, "applyApplePaySession", body, key: key)["code"] as? String == "ORDER_REPEAT")
    }

    @Test("apply → orderAndPay with a sandbox token → PayerMax's notification on a loopback notify URL, verified")
    func fullFlow() throws {
        let h = try APIHarness()
        let key = try EVPKey.generateRSA(bits: 2048)
        try registered(h, key: key)
        let receiver = NotifyReceiver()
        let notify = try TestServer(responder: receiver)
        let applied = try apply(h, key: key, amount: 50, notifyURL: "\(notify.base)/payermax/notify")
        let orderToken = try #require((applied["data"] as? [String: Any])?["orderToken"] as? String)
        let token = try h.token("50.00")
        let pay = try envelope(h, ["orderToken": orderToken, "paymentToken": token])
        let paid = try call(h, "orderAndPay", pay, key: key)
        #expect(paid["code"] as? String == "APPLY_SUCCESS", "\(paid)")
        let data = try #require(paid["data"] as? [String: Any])
        #expect(data["status"] as? String == "SUCCESS")
        #expect(data["outTradeNo"] as? String == "P1642410680681")
        let tradeToken = try #require(data["tradeToken"] as? String)
        let payment = try h.merchantServer("GET", "/v1/payments/\(tradeToken)")
        #expect(payment.json["status"] as? String == "captured")
        #expect(payment.json["amount"] as? String == "50.00")

        // The same call again answers the first result; the token on another order is refused.
        let retried = try call(h, "orderAndPay", pay, key: key)
        #expect((retried["data"] as? [String: Any])?["tradeToken"] as? String == tradeToken)
        let second = try apply(h, key: key, outTradeNo: "P2", amount: 50)
        let secondToken = try #require((second["data"] as? [String: Any])?["orderToken"] as? String)
        let replay = try call(
            h, "orderAndPay", try envelope(h, ["orderToken": secondToken, "paymentToken": token]), key: key)
        #expect(replay["code"] as? String == "PAYMENT_REJECTED")
        #expect(replay["orchard_code"] as? String == "idempotency_conflict")
        let keyed = try call(
            h, "orderAndPay", try envelope(h, ["orderToken": secondToken, "paymentToken": token]), key: key,
            headers: ["Idempotency-Key": "another-key"])
        #expect(keyed["code"] as? String == "PAYMENT_REJECTED")
        #expect(keyed["orchard_code"] as? String == "token_replayed")
        let again = try call(
            h, "orderAndPay", try envelope(h, ["orderToken": orderToken, "paymentToken": try h.token("50.00")]),
            key: key)
        #expect(again["code"] as? String == "ORDER_REPEAT")
        let unknown = try call(
            h, "orderAndPay", try envelope(h, ["orderToken": "ot_nothing", "paymentToken": try h.token("50.00")]),
            key: key)
        #expect(unknown["code"] as? String == "ORDER_NOT_EXIST")

        // Delivered by the gateway's dispatcher, in PayerMax's form, signed with the published key.
        let dispatcher = WebhookDispatcher(outbox: h.runtime.gateway.webhooks.webhookOutbox, sender: CurlWebhookSender())
        let summary = try dispatcher.runOnce(now: h.clock.now())
        #expect(summary.delivered == 1)
        let notification = try #require(receiver.requests.first)
        #expect(receiver.requests.count == 1)
        #expect(notification.path == "/payermax/notify")
        let sign = try #require(notification.headers["sign"].flatMap { Data(base64Encoded: $0) })
        #expect(RSASignature.isValid(sign, of: notification.body, key: try gatewayKey(h)))
        let body = try #require(try JSONSerialization.jsonObject(with: notification.body) as? [String: Any])
        #expect(body["code"] as? String == "APPLY_SUCCESS")
        #expect(body["notifyType"] as? String == "PAYMENT")
        #expect(body["keyVersion"] as? String == "1")
        #expect(body["appId"] as? String == h.credentials.appID)
        #expect(body["merchantNo"] as? String == Self.merchantNo)
        let result = try #require(body["data"] as? [String: Any])
        #expect(result["tradeToken"] as? String == tradeToken)
        #expect(result["outTradeNo"] as? String == "P1642410680681")
        #expect(result["status"] as? String == "SUCCESS")
        #expect((result["totalAmount"] as? NSNumber)?.decimalValue == Decimal(50))
        #expect(String(decoding: notification.body, as: UTF8.self).contains(#""totalAmount":50.00"#))
        // Acknowledged: nothing is due any more.
        #expect(try dispatcher.runOnce(now: h.clock.now().addingTimeInterval(3600)).attempted == 0)
    }

    @Test("a notify URL that does not answer {\"code\":\"SUCCESS\"} keeps the notification pending")
    func acknowledgement() throws {
        let h = try APIHarness()
        let key = try EVPKey.generateRSA(bits: 2048)
        try registered(h, key: key)
        let receiver = NotifyReceiver(answer: "ok")
        let notify = try TestServer(responder: receiver)
        let applied = try apply(h, key: key, amount: 5, notifyURL: "\(notify.base)/n")
        let orderToken = try #require((applied["data"] as? [String: Any])?["orderToken"] as? String)
        let paid = try call(
            h, "orderAndPay", try envelope(h, ["orderToken": orderToken, "paymentToken": try h.token("5.00")]),
            key: key)
        #expect((paid["data"] as? [String: Any])?["status"] as? String == "SUCCESS")
        let dispatcher = WebhookDispatcher(outbox: h.runtime.gateway.webhooks.webhookOutbox, sender: CurlWebhookSender())
        let summary = try dispatcher.runOnce(now: h.clock.now())
        #expect(summary.attempted == 1 && summary.delivered == 0 && summary.retrying == 1)
        #expect(receiver.requests.count == 1)
    }
}
