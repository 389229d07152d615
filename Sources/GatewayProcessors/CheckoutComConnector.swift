import Foundation
import Gateway
import OrchardBase
import OrchardCrypto
import OrchardJSON

/// Checkout.com's unified payments API with the Apple Pay data the gateway decrypted ("Pay with a pre-decrypted
/// Apple Pay token"): a `network_token` source with `token_type` `applepay`, the DPAN as `token`, the expiry, the
/// cryptogram and ECI; `capture: true` for capture mode now (the capture follows by webhook), `false` otherwise.
/// Captures, voids and refunds are answered `202 Accepted`, their outcome following by webhook or `GET`.
///
/// Settings: `environment` `sandbox` or `production`, `secret_key` (`sk_…`), `processing_channel_id` (`pc_…`),
/// `webhook_secret` (the webhook's signature key).
public struct CheckoutComConnector: ProcessorConnector {
    public let type = "checkout_com"
    public let secretFields = ["secret_key", "webhook_secret"]
    public static let sandboxBaseURL = "https://api.sandbox.checkout.com"
    public static let productionBaseURL = "https://api.checkout.com"
    let http: ProcessorHTTP

    /// A connector reaching Checkout.com as `configuration` says.
    public init(configuration: ProcessorConnectorConfiguration = .init()) {
        http = ProcessorHTTP(configuration: configuration)
    }

    public func draft(from body: [String: String]) throws(GatewayError) -> ProcessorSettingsDraft {
        try SettingsRules.onlyKnown(
            body, ["environment", "secret_key", "processing_channel_id", "webhook_secret"], type: type)
        let environment = try SettingsRules.oneOf(body, "environment", ["sandbox", "production"])
        let secretKey = try SettingsRules.required(body, "secret_key")
        let channel = try SettingsRules.required(body, "processing_channel_id")
        let webhookSecret = try SettingsRules.required(body, "webhook_secret")
        guard secretKey.hasPrefix("sk_"), SettingsRules.isPrintableASCII(secretKey) else {
            throw GatewayError.invalid("secret_key", "a Checkout.com secret key (sk_…)")
        }
        guard channel.hasPrefix("pc_"), SettingsRules.isPrintableASCII(channel) else {
            throw GatewayError.invalid("processing_channel_id", "a processing channel id (pc_…)")
        }
        return ProcessorSettingsDraft(
            environment: environment, isLive: environment == "production", fields: ["processing_channel_id": channel],
            secrets: [
                "secret_key": SecureBytes(Array(secretKey.utf8)),
                "webhook_secret": SecureBytes(Array(webhookSecret.utf8)),
            ])
    }

    public func processor(for account: ProcessorAccount) throws(GatewayError) -> any Processor {
        let standard = account.environment == "production" ? Self.productionBaseURL : Self.sandboxBaseURL
        return CheckoutComProcessor(
            http: http, baseURL: http.baseURL(type, standard: standard), secretKey: try account.required("secret_key"),
            processingChannelID: try account.required("processing_channel_id"))
    }

    /// `GET /payments?reference=…&limit=1` for a reference no payment has: it moves no money, and answers 200
    /// only for a valid secret key.
    public func testConnection(_ account: ProcessorAccount) -> ProcessorConnectionTest {
        guard let processor = (try? self.processor(for: account)) as? CheckoutComProcessor else {
            return ProcessorConnectionTest(outcome: .failed, message: "the Checkout.com settings are incomplete")
        }
        return processor.testConnection()
    }
}

/// The ``Processor`` of one version of a merchant's Checkout.com settings.
struct CheckoutComProcessor: Processor {
    let http: ProcessorHTTP
    let baseURL: String
    let secretKey: String
    let processingChannelID: String

    var name: String { "checkout_com" }
    /// An authorization whose answer was lost is looked up by its reference (`GET /payments?reference=`); when
    /// Checkout.com has none, it is sent again with its `Cko-Idempotency-Key` (kept 24 hours).
    var authorizationRecovery: AuthorizationRecovery { .resend }

    func headers(idempotencyKey: String?) -> [(String, String)] {
        var headers = [("Authorization", "Bearer " + secretKey)]
        if let idempotencyKey { headers.append(("Cko-Idempotency-Key", idempotencyKey)) }
        return headers
    }

    func check(_ request: AuthorizationRequest) throws(GatewayError) {
        guard request.cryptogram?.isEmpty == false else {
            throw GatewayError(
                .paymentDataTypeUnsupported,
                "Checkout.com takes decrypted 3DSecure Apple Pay data with its cryptogram; this token has none (EMV)",
                param: "token")
        }
        guard CardExpiry(yymmdd: request.expirationDate) != nil else {
            throw GatewayError(.paymentDataTypeUnsupported, "the token's expiry is not a date", param: "token")
        }
        let value = try MinorUnits.checkoutCom.checked(
            request.amount, currency: request.currency, processor: "Checkout.com")
        guard value <= 999_999_999 else {
            throw GatewayError(
                .paymentDataTypeUnsupported, "Checkout.com takes amounts of at most 9 digits", param: "amount")
        }
    }

