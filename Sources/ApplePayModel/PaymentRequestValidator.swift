import Foundation
import OrchardJSON

/// Whether the sheet shows the total's amount or "amount pending".
public enum TotalDisplay: String, Hashable, Sendable, Codable {
    /// The amount is shown.
    case amount
    /// "Amount pending" is shown.
    case pending
}

/// The outcome of validating a payment request.
public struct PaymentRequestValidation: Sendable {
    /// Whether there is no issue.
    public var isValid: Bool
    /// Every problem found, in the order of the request's fields.
    public var issues: [ValidationIssue]
    /// What the merchant meant: the sum of the items whose amounts are shown (the total's own
    /// amount when there are no items); `nil` when the amounts could not be read.
    public var total: Money?
    /// What the sheet shows for the total.
    public var totalDisplay: TotalDisplay
    /// The amount handed to Apple (1 for a pending total of pending items, see
    /// ``PaymentRequest/amountForApple``).
    public var amountForApple: Money?
    /// How long a prime made from this request's token lives: 90 seconds, or 30 days for a
    /// deferred payment; `nil` when the request is invalid.
    public var primeLifetimeSeconds: Int?
    /// Whether the amount is decided later (TapPay's deferred authorization).
    public var isDeferred: Bool
    /// The shape that was validated.
    public var format: PaymentRequestFormat
    /// The request, when its essentials could be read.
    public var request: PaymentRequest?

    /// The stable codes of the issues, in order.
    public var codes: [String] { issues.map(\.code) }
}

/// The rules of a payment request, from Apple's and TapPay's documentation, each with a stable code.
public enum PaymentRequestValidator {
    /// A prime's lifetime for an ordinary payment: 90 seconds.
    public static let primeLifetime: Int = 90
    /// A prime's lifetime for a deferred payment: 30 days.
    public static let deferredPrimeLifetime: Int = 30 * 24 * 60 * 60

    /// Reads and validates a request in one of the three JSON shapes (`format` nil detects it).
    ///
    /// `merchantIdentifier` and `countryCode` are what TapPay's `setupApplePay` supplies (the
    /// country defaults to TW); with the other shapes they are checked against the request.
    /// Throws ``PaymentRequestInputError`` only when the input is not JSON or its shape is not
    /// recognisable; every other problem is an issue of the result.
    public static func validate(
        json: Data, format: PaymentRequestFormat? = nil, merchantIdentifier: String? = nil,
        countryCode: String? = nil
    ) throws -> PaymentRequestValidation {
        let decoded = try PaymentRequestCoder.decode(
            json, format: format, merchantIdentifier: merchantIdentifier, countryCode: countryCode)
        return validate(decoded)
    }

    /// Validates a request built in code, as it would be sent in `format`.
    public static func validate(
        _ request: PaymentRequest, as format: PaymentRequestFormat = .applePayJS
    )
        -> PaymentRequestValidation
    {
        validate(
            PaymentRequestDecoding(
                format: format, request: request, issues: [], amountsIncomplete: false,
                paths: ShapePaths(format: format)))
    }

    /// Validates what ``PaymentRequestCoder/decode(_:format:merchantIdentifier:countryCode:)`` read.
    public static func validate(_ decoded: PaymentRequestDecoding) -> PaymentRequestValidation {
        var rules = Rules(
            paths: decoded.paths, amountsIncomplete: decoded.amountsIncomplete, postponed: decoded.postponedIssues)
        rules.issues = decoded.issues
        guard let request = decoded.request else {
            return PaymentRequestValidation(
                isValid: false, issues: rules.issues, total: nil, totalDisplay: .amount, amountForApple: nil,
                primeLifetimeSeconds: nil, isDeferred: false, format: decoded.format, request: nil)
        }
        let outcome = rules.check(request)
        let valid = rules.issues.isEmpty
        return PaymentRequestValidation(
            isValid: valid, issues: rules.issues, total: outcome.total,
            totalDisplay: request.showsTotalAmount ? .amount : .pending,
            amountForApple: rules.amountsIncomplete ? nil : request.amountForApple,
            primeLifetimeSeconds: valid ? (request.isDeferred ? deferredPrimeLifetime : primeLifetime) : nil,
            isDeferred: request.isDeferred, format: decoded.format, request: request)
    }

