import ApplePayModel
import Foundation
import Gateway
import OrchardHTTP
import OrchardJSON

extension GatewayAPI {
    /// Every route of `openapi.yaml`.
    public func makeRouter() -> Router {
        var router = Router()
        // Prime flow and sessions (client).
        router.post(
            "/v1/tokens", scope: .client, summary: "createPrime",
            handler: endpoint(idempotent: true, answer: Self.primeAnswer, tokenize))
        router.get("/v1/sessions/{order_token}", scope: .client, summary: "getSession", handler: endpoint(getSession))
        router.post(
            "/v1/sessions/{order_token}/pay", scope: .client, summary: "paySession",
            handler: endpoint(idempotent: true, key: Self.transactionIdentifierKey, paySession))
        // Server.
        router.post(
            "/v1/sessions", scope: .server, summary: "createSession", handler: endpoint(idempotent: true, createSession)
        )
        router.post(
            "/v1/payments", scope: .server, summary: "createPayment",
            handler: endpoint(idempotent: true, answer: Self.paymentAnswer, createPayment))
        router.get("/v1/payments", scope: .server, summary: "listPayments", handler: endpoint(listPayments))
        router.get("/v1/payments/{id}", scope: .server, summary: "getPayment", handler: endpoint(getPayment))
        router.post(
            "/v1/payments/{id}/capture", scope: .server, summary: "capturePayment",
            handler: endpoint(idempotent: true, capture))
        router.post(
            "/v1/payments/{id}/void", scope: .server, summary: "voidPayment", handler: endpoint(idempotent: true, void))
        router.post(
            "/v1/payments/{id}/refunds", scope: .server, summary: "refundPayment",
            handler: endpoint(idempotent: true, refund))
        router.get("/v1/events", scope: .server, summary: "listEvents", handler: endpoint(listEvents))
        router.get(
            "/v1/events/{id}/attempts", scope: .server, summary: "listEventAttempts",
            handler: endpoint(listEventAttempts))
        router.post(
            "/v1/events/{id}/redeliver", scope: .server, summary: "redeliverEvent",
            handler: endpoint(idempotent: true, redeliver))
        router.get("/v1/webhook-endpoint", scope: .server, summary: "getWebhookEndpoint", handler: endpoint(getWebhook))
        router.put("/v1/webhook-endpoint", scope: .server, summary: "putWebhookEndpoint", handler: endpoint(putWebhook))
        router.post(
            "/v1/merchant-keys/csr", scope: .server, summary: "createMerchantKeyCSR",
            handler: endpoint(idempotent: true, createCSR))
        router.post(
            "/v1/merchant-keys/{id}/certificate", scope: .server, summary: "uploadMerchantKeyCertificate",
            handler: endpoint(idempotent: true, uploadCertificate))
        router.get(
            "/v1/merchant-keys", scope: .server, summary: "listMerchantKeys", handler: endpoint(listMerchantKeys))
        router.post(
            "/v1/merchant-keys/{id}/retire", scope: .server, summary: "retireMerchantKey",
            handler: endpoint(retireMerchantKey))
        router.put(
            "/v1/bin-table", scope: .server, accepts: ["text/csv"], summary: "putBinTable",
            handler: endpoint(putBinTable))
        router.get(
            "/v1/co-brand-table", scope: .server, summary: "getCoBrandTable", handler: endpoint(getCoBrandTable))
        router.put(
            "/v1/co-brand-table", scope: .server, accepts: ["application/json", "text/csv"],
            summary: "putCoBrandTable", handler: endpoint(putCoBrandTable))
        router.get("/v1/reports/overview", scope: .server, summary: "getOverview", handler: endpoint(getOverview))
        mountProcessorRoutes(&router)
        mountAuditRoutes(&router)
        // Apple Pay on the Web.
        mountApplePayWeb(on: &router)
        mountWebRoutes(&router)
        mountConsoleRoutes(&router)
        mountSandboxRoutes(&router)
        // TapPay-compatible backend routes.
        mountTapPayRoutes(&router)
        // PayerMax-compatible gateway routes.
        mountPayerMaxRoutes(&router)
        // Operations.
        router.get("/healthz", summary: "healthz", handler: health)
        router.get("/readyz", summary: "readyz", handler: readiness)
        router.get("/metrics", summary: "metrics", handler: metrics.handler)
        return router
    }