    /// The `/payments` body: a `network_token` source of type `applepay`.
    func paymentBody(_ request: AuthorizationRequest) throws(GatewayError) -> SecureBytes {
        try check(request)
        let value = try MinorUnits.checkoutCom.checked(
            request.amount, currency: request.currency, processor: "Checkout.com")
        guard let expiry = CardExpiry(yymmdd: request.expirationDate), let cryptogram = request.cryptogram else {
            throw GatewayError(.paymentDataTypeUnsupported, "the token cannot be sent to Checkout.com", param: "token")
        }
        var source: [(String, SecureJSONBody.Value)] = [
            ("type", .string("network_token")), ("token", .secret(request.accountNumber)),
            ("token_type", .string("applepay")), ("expiry_month", .integer(Int64(expiry.month))),
            ("expiry_year", .integer(Int64(expiry.year))), ("cryptogram", .secret(cryptogram)),
        ]
        if let eci = twoDigitECI(request.eci) { source.append(("eci", .string(eci))) }
        return SecureJSONBody.bytes([
            ("source", .object(source)), ("amount", .integer(value)), ("currency", .string(request.currency)),
            ("reference", .string(request.merchantReference)), ("capture", .bool(request.captureNow)),
            ("payment_type", .string("Regular")), ("processing_channel_id", .string(processingChannelID)),
        ])
    }

    func authorize(_ request: AuthorizationRequest) -> AuthorizationOutcome {
        let body: SecureBytes
        do { body = try paymentBody(request) } catch {
            return .declined(code: DeclineCodes.processingError, processorCode: error.code.rawValue)
        }
        let result = http.call(
            .post, baseURL + "/payments", headers: headers(idempotencyKey: request.operationID), secureBody: body)
        switch result {
        case .answered(let status, _, _, let json?) where status == 201 || status == 202:
            return Self.outcome(of: json, capturing: request.captureNow) ?? .unknown
        case .answered(let status, _, _, let json) where [400, 401, 403, 404, 422].contains(status):
            let code = json?["error_codes"]?.array?.first?.string ?? json?.text("error_type")
            return .declined(code: GatewayService.processorRefusedCode, processorCode: code ?? String(status))
        case .answered, .notSent, .broken: return .unknown
        case .timedOut: return .timeout
        }
    }

    /// The outcome a payment object says (a `/payments` answer or a lookup's): approved, declined with its
    /// `response_code`, or nil while it is pending (or when it says nothing).
    static func outcome(of payment: JSONValue, capturing: Bool) -> AuthorizationOutcome? {
        let status = payment.text("status")
        guard let approved = payment["approved"]?.bool else { return nil }
        guard approved else {
            let code = payment.text("response_code")
            return .declined(code: DeclineCodes.checkoutComCode(code), processorCode: code ?? status)
        }
        guard let id = payment.text("id") else { return nil }
        let captured = ["Captured", "Partially Refunded", "Refunded"].contains(status ?? "")
        let capture: CaptureWithAuthorization? = captured ? .captured : capturing ? .accepted : nil
        return .approved(ProcessorApproval(reference: id, authCode: payment.text("auth_code") ?? "", capture: capture))
    }

    func action(
        _ reference: String, _ action: String, operationID: String, amount: Int64?, currency: String?
    )
        -> ProcessorOperationOutcome
    {
        var body: [(String, SecureJSONBody.Value)] = [("reference", .string(operationID))]
        if let amount, let currency {
            body.append(
                ("amount", .integer(MinorUnits.checkoutCom.processorAmount(amount, currency: currency) ?? amount)))
        }
        let result = http.call(
            .post, baseURL + "/payments/" + Self.pathComponent(reference) + "/" + action,
            headers: headers(idempotencyKey: operationID), body: SecureJSONBody.data(body))
        switch result {
        case .answered(let status, _, _, let json) where (200...299).contains(status):
            return .accepted(reference: json?.text("action_id"))
        case .answered(let status, _, _, _) where [400, 401, 403, 404, 422].contains(status):
            return .declined(code: GatewayService.processorRefusedCode)
        case .answered, .notSent, .broken: return .unknown
        case .timedOut: return .timeout
        }
    }

