import ApplePayModel
import Foundation
import Gateway
import OrchardCrypto
import OrchardHTTP
import OrchardJSON

extension RouteScope {
    /// PayerMax's gateway routes (`/aggregate-pay/api/gateway/…`): the merchant's RSA signature over the raw body
    /// in the `sign` header, checked by the route itself so that a refusal answers in PayerMax's envelope.
    public static let payerMax: RouteScope = "payermax"
}

/// PayerMax's Apple Pay server calls (`applyApplePaySession`, `orderAndPay`) over the same domain as `/v1`: the
/// signed envelope `{version, keyVersion, requestTime, appId, merchantNo, data}` in, `{code, msg, data}` signed
/// with the gateway's key out. `orderToken` is the Orchard session's order token, `tradeToken` the payment id.
extension GatewayAPI {
    /// How far a `requestTime` may be from the gateway's clock, either way (PayerMax's two minutes).
    static let payerMaxRequestWindow: TimeInterval = 120

    func mountPayerMaxRoutes(_ router: inout Router) {
        router.get(
            "/v1/compat/payermax", scope: .server, summary: "getPayerMaxCompat", handler: endpoint(getPayerMaxCompat))
        router.put(
            "/v1/compat/payermax", scope: .server, summary: "putPayerMaxCompat", handler: endpoint(putPayerMaxCompat))
        router.post(
            "/aggregate-pay/api/gateway/applyApplePaySession", scope: .payerMax,
            summary: "payerMaxApplyApplePaySession", handler: payerMax(payerMaxApplyApplePaySession))
        router.post(
            "/aggregate-pay/api/gateway/orderAndPay", scope: .payerMax, summary: "payerMaxOrderAndPay",
            handler: payerMax(payerMaxOrderAndPay))
    }

    // MARK: Settings (`/v1/compat/payermax`)

    func payerMaxCompatResponse(_ merchant: Merchant) throws -> HTTPResponse {
        let gatewayKey = try gateway.merchants.payerMaxSigningKey()
        return Wire.response([
            "merchant_id": merchant.id, "app_id": merchant.appID,
            "merchant_no": merchant.payerMax.map { $0.merchantNo as Any } ?? NSNull(),
            "public_key_pem": merchant.payerMax.map { $0.publicKeyPEM as Any } ?? NSNull(),
            "updated_at": Wire.time(merchant.payerMax?.updatedAt),
            "gateway_public_key_pem": gatewayKey.publicKeyPEM,
        ])
    }

    func getPayerMaxCompat(_ call: Call) throws -> HTTPResponse { try payerMaxCompatResponse(call.merchant) }

    func putPayerMaxCompat(_ call: Call) throws -> HTTPResponse {
        let body = try RequestBody(call, required: true)
        guard let merchantNo = try body.string("merchant_no", max: FieldLimits.payerMaxMerchantNo.upperBound) else {
            throw body.missing("merchant_no")
        }
        guard let key = try body.string("public_key_pem", max: FieldLimits.publicKeyPEM) else {
            throw body.missing("public_key_pem")
        }
        let merchant = try gateway.merchants.setPayerMaxRegistration(
            merchantID: call.merchant.id, merchantNo: merchantNo, publicKey: key, scope: call.scope)
        return try payerMaxCompatResponse(merchant)
    }

    // MARK: The PayerMax call

    /// What a PayerMax endpoint gets: the merchant the verified envelope names and the envelope's `data`.
    struct PayerMaxCall {
        var merchant: Merchant
        var data: [String: JSONValue]
        var request: HTTPRequest
    }

    /// Wraps a PayerMax endpoint: reads the envelope, finds the merchant by `appId` and its registered
    /// `merchantNo`, verifies `sign` over the exact body bytes with the merchant's key, refuses a `requestTime`
    /// more than two minutes from the gateway's clock, and answers `{code, msg, data}` (HTTP 200, as PayerMax
    /// does, with `orchard_code` beside a refusal's code), signed with the gateway's key in `sign`.
    func payerMax(_ body: @escaping @Sendable (PayerMaxCall) throws -> [String: Any]) -> HTTPHandler {
        { [gateway] request, context in
            var answer: [String: Any]
            do {
                let call = try Self.verifiedPayerMaxCall(request, gateway: gateway)
                answer = ["code": PayerMaxCode.success.rawValue, "msg": "Success.", "data": try body(call)]
            } catch let refusal as PayerMaxRefusal {
                answer = refusal.body
            } catch let error as GatewayError {
                context.record(GatewayAPIError.from(error), cause: error)
                answer = PayerMaxRefusal(error).body
            }
            let bytes = Wire.data(answer)
            var headers: HTTPHeaders = ["Content-Type": JSONCoding.contentType]
            headers["sign"] = try PayerMaxNotification.sign(bytes, key: try gateway.merchants.payerMaxSigningKey())
            return HTTPResponse(status: .ok, headers: headers, body: bytes)
        }
    }