    /// The session-pay idempotency key without a header: the token's `transactionIdentifier`.
    @Sendable static func transactionIdentifierKey(_ parsedBody: JSONBody?) -> String? {
        guard let identifier = parsedBody?.json["token"]?["transactionIdentifier"]?.string else { return nil }
        return GatewayService.transactionIdempotencyKey(identifier)
    }

    // MARK: Prime flow

    func tokenize(_ call: Call) throws -> HTTPResponse {
        let body = try RequestBody(call, required: true)
        guard let token = try body.document("token", required: true) else { throw body.missing("token") }
        let paymentRequest = try body.json("payment_request")
        let prime = try gateway.payments.tokenize(
            merchant: call.merchant, submitted: token, paymentRequest: paymentRequest, idempotencyKey: call.idempotencyKey,
            scope: call.scope)
        return Self.recordedResponse(call) ?? Self.primeResponse(prime)
    }

    /// The answer the domain rendered and stored with its outcome (``StoredAnswerRecorder``), if it did: sent as
    /// stored, so it is not rendered a second time.
    static func recordedResponse(_ call: Call) -> HTTPResponse? {
        call.scope.answerRecorder?.answer.map {
            HTTPResponse(
                status: HTTPStatus(rawValue: $0.status), headers: ["Content-Type": JSONCoding.contentType],
                body: $0.body)
        }
    }

    static func primeResponse(_ prime: PrimeResult) -> HTTPResponse {
        Wire.response([
            "prime": prime.prime, "prime_expiry_millis": prime.primeExpiryMillis,
            "card_info": Wire.cardInfo(prime.cardInfo),
            "merchant_reference_info": ["affiliate_codes": prime.affiliateCodes],
            "total_amount": Wire.amount(prime.totalAmount, prime.currency), "currency": prime.currency,
        ])
    }

    /// `POST /v1/tokens`'s answer, stored with the prime (see ``endpoint(idempotent:key:answer:_:)``).
    static let primeAnswer: StoredAnswerRecorder.Render = { result, _ in
        guard let prime = result as? PrimeResult else { return nil }
        return (HTTPStatus.ok.rawValue, primeResponse(prime).body)
    }

    /// `POST /v1/payments`'s answer, stored with the payment's outcome in its transaction.
    static let paymentAnswer: StoredAnswerRecorder.Render = { result, tx in
        guard let payment = result as? Payment else { return nil }
        let transitions = try tx.transitions(paymentID: payment.id)
        return (HTTPStatus.ok.rawValue, Wire.response(Wire.payment(payment, transitions: transitions)).body)
    }