    /// Every code an issue can carry, documented in docs/payment-request.md.
    public static let issueCodes: [String] = [
        "88013", "88014", "88015", "88016", "missing_field", "invalid_type", "invalid_amount", "too_many_decimals",
        "amount_out_of_range", "negative_amount", "missing_currency", "unknown_currency", "currency_mismatch",
        "missing_country_code", "invalid_country_code", "country_code_mismatch", "missing_merchant_identifier",
        "invalid_merchant_identifier", "merchant_identifier_mismatch", "zero_amount_item", "total_mismatch",
        "missing_networks", "unsupported_network", "duplicate_network", "missing_supports_3ds",
        "unknown_merchant_capability", "unsupported_method", "unsupported_version", "duplicate_shipping_method",
        "unknown_shipping_type", "unknown_contact_field", "unknown_value", "recurring_with_automatic_reload",
        "recurring_with_multi_token_contexts", "invalid_url", "invalid_date", "invalid_interval",
        "duplicate_external_identifier", "invalid_application_data",
    ]

    /// Whether `identifier` looks like an Apple merchant identifier: `merchant.` followed by a
    /// reverse-domain name of letters, digits, `.`, `-` and `_`, at most 255 characters.
    public static func isValidMerchantIdentifier(_ identifier: String) -> Bool {
        guard identifier.hasPrefix("merchant."), identifier.count > "merchant.".count, identifier.count <= 255 else {
            return false
        }
        return identifier.unicodeScalars.allSatisfy {
            ($0.isASCII && (CharacterSet.alphanumerics.contains($0))) || $0 == "." || $0 == "-" || $0 == "_"
        } && !identifier.hasSuffix(".") && !identifier.contains("..")
    }
}

/// The rules, run over a decoded request.
private struct Rules {
    let paths: ShapePaths
    var amountsIncomplete: Bool
    /// The decoder's issues that wait for TapPay's deferred table (a shown total without a value).
    let postponed: [ValidationIssue]
    var issues: [ValidationIssue] = []

    init(paths: ShapePaths, amountsIncomplete: Bool, postponed: [ValidationIssue] = []) {
        self.paths = paths
        self.amountsIncomplete = amountsIncomplete
        self.postponed = postponed
    }

    mutating func report(_ code: String, _ message: String, at path: String) {
        issues.append(ValidationIssue(code: code, message: message, path: path))
    }

    mutating func check(_ request: PaymentRequest) -> (total: Money?, Void) {
        checkMerchant(request)
        checkNetworksAndCapabilities(request)
        let currency = request.currency ?? request.total.amount.currency
        let total = checkAmounts(request, currency: currency)
        checkShipping(request, currency: currency)
        checkContacts(request)
        checkSpecialPayments(request, currency: currency)
        if let data = request.applicationData, Data(base64Encoded: data) == nil {
            report("invalid_application_data", "applicationData must be Base64", at: paths.applicationData)
        }
        if let mode = request.shippingContactEditingMode, !mode.isKnown {
            report(
                "unknown_value", "unknown shippingContactEditingMode '\(mode.rawValue.prefix(32))'",
                at: paths.shippingContactEditingMode)
        }
        return (total, ())
    }

    mutating func checkMerchant(_ request: PaymentRequest) {
        if let identifier = request.merchantIdentifier {
            if !PaymentRequestValidator.isValidMerchantIdentifier(identifier) {
                report(
                    "invalid_merchant_identifier",
                    "'\(identifier.prefix(64))' is not a merchant identifier like merchant.com.example",
                    at: paths.merchantIdentifier)
            }
        } else if paths.format == .tapPayWeb {
            report(
                "missing_merchant_identifier", "TapPay's setupApplePay must supply the merchant identifier",
                at: paths.merchantIdentifier)
        }
    }

