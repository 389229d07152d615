import ApplePayModel
import Foundation
import OrchardCrypto
import OrchardJSON

/// A merchant's PayerMax registration (`PUT /v1/compat/payermax`): the `merchantNo` its envelopes carry and the
/// RSA public key that verifies their `sign` header.
public struct PayerMaxRegistration: Sendable, Hashable, Codable {
    /// PayerMax's `merchantNo` as the merchant's code sends it.
    public var merchantNo: String
    /// The merchant's RSA public key (at least 2048 bits), as a PEM "PUBLIC KEY" block.
    public var publicKeyPEM: String
    /// When it was set.
    public var updatedAt: Date

    public init(merchantNo: String, publicKeyPEM: String, updatedAt: Date) {
        self.merchantNo = merchantNo
        self.publicKeyPEM = publicKeyPEM
        self.updatedAt = updatedAt
    }
}

extension GatewayError.Code {
    /// The uploaded public key is not an RSA public key of at least 2048 bits (PEM or Base64 DER).
    public static let publicKeyInvalid = GatewayError.Code(rawValue: "public_key_invalid")
}

extension OrderSession {
    /// Where Orchard's own events about the session go: its notify URL, unless that URL receives the result in
    /// another form (``notifyFormat``); nil sends them to the merchant's webhook endpoint.
    package var orchardEventURL: String? { notifyFormat == nil ? notifyURL : nil }
}

extension MerchantRegistry {
    /// The setting under which the gateway's sealed RSA key for PayerMax-compatible answers and notifications
    /// is kept (PKCS#8 PEM).
    public static let payerMaxSigningKeySetting = "payermax_signing_key"

    /// Sets the merchant's PayerMax registration: `merchantNo` of 1 to 32 printable ASCII characters without
    /// spaces, and an RSA public key of at least 2048 bits as PEM or as bare Base64 DER (kept as PEM). Recorded
    /// in the audit log.
    @discardableResult
    public func setPayerMaxRegistration(
        merchantID: String, merchantNo: String, publicKey: String, scope requestScope: RequestScope = .unattributed
    ) throws(GatewayError) -> Merchant {
        guard FieldLimits.fits(merchantNo, FieldLimits.payerMaxMerchantNo),
            FieldLimits.isPrintableASCII(merchantNo)
        else {
            throw .invalid(
                "merchant_no", "\(FieldLimits.text(FieldLimits.payerMaxMerchantNo)) printable ASCII characters")
        }
        guard publicKey.utf8.count <= FieldLimits.publicKeyPEM else {
            throw .invalid("public_key_pem", "at most \(FieldLimits.publicKeyPEM) bytes")
        }
        let key: EVPKey
        do { key = try RSASignature.publicKey(publicKey) } catch {
            throw GatewayError(
                .publicKeyInvalid,
                "not an RSA public key of at least \(RSASignature.minimumBits) bits, PEM or Base64 DER: \(error.reason)",
                param: "public_key_pem")
        }
        let now = clock.now()
        return try gatewayThrowing {
            try store.write { tx in
                guard var record = try tx.merchant(id: merchantID) else {
                    throw GatewayError(.merchantNotFound, "no merchant \(merchantID)")
                }
                record.payerMax = PayerMaxRegistration(
                    merchantNo: merchantNo, publicKeyPEM: key.publicKeyPEM, updatedAt: now)
                try tx.updateMerchant(record)
                try AuditLog.record(
                    in: tx, merchantID: merchantID, action: AuditLog.Action.payerMaxRegistration,
                    detail: ["merchant_no": merchantNo, "key_bits": String(key.bits)], at: now,
                    actor: requestScope.actor)
                return Merchant(record)
            }
        }
    }

    /// The gateway's RSA key (2048 bits) that signs PayerMax-compatible answers and notifications: made on
    /// first use and kept sealed with the master key; two first uses at once keep the one stored first.
    public func payerMaxSigningKey() throws(GatewayError) -> EVPKey {
        try PayerMaxSigningKey.load(store: store, cipher: cipher)
    }
}