    func createPayment(_ call: Call) throws -> HTTPResponse {
        let body = try RequestBody(call, required: true)
        let prime = try body.requiredString("prime", max: FieldLimits.prime.upperBound)
        guard let currency = try body.currency("currency"), let amount = try body.amount("amount", currency: currency)
        else { throw body.missing("amount") }
        var cardholder: Cardholder?
        if let holder = try body.nested("cardholder") {
            func field(_ name: String) throws(GatewayAPIError) -> String? {
                try holder.string(name, max: FieldLimits.cardholder[name] ?? 0)
            }
            cardholder = Cardholder(
                name: try field("name"), email: try field("email"), phoneNumber: try field("phone_number"),
                zipCode: try field("zip_code"), address: try field("address"), nationalID: try field("national_id"))
        }
        var mode = CaptureMode.now
        if let capture = try body.nested("capture") {
            let delay = try capture.integer("delay_days")
            switch try capture.requiredString("mode", max: 10) {
            case "now": mode = .now
            case "manual": mode = .manual
            case "delay":
                guard let delay else { throw capture.missing("delay_days") }
                mode = .afterDays(delay)  // the gateway's configured maximum bounds it
            default: throw capture.invalid("mode", "now, delay or manual")
            }
            if delay != nil, case .afterDays = mode {
            } else if delay != nil {
                throw capture.invalid("delay_days", "only with mode delay")
            }
        }
        var metadata: [String: String] = [:]
        if let nested = try body.nested("metadata") {
            guard nested.members.count <= FieldLimits.metadataEntries else {
                throw body.invalid("metadata", "at most \(FieldLimits.metadataEntries) keys")
            }
            for member in nested.members {
                let key = member.key
                guard case .string(let text) = member.value, FieldLimits.fits(key, FieldLimits.metadataKey),
                    FieldLimits.fits(text, FieldLimits.metadataValue)
                else {
                    throw body.invalid(
                        "metadata",
                        "string values of at most \(FieldLimits.metadataValue) characters under keys of "
                            + "\(FieldLimits.text(FieldLimits.metadataKey))")
                }
                metadata[key] = text
            }
        }
        let payment = try gateway.payments.payByPrime(
            merchant: call.merchant,
            PayByPrimeRequest(
                prime: prime, amount: amount, currency: currency.code,
                orderNumber: try body.string("order_number", max: FieldLimits.orderNumber.upperBound),
                details: try body.string("details", max: FieldLimits.details),
                cardholder: cardholder, captureMode: mode, metadata: metadata,
                deferred: try body.boolean("deferred") ?? false),
            idempotencyKey: call.idempotencyKey, scope: call.scope)
        // Rendered and stored with the outcome already: no second read of the transitions.
        return try Self.recordedResponse(call) ?? paymentResponse(call.merchant, payment)
    }

    func paymentResponse(_ merchant: Merchant, _ payment: Payment) throws -> HTTPResponse {
        let transitions = try gateway.payments.transitions(merchant: merchant, paymentID: payment.id)
        return Wire.response(Wire.payment(payment, transitions: transitions))
    }

    // MARK: Sessions

    func createSession(_ call: Call) throws -> HTTPResponse {
        let body = try RequestBody(call, required: true)
        let outTradeNo = try body.requiredString("out_trade_no", max: FieldLimits.outTradeNo.upperBound)
        guard Self.isOutTradeNo(outTradeNo) else {
            throw body.invalid("out_trade_no", "letters, digits, _ - and . only")
        }
        guard let currency = try body.currency("currency"), let amount = try body.amount("amount", currency: currency)
        else { throw body.missing("amount") }
        let country = try body.requiredString("country", max: 2)
        guard country.count == 2, country.allSatisfy({ $0.isASCII && $0.isUppercase }),
            (try? CountryCode(country)) != nil
        else {
            throw GatewayAPIError.make(
                .badRequest, .invalidRequest, "invalid_country_code", "\(country) is not an ISO 3166-1 alpha-2 code",
                param: "country")
        }
        let subject = try body.requiredString("subject", max: FieldLimits.subject.upperBound)
        let userID = try body.requiredString("user_id", max: FieldLimits.userID.upperBound)
        let notifyURL = try body.string("notify_url", max: FieldLimits.url, nullable: true)
        if let notifyURL, !Self.acceptableWebhookURL(notifyURL, environment: call.merchant.environment) {
            throw body.invalid("notify_url", "an https URL (http only to the loopback in the sandbox)")
        }
        let lifetime = try body.integer("expires_in_seconds", nullable: true)
        if let lifetime, !FieldLimits.sessionLifetimeSeconds.contains(lifetime) {
            throw body.invalid(
                "expires_in_seconds",
                "\(FieldLimits.text(FieldLimits.sessionLifetimeSeconds))")
        }
        let session = try gateway.sessions.create(
            merchant: call.merchant,
            CreateSessionRequest(
                outTradeNo: outTradeNo, amount: amount, currency: currency.code, country: country, subject: subject,
                userID: userID, notifyURL: notifyURL, lifetime: lifetime.map(TimeInterval.init)),
            idempotencyKey: call.idempotencyKey, scope: call.scope)
        return Wire.response(Wire.session(session, merchantName: call.merchant.name, now: gateway.now))
    }

