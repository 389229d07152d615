import ApplePayModel
import Foundation
import Gateway
import OrchardHTTP
import OrchardJSON

extension RouteScope {
    /// TapPay's backend routes (`/tpc/…`): the merchant's secret key in `x-api-key` and in the body's
    /// `partner_key`, checked by the route itself so that a refusal answers in TapPay's own shape.
    public static let tappay: RouteScope = "tappay"
}

/// TapPay's backend API ("Server APIs": Pay by Prime, Refund, Refund Cancel, Record, Trade History, Cap Today,
/// Cap Cancel) over the same domain as `/v1`: names, shapes and codes are mapped here, every rule is the
/// domain's. One payment is one payment: its `rec_trade_id` is the Orchard payment id.
extension GatewayAPI {
    func mountTapPayRoutes(_ router: inout Router) {
        router.get(
            "/v1/compat/tappay", scope: .server, summary: "getTapPayCompat", handler: endpoint(getTapPayCompat))
        router.put(
            "/v1/compat/tappay", scope: .server, summary: "putTapPayCompat", handler: endpoint(putTapPayCompat))
        router.post(
            "/tpc/payment/pay-by-prime", scope: .tappay, summary: "tappayPayByPrime",
            handler: tappay(tappayPayByPrime))
        router.post(
            "/tpc/transaction/refund", scope: .tappay, summary: "tappayRefund", handler: tappay(tappayRefund))
        router.post(
            "/tpc/transaction/refund/cancel", scope: .tappay, summary: "tappayRefundCancel",
            handler: tappay(tappayRefundCancel))
        router.post(
            "/tpc/transaction/query", scope: .tappay, summary: "tappayRecord", handler: tappay(tappayRecord))
        router.post(
            "/tpc/transaction/trade-history", scope: .tappay, summary: "tappayTradeHistory",
            handler: tappay(tappayTradeHistory))
        router.post("/tpc/transaction/cap", scope: .tappay, summary: "tappayCapToday", handler: tappay(tappayCap))
        router.post(
            "/tpc/transaction/cap/cancel", scope: .tappay, summary: "tappayCapCancel",
            handler: tappay(tappayCapCancel))
    }

    // MARK: Settings (`/v1/compat/tappay`)

    func tapPayCompatResponse(_ merchant: Merchant) -> HTTPResponse {
        Wire.response([
            "merchant_id": merchant.id,
            "merchant_alias": merchant.tappayMerchantAlias.map { $0 as Any } ?? NSNull(),
            "app_id": merchant.tappayAppID.map { $0 as Any } ?? NSNull(),
        ])
    }

    func getTapPayCompat(_ call: Call) throws -> HTTPResponse { tapPayCompatResponse(call.merchant) }

    /// Sets what the body names (`merchant_alias`, `app_id`, or both), each `null` to remove it; what it leaves
    /// out stays as it is.
    func putTapPayCompat(_ call: Call) throws -> HTTPResponse {
        let body = try RequestBody(call, required: true)
        let alias: String??
        switch body.raw("merchant_alias") {
        case nil: alias = .none
        case .null?: alias = .some(nil)
        case .string(let text)?: alias = .some(text)
        case let other?: throw body.invalid("merchant_alias", "a string or null, not \(other.typeName)")
        }
        let appID: Int??
        switch body.raw("app_id") {
        case nil: appID = .none
        case .null?: appID = .some(nil)
        case .number?: appID = .some(try body.integer("app_id", nullable: true))
        case let other?: throw body.invalid("app_id", "an integer or null, not \(other.typeName)")
        }
        guard alias != nil || appID != nil else {
            throw GatewayAPIError.make(
                .badRequest, .invalidRequest, "parameter_missing", "send merchant_alias, app_id or both",
                param: "merchant_alias")
        }
        let merchant = try gateway.merchants.setTapPayCompat(
            merchantID: call.merchant.id, merchantAlias: alias, appID: appID, scope: call.scope)
        return tapPayCompatResponse(merchant)
    }

    // MARK: The TapPay call

    /// What a TapPay endpoint gets: the authenticated merchant and the body's object.
    struct TapPayCall {
        var merchant: Merchant
        var body: [String: JSONValue]
        /// The request's scope: the secret key's actor, passed to every operation the endpoint calls.
        var scope: RequestScope
    }

