import Foundation
import Gateway
import OrchardBase
import OrchardCrypto
import OrchardJSON

/// Adyen, Checkout API v71, with the Apple Pay data the gateway decrypted (its "Decrypt Apple Pay tokens" guide,
/// handling it on your own): the DPAN and expiry as a `scheme` card, the cryptogram and ECI as `mpiData`,
/// `paymentdatasource.type` `applepay`, e-commerce. Authorizations are manual-capture
/// (`additionalData.manualCapture`); the gateway captures (at once for capture mode now), and Adyen answers
/// captures, cancels and refunds `received`, their outcome following by notification.
///
/// Settings: `environment` `test` or `live`, `merchant_account`, `api_key`, `hmac_key` (hex), `live_url_prefix`
/// (live only), and optionally `notification_username` with `notification_password` (Basic auth on notifications).
public struct AdyenConnector: ProcessorConnector {
    public let type = "adyen"
    public let secretFields = ["api_key", "hmac_key", "notification_password"]
    /// The test endpoint.
    public static let testBaseURL = "https://checkout-test.adyen.com/v71"
    let http: ProcessorHTTP

    /// A connector reaching Adyen as `configuration` says.
    public init(configuration: ProcessorConnectorConfiguration = .init()) {
        http = ProcessorHTTP(configuration: configuration)
    }

    /// The live endpoint of an account's URL prefix.
    public static func liveBaseURL(prefix: String) -> String {
        "https://\(prefix)-checkout-live.adyenpayments.com/checkout/v71"
    }

    public func draft(from body: [String: String]) throws(GatewayError) -> ProcessorSettingsDraft {
        try SettingsRules.onlyKnown(
            body,
            [
                "environment", "merchant_account", "api_key", "hmac_key", "live_url_prefix", "notification_username",
                "notification_password",
            ], type: type)
        let environment = try SettingsRules.oneOf(body, "environment", ["test", "live"])
        let account = try SettingsRules.required(body, "merchant_account")
        let apiKey = try SettingsRules.required(body, "api_key")
        let hmacKey = try SettingsRules.required(body, "hmac_key")
        for (name, value) in [("merchant_account", account), ("api_key", apiKey)]
        where !SettingsRules.isPrintableASCII(value) {
            throw GatewayError.invalid(name, "printable ASCII without spaces")
        }
        guard hmacKey.utf8.count % 2 == 0, Hex.decode(hmacKey) != nil else {
            throw GatewayError.invalid("hmac_key", "the HMAC key in hex, as the Customer Area shows it")
        }
        var fields = ["merchant_account": account]
        if let prefix = body["live_url_prefix"] {
            guard !prefix.isEmpty,
                prefix.utf8.allSatisfy({
                    $0 == UInt8(ascii: "-") || ($0 < 0x80 && Character(Unicode.Scalar($0)).isLetter)
                        || (0x30...0x39).contains($0)
                })
            else { throw GatewayError.invalid("live_url_prefix", "letters, digits and hyphens") }
            fields["live_url_prefix"] = prefix
        } else if environment == "live" {
            throw GatewayError(
                .parameterMissing, "live_url_prefix is required for live (Customer Area, Developers, API URLs)",
                param: "live_url_prefix")
        }
        var secrets = ["api_key": SecureBytes(Array(apiKey.utf8)), "hmac_key": SecureBytes(Array(hmacKey.utf8))]
        switch (body["notification_username"], body["notification_password"]) {
        case (let user?, let password?):
            guard !user.isEmpty, !user.contains(":") else {
                throw GatewayError.invalid("notification_username", "a user name without a colon")
            }
            guard !password.isEmpty else { throw GatewayError.invalid("notification_password", "must not be empty") }
            fields["notification_username"] = user
            secrets["notification_password"] = SecureBytes(Array(password.utf8))
        case (nil, nil): break
        case (nil, _):
            throw GatewayError(
                .parameterMissing, "notification_username goes with notification_password",
                param: "notification_username")
        case (_, nil):
            throw GatewayError(
                .parameterMissing, "notification_password goes with notification_username",
                param: "notification_password")
        }
        return ProcessorSettingsDraft(
            environment: environment, isLive: environment == "live", fields: fields, secrets: secrets)
    }

    public func processor(for account: ProcessorAccount) throws(GatewayError) -> any Processor {
        let standard =
            account.environment == "live"
            ? Self.liveBaseURL(prefix: try account.required("live_url_prefix")) : Self.testBaseURL
        return AdyenProcessor(
            http: http, baseURL: http.baseURL(type, standard: standard),
            merchantAccount: try account.required("merchant_account"), apiKey: try account.required("api_key"))
    }