    /// The characters an `out_trade_no` may have: ASCII letters, digits, `_`, `-` and `.`.
    static func isOutTradeNo(_ text: String) -> Bool {
        text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "_-.".contains($0)) }
    }

    func getSession(_ call: Call) throws -> HTTPResponse {
        let session = try gateway.sessions.session(
            merchant: call.merchant, orderToken: try call.context.parameter("order_token"))
        return Wire.response(Wire.session(session, merchantName: call.merchant.name, now: gateway.now))
    }

    func paySession(_ call: Call) throws -> HTTPResponse {
        let body = try RequestBody(call, required: true)
        guard let token = try body.document("token", required: true) else { throw body.missing("token") }
        let orderToken = try call.context.parameter("order_token")
        let payment = try gateway.sessions.pay(
            merchant: call.merchant, orderToken: orderToken, submitted: token, idempotencyKey: call.idempotencyKey,
            scope: call.scope)
        return Wire.response([
            "payment_id": payment.id, "status": payment.status.rawValue, "order_token": orderToken,
            "out_trade_no": payment.outTradeNo ?? "", "amount": Wire.amount(payment.amount, payment.currency),
            "currency": payment.currency, "card_info": Wire.cardInfo(payment.cardInfo),
            "created_at": Wire.time(payment.createdAt),
        ])
    }

    // MARK: Payments

    func getPayment(_ call: Call) throws -> HTTPResponse {
        try paymentResponse(
            call.merchant, try gateway.payments.payment(merchant: call.merchant, id: try call.context.parameter("id")))
    }

    static func queryTime(_ request: HTTPRequest, _ name: String) throws(GatewayAPIError) -> Date? {
        guard let text = request.query(name) else { return nil }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date }
        throw GatewayAPIError.make(
            .badRequest, .invalidRequest, "parameter_invalid", "\(name) must be an RFC 3339 time", param: name)
    }

    static func limit(_ request: HTTPRequest) throws(GatewayAPIError) -> Int {
        guard let text = request.query("limit") else { return FieldLimits.defaultPageSize }
        guard let limit = Int(text), FieldLimits.pageSize.contains(limit) else {
            throw GatewayAPIError.make(
                .badRequest, .invalidRequest, "parameter_invalid", "limit is \(FieldLimits.text(FieldLimits.pageSize))",
                param: "limit")
        }
        return limit
    }

    func listPayments(_ call: Call) throws -> HTTPResponse {
        let request = call.request
        var currency: Currency?
        if let code = request.query("currency") {
            guard let parsed = try? Currency(code: code), code == code.uppercased() else {
                throw GatewayAPIError.make(
                    .badRequest, .invalidRequest, "unknown_currency", "\(code) is not an ISO 4217 currency code",
                    param: "currency")
            }
            currency = parsed
        }
        func amount(_ name: String) throws -> Int64? {
            guard let text = request.query(name) else { return nil }
            guard let currency else {
                throw GatewayAPIError.make(
                    .badRequest, .invalidRequest, "parameter_missing", "\(name) needs currency", param: "currency")
            }
            do throws(MoneyError) {
                return try Money(text, currency: currency).minorUnits
            } catch { throw GatewayAPIError.from(error, param: name) }
        }
        var statuses: [PaymentStatus] = []
        if let list = request.query("status") {
            for part in list.split(separator: ",", omittingEmptySubsequences: false) {
                guard let status = PaymentStatus(rawValue: String(part)) else {
                    throw GatewayAPIError.make(
                        .badRequest, .invalidRequest, "parameter_invalid", "unknown status \(part)", param: "status")
                }
                statuses.append(status)
            }
        }
        let lastFour = request.query("last_four")
        if let lastFour, lastFour.utf8.count != 4 || !lastFour.utf8.allSatisfy({ (0x30...0x39).contains($0) }) {
            throw GatewayAPIError.make(
                .badRequest, .invalidRequest, "parameter_invalid", "last_four is 4 digits", param: "last_four")
        }
        let query = PaymentQuery(
            createdFrom: try Self.queryTime(request, "created_from"),
            createdTo: try Self.queryTime(request, "created_to"), currency: currency?.code,
            minAmount: try amount("amount_min"), maxAmount: try amount("amount_max"), statuses: statuses,
            orderNumber: request.query("order_number"), outTradeNo: request.query("out_trade_no"),
            lastFour: lastFour, limit: try Self.limit(request), cursor: request.query("cursor"))
        let page = try gateway.payments.list(merchant: call.merchant, query: query)
        var data: [[String: Any]] = []
        for payment in page.payments {
            let transitions = try gateway.payments.transitions(merchant: call.merchant, paymentID: payment.id)
            data.append(Wire.payment(payment, transitions: transitions))
        }
        return Wire.response(["data": data, "next_cursor": Wire.value(page.nextCursor)])
    }

    func capture(_ call: Call) throws -> HTTPResponse {
        let body = try RequestBody(call, required: false)
        let id = try call.context.parameter("id")
        let amount = try optionalAmount(body, call, paymentID: id)
        let payment = try gateway.payments.capture(
            merchant: call.merchant, paymentID: id, amount: amount, idempotencyKey: call.idempotencyKey,
            scope: call.scope)
        return try paymentResponse(call.merchant, payment)
    }

    /// The body's `amount` in the currency of payment `paymentID`, or nil when the body has none (or null).
    private func optionalAmount(_ body: RequestBody, _ call: Call, paymentID: String) throws -> Int64? {
        guard let amount = body.raw("amount"), amount != .null else { return nil }
        let payment = try gateway.payments.payment(merchant: call.merchant, id: paymentID)
        return try body.amount("amount", currency: try Currency(code: payment.currency))
    }

    func void(_ call: Call) throws -> HTTPResponse {
        let payment = try gateway.payments.void(
            merchant: call.merchant, paymentID: try call.context.parameter("id"), idempotencyKey: call.idempotencyKey,
            scope: call.scope)
        return try paymentResponse(call.merchant, payment)
    }

    func refund(_ call: Call) throws -> HTTPResponse {
        let body = try RequestBody(call, required: false)
        let id = try call.context.parameter("id")
        let amount = try optionalAmount(body, call, paymentID: id)
        let result = try gateway.refunds.refund(
            merchant: call.merchant, paymentID: id, amount: amount,
            reason: try body.string("reason", max: FieldLimits.refundReason, nullable: true),
            idempotencyKey: call.idempotencyKey, scope: call.scope)
        return Wire.response(Wire.refund(result.refund))
    }

    // MARK: Events and webhooks

    func listEvents(_ call: Call) throws -> HTTPResponse {
        let type = call.request.query("type")
        if let type, WebhookEventType(rawValue: type) == nil {
            throw GatewayAPIError.make(
                .badRequest, .invalidRequest, "parameter_invalid", "unknown event type", param: "type")
        }
        let objectID = call.request.query("object_id")
        if let objectID, !FieldLimits.isIdentifier(objectID) {
            throw GatewayAPIError.make(
                .badRequest, .invalidRequest, "parameter_invalid",
                "object_id is an id of \(FieldLimits.text(FieldLimits.identifier)) letters, digits or _",
                param: "object_id")
        }
        let page = try gateway.webhooks.eventPage(
            merchant: call.merchant, type: type, objectID: objectID, limit: try Self.limit(call.request),
            cursor: call.request.query("cursor"))
        return Wire.response([
            "data": page.events.map { Wire.event($0) },
            "next_cursor": Wire.value(page.nextCursor),
        ])
    }

    /// `GET /v1/events/{id}/attempts`: every delivery attempt of the event, oldest first.
    func listEventAttempts(_ call: Call) throws -> HTTPResponse {
        let attempts = try gateway.webhooks.webhookAttempts(merchant: call.merchant, eventID: try call.context.parameter("id"))
        return Wire.response([
            "data": attempts.map { attempt -> [String: Any] in
                [
                    "attempted_at": Wire.time(attempt.attemptedAt), "state": attempt.state.rawValue,
                    "http_status": attempt.httpStatus.map { $0 as Any } ?? NSNull(),
                    "latency_ms": attempt.latencyMilliseconds.map { $0 as Any } ?? NSNull(),
                    "error": Wire.value(attempt.error),
                ]
            }
        ])
    }

    func redeliver(_ call: Call) throws -> HTTPResponse {
        let record = try gateway.webhooks.redeliver(
            merchant: call.merchant, eventID: try call.context.parameter("id"), idempotencyKey: call.idempotencyKey,
            scope: call.scope)
        return Wire.response(Wire.event(record))
    }

    func getWebhook(_ call: Call) throws -> HTTPResponse {
        let merchant = try gateway.merchants.merchant(id: call.merchant.id)
        let secret = try gateway.merchants.webhookSecrets(merchantID: merchant.id).first
        let hint = secret.map { "whsec_…" + String($0.suffix(4)) }
        return Wire.response([
            "url": Wire.value(merchant.webhookURL), "enabled": merchant.webhookURL != nil && merchant.webhookEnabled,
            "secret_hint": Wire.value(hint),
        ])
    }

    /// The URL rules: https, or plain http to the loopback in the sandbox.
    static func acceptableWebhookURL(_ text: String, environment: GatewayEnvironment) -> Bool {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased(),
            !host.isEmpty
        else { return false }
        if scheme == "https" { return true }
        return scheme == "http" && environment == .sandbox && ["127.0.0.1", "::1", "[::1]", "localhost"].contains(host)
    }

    func putWebhook(_ call: Call) throws -> HTTPResponse {
        let body = try RequestBody(call, required: true)
        let url = try body.requiredString("url", max: FieldLimits.url)
        guard Self.acceptableWebhookURL(url, environment: call.merchant.environment) else {
            throw body.invalid("url", "an https URL (http only to the loopback in the sandbox)")
        }
        let enabled = try body.boolean("enabled", nullable: true) ?? true
        let result = try gateway.merchants.setWebhookEndpoint(
            merchantID: call.merchant.id, url: url, enabled: enabled, scope: call.scope)
        return Wire.response(["url": result.url, "secret": result.secret])
    }

    // MARK: Merchant keys and the BIN table

    func createCSR(_ call: Call) throws -> HTTPResponse {
        let body = try RequestBody(call, required: true)
        let type = try body.requiredString("type", max: 10)
        let purpose = try body.requiredString("purpose", max: 20)
        let csr = try gateway.keys.createKeyCSR(
            merchant: call.merchant, type: type, purpose: purpose, idempotencyKey: call.idempotencyKey,
            scope: call.scope)
        return Wire.response(Self.csrObject(csr))
    }

    func uploadCertificate(_ call: Call) throws -> HTTPResponse {
        let body = try RequestBody(call, required: true)
        let pem = try body.requiredString("certificate_pem", max: FieldLimits.certificatePEM.upperBound)
        let key = try gateway.keys.attachCertificate(
            merchant: call.merchant, keyID: try call.context.parameter("id"), certificatePEM: pem,
            idempotencyKey: call.idempotencyKey, scope: call.scope)
        return Wire.response(Self.keyStatusObject(key))
    }

    func putBinTable(_ call: Call) throws -> HTTPResponse {
        guard let csv = String(data: call.request.body, encoding: .utf8) else {
            throw HTTPAPIError.unsupportedMediaType("the BIN table must be UTF-8 text/csv")
        }
        let header = csv.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first.map {
            $0.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let columns = "bin_prefix,issuer,bank_id,funding,level,country,country_code"
        guard header == columns || header == columns + ",issuer_zh_tw" else {
            let message = "the header must be \(columns), optionally followed by ,issuer_zh_tw"
            var error = GatewayAPIError.make(
                .unprocessableContent, .invalidRequest, "bin_table_invalid", "line 1: " + message)
            error.rows = [GatewayError.RowProblem(row: 1, message: message)]
            throw error
        }
        let rows = try gateway.merchants.loadBINTable(merchantID: call.merchant.id, csv: csv, scope: call.scope)
        return Wire.response(["rows": rows])
    }
}