    mutating func checkNetworksAndCapabilities(_ request: PaymentRequest) {
        guard !paths.applePayDataMissing else { return }
        if request.supportedNetworks.isEmpty, !issues.contains(where: { $0.path == paths.supportedNetworks }) {
            report("missing_networks", "supportedNetworks must name at least one network", at: paths.supportedNetworks)
        }
        var seen: Set<PaymentNetwork> = []
        for (index, network) in request.supportedNetworks.enumerated() {
            if !network.isKnown {
                report(
                    "unsupported_network", "'\(network.rawValue.prefix(32))' is not an Apple Pay payment network",
                    at: "\(paths.supportedNetworks)[\(index)]")
            } else if !seen.insert(network).inserted {
                report(
                    "duplicate_network", "\(network.rawValue) is listed twice",
                    at: "\(paths.supportedNetworks)[\(index)]")
            }
        }
        guard paths.format != .tapPayWeb else { return }
        for (index, capability) in request.merchantCapabilities.enumerated() where !capability.isKnown {
            report(
                "unknown_merchant_capability", "'\(capability.rawValue.prefix(32))' is not a merchant capability",
                at: "\(paths.merchantCapabilities)[\(index)]")
        }
        if !request.merchantCapabilities.contains(.supports3DS) {
            report(
                "missing_supports_3ds", "merchantCapabilities must include supports3DS", at: paths.merchantCapabilities)
        }
    }

    /// Currencies, signs, the sum, and TapPay's deferred-payment table. Returns what the merchant meant.
    mutating func checkAmounts(_ request: PaymentRequest, currency: Currency) -> Money? {
        var sameCurrency = true
        for (index, item) in request.lineItems.enumerated() where item.amount.currency != currency {
            sameCurrency = false
            let path = paths.currency(of: paths.lineItem(index))
            report(
                "currency_mismatch", "the item is in \(item.amount.currency.code) but the request in \(currency.code)",
                at: path)
        }
        if paths.format == .tapPayWeb {
            for (index, item) in request.lineItems.enumerated() where item.type == .final && item.amount.isZero {
                report(
                    "zero_amount_item", "a shown display item must not be 0; mark it isAmountPending or leave it out",
                    at: paths.amount(of: paths.lineItem(index)))
            }
        }
        let totalAmountPath = paths.amount(of: paths.total)
        if request.total.label.isEmpty {
            report(
                "missing_field", "the total's label (the merchant's name) must not be empty", at: paths.total + ".label"
            )
        }

        let shownItems = request.lineItems.filter { $0.type == .final }
        let pendingCount = request.lineItems.count - shownItems.count
        let meant: Money?
        if amountsIncomplete || !sameCurrency {
            meant = nil
        } else if request.lineItems.isEmpty {
            meant = request.total.amount
        } else {
            meant = try? Money.sum(shownItems.map(\.amount), currency: currency)
        }

        // TapPay's deferred-payment (延後授權) table.
        let pending = request.isDeferred
        let shown = request.showsTotalAmount
        enum Items { case allShown, allPending, mixed }
        let items: Items =
            pendingCount == 0 ? .allShown : (shownItems.isEmpty ? .allPending : .mixed)
        var tableFailed = true
        switch (pending, shown, items) {
        case (false, false, _):
            report("88013", "a total that is neither pending nor shown is not supported", at: paths.total)
        case (true, true, .allPending):
            report(
                "88014", "every item is pending, so the total cannot be shown; set isShowTotalAmount to false",
                at: paths.total)
        case (false, true, .allPending), (false, true, .mixed):
            report(
                "88015", "pending items need a pending (deferred) payment: set isAmountPending to true", at: paths.total
            )
        default:
            tableFailed = false
        }
        // The table is consulted first: a shown total without a value is missing_field only when the table
        // accepts the combination, and its amount (read as zero) is then not checked against anything.
        if !postponed.isEmpty {
            if !tableFailed { issues += postponed }
            tableFailed = true
            amountsIncomplete = true
        }
        if !tableFailed, shown, !(meant?.isPositive ?? true) || !request.total.amount.isPositive {
            report("88016", "a shown total must be greater than 0", at: totalAmountPath)
            tableFailed = true
        }
        if !shown, request.total.amount.isNegative {
            report("negative_amount", "the total must not be negative", at: totalAmountPath)
        }
        if request.total.amount.currency != currency {
            report(
                "currency_mismatch",
                "the total is in \(request.total.amount.currency.code) but the request in \(currency.code)",
                at: paths.currency(of: paths.total))
        }
        if !tableFailed, shown, !request.lineItems.isEmpty, let meant, meant != request.total.amount {
            report(
                "total_mismatch",
                "the total \(request.total.amount.decimalString) is not the sum of the shown items \(meant.decimalString)",
                at: totalAmountPath)
        }
        return amountsIncomplete ? nil : meant
    }