    static func verifiedPayerMaxCall(_ request: HTTPRequest, gateway: GatewayService) throws -> PayerMaxCall {
        guard let envelope = (try? JSONLimits().parse(request.body))?.json.fields else {
            throw PayerMaxRefusal(.paramsInvalid, "the body is not a JSON object", orchardCode: "invalid_json")
        }
        guard let appID = envelope["appId"]?.string, !appID.isEmpty else {
            throw PayerMaxRefusal(.paramsInvalid, "appId is required", orchardCode: "parameter_missing")
        }
        let found: Merchant?
        do throws(GatewayError) { found = try gateway.merchants.payerMaxMerchant(appID: appID) } catch {
            guard error.code == .merchantDisabled else { throw error }
            throw PayerMaxRefusal(.merchantInvalid, "The merchant has been offline.", orchardCode: error.code.rawValue)
        }
        guard let merchant = found else {
            throw PayerMaxRefusal(.merchantAppInvalid, "Invalid merchant app.", orchardCode: "merchant_not_found")
        }
        guard let registration = merchant.payerMax, envelope["merchantNo"]?.string == registration.merchantNo else {
            throw PayerMaxRefusal(.merchantInvalid, "Invalid merchant.", orchardCode: "merchant_not_found")
        }
        guard let sign = request.headers["sign"], let signature = Data(base64Encoded: sign),
            let key = try? RSASignature.publicKey(registration.publicKeyPEM),
            RSASignature.isValid(signature, of: request.body, key: key)
        else {
            throw PayerMaxRefusal(.signVerifyFailed, "The signature verify failed.", orchardCode: "signature_invalid")
        }
        guard let time = envelope["requestTime"]?.string, let sent = PayerMaxTime.date(time) else {
            throw PayerMaxRefusal(
                .paramsInvalid, "requestTime must be yyyy-MM-dd'T'HH:mm:ss.SSSXXX", orchardCode: "parameter_invalid")
        }
        guard abs(sent.timeIntervalSince(gateway.now)) <= payerMaxRequestWindow else {
            throw PayerMaxRefusal(
                .paramsInvalid, "requestTime is more than two minutes from the gateway's time",
                orchardCode: "request_time_stale")
        }
        for field in ["version", "keyVersion"] where (envelope[field]?.string ?? "").isEmpty {
            throw PayerMaxRefusal(.paramsInvalid, "\(field) is required", orchardCode: "parameter_missing")
        }
        guard let data = envelope["data"]?.fields else {
            throw PayerMaxRefusal(.paramsInvalid, "data must be an object", orchardCode: "parameter_missing")
        }
        return PayerMaxCall(merchant: merchant, data: data, request: request)
    }

    // MARK: applyApplePaySession