    /// Wraps a TapPay endpoint: authenticates `x-api-key` and `partner_key` (both the secret key, equal), and
    /// answers every refusal and domain error as TapPay does: HTTP 200 with a non-zero `status`, its `msg`, and
    /// Orchard's stable code as `orchard_code`.
    func tappay(_ body: @escaping @Sendable (TapPayCall) throws -> [String: Any]) -> HTTPHandler {
        { [gateway] request, context in
            do {
                // Malformed JSON (the JSON middleware leaves this scope's bodies to the route) and a body that is
                // not an object are TapPay's status 5.
                guard let object = Self.parse(request, context: context)?.json.fields else {
                    throw TapPayRefusal(.wrongJSON, orchardCode: "invalid_json")
                }
                guard let header = request.headers["x-api-key"], !header.isEmpty else {
                    throw TapPayRefusal(.invalidAPIKey, orchardCode: "missing_credentials")
                }
                guard let partnerKey = object["partner_key"]?.string, !partnerKey.isEmpty else {
                    throw TapPayRefusal(.missingPartnerKey, orchardCode: "missing_credentials")
                }
                guard partnerKey == header else {
                    throw TapPayRefusal(.partnerKeyMismatch, orchardCode: "invalid_credentials")
                }
                let merchant: Merchant
                do throws(GatewayError) {
                    merchant = try gateway.merchants.authenticateServer(secretKey: header)
                } catch {
                    throw error.code == .merchantDisabled
                        ? TapPayRefusal(.partnerUnauthorized, orchardCode: error.code.rawValue)
                        : TapPayRefusal(.partnerNotFound, orchardCode: "invalid_credentials")
                }
                let actor = AuditActor.api(secretKey: header)
                context[AuditActorKey.self] = actor
                let answer = try body(TapPayCall(merchant: merchant, body: object, scope: RequestScope(actor: actor)))
                var reply: [String: Any] = ["status": 0, "msg": "Success"]
                reply.merge(answer) { _, new in new }
                return Wire.response(reply)
            } catch let refusal as TapPayRefusal {
                return Wire.response(refusal.body)
            } catch let error as GatewayError {
                context.record(GatewayAPIError.from(error), cause: error)
                return Wire.response(TapPayRefusal(error).body)
            }
        }
    }

    /// Whether `merchant_id` (the Orchard id or the alias) names the authenticated merchant.
    static func checkMerchantID(_ call: TapPayCall) throws {
        guard let merchantID = call.body["merchant_id"]?.string else {
            if call.body["merchant_group_id"] != nil { throw TapPayRefusal(.merchantGroupNotFound) }
            throw TapPayRefusal(.missingMerchantID)
        }
        guard call.merchant.isNamed(byTapPayMerchantID: merchantID) else {
            throw TapPayRefusal(.merchantNotFound, orchardCode: "merchant_not_found")
        }
    }

    /// The payment `rec_trade_id` names (an Orchard payment id of the merchant).
    func tappayPayment(_ call: TapPayCall) throws -> Payment {
        guard let recTradeID = call.body["rec_trade_id"]?.string, !recTradeID.isEmpty else {
            throw TapPayRefusal(.missingRecTradeID)
        }
        do throws(GatewayError) { return try gateway.payments.payment(merchant: call.merchant, id: recTradeID) } catch {
            if error.code == .notFound { throw TapPayRefusal(.invalidRecTradeID, orchardCode: "not_found") }
            throw error
        }
    }

    // MARK: Pay by Prime