    static func pathComponent(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "_"))) ?? text
    }

    func capture(reference: String, amount: Int64, currency: String, operationID: String) -> ProcessorOperationOutcome {
        action(reference, "captures", operationID: operationID, amount: amount, currency: currency)
    }

    func void(reference: String, operationID: String) -> ProcessorOperationOutcome {
        action(reference, "voids", operationID: operationID, amount: nil, currency: nil)
    }

    func refund(reference: String, amount: Int64, currency: String, operationID: String) -> ProcessorOperationOutcome {
        action(reference, "refunds", operationID: operationID, amount: amount, currency: currency)
    }

    /// `GET /payments?reference=<payment id>`: the payment Checkout.com made for the authorization, if any.
    func query(merchantReference: String) -> ProcessorQueryResult {
        let result = http.call(
            .get, baseURL + "/payments?reference=" + Self.pathComponent(merchantReference) + "&limit=1",
            headers: headers(idempotencyKey: nil))
        guard case .answered(200, _, _, let json?) = result, let data = json["data"]?.array else { return .pending }
        guard let payment = data.first(where: { $0.text("reference") == merchantReference }) else { return .notFound }
        switch Self.outcome(of: payment, capturing: false) {
        case .approved(let approval)?: return .approved(approval)
        case .declined(let code, let processorCode)?: return .declined(code: code, processorCode: processorCode)
        default: return .pending
        }
    }

    /// `GET /payments/{id}/actions`: the action made with the operation's reference, approved or declined; still
    /// `accepted` while it has none (or for a capture made with the authorization, none approved yet).
    func operationStatus(
        _ kind: ProcessorOperationKind, reference: String, operationID: String, amount: Int64
    ) -> ProcessorOperationOutcome {
        let result = http.call(
            .get, baseURL + "/payments/" + Self.pathComponent(reference) + "/actions",
            headers: headers(idempotencyKey: nil))
        guard case .answered(200, _, _, let json?) = result, let actions = json.array else {
            return .accepted(reference: nil)
        }
        let type = ["capture": "Capture", "void": "Void", "refund": "Refund"][kind.rawValue] ?? ""
        let ours = actions.filter { $0.text("type") == type }
        let matching =
            ours.first { $0.text("reference") == operationID }
            ?? (kind == .capture && ours.count == 1 ? ours.first : nil)
        guard let action = matching, let approved = action["approved"]?.bool else { return .accepted(reference: nil) }
        return approved ? .succeeded : .declined(code: DeclineCodes.checkoutComCode(action.text("response_code")))
    }

    func testConnection() -> ProcessorConnectionTest {
        let result = http.call(
            .get, baseURL + "/payments?reference=orchard-connection-test&limit=1", headers: headers(idempotencyKey: nil)
        )
        switch result {
        case .answered(200, _, _, _):
            return ProcessorConnectionTest(
                outcome: .ok, message: "Checkout.com accepted the secret key (GET /payments by reference)",
                httpStatus: 200)
        default:
            return .failure(result, processor: "Checkout.com", key: "secret key", call: "GET /payments")
        }
    }
}

// MARK: - Webhooks

extension CheckoutComConnector {
    public var notificationPath: String? { "checkout-com/webhooks" }

    /// A Checkout.com webhook: `Cko-Signature`, the hex HMAC-SHA256 of the raw body under the webhook's signature
    /// key, checked before anything is read. Answered `{"received": true}`.
    public func notifications(
        _ request: ProcessorNotificationRequest, account: ProcessorAccount
    ) throws(GatewayError) -> ProcessorNotificationBatch {
        guard let secret = account.secrets["webhook_secret"] else {
            throw GatewayError(.internalError, "the Checkout.com settings have no webhook secret")
        }
        let mac = secret.withUnsafeBytes { HMACSHA256.authenticationCode(key: Array($0), message: Array(request.body)) }
        guard let given = request.header("Cko-Signature")?.lowercased(),
            ConstantTime.equals(Array(Hex.encode(mac).lowercased().utf8), Array(given.utf8))
        else { throw GatewayError(.processorSignatureInvalid, "the webhook's Cko-Signature does not verify") }
        guard let body = try? JSONValue.parse(request.body), let id = body.text("id"), let type = body.text("type"),
            let data = body["data"]
        else { throw GatewayError(.parameterInvalid, "not a Checkout.com webhook", param: "data") }
        return ProcessorNotificationBatch(
            notifications: [Self.notification(id: id, type: type, data: data)], acknowledgement: #"{"received":true}"#,
            contentType: "application/json")
    }

    /// The event in the domain's words: `data.id` the payment, `data.action_id` the action, `data.reference` the
    /// reference sent with it (the payment id, or an operation's id).
    static func notification(id: String, type: String, data: JSONValue) -> ProcessorNotification {
        let (event, success): (ProcessorNotification.Event, Bool) =
            switch type {
            case "payment_approved": (.authorization, true)
            case "payment_declined": (.authorization, false)
            case "payment_captured": (.capture, true)
            case "payment_capture_declined": (.capture, false)
            case "payment_voided": (.void, true)
            case "payment_void_declined": (.void, false)
            case "payment_refunded": (.refund, true)
            case "payment_refund_declined": (.refund, false)
            default: (.other, true)
            }
        let currency = data.text("currency")
        let amount = data["amount"]?.int64.flatMap { value in
            currency.flatMap { MinorUnits.checkoutCom.isoAmount(value, currency: $0) }
        }
        let code = data.text("response_code")
        return ProcessorNotification(
            key: id, eventCode: type, event: event, success: success, paymentReference: data.text("id"),
            merchantReference: data.text("reference"), operationReference: data.text("action_id"), amount: amount,
            currency: currency, declineCode: success ? nil : DeclineCodes.checkoutComCode(code),
            processorCode: success ? nil : code, authCode: data.text("auth_code"))
    }
}