/// Loads (or makes) the gateway's PayerMax signing key; shared by the registry and the webhook outbox.
enum PayerMaxSigningKey {
    static func load(store: any Store, cipher: EnvelopeCipher) throws(GatewayError) -> EVPKey {
        let name = MerchantRegistry.payerMaxSigningKeySetting
        let context = SealingContext.setting(name)
        if let sealed = try gatewayThrowing({ try store.read { try $0.setting(name) } }) {
            return try key(cipher.open(sealed, context: context))
        }
        let made = try gatewayThrowing { try EVPKey.generateRSA(bits: 2048) }
        let pem = try gatewayThrowing { try made.privateKeyPEM() }
        let fresh = try cipher.seal(pem, context: context)
        let stored = try gatewayThrowing {
            try store.write { tx in
                if let existing = try tx.setting(name) { return existing }
                try tx.setSetting(name, value: fresh)
                return fresh
            }
        }
        return stored == fresh ? made : try key(cipher.open(stored, context: context))
    }

    private static func key(_ pem: SecureBytes) throws(GatewayError) -> EVPKey {
        try gatewayThrowing { try EVPKey(privateKeyPEM: pem) }
    }
}

/// PayerMax's `yyyy-MM-dd'T'HH:mm:ss.SSSXXX` times.
public enum PayerMaxTime {
    /// `date` in UTC with milliseconds (`2024-05-13T10:28:03.606Z`), as PayerMax's notifications carry it.
    public static func string(_ date: Date) -> String {
        var style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        style.timeZone = TimeZone(identifier: "UTC")!
        return date.formatted(style)
    }

    /// Reads RFC 3339 time as PayerMax's SDKs send it: `yyyy-MM-ddTHH:mm:ss`, an optional fraction of 1 to 9
    /// digits, then `Z` or `±hh:mm`. Nil for anything else.
    public static func date(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[range] {
                guard (0x30...0x39).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            return value
        }
        func byte(_ at: Int, _ expected: Character) -> Bool { at < bytes.count && bytes[at] == expected.asciiValue }
        guard bytes.count >= 20, let year = number(0..<4), byte(4, "-"), let month = number(5..<7), byte(7, "-"),
            let day = number(8..<10), byte(10, "T") || byte(10, "t"), let hour = number(11..<13), byte(13, ":"),
            let minute = number(14..<16), byte(16, ":"), let second = number(17..<19)
        else { return nil }
        var at = 19
        var nanoseconds = 0
        if byte(at, ".") {
            let start = at + 1
            var end = start
            while end < bytes.count, (0x30...0x39).contains(bytes[end]) { end += 1 }
            guard (1...9).contains(end - start), let fraction = number(start..<end) else { return nil }
            nanoseconds = fraction * Int(pow(10, Double(9 - (end - start))))
            at = end
        }
        var offset = 0
        if byte(at, "Z") || byte(at, "z") {
            guard at + 1 == bytes.count else { return nil }
        } else {
            guard at + 6 == bytes.count, byte(at, "+") || byte(at, "-"), let hours = number(at + 1..<at + 3),
                byte(at + 3, ":"), let minutes = number(at + 4..<at + 6), hours < 24, minutes < 60
            else { return nil }
            offset = (hours * 60 + minutes) * 60 * (byte(at, "-") ? -1 : 1)
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let components = DateComponents(
            year: year, month: month, day: day, hour: hour, minute: minute, second: second, nanosecond: nanoseconds)
        guard components.isValidDate(in: calendar), let date = calendar.date(from: components) else { return nil }
        return date.addingTimeInterval(TimeInterval(-offset))
    }
}

/// PayerMax's payment result notification (`collectResultNotifyUrl`), delivered to the notify URL of a session
/// made through `applyApplePaySession`, through the same outbox and dispatcher as Orchard's events.
public enum PayerMaxNotification {
    /// The outbox type of these notifications (their body is PayerMax's, signed in the `sign` header).
    public static let eventType = "payermax.notification"
    /// The only answer that ends their delivery: `{"code":"SUCCESS",…}` (with a 2xx status).
    public static let acknowledgementCode = "SUCCESS"