    /// `POST /paymentMethods` for the merchant account: it moves no money, and answers 200 only for a valid API key
    /// with the rights on that merchant account.
    public func testConnection(_ account: ProcessorAccount) -> ProcessorConnectionTest {
        guard let processor = (try? self.processor(for: account)) as? AdyenProcessor else {
            return ProcessorConnectionTest(outcome: .failed, message: "the Adyen settings are incomplete")
        }
        return processor.testConnection()
    }
}

/// The ``Processor`` of one version of a merchant's Adyen settings.
struct AdyenProcessor: Processor {
    let http: ProcessorHTTP
    let baseURL: String
    let merchantAccount: String
    let apiKey: String

    var name: String { "adyen" }
    /// Adyen has no lookup of a payment by reference in its Checkout API: an authorization whose answer was lost is
    /// sent again with its `Idempotency-Key`, answered with the first outcome (keys last at least 31 days).
    var authorizationRecovery: AuthorizationRecovery { .resend }
    /// The `returnUrl` the API requires: no redirect ever happens for decrypted Apple Pay data.
    static let returnURL = "orchard://adyen/return"

    func headers(idempotencyKey: String?) -> [(String, String)] {
        var headers = [("X-API-Key", apiKey)]
        if let idempotencyKey { headers.append(("Idempotency-Key", idempotencyKey)) }
        return headers
    }

    func check(_ request: AuthorizationRequest) throws(GatewayError) {
        guard request.cryptogram?.isEmpty == false else {
            throw GatewayError(
                .paymentDataTypeUnsupported,
                "Adyen takes decrypted 3DSecure Apple Pay data with its cryptogram; this token has none (EMV)",
                param: "token")
        }
        guard CardExpiry(yymmdd: request.expirationDate) != nil else {
            throw GatewayError(.paymentDataTypeUnsupported, "the token's expiry is not a date", param: "token")
        }
        _ = try MinorUnits.adyen.checked(request.amount, currency: request.currency, processor: "Adyen")
    }

    /// The `/payments` body: every field the spec marks required, the card as `scheme`, the cryptogram in `mpiData`.
    func paymentBody(_ request: AuthorizationRequest) throws(GatewayError) -> SecureBytes {
        try check(request)
        let value = try MinorUnits.adyen.checked(request.amount, currency: request.currency, processor: "Adyen")
        guard let expiry = CardExpiry(yymmdd: request.expirationDate), let cryptogram = request.cryptogram else {
            throw GatewayError(.paymentDataTypeUnsupported, "the token cannot be sent to Adyen", param: "token")
        }
        var mpi: [(String, SecureJSONBody.Value)] = [
            ("directoryResponse", .string("Y")), ("authenticationResponse", .string("Y")),
            ("cavv", .secret(cryptogram)),
        ]
        if let eci = twoDigitECI(request.eci) { mpi.append(("eci", .string(eci))) }
        return SecureJSONBody.bytes([
            ("amount", .object([("currency", .string(request.currency)), ("value", .integer(value))])),
            ("reference", .string(request.merchantReference)),
            ("merchantAccount", .string(merchantAccount)),
            ("returnUrl", .string(Self.returnURL)),
            ("shopperInteraction", .string("Ecommerce")),
            (
                "paymentMethod",
                .object([
                    ("type", .string("scheme")), ("number", .secret(request.accountNumber)),
                    ("expiryMonth", .string(expiry.twoDigitMonth)), ("expiryYear", .string(String(expiry.year))),
                ])
            ),
            ("mpiData", .object(mpi)),
            (
                "additionalData",
                .object([("paymentdatasource.type", .string("applepay")), ("manualCapture", .string("true"))])
            ),
        ])
    }

    func authorize(_ request: AuthorizationRequest) -> AuthorizationOutcome {
        let body: SecureBytes
        do { body = try paymentBody(request) } catch {
            return .declined(code: DeclineCodes.processingError, processorCode: error.code.rawValue)
        }
        let result = http.call(
            .post, baseURL + "/payments", headers: headers(idempotencyKey: request.operationID), secureBody: body)
        return Self.authorizationOutcome(result)
    }