    func tappayPayByPrime(_ call: TapPayCall) throws -> [String: Any] {
        try Self.checkMerchantID(call)
        let body = call.body
        guard let prime = body["prime"]?.string, !prime.isEmpty else { throw TapPayRefusal(.missingPrime) }
        let currencyCode = try Self.tappayString(body, "currency", .invalidCurrency) ?? "TWD"
        let currency: Currency
        do { currency = try Currency(code: currencyCode) } catch {
            throw TapPayRefusal(.invalidCurrency, orchardCode: "unknown_currency")
        }
        guard let amountValue = body["amount"], let units = amountValue.int64 else {
            throw TapPayRefusal(.invalidAmount, orchardCode: "invalid_amount")
        }
        let amount = try TapPayAmount.minorUnits(units, currency: currency)
        if let instalment = body["instalment"], instalment.int64 != 0 {
            throw TapPayRefusal(.instalmentNotSupported)
        }
        var mode = CaptureMode.now
        if let delayValue = body["delay_capture_in_days"] {
            guard let delay = delayValue.int64, delay >= -1 else { throw TapPayRefusal(.invalidCaptureDelay) }
            mode = delay == -1 ? .manual : delay == 0 ? .now : .afterDays(Int(clamping: delay))
        }
        var cardholder: Cardholder?
        if let holder = body["cardholder"]?.fields {
            func field(_ name: String) -> String? {
                guard let text = holder[name]?.string, !text.isEmpty else { return nil }
                return text
            }
            cardholder = Cardholder(
                name: field("name"), email: field("email"), phoneNumber: field("phone_number"),
                zipCode: field("zip_code"), address: field("address"), nationalID: field("national_id"))
        }
        let request = PayByPrimeRequest(
            prime: prime, amount: amount, currency: currency.code,
            orderNumber: try Self.tappayString(body, "order_number", .orderNumberOutOfRange),
            details: try Self.tappayString(body, "details", .detailsOutOfRange), cardholder: cardholder,
            captureMode: mode, bankTransactionID: try Self.tappayString(body, "bank_transaction_id", .bankTransactionIDOutOfRange))
        let payment: Payment
        do throws(GatewayError) { payment = try gateway.payments.payByPrime(merchant: call.merchant, request, scope: call.scope) } catch {
            guard error.code == .cardDeclined, let paymentID = error.paymentID,
                let failed = try? gateway.payments.payment(merchant: call.merchant, id: paymentID)
            else { throw error }
            var answer = TapPayRefusal(error).body
            answer.merge(tappayPayAnswer(failed, merchant: call.merchant)) { current, _ in current }
            throw TapPayRefusal(body: answer)
        }
        var answer = tappayPayAnswer(payment, merchant: call.merchant)
        if payment.status == .unknown || payment.status == .processing {
            answer.merge(TapPayRefusal(.transactionPending, orchardCode: "processor_unavailable").body) { _, new in new }
        }
        return answer
    }

    /// A string field, empty strings read as absent (TapPay's optional keys are sent as `""`); a value of
    /// another type is refused with `status`.
    static func tappayString(
        _ body: [String: JSONValue], _ key: String, _ status: TapPayStatus
    ) throws -> String? {
        switch body[key] {
        case nil, .null?: return nil
        case .string(let text)?: return text.isEmpty ? nil : text
        default: throw TapPayRefusal(status, orchardCode: "parameter_invalid")
        }
    }

    /// Pay by Prime's answer for `payment` (also a declined one's, under its non-zero status).
    func tappayPayAnswer(_ payment: Payment, merchant: Merchant) -> [String: Any] {
        let (start, end) = Self.bankTimes(payment)
        return [
            "rec_trade_id": payment.id, "bank_transaction_id": payment.bankTransactionID ?? "",
            "auth_code": payment.authCode ?? "", "amount": TapPayAmount.units(payment.amount, payment.currency),
            "currency": payment.currency, "order_number": payment.orderNumber ?? "", "acquirer": payment.acquirer,
            "merchant_id": merchant.tappayMerchantAlias ?? merchant.id,
            "card_info": Self.tappayCardInfo(payment.cardInfo),
            "transaction_time_millis": payment.createdAt.unixMilliseconds,
            "bank_transaction_time": [
                "start_time_millis": String(start.unixMilliseconds), "end_time_millis": String(end.unixMilliseconds),
            ],
            "bank_result_code": payment.status == .failed ? (payment.failureCode ?? "") : "",
            "bank_result_msg": "",
        ]
    }

    /// TapPay's `card_info` (backend names: `bin_code`, `last_four`, `country_code`).
    static func tappayCardInfo(_ card: CardInfo) -> [String: Any] {
        [
            "bin_code": card.binCode, "last_four": card.lastFour, "issuer": card.issuer ?? "",
            "issuer_zh_tw": card.issuerZhTW ?? "", "bank_id": card.bankID ?? "", "funding": card.funding,
            "type": card.type, "level": card.level ?? "", "country": card.country ?? "",
            "country_code": card.countryCode ?? "",
        ]
    }