    /// Creates the Orchard session (`orderToken`) with the domain's own rules; its result notification goes to
    /// `notifyUrl` in PayerMax's form.
    func payerMaxApplyApplePaySession(_ call: PayerMaxCall) throws -> [String: Any] {
        let data = call.data
        let outTradeNo = try Self.payerMaxString(data, "outTradeNo", required: true) ?? ""
        guard Self.isOutTradeNo(outTradeNo) else {
            throw PayerMaxRefusal(
                .paramsInvalid, "outTradeNo: letters, digits, _ - and . only", orchardCode: "parameter_invalid")
        }
        let currencyCode = try Self.payerMaxString(data, "currency", required: true) ?? ""
        let currency: Currency
        do { currency = try Currency(code: currencyCode) } catch {
            throw PayerMaxRefusal(.currencyInvalid, "Invalid currency.", orchardCode: "unknown_currency")
        }
        let amountText: String
        switch data["totalAmount"] {
        case .number(let text)?: amountText = text
        case .string(let text)?: amountText = text
        case nil, .null?: throw PayerMaxRefusal(.paramsInvalid, "totalAmount is required", orchardCode: "parameter_missing")
        default: throw PayerMaxRefusal(.amountInvalid, "totalAmount must be a number", orchardCode: "invalid_amount")
        }
        let amount: Int64
        do { amount = try AmountRules.minorUnits(amountText, currency: currency, param: "totalAmount") } catch {
            throw PayerMaxRefusal(.amountInvalid, "Invalid amount: \(error.reason)", orchardCode: error.code.rawValue)
        }
        let country = try Self.payerMaxString(data, "country", required: true) ?? ""
        guard country.count == 2, country.allSatisfy({ $0.isASCII && $0.isUppercase }),
            (try? CountryCode(country)) != nil
        else { throw PayerMaxRefusal(.countryInvalid, "Invalid country.", orchardCode: "invalid_country_code") }
        let notifyURL = try Self.payerMaxString(data, "notifyUrl", required: false)
        if let notifyURL, !Self.acceptableWebhookURL(notifyURL, environment: call.merchant.environment) {
            throw PayerMaxRefusal(
                .paramsInvalid, "notifyUrl must be an https URL (http only to the loopback in the sandbox)",
                orchardCode: "parameter_invalid")
        }
        var lifetime: TimeInterval?
        if let expire = try Self.payerMaxString(data, "expireTime", required: false) {
            guard let seconds = Int(expire), FieldLimits.sessionLifetimeSeconds.contains(seconds) else {
                throw PayerMaxRefusal(
                    .paramsInvalid,
                    "expireTime: seconds, \(FieldLimits.text(FieldLimits.sessionLifetimeSeconds))",
                    orchardCode: "parameter_invalid")
            }
            lifetime = TimeInterval(seconds)
        }
        let session = try gateway.sessions.create(
            merchant: call.merchant,
            CreateSessionRequest(
                outTradeNo: outTradeNo, amount: amount, currency: currency.code, country: country,
                subject: try Self.payerMaxString(data, "subject", required: true),
                userID: try Self.payerMaxString(data, "userId", required: true), notifyURL: notifyURL,
                lifetime: lifetime, notifyFormat: .payerMax))
        return [
            "amount": Wire.amount(session.amount, session.currency), "currency": session.currency,
            "country": session.country, "merchantId": session.merchantIdentifier,
            "networks": session.supportedNetworks, "orderToken": session.orderToken,
            "outTradeNo": session.outTradeNo, "expireTime": Wire.time(session.expiresAt),
        ]
    }

    // MARK: orderAndPay

    /// Pays the session `orderToken` names with the Apple Pay token (`paymentToken`, the `PKPaymentToken` as
    /// JSON) through the domain's session pay: the same amount, currency, replay and once-only rules.
    /// `Idempotency-Key` (else the token's `transactionIdentifier`) makes a retry answer the first result.
    func payerMaxOrderAndPay(_ call: PayerMaxCall) throws -> [String: Any] {
        let data = call.data
        let orderToken = try Self.payerMaxString(data, "orderToken", required: true) ?? ""
        guard let token = data["paymentToken"], token.fields != nil else {
            throw PayerMaxRefusal(
                .paramsInvalid, "paymentToken (the Apple Pay token as a JSON object) is required",
                orchardCode: "parameter_missing")
        }
        let session = try gateway.sessions.session(merchant: call.merchant, orderToken: orderToken)
        if let outTradeNo = try Self.payerMaxString(data, "outTradeNo", required: false),
            outTradeNo != session.outTradeNo
        {
            throw PayerMaxRefusal(
                .paramsInvalid, "outTradeNo differs from the order's", orchardCode: "parameter_invalid")
        }
        let key = call.request.headers["Idempotency-Key"]
        let tokenBytes = try JSONWriter.json(token)
        let payment: Payment
        do throws(GatewayError) {
            payment = try gateway.sessions.pay(
                merchant: call.merchant, orderToken: orderToken, token: tokenBytes,
                idempotencyKey: key)
        } catch {
            guard error.code == .cardDeclined || error.code == .processorDeclined, let paymentID = error.paymentID
            else { throw error }
            var refusal = PayerMaxRefusal(error)
            refusal.body["data"] = [
                "outTradeNo": session.outTradeNo, "tradeToken": paymentID, "status": PayerMaxTradeStatus.failed,
            ]
            throw refusal
        }
        return [
            "outTradeNo": session.outTradeNo, "tradeToken": payment.id,
            "status": PayerMaxTradeStatus.of(payment.status),
        ]
    }