    /// The outcome of a `/payments` call: `resultCode` on 200 (declines are 200 too), a refusal of the request as
    /// such (400, 401, 403, a 422 but the in-progress `704`) as a decline that moved no money, anything else unknown.
    static func authorizationOutcome(_ result: ProcessorCallResult) -> AuthorizationOutcome {
        switch result {
        case .answered(200, _, _, let json?):
            switch json.text("resultCode") {
            case "Authorised":
                guard let reference = json.text("pspReference") else { return .unknown }
                return .approved(
                    ProcessorApproval(reference: reference, authCode: json["additionalData"]?.text("authCode") ?? ""))
            case "Refused", "Error", "Cancelled":
                let code = json.text("refusalReasonCode")
                let reason = json.text("refusalReason")
                return .declined(
                    code: DeclineCodes.adyenCode(code: code, reason: reason),
                    processorCode: code ?? reason ?? json.text("resultCode"))
            default:
                // Received, Pending, a shopper action: the outcome follows (a notification, or a resend).
                return .unknown
            }
        case .answered(let status, _, _, let json) where [400, 401, 403, 404, 422].contains(status):
            let code = json?.text("errorCode")
            if code == "704" { return .unknown }  // the same key in progress: the first request's outcome follows
            return .declined(code: GatewayService.processorRefusedCode, processorCode: code ?? String(status))
        case .answered, .notSent, .broken: return .unknown
        case .timedOut: return .timeout
        }
    }

    /// The outcome of a capture, cancel or refund: `received` (201), its outcome by notification.
    static func modificationOutcome(_ result: ProcessorCallResult) -> ProcessorOperationOutcome {
        switch result {
        case .answered(let status, _, _, let json?) where (200...299).contains(status):
            guard json.text("status") == "received" else { return .unknown }
            return .accepted(reference: json.text("pspReference"))
        case .answered(let status, _, _, let json) where [400, 401, 403, 404, 422].contains(status):
            if json?.text("errorCode") == "704" { return .unknown }
            return .declined(code: GatewayService.processorRefusedCode)
        case .answered, .notSent, .broken: return .unknown
        case .timedOut: return .timeout
        }
    }

    func amount(_ value: Int64, _ currency: String) -> SecureJSONBody.Value {
        .object([
            ("currency", .string(currency)),
            ("value", .integer(MinorUnits.adyen.processorAmount(value, currency: currency) ?? value)),
        ])
    }

    func modify(
        _ reference: String, _ action: String, operationID: String, amount: SecureJSONBody.Value?
    )
        -> ProcessorOperationOutcome
    {
        var body: [(String, SecureJSONBody.Value)] = [
            ("merchantAccount", .string(merchantAccount)), ("reference", .string(operationID)),
        ]
        if let amount { body.append(("amount", amount)) }
        let path = "/payments/" + (reference.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? reference)
        let result = http.call(
            .post, baseURL + path + "/" + action, headers: headers(idempotencyKey: operationID),
            body: SecureJSONBody.data(body))
        return Self.modificationOutcome(result)
    }

    func capture(reference: String, amount: Int64, currency: String, operationID: String) -> ProcessorOperationOutcome {
        modify(reference, "captures", operationID: operationID, amount: self.amount(amount, currency))
    }

    func void(reference: String, operationID: String) -> ProcessorOperationOutcome {
        modify(reference, "cancels", operationID: operationID, amount: nil)
    }

    func refund(reference: String, amount: Int64, currency: String, operationID: String) -> ProcessorOperationOutcome {
        modify(reference, "refunds", operationID: operationID, amount: self.amount(amount, currency))
    }

    /// No lookup by reference in the Checkout API: the gateway resends instead.
    func query(merchantReference: String) -> ProcessorQueryResult { .unsupported }

    func testConnection() -> ProcessorConnectionTest {
        let result = http.call(
            .post, baseURL + "/paymentMethods", headers: headers(idempotencyKey: nil),
            body: SecureJSONBody.data([("merchantAccount", .string(merchantAccount))]))
        switch result {
        case .answered(200, _, _, _):
            return ProcessorConnectionTest(
                outcome: .ok,
                message: "Adyen accepted the API key for merchant account \(merchantAccount) (POST /paymentMethods)",
                httpStatus: 200)
        case .answered(403, _, _, let json):
            return ProcessorConnectionTest(
                outcome: .failed,
                message: "Adyen refused the merchant account \(merchantAccount) for this API key (403 "
                    + "\(json?.text("errorCode") ?? "")): check the account name and the key's roles",
                httpStatus: 403)
        default:
            return .failure(result, processor: "Adyen", key: "API key", call: "POST /paymentMethods")
        }
    }
}

// MARK: - Notifications

extension AdyenConnector {
    public var notificationPath: String? { "adyen/notifications" }