    /// When the authorization went to the processor and when it was answered.
    static func bankTimes(_ payment: Payment) -> (start: Date, end: Date) {
        (payment.authorizationSentAt ?? payment.createdAt, payment.authorizedAt ?? payment.updatedAt)
    }

    // MARK: Refund and Refund Cancel

    func tappayRefund(_ call: TapPayCall) throws -> [String: Any] {
        let payment = try tappayPayment(call)
        var amount: Int64?
        if let value = call.body["amount"], value != .null {
            guard let units = value.int64 else { throw TapPayRefusal(.invalidAmount, orchardCode: "invalid_amount") }
            amount = try TapPayAmount.minorUnits(
                units, currency: try Currency(code: payment.currency), allowsZero: true)
        }
        let bankRefundID = try Self.tappayString(call.body, "bank_refund_id", .invalidRefundID)
        let key = bankRefundID.map { "tappay_refund:" + $0 }
        if payment.status == .authorized {
            // TapPay refunds an authorization that is not captured yet by cancelling it, in full only.
            if let amount, amount != payment.amount { throw TapPayRefusal(.authorizedPartialRefund) }
            let voided = try TapPayRefusal.mapping(.invalidStateTransition, to: .refundPendingCapture) {
                try gateway.payments.void(merchant: call.merchant, paymentID: payment.id, idempotencyKey: key, scope: call.scope)
            }
            return [
                "refund_id": "", "bank_refund_order_number": "",
                "refund_amount": TapPayAmount.units(voided.amount, voided.currency), "is_captured": false,
                "bank_result_code": "", "bank_result_msg": "", "currency": voided.currency,
            ]
        }
        let result = try TapPayRefusal.mapping(.invalidStateTransition, to: .refundPendingCapture) {
            try gateway.refunds.refund(
                merchant: call.merchant, paymentID: payment.id, amount: amount, idempotencyKey: key, scope: call.scope)
        }
        var answer: [String: Any] = [
            "refund_id": result.refund.id, "bank_refund_order_number": "",
            "refund_amount": TapPayAmount.units(result.refund.amount, result.refund.currency), "is_captured": true,
            "bank_result_code": result.refund.declineCode ?? "", "bank_result_msg": "",
            "currency": result.refund.currency,
        ]
        switch result.refund.status {
        case .succeeded: break
        case .pending: answer.merge(TapPayRefusal(.transactionPending, orchardCode: "refund_pending").body) { _, new in new }
        case .failed: answer.merge(TapPayRefusal(.refundError, orchardCode: "processor_declined").body) { _, new in new }
        }
        return answer
    }

    /// Orchard sends a refund to the processor at once; there is no window in which to cancel it.
    func tappayRefundCancel(_ call: TapPayCall) throws -> [String: Any] {
        _ = try tappayPayment(call)
        throw TapPayRefusal(.refundCancelNotSupported, orchardCode: "not_supported")
    }

    // MARK: Cap Today and Cap Cancel

    func tappayCap(_ call: TapPayCall) throws -> [String: Any] {
        let payment = try tappayPayment(call)
        let captured = try TapPayRefusal.mapping(.invalidStateTransition, to: .repeatedRequest) {
            try gateway.payments.capture(merchant: call.merchant, paymentID: payment.id, scope: call.scope)
        }
        return [
            "cap_millis": (captured.capturedAt ?? gateway.now).unixMilliseconds, "currency": captured.currency,
        ]
    }

    func tappayCapCancel(_ call: TapPayCall) throws -> [String: Any] {
        let payment = try tappayPayment(call)
        let status: TapPayStatus =
            payment.pendingOperation != nil
            ? .capCancelCapturing
            : payment.status == .authorized ? .capCancelNotArranged : .capCancelCaptured
        let unscheduled = try TapPayRefusal.mapping(.invalidStateTransition, to: status) {
            try gateway.payments.cancelScheduledCapture(merchant: call.merchant, paymentID: payment.id, scope: call.scope)
        }
        return ["currency": unscheduled.currency, "rec_trade_id": unscheduled.id]
    }

    // MARK: Trade History