    /// A string field of `data`: absent, null and empty read as nil; another type is `PARAMS_INVALID`.
    static func payerMaxString(_ data: [String: JSONValue], _ key: String, required: Bool) throws -> String? {
        switch data[key] {
        case .string(let text)? where !text.isEmpty: return text
        case nil, .null?, .string?:
            if required { throw PayerMaxRefusal(.paramsInvalid, "\(key) is required", orchardCode: "parameter_missing") }
            return nil
        default: throw PayerMaxRefusal(.paramsInvalid, "\(key) must be a string", orchardCode: "parameter_invalid")
        }
    }
}

/// PayerMax's trade `status` for an Orchard payment.
enum PayerMaxTradeStatus {
    static let failed = "FAILED"

    static func of(_ status: PaymentStatus) -> String {
        switch status {
        case .authorized, .captured, .refunded, .partiallyRefunded: "SUCCESS"
        case .failed: failed
        case .voided: "CLOSED"
        default: "PENDING"
        }
    }
}

/// PayerMax's response codes (its published list; `APPLY_SUCCESS` means the request was taken, the trade's
/// outcome is `data.status`).
struct PayerMaxCode: RawRepresentable, Hashable {
    var rawValue: String
    static let success = PayerMaxCode(rawValue: "APPLY_SUCCESS")
    static let systemError = PayerMaxCode(rawValue: "SYSTEM_ERROR")
    static let signVerifyFailed = PayerMaxCode(rawValue: "SIGN_VERIFY_FAILED")
    static let paymentRejected = PayerMaxCode(rawValue: "PAYMENT_REJECTED")
    static let paramsInvalid = PayerMaxCode(rawValue: "PARAMS_INVALID")
    static let merchantInvalid = PayerMaxCode(rawValue: "MERCHANT_INVALID")
    static let merchantAppInvalid = PayerMaxCode(rawValue: "MERCHANT_APP_INVALID")
    static let orderNotExist = PayerMaxCode(rawValue: "ORDER_NOT_EXIST")
    static let orderClosed = PayerMaxCode(rawValue: "ORDER_CLOSED")
    static let orderRepeat = PayerMaxCode(rawValue: "ORDER_REPEAT")
    static let countryInvalid = PayerMaxCode(rawValue: "COUNTRY_INVALID")
    static let currencyInvalid = PayerMaxCode(rawValue: "CURRENCY_INVALID")
    static let amountInvalid = PayerMaxCode(rawValue: "AMOUNT_INVALID")
    static let unsupportedCard = PayerMaxCode(rawValue: "UNSUPPORT_CARD")
    static let paymentProcessing = PayerMaxCode(rawValue: "PAYMENT_PROCESSING")
    static let paymentFailed = PayerMaxCode(rawValue: "PAYMENT_FAILED")
}

/// A PayerMax answer other than `APPLY_SUCCESS`: `{code, msg, orchard_code}` (and `data` where one is known).
struct PayerMaxRefusal: Error, @unchecked Sendable {
    var body: [String: Any]

    init(_ code: PayerMaxCode, _ msg: String, orchardCode: String) {
        body = ["code": code.rawValue, "msg": msg, "orchard_code": orchardCode]
    }

    /// The PayerMax code of a domain error (``table``; `PARAMS_INVALID` for other refusals of the request,
    /// `SYSTEM_ERROR` for the gateway's own failures).
    init(_ error: GatewayError) {
        let status = GatewayAPIError.from(error).base.status.rawValue
        let code = Self.table[error.code] ?? (status >= 500 ? .systemError : .paramsInvalid)
        self.init(code, code == .systemError ? "System is busy, please try again later." : error.reason,
            orchardCode: error.code.rawValue)
    }

    /// Domain codes with one PayerMax code wherever they arise.
    static let table: [GatewayError.Code: PayerMaxCode] = [
        .sessionNotFound: .orderNotExist, .sessionExpired: .orderClosed, .sessionAlreadyPaid: .orderRepeat,
        .duplicateOutTradeNo: .orderRepeat, .tokenReplayed: .paymentRejected, .idempotencyConflict: .paymentRejected, .amountMismatch: .amountInvalid,
        .currencyMismatch: .currencyInvalid, .currencyNotSupported: .currencyInvalid, .unknownCurrency: .currencyInvalid,
        .invalidAmount: .amountInvalid, .tooManyDecimals: .amountInvalid, .negativeAmount: .amountInvalid,
        .amountOutOfRange: .amountInvalid, .networkNotAllowed: .unsupportedCard, .cardDeclined: .paymentFailed,
        .processorDeclined: .paymentFailed, .idempotencyInFlight: .paymentProcessing,
        .merchantDisabled: .merchantInvalid, .noProcessingKey: .merchantAppInvalid,
    ]
}