    /// Adyen's standard notification (`{"live", "notificationItems": [{"NotificationRequestItem": …}]}`): Basic auth
    /// checked when the settings have a user name, and every item's `additionalData.hmacSignature` checked with the
    /// HMAC key (``AdyenSignature``); any failure refuses the whole request. Answered `[accepted]`.
    public func notifications(
        _ request: ProcessorNotificationRequest, account: ProcessorAccount
    ) throws(GatewayError) -> ProcessorNotificationBatch {
        let refused = GatewayError(.processorSignatureInvalid, "the notification's signature does not verify")
        if let user = account.fields["notification_username"],
            let password = account.secretText("notification_password")
        {
            let expected = "Basic " + Data((user + ":" + password).utf8).base64EncodedString()
            guard let given = request.header("Authorization"),
                ConstantTime.equals(Array(given.utf8), Array(expected.utf8))
            else { throw GatewayError(.processorSignatureInvalid, "the notification's Basic auth does not match") }
        }
        guard
            let key = account.secrets["hmac_key"]?.withUnsafeBytes({ Hex.decode(String(decoding: $0, as: UTF8.self)) })
        else { throw GatewayError(.internalError, "the Adyen settings have no HMAC key") }
        guard let body = try? JSONValue.parse(request.body), let items = body["notificationItems"]?.array else {
            throw GatewayError(.parameterInvalid, "not an Adyen notification", param: "notificationItems")
        }
        var notifications: [ProcessorNotification] = []
        for wrapped in items {
            guard let item = wrapped["NotificationRequestItem"],
                let expected = AdyenSignature.signature(of: item, key: key),
                let given = item["additionalData"]?.text("hmacSignature"),
                ConstantTime.equals(Array(expected.utf8), Array(given.utf8))
            else { throw refused }
            notifications.append(Self.notification(item))
        }
        return ProcessorNotificationBatch(
            notifications: notifications, acknowledgement: "[accepted]", contentType: "text/plain; charset=utf-8")
    }

    /// One item in the domain's words: the payment by `pspReference` (an authorization's) or `originalReference`
    /// (a modification's), amounts in ISO minor units.
    static func notification(_ item: JSONValue) -> ProcessorNotification {
        let code = item.text("eventCode") ?? ""
        let psp = item.text("pspReference")
        let success = item.text("success") == "true"
        let event: ProcessorNotification.Event =
            switch code {
            case "AUTHORISATION": .authorization
            case "CAPTURE": .capture
            case "CAPTURE_FAILED": .captureFailed
            case "CANCELLATION": .void
            case "REFUND": .refund
            case "REFUND_FAILED", "REFUNDED_REVERSED": .refundReversed
            case "CHARGEBACK": .chargeback
            default: .other
            }
        let currency = item["amount"]?.text("currency")
        let amount = item["amount"]?["value"]?.int64.flatMap { value in
            currency.flatMap { MinorUnits.adyen.isoAmount(value, currency: $0) }
        }
        let reason = item.text("reason")
        var notification = ProcessorNotification(
            key: [code, psp ?? "", item.text("originalReference") ?? "", success ? "true" : "false"].joined(
                separator: ":"),
            eventCode: code, event: event, success: success,
            paymentReference: event == .authorization ? psp : item.text("originalReference"),
            merchantReference: item.text("merchantReference"), operationReference: event == .authorization ? nil : psp,
            amount: amount, currency: currency)
        if event == .authorization {
            if success {
                // For cards, `reason` is `authCode:last4:expiry`.
                notification.authCode =
                    item["additionalData"]?.text("authCode") ?? reason?.split(separator: ":").first.map(String.init)
            } else {
                let refusal = item["additionalData"]?.text("refusalReasonCode")
                notification.declineCode = DeclineCodes.adyenCode(code: refusal, reason: reason)
                notification.processorCode = refusal ?? reason
            }
        }
        return notification
    }
}

/// Adyen's HMAC signature of a standard notification item: the values of `pspReference`, `originalReference`,
/// `merchantAccountCode`, `merchantReference`, `amount.value`, `amount.currency`, `eventCode` and `success`, as
/// decoded from the JSON (a missing one empty, nothing escaped), joined with `:`; HMAC-SHA256 under the
/// hex-decoded key; base64.
public enum AdyenSignature {
    /// The signing string of `item`.
    public static func signingString(of item: JSONValue) -> String {
        [
            item.text("pspReference"), item.text("originalReference"), item.text("merchantAccountCode"),
            item.text("merchantReference"), item["amount"]?.text("value"), item["amount"]?.text("currency"),
            item.text("eventCode"), item.text("success"),
        ].map { $0 ?? "" }.joined(separator: ":")
    }

    /// The base64 signature of `item` under `key` (the HMAC key's bytes).
    public static func signature(of item: JSONValue, key: [UInt8]) -> String? {
        guard item.members != nil else { return nil }
        let mac = HMACSHA256.authenticationCode(key: key, message: Array(signingString(of: item).utf8))
        return Data(mac).base64EncodedString()
    }
}