    func tappayTradeHistory(_ call: TapPayCall) throws -> [String: Any] {
        let payment = try tappayPayment(call)
        func entry(_ action: TapPayAction, _ amount: Int64, _ at: Date, success: Bool = true) -> [String: Any] {
            [
                "amount": TapPayAmount.units(amount, payment.currency), "action": action.rawValue,
                "millis": at.unixMilliseconds, "success": success, "bank_transaction_millis": at.unixMilliseconds,
                "is_pending": false, "bank_result_code": "", "bank_result_msg": "",
            ]
        }
        var history: [[String: Any]] = []
        if payment.status == .failed {
            var failed = entry(.authorization, payment.amount, payment.updatedAt, success: false)
            failed["bank_result_code"] = payment.failureCode ?? ""
            history.append(failed)
        } else if let authorizedAt = payment.authorizedAt {
            history.append(entry(.authorization, payment.amount, authorizedAt))
        } else {
            var pending = entry(.authorization, payment.amount, payment.createdAt)
            pending["is_pending"] = true
            history.append(pending)
        }
        if let capturedAt = payment.capturedAt { history.append(entry(.capture, payment.capturedAmount, capturedAt)) }
        if let voidedAt = payment.voidedAt { history.append(entry(.cancel, payment.amount, voidedAt)) }
        for refund in payment.refunds {
            var row = entry(.refund, refund.amount, refund.createdAt, success: refund.status != .failed)
            row["refund_id"] = refund.id
            row["is_pending"] = refund.status == .pending
            row["bank_result_code"] = refund.declineCode ?? ""
            history.append(row)
        }
        return [
            "rec_trade_id": payment.id, "bank_order_number": "", "currency": payment.currency,
            "trade_history": history,
        ]
    }

    // MARK: Record

    func tappayRecord(_ call: TapPayCall) throws -> [String: Any] {
        let body = call.body
        let perPage = try Self.tappayInt(body, "records_per_page", .invalidRecordsPerPage) ?? 50
        guard (1...200).contains(perPage) else { throw TapPayRefusal(.recordsPerPageOutOfRange) }
        let page = try Self.tappayInt(body, "page", .invalidPage) ?? 0
        guard page >= 0 else { throw TapPayRefusal(.pageOutOfRange) }
        let filters = try TapPayRecordFilters(body["filters"], merchant: call.merchant)
        var payments: [Payment] = []
        if filters.matchesNothing {
            payments = []
        } else if let recTradeID = filters.recTradeID {
            // `rec_trade_id` names one record; the other filters do not narrow it further.
            if let payment = try? gateway.payments.payment(merchant: call.merchant, id: recTradeID) { payments = [payment] }
        } else {
            var query = filters.query
            query.limit = FieldLimits.pageSize.upperBound
            repeat {
                let result = try gateway.payments.list(merchant: call.merchant, query: query)
                payments += result.payments
                query.cursor = result.nextCursor
            } while query.cursor != nil
        }
        var attribute = "time"
        var descending = true
        if let orderBy = body["order_by"], orderBy != .null {
            guard let fields = orderBy.fields else { throw TapPayRefusal(.invalidOrderByAttribute) }
            if let value = fields["attribute"] {
                guard let text = value.string, ["time", "amount"].contains(text) else {
                    throw TapPayRefusal(.invalidOrderByAttribute)
                }
                attribute = text
            }
            if let value = fields["is_descending"] {
                guard case .bool(let flag) = value else { throw TapPayRefusal(.invalidOrderByDescending) }
                descending = flag
            }
        }
        // The domain lists newest first; TapPay's other orders are the same records arranged differently.
        if attribute == "amount" {
            payments = payments.enumerated().sorted { lhs, rhs in
                lhs.element.amount == rhs.element.amount
                    ? lhs.offset < rhs.offset
                    : (lhs.element.amount > rhs.element.amount) == descending
            }.map(\.element)
        } else if !descending {
            payments.reverse()
        }
        let total = payments.count
        let pageCount = (total + perPage - 1) / perPage
        let first = page.multipliedReportingOverflow(by: perPage)
        let slice = first.overflow || first.partialValue >= total
            ? [] : Array(payments[first.partialValue..<min(total, first.partialValue + perPage)])
        var answer: [String: Any] = [
            "records_per_page": perPage, "page": page, "total_page_count": pageCount,
            "number_of_transactions": total, "trade_records": slice.map { tappayRecordEntry($0, call.merchant) },
        ]
        if slice.isEmpty { answer.merge(["status": TapPayStatus.endOfList.rawValue, "msg": "End of list"]) { _, new in new } }
        return answer
    }