    /// What a notification reports.
    enum Result {
        case success
        case failure

        /// The result an Orchard event about a session's payment reports; nil for events it does not report.
        init?(eventType: WebhookEventType) {
            switch eventType {
            case .paymentSucceeded: self = .success
            case .paymentFailed: self = .failure
            default: return nil
            }
        }
    }

    /// The outbox row of the notification of `payment` of `session`.
    static func event(
        _ result: Result, payment: Payment, session: OrderSession, merchant: MerchantRecord, deliveryURL: String,
        at now: Date
    ) throws -> PreparedEvent {
        let id = try Identifiers.ordered("evt_", at: now)
        let body = try JSONWriter.json(
            self.body(result, payment: payment, session: session, merchant: merchant, at: now))
        return PreparedEvent(
            event: WebhookEvent(id: id, merchantID: merchant.id, type: eventType, payload: body, createdAt: now),
            objectID: payment.id, deliveryURL: deliveryURL)
    }

    /// The notification's body, with PayerMax's field names: `tradeToken` is the Orchard payment id,
    /// `totalAmount` a number in major units.
    static func body(
        _ result: Result, payment: Payment, session: OrderSession, merchant: MerchantRecord, at now: Date
    ) -> [String: Any] {
        let amount = WireFormat.amount(payment.amount, payment.currency)
        var card: [String: Any] = [
            "type": "NETWORK_TOKEN", "source": "APPLEPAY", "cardOrg": (payment.cardInfo.network ?? "").uppercased(),
            "cardLast4": payment.cardInfo.lastFour,
        ]
        if !payment.cardInfo.binCode.isEmpty { card["cardBinNo"] = String(payment.cardInfo.binCode.prefix(6)) }
        if let country = payment.cardInfo.countryCode { card["country"] = country }
        var data: [String: Any] = [
            "outTradeNo": session.outTradeNo, "tradeToken": payment.id,
            "totalAmount": RawJSON(Data(amount.utf8)), "currency": payment.currency, "country": session.country,
            "status": result == .success ? "SUCCESS" : "FAILED",
            "completeTime": PayerMaxTime.string(payment.updatedAt),
            "paymentDetails": [
                [
                    "paymentMethodType": "APPLEPAY", "targetOrg": (payment.cardInfo.network ?? "").uppercased(),
                    "payAmount": RawJSON(Data(amount.utf8)), "payCurrency": payment.currency, "cardInfo": card,
                ] as [String: Any]
            ],
        ]
        if result == .failure { data["resultCode"] = payment.failureCode ?? "declined" }
        return [
            "code": result == .success ? "APPLY_SUCCESS" : "PAYMENT_FAILED",
            "msg": result == .success ? "Success." : "Payment failed.",
            "keyVersion": "1", "appId": merchant.appID, "merchantNo": merchant.payerMax?.merchantNo ?? "",
            "notifyTime": PayerMaxTime.string(now), "notifyType": "PAYMENT", "data": data,
        ]
    }

    /// Whether a notify URL's answer acknowledges the notification: a 2xx status and a JSON body whose `code`
    /// is `SUCCESS`.
    public static func isAcknowledged(status: Int, body: Data) -> Bool {
        guard (200...299).contains(status), let answer = try? JSONValue.parse(body) else { return false }
        return answer["code"]?.string == acknowledgementCode
    }

    /// The `sign` header of `body`: SHA256withRSA with `key`, standard Base64.
    public static func sign(_ body: Data, key: EVPKey) throws -> String {
        Data(try RSASignature.sign(body, key: key)).base64EncodedString()
    }
}

extension MerchantRegistry {
    /// The merchant whose app id a PayerMax envelope's `appId` is; nil when there is none, `merchant_disabled`
    /// when it is disabled.
    public func payerMaxMerchant(appID: String) throws(GatewayError) -> Merchant? {
        guard let record = try gatewayThrowing({ try store.read { try $0.merchant(appID: appID) } }) else {
            return nil
        }
        return try Self.enabled(record)
    }
}