    mutating func checkShipping(_ request: PaymentRequest, currency: Currency) {
        var identifiers: Set<String> = []
        for (index, method) in request.shippingMethods.enumerated() {
            let path = paths.shippingMethod(index)
            if !identifiers.insert(method.identifier).inserted {
                report(
                    "duplicate_shipping_method", "the identifier '\(method.identifier.prefix(64))' is used twice",
                    at: path + "." + paths.shippingMethodIdentifierKey)
            }
            if method.amount.currency != currency {
                report(
                    "currency_mismatch",
                    "the shipping method is in \(method.amount.currency.code) but the request in \(currency.code)",
                    at: paths.currency(of: path))
            } else if method.amount.isNegative {
                report("negative_amount", "a shipping method's amount must not be negative", at: paths.amount(of: path))
            }
        }
        if let type = request.shippingType, !type.isKnown {
            report(
                "unknown_shipping_type",
                "'\(type.rawValue.prefix(32))' is not shipping, delivery, storePickup or servicePickup",
                at: paths.shippingType)
        }
    }

    mutating func checkContacts(_ request: PaymentRequest) {
        for (key, fields) in [
            ("requiredBillingContactFields", request.requiredBillingContactFields),
            ("requiredShippingContactFields", request.requiredShippingContactFields),
        ] {
            for (index, field) in fields.enumerated() where !field.isKnown {
                report(
                    "unknown_contact_field", "'\(field.rawValue.prefix(32))' is not a contact field",
                    at: "\(paths.contactFields(key))[\(index)]")
            }
        }
    }

    mutating func checkItemSchedule(_ item: SummaryItem, at path: String, currency: Currency) {
        if let timing = item.paymentTiming, !timing.isKnown {
            report(
                "unknown_value", "unknown paymentTiming '\(timing.rawValue.prefix(32))'", at: path + ".paymentTiming")
        }
        if let unit = item.recurringPaymentIntervalUnit, !unit.isKnown {
            report(
                "unknown_value", "unknown recurringPaymentIntervalUnit '\(unit.rawValue.prefix(32))'",
                at: path + ".recurringPaymentIntervalUnit")
        }
        if let count = item.recurringPaymentIntervalCount, count < 1 {
            report(
                "invalid_interval", "recurringPaymentIntervalCount must be 1 or more",
                at: path + ".recurringPaymentIntervalCount")
        }
        for (key, date) in [
            ("recurringPaymentStartDate", item.recurringPaymentStartDate),
            ("recurringPaymentEndDate", item.recurringPaymentEndDate),
            ("deferredPaymentDate", item.deferredPaymentDate),
        ] {
            if let date, !isISO8601(date) {
                report("invalid_date", "\(key) must be an ISO 8601 date", at: path + "." + key)
            }
        }
        if item.amount.currency != currency {
            report("currency_mismatch", "the item is in \(item.amount.currency.code)", at: path + ".amount")
        }
    }

    mutating func checkURL(_ url: String?, at path: String) {
        guard let url else { return }
        guard let parsed = URL(string: url), parsed.scheme == "https", parsed.host != nil else {
            report("invalid_url", "must be an https URL", at: path)
            return
        }
    }