    static func tappayInt(_ body: [String: JSONValue], _ key: String, _ status: TapPayStatus) throws -> Int? {
        guard let value = body[key], value != .null else { return nil }
        guard let number = value.int64, let int = Int(exactly: number) else { throw TapPayRefusal(status) }
        return int
    }

    func tappayRecordEntry(_ payment: Payment, _ merchant: Merchant) -> [String: Any] {
        let card = payment.cardInfo
        let units = { (value: Int64) in TapPayAmount.units(value, payment.currency) }
        let (start, end) = Self.bankTimes(payment)
        var entry: [String: Any] = [
            "rec_trade_id": payment.id, "auth_code": payment.authCode ?? "",
            "merchant_id": merchant.tappayMerchantAlias ?? merchant.id, "merchant_name": merchant.name,
            "time": payment.createdAt.unixMilliseconds,
            "amount": units(payment.amount - payment.refundedAmount), "refunded_amount": units(payment.refundedAmount),
            "original_amount": units(payment.amount), "record_status": TapPayRecordStatus(payment.status).rawValue,
            "currency": payment.currency, "bank_transaction_id": payment.bankTransactionID ?? "",
            "bank_order_number": "", "is_captured": payment.capturedAt != nil,
            "bank_transaction_start_millis": start.unixMilliseconds,
            "bank_transaction_end_millis": end.unixMilliseconds,
            "bank_result_code": payment.status == .failed ? (payment.failureCode ?? "") : "", "bank_result_msg": "",
            "partial_card_number": card.binCode + "******" + card.lastFour, "payment_method": "apple_pay",
            "details": payment.details ?? "", "order_number": payment.orderNumber ?? "",
            "cardholder": [
                "phone_number": payment.cardholder?.phoneNumber ?? "", "name": payment.cardholder?.name ?? "",
                "email": payment.cardholder?.email ?? "", "zip_code": payment.cardholder?.zipCode ?? "",
                "address": payment.cardholder?.address ?? "", "national_id": payment.cardholder?.nationalID ?? "",
            ],
            "three_domain_secure": false, "pay_by_instalment": false, "pay_by_redeem": false,
            "card_info": Self.tappayCardInfo(payment.cardInfo),
        ]
        if let at = payment.capturedAt ?? payment.captureAt { entry["cap_millis"] = at.unixMilliseconds }
        return entry
    }
}

/// TapPay's integer `amount`: whole units for TWD, the currency's minor units (cents) for the others.
enum TapPayAmount {
    /// How many Orchard minor units one TapPay unit of `currency` is.
    static func factor(_ currency: String) -> Int64 {
        guard currency == "TWD", let exponent = try? Currency(code: currency).minorUnitExponent else { return 1 }
        var factor: Int64 = 1
        for _ in 0..<exponent { factor *= 10 }
        return factor
    }

    /// Orchard's minor units for TapPay's `units` (refused when not positive, unless `allowsZero`).
    static func minorUnits(_ units: Int64, currency: Currency, allowsZero: Bool = false) throws -> Int64 {
        let result = units.multipliedReportingOverflow(by: factor(currency.code))
        guard units > 0 || (allowsZero && units == 0), !result.overflow else {
            throw TapPayRefusal(.invalidAmount, orchardCode: "invalid_amount")
        }
        return result.partialValue
    }

    /// TapPay's units for Orchard's `minorUnits` (a TWD amount with cents, made through `/v1`, rounds down).
    static func units(_ minorUnits: Int64, _ currency: String) -> Int64 { minorUnits / factor(currency) }
}

/// A Record API transaction state (`record_status`).
enum TapPayRecordStatus: Int {
    case error = -1, auth = 0, ok = 1, partiallyRefunded = 2, refunded = 3, pending = 4, cancel = 5

    init(_ status: PaymentStatus) {
        switch status {
        case .authorized: self = .auth
        case .captured: self = .ok
        case .partiallyRefunded: self = .partiallyRefunded
        // A chargeback gave the money back to the cardholder, as a refund does (TapPay has no state of its own).
        case .refunded, .chargedBack: self = .refunded
        // An operation the processor accepted and answers later, like an outcome not known yet: PENDING.
        case .processing, .unknown, .capturePending, .voidPending, .refundPending: self = .pending
        case .voided: self = .cancel
        case .failed: self = .error
        }
    }

    /// The payment statuses of a `record_status`.
    var statuses: [PaymentStatus] { PaymentStatus.allCases.filter { Self($0) == self } }
}

/// A Trade History `action`.
enum TapPayAction: Int {
    case authorization = 0, capture = 1, refund = 3, cancel = 5
}

/// The Record API's `filters`, as the domain's query plus what it names by TapPay's own keys.
struct TapPayRecordFilters {
    var query = PaymentQuery()
    var recTradeID: String?
    /// A `merchant_id` list without this merchant: no record can match.
    var matchesNothing = false

    init(_ value: JSONValue?, merchant: Merchant) throws {
        guard let value, value != .null else { return }
        guard let fields = value.fields else { throw TapPayRefusal(.wrongJSON) }
        let unsupported = fields.keys.filter {
            !["time", "amount", "merchant_id", "record_status", "rec_trade_id", "order_number",
              "bank_transaction_id", "currency"].contains($0)
        }
        if let key = unsupported.sorted().first {
            throw TapPayRefusal(
                .wrongJSON, orchardCode: "parameter_invalid", msg: "The filter \(key) is not offered")
        }
        if let time = fields["time"], time != .null {
            guard let range = time.fields else { throw TapPayRefusal(.invalidStartTime) }
            if let start = range["start_time"] {
                guard let millis = start.int64 else { throw TapPayRefusal(.invalidStartTime) }
                query.createdFrom = Date(timeIntervalSince1970: Double(millis) / 1000)
            }
            if let end = range["end_time"] {
                guard let millis = end.int64 else { throw TapPayRefusal(.invalidEndTime) }
                // TapPay's end time is inclusive; the domain's bound is exclusive.
                query.createdTo = Date(timeIntervalSince1970: Double(millis + 1) / 1000)
            }
            if let from = query.createdFrom, let to = query.createdTo, from >= to {
                throw TapPayRefusal(.startAfterEnd)
            }
        }
        if let currency = fields["currency"]?.string { query.currency = currency.uppercased() }
        if let amount = fields["amount"], amount != .null {
            guard let range = amount.fields else { throw TapPayRefusal(.invalidUpperLimit) }
            let factor = TapPayAmount.factor(query.currency ?? "TWD")
            if let upper = range["upper_limit"] {
                guard let value = upper.int64 else { throw TapPayRefusal(.invalidUpperLimit) }
                query.maxAmount = value.multipliedReportingOverflow(by: factor).partialValue
            }
            if let lower = range["lower_limit"] {
                guard let value = lower.int64 else { throw TapPayRefusal(.invalidLowerLimit) }
                query.minAmount = value.multipliedReportingOverflow(by: factor).partialValue
            }
            if let min = query.minAmount, let max = query.maxAmount, min > max { throw TapPayRefusal(.lowerAboveUpper) }
        }
        if let ids = fields["merchant_id"], ids != .null {
            guard case .array(let values) = ids else { throw TapPayRefusal(.invalidMerchantIDFilter) }
            let names = values.compactMap(\.string)
            guard names.count == values.count else { throw TapPayRefusal(.invalidMerchantIDFilter) }
            matchesNothing = !names.isEmpty && !names.contains(where: merchant.isNamed(byTapPayMerchantID:))
        }
        if let status = fields["record_status"], status != .null {
            guard let number = status.int64, let recordStatus = TapPayRecordStatus(rawValue: Int(number)) else {
                throw TapPayRefusal(.invalidRecordStatus)
            }
            query.statuses = recordStatus.statuses
        }
        if let id = fields["rec_trade_id"], id != .null {
            guard let text = id.string else { throw TapPayRefusal(.invalidRecTradeIDFilter) }
            recTradeID = text
        }
        query.orderNumber = fields["order_number"]?.string
        query.bankTransactionID = fields["bank_transaction_id"]?.string
    }
}