    mutating func checkSpecialPayments(_ request: PaymentRequest, currency: Currency) {
        let base = paths.special
        if let recurring = request.recurringPaymentRequest {
            let path = base + ".recurringPaymentRequest"
            checkItemSchedule(recurring.regularBilling, at: path + ".regularBilling", currency: currency)
            if let trial = recurring.trialBilling {
                checkItemSchedule(trial, at: path + ".trialBilling", currency: currency)
            }
            checkURL(recurring.managementURL, at: path + ".managementURL")
            checkURL(recurring.tokenNotificationURL, at: path + ".tokenNotificationURL")
            if request.automaticReloadPaymentRequest != nil {
                report(
                    "recurring_with_automatic_reload",
                    "Apple Pay does not allow a recurring payment together with an automatic reload", at: path)
            }
            if !request.multiTokenContexts.isEmpty {
                report(
                    "recurring_with_multi_token_contexts",
                    "Apple Pay does not allow a recurring payment together with multi-token contexts", at: path)
            }
        }
        if let reload = request.automaticReloadPaymentRequest {
            let path = base + ".automaticReloadPaymentRequest"
            checkItemSchedule(reload.automaticReloadBilling, at: path + ".automaticReloadBilling", currency: currency)
            checkURL(reload.managementURL, at: path + ".managementURL")
            checkURL(reload.tokenNotificationURL, at: path + ".tokenNotificationURL")
        }
        if let deferred = request.deferredPaymentRequest {
            let path = base + ".deferredPaymentRequest"
            checkItemSchedule(deferred.deferredBilling, at: path + ".deferredBilling", currency: currency)
            checkURL(deferred.managementURL, at: path + ".managementURL")
            checkURL(deferred.tokenNotificationURL, at: path + ".tokenNotificationURL")
            if let date = deferred.freeCancellationDate, !isISO8601(date) {
                report(
                    "invalid_date", "freeCancellationDate must be an ISO 8601 date", at: path + ".freeCancellationDate")
            }
            if let zone = deferred.freeCancellationDateTimeZone, TimeZone(identifier: zone) == nil {
                report(
                    "unknown_value", "unknown time zone '\(zone.prefix(40))'",
                    at: path + ".freeCancellationDateTimeZone")
            }
        }
        for (index, item) in request.lineItems.enumerated() {
            checkItemSchedule(item, at: paths.lineItem(index), currency: item.amount.currency)
        }
        var externalIdentifiers: Set<String> = []
        for (index, context) in request.multiTokenContexts.enumerated() {
            let path = "\(base).multiTokenContexts[\(index)]"
            if !PaymentRequestValidator.isValidMerchantIdentifier(context.merchantIdentifier) {
                report("invalid_merchant_identifier", "not a merchant identifier", at: path + ".merchantIdentifier")
            }
            if !externalIdentifiers.insert(context.externalIdentifier).inserted {
                report(
                    "duplicate_external_identifier", "externalIdentifier is used twice",
                    at: path + ".externalIdentifier")
            }
            if context.amount.currency != currency {
                report("currency_mismatch", "the context is in \(context.amount.currency.code)", at: path + ".amount")
            } else if !context.amount.isPositive {
                report("negative_amount", "a token context's amount must be greater than 0", at: path + ".amount")
            }
        }
    }

    func isISO8601(_ text: String) -> Bool { PaymentRequestValidator.date(text) != nil }
}

extension PaymentRequestValidator {
    /// The date of a request's ISO 8601 field (`2026-12-01T09:00:00Z`, with or without fractional seconds, or
    /// `2026-12-01`); `nil` when it is not one (the rules' `invalid_date`).
    package static func date(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        for options: ISO8601DateFormatter.Options in [
            [.withInternetDateTime], [.withInternetDateTime, .withFractionalSeconds], [.withFullDate],
        ] {
            formatter.formatOptions = options
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }
}

extension PaymentRequestValidation {
    /// `{"valid", "errors": [{"code", "message", "path"}], "total": {"amount", "currency", "display"},
    /// "primeLifetimeSeconds"}`, as `orchard request validate` prints it and the gateway's
    /// `POST /v1/payment-requests/validate` answers it; `total` is null when the amounts could not be read and
    /// `primeLifetimeSeconds` null when the request is invalid.
    package var report: JSONValue {
        let errors = issues.map { issue in
            JSONValue.sortedObject([
                "code": .string(issue.code), "message": .string(issue.message), "path": .string(issue.path),
            ])
        }
        let total: JSONValue =
            self.total.map { total in
                .sortedObject([
                    "amount": .string(total.decimalString), "currency": .string(total.currency.code),
                    "display": .string(totalDisplay.rawValue),
                ])
            } ?? .null
        return .sortedObject([
            "valid": .bool(isValid),
            "errors": .array(errors),
            "total": total,
            "primeLifetimeSeconds": primeLifetimeSeconds.map { .integer($0) } ?? .null,
        ])
    }
}
