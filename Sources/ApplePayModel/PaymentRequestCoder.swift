import Foundation
import OrchardJSON

/// A payment request read from JSON: the request (when its essentials could be read) and every
/// problem found while reading it.
public struct PaymentRequestDecoding: Sendable {
    /// The shape that was read.
    public var format: PaymentRequestFormat
    /// The request; `nil` when the total could not be read.
    public var request: PaymentRequest?
    /// Problems found while reading (types, missing fields, amounts, currencies, country codes).
    public var issues: [ValidationIssue]
    /// Whether some amount could not be read (sum rules are then skipped).
    public var amountsIncomplete: Bool
    /// Where each field lives in this shape, for the rules' issue paths.
    package var paths: ShapePaths
    /// Problems that stand only when TapPay's deferred-payment table accepts the request: a shown total
    /// without `amount.value` is `missing_field` unless the table already refuses the combination (88013,
    /// 88014, 88015), which is the cause the merchant must fix first.
    package var postponedIssues: [ValidationIssue] = []
}

/// Where the fields of a request live in one JSON shape.
package struct ShapePaths: Sendable {
    package var format: PaymentRequestFormat
    /// The W3C form's Apple Pay data object (`$.methodData[0].data`).
    package var data = "$.methodData[0].data"
    package var modifierData = "$.details.modifiers[0].data"
    /// The JSON index of each line item of the model (items that could not be read are left out of the model).
    package var lineItemIndices: [Int]?
    /// The JSON index of each shipping method of the model.
    package var shippingMethodIndices: [Int]?
    /// Whether the W3C form had no Apple Pay method data (its rules are then not checked).
    package var applePayDataMissing = false

    package init(format: PaymentRequestFormat) { self.format = format }

    private var root: String {
        format == .w3c ? data : "$"
    }
    package var merchantIdentifier: String {
        switch format {
        case .applePayJS: "merchantIdentifier"
        case .w3c: data + ".merchantIdentifier"
        case .tapPayWeb: "setupApplePay.merchantIdentifier"
        }
    }
    package var countryCode: String { format == .tapPayWeb ? "setupApplePay.countryCode" : root + ".countryCode" }
    package var currency: String { format == .applePayJS ? "$.currencyCode" : total + ".amount.currency" }
    package var supportedNetworks: String { root + ".supportedNetworks" }
    package var merchantCapabilities: String { root + ".merchantCapabilities" }
    package var total: String { format == .w3c ? "$.details.total" : "$.total" }
    package func lineItem(_ modelIndex: Int) -> String {
        let index = lineItemIndices?[modelIndex] ?? modelIndex
        return switch format {
        case .applePayJS: "$.lineItems[\(index)]"
        case .w3c: "$.details.displayItems[\(index)]"
        case .tapPayWeb: "$.displayItems[\(index)]"
        }
    }
    package func amount(of item: String) -> String { format == .applePayJS ? item + ".amount" : item + ".amount.value" }
    package func currency(of item: String) -> String {
        format == .applePayJS ? "$.currencyCode" : item + ".amount.currency"
    }
    package func shippingMethod(_ modelIndex: Int) -> String {
        let index = shippingMethodIndices?[modelIndex] ?? modelIndex
        return format == .applePayJS
            ? "$.shippingMethods[\(index)]" : "\(format == .w3c ? "$.details" : "$").shippingOptions[\(index)]"
    }
    package var shippingMethodIdentifierKey: String { format == .applePayJS ? "identifier" : "id" }
    package var shippingType: String {
        switch format {
        case .applePayJS: "$.shippingType"
        case .w3c, .tapPayWeb: "$.options.shippingType"
        }
    }
    package var special: String { format == .w3c ? modifierData : "$" }
    package func contactFields(_ key: String) -> String { root + "." + key }
    package var applicationData: String { root + ".applicationData" }
    package var version: String { data + ".version" }
    package var shippingContactEditingMode: String { root + ".shippingContactEditingMode" }
}

/// Reads and writes payment requests in the three JSON shapes.
///
/// Reading collects every problem with its JSON path instead of stopping at the first; writing
/// produces canonical JSON (sorted keys, amounts with exactly the currency's decimals), so that
/// reading what was written gives the same request and writing it again the same JSON.
public enum PaymentRequestCoder {
    /// The W3C payment method identifier of Apple Pay.
    public static let applePayMethod = "https://apple.com/apple-pay"
    /// TapPay's method name for Apple Pay.
    public static let tapPayMethod = "apple_pay"
    /// The largest request accepted, in bytes.
    public static let maximumInputBytes = 256 * 1024

    /// Which shape `json` is: the W3C form has `methodData` (or `supportedMethods` naming Apple Pay)
    /// and `details`; TapPay's has `displayItems` or `supportedMethods: ["apple_pay"]` or amounts as
    /// objects; Apple Pay JS's has `currencyCode`, `merchantCapabilities` or `lineItems`.
    public static func detectFormat(of json: Data) throws(PaymentRequestInputError) -> PaymentRequestFormat {
        try detectFormat(of: parse(json))
    }

    static func parse(_ json: Data) throws(PaymentRequestInputError) -> [String: JSONValue] {
        guard json.count <= maximumInputBytes else {
            throw PaymentRequestInputError(.inputTooLarge, "the request is larger than \(maximumInputBytes) bytes")
        }
        let value: JSONValue
        do {
            value = try JSONValue.parse(json)
        } catch {
            throw PaymentRequestInputError(.invalidJSON, "the input is not JSON")
        }
        guard let object = value.fields else {
            throw PaymentRequestInputError(.unknownShape, "a payment request is a JSON object, not \(value.typeName)")
        }
        return object
    }

    static func detectFormat(of object: [String: JSONValue]) throws(PaymentRequestInputError) -> PaymentRequestFormat {
        if object["methodData"] != nil || object["details"] != nil
            || object["supportedMethods"]?.string == applePayMethod
        {
            return .w3c
        }
        if object["displayItems"] != nil || object["shippingOptions"] != nil {
            return .tapPayWeb
        }
        if case .array = object["supportedMethods"] { return .tapPayWeb }
        if object["currencyCode"] != nil || object["merchantCapabilities"] != nil || object["lineItems"] != nil
            || object["shippingMethods"] != nil
        {
            return .applePayJS
        }
        if let total = object["total"]?.fields {
            if case .object = total["amount"] { return .tapPayWeb }
            if case .string = total["amount"] { return .applePayJS }
        }
        throw PaymentRequestInputError(
            .unknownShape, "not an Apple Pay JS, W3C or TapPay payment request (no total, currencyCode or methodData)")
    }

    /// Reads a request. `format` nil detects the shape. `merchantIdentifier` and `countryCode` are
    /// what TapPay's `setupApplePay` supplies (the country defaults to TW); for the other shapes they
    /// are compared with what the request says. Throws only when the input is not JSON or has no
    /// recognisable shape; every other problem is in the result's `issues`.
    public static func decode(
        _ json: Data, format: PaymentRequestFormat? = nil, merchantIdentifier: String? = nil,
        countryCode: String? = nil
    ) throws(PaymentRequestInputError) -> PaymentRequestDecoding {
        let object = try parse(json)
        let detected: PaymentRequestFormat
        if let format { detected = format } else { detected = try detectFormat(of: object) }
        let format = detected
        var reader = JSONReader()
        var paths = ShapePaths(format: format)
        let request: PaymentRequest?
        switch format {
        case .applePayJS: request = readApplePayJS(object, &reader, &paths)
        case .w3c: request = readW3C(object, &reader, &paths)
        case .tapPayWeb: request = readTapPay(object, &reader, &paths)
        }
        var decoded = PaymentRequestDecoding(
            format: format, request: request, issues: reader.issues, amountsIncomplete: reader.amountsIncomplete,
            paths: paths, postponedIssues: reader.postponed)
        applyOutsideValues(&decoded, merchantIdentifier: merchantIdentifier, countryCode: countryCode)
        return decoded
    }

    private static func applyOutsideValues(
        _ decoded: inout PaymentRequestDecoding, merchantIdentifier: String?, countryCode: String?
    ) {
        let paths = decoded.paths
        switch decoded.format {
        case .tapPayWeb:
            decoded.request?.merchantIdentifier = merchantIdentifier
            let code = countryCode ?? "TW"
            do {
                decoded.request?.countryCode = try CountryCode(code)
            } catch {
                decoded.issues.append(
                    ValidationIssue(code: error.code.rawValue, message: error.reason, path: paths.countryCode))
            }
        case .applePayJS, .w3c:
            if let merchantIdentifier {
                if let given = decoded.request?.merchantIdentifier, given != merchantIdentifier {
                    decoded.issues.append(
                        ValidationIssue(
                            code: "merchant_identifier_mismatch",
                            message: "the request names '\(given)' but the merchant is '\(merchantIdentifier)'",
                            path: paths.merchantIdentifier))
                } else {
                    decoded.request?.merchantIdentifier = merchantIdentifier
                }
            }
            if let countryCode, let given = decoded.request?.countryCode, given.code != countryCode {
                decoded.issues.append(
                    ValidationIssue(
                        code: "country_code_mismatch",
                        message: "the request says \(given.code) but the merchant's country is \(countryCode)",
                        path: paths.countryCode))
            }
        }
    }

    // MARK: Apple Pay JS

    /// Reads each element, keeping the JSON index of every one that could be read.
    private static func indexed<T>(
        _ elements: [(fields: [String: JSONValue], path: String)]?,
        _ read: ((fields: [String: JSONValue], path: String)) -> T?
    ) -> ([T], [Int]) {
        var values: [T] = []
        var indices: [Int] = []
        for element in elements ?? [] {
            guard let value = read(element) else { continue }
            values.append(value)
            let index = element.path.split(separator: "[").last.flatMap { Int($0.dropLast()) } ?? values.count - 1
            indices.append(index)
        }
        return (values, indices)
    }

    private static func readApplePayJS(
        _ root: [String: JSONValue], _ reader: inout JSONReader, _ paths: inout ShapePaths
    ) -> PaymentRequest? {
        let country = reader.string(root, "countryCode", "$")
        if country == nil, root["countryCode"] == nil || root["countryCode"] == .null {
            reader.report("missing_country_code", "countryCode is required", at: "$.countryCode")
        }
        let currencyCode = reader.string(root, "currencyCode", "$")
        if currencyCode == nil, root["currencyCode"] == nil || root["currencyCode"] == .null {
            reader.report("missing_currency", "currencyCode is required", at: "$.currencyCode")
        }
        let currency = reader.currency(currencyCode, at: "$.currencyCode")
        let networks = reader.strings(root, "supportedNetworks", "$", required: true) ?? []
        let capabilities = reader.strings(root, "merchantCapabilities", "$", required: true) ?? []
        let total = reader.object(root, "total", "$", required: true).flatMap {
            reader.appleLineItem($0, "$.total", currency: currency)
        }
        let (items, itemIndices) = indexed(reader.objects(root, "lineItems", "$")) {
            reader.appleLineItem($0.fields, $0.path, currency: currency)
        }
        let (methods, methodIndices) = indexed(reader.objects(root, "shippingMethods", "$")) {
            reader.appleShippingMethod($0.fields, $0.path, currency: currency)
        }
        paths.lineItemIndices = itemIndices
        paths.shippingMethodIndices = methodIndices
        var request = PaymentRequest(
            total: total ?? SummaryItem(label: "", amount: .zero(currency ?? .usd)))
        request.countryCode = reader.country(country, at: "$.countryCode")
        request.currency = currency
        request.supportedNetworks = networks.map(PaymentNetwork.init(rawValue:))
        request.merchantCapabilities = capabilities.map(MerchantCapability.init(rawValue:))
        request.lineItems = items
        request.shippingMethods = methods
        readCommonAppleFields(root, "$", &reader, into: &request)
        request.shippingType = reader.string(root, "shippingType", "$").map(ShippingType.init(rawValue:))
        request.requiredShippingContactFields = reader.contactFields(root, "requiredShippingContactFields", "$") ?? []
        reader.appleSpecialPayments(root, "$", currency: currency, into: &request)
        return total == nil ? nil : request
    }

    /// The fields Apple Pay JS's request and the W3C form's Apple Pay data share.
    private static func readCommonAppleFields(
        _ root: [String: JSONValue], _ path: String, _ reader: inout JSONReader, into request: inout PaymentRequest
    ) {
        request.supportedCountries = reader.countries(root, "supportedCountries", path)
        request.requiredBillingContactFields = reader.contactFields(root, "requiredBillingContactFields", path) ?? []
        request.billingContact = reader.contact(root, "billingContact", path)
        request.shippingContact = reader.contact(root, "shippingContact", path)
        request.applicationData = reader.string(root, "applicationData", path)
        request.supportsCouponCode = reader.bool(root, "supportsCouponCode", path)
        request.couponCode = reader.string(root, "couponCode", path)
        request.shippingContactEditingMode = reader.string(root, "shippingContactEditingMode", path).map(
            ShippingContactEditingMode.init(rawValue:))
    }

    private static func writeCommonAppleFields(_ request: PaymentRequest, into object: inout ObjectBuilder) {
        if !request.supportedCountries.isEmpty {
            object.set("supportedCountries", strings: request.supportedCountries.map(\.code))
        }
        if !request.requiredBillingContactFields.isEmpty {
            object.set("requiredBillingContactFields", strings: request.requiredBillingContactFields.map(\.rawValue))
        }
        object.set("billingContact", AppleJSWriter.contact(request.billingContact))
        object.set("shippingContact", AppleJSWriter.contact(request.shippingContact))
        object.set("applicationData", request.applicationData)
        object.set("supportsCouponCode", request.supportsCouponCode)
        object.set("couponCode", request.couponCode)
        object.set("shippingContactEditingMode", request.shippingContactEditingMode?.rawValue)
    }

    private static func writeApplePayJS(_ request: PaymentRequest) -> JSONValue {
        var object = ObjectBuilder()
        let currency = request.currency ?? request.total.amount.currency
        object.set("merchantCapabilities", strings: request.merchantCapabilities.map(\.rawValue))
        object.set("supportedNetworks", strings: request.supportedNetworks.map(\.rawValue))
        object.set("countryCode", request.countryCode?.code)
        object.set("currencyCode", currency.code)
        object.set("total", AppleJSWriter.lineItem(request.total, amount: request.amountForApple))
        if !request.lineItems.isEmpty {
            object.set("lineItems", .array(request.lineItems.map { AppleJSWriter.lineItem($0) }))
        }
        if !request.shippingMethods.isEmpty {
            object.set("shippingMethods", .array(request.shippingMethods.map(AppleJSWriter.shippingMethod)))
        }
        object.set("shippingType", request.shippingType?.rawValue)
        if !request.requiredShippingContactFields.isEmpty {
            object.set("requiredShippingContactFields", strings: request.requiredShippingContactFields.map(\.rawValue))
        }
        writeCommonAppleFields(request, into: &object)
        AppleJSWriter.specialPayments(request, into: &object)
        return object.value
    }

    // MARK: W3C Payment Request

    private static func readW3C(
        _ root: [String: JSONValue], _ reader: inout JSONReader, _ paths: inout ShapePaths
    ) -> PaymentRequest? {
        var data: [String: JSONValue]?
        if let methods = reader.objects(root, "methodData", "$") {
            let apple = methods.first { $0.fields["supportedMethods"]?.string == applePayMethod }
            if let apple {
                paths.data = apple.path + ".data"
                data = reader.object(apple.fields, "data", apple.path, required: true)
            } else {
                reader.report(
                    "unsupported_method", "no methodData entry has supportedMethods \"\(applePayMethod)\"",
                    at: "$.methodData")
            }
        } else if root["supportedMethods"] != nil {
            paths.data = "$.data"
            if root["supportedMethods"]?.string != applePayMethod {
                reader.report(
                    "unsupported_method", "supportedMethods must be \"\(applePayMethod)\"", at: "$.supportedMethods")
            }
            data = reader.object(root, "data", "$", required: true)
        } else {
            reader.report("missing_field", "methodData is required", at: "$.methodData")
        }
        let dataPath = paths.data
        let data_ = data ?? [:]
        paths.applePayDataMissing = data == nil
        let details = reader.object(root, "details", "$", required: true) ?? [:]
        let options = reader.object(root, "options", "$") ?? [:]

        let version = reader.int(data_, "version", dataPath, required: data != nil)
        let merchantIdentifier = reader.string(data_, "merchantIdentifier", dataPath)
        if data != nil, merchantIdentifier == nil, data_["merchantIdentifier"] == nil {
            reader.report(
                "missing_merchant_identifier", "merchantIdentifier is required", at: dataPath + ".merchantIdentifier")
        }
        let country = reader.string(data_, "countryCode", dataPath)
        if data != nil, country == nil, data_["countryCode"] == nil {
            reader.report("missing_country_code", "countryCode is required", at: dataPath + ".countryCode")
        }
        let networks = reader.strings(data_, "supportedNetworks", dataPath, required: data != nil) ?? []
        let capabilities = reader.strings(data_, "merchantCapabilities", dataPath, required: data != nil) ?? []

        let totalFields = reader.object(details, "total", "$.details", required: true)
        let total = totalFields.flatMap { readW3CItem($0, "$.details.total", &reader) }
        let currency = total?.amount.currency
        let (items, itemIndices) = indexed(reader.objects(details, "displayItems", "$.details")) {
            readW3CItem($0.fields, $0.path, &reader)
        }
        let (methods, methodIndices) = indexed(reader.objects(details, "shippingOptions", "$.details")) {
            readShippingOption($0.fields, $0.path, &reader)
        }
        paths.lineItemIndices = itemIndices
        paths.shippingMethodIndices = methodIndices
        var request = PaymentRequest(total: total ?? SummaryItem(label: "", amount: .zero(.usd)))
        request.merchantIdentifier = merchantIdentifier
        request.countryCode = reader.country(country, at: dataPath + ".countryCode")
        request.currency = currency
        request.supportedNetworks = networks.map(PaymentNetwork.init(rawValue:))
        request.merchantCapabilities = capabilities.map(MerchantCapability.init(rawValue:))
        request.lineItems = items
        request.shippingMethods = methods
        readCommonAppleFields(data_, dataPath, &reader, into: &request)
        let (shippingFields, shippingType) = readOptions(options, &reader)
        request.requiredShippingContactFields =
            reader.contactFields(data_, "requiredShippingContactFields", dataPath) ?? shippingFields
        request.shippingType =
            reader.string(data_, "shippingType", dataPath).map(ShippingType.init(rawValue:)) ?? shippingType
        if let modifiers = reader.objects(details, "modifiers", "$.details"),
            let apple = modifiers.first(where: { $0.fields["supportedMethods"]?.string == applePayMethod }),
            let modifierData = reader.object(apple.fields, "data", apple.path)
        {
            paths.modifierData = apple.path + ".data"
            reader.appleSpecialPayments(modifierData, paths.modifierData, currency: currency, into: &request)
        }
        if let version {
            if version < 1 {
                reader.report("unsupported_version", "version must be 1 or more", at: dataPath + ".version")
            } else if version < request.requiredVersion {
                reader.report(
                    "unsupported_version",
                    "the request's features need Apple Pay version \(request.requiredVersion), not \(version)",
                    at: dataPath + ".version")
            }
            request.applePayVersion = version == request.requiredVersion ? nil : version
        }
        return total == nil ? nil : request
    }

    private static func readW3CItem(
        _ fields: [String: JSONValue], _ path: String, _ reader: inout JSONReader
    )
        -> SummaryItem?
    {
        let label = reader.string(fields, "label", path, required: true)
        let amount = reader.amountObject(fields, "amount", path)
        let pending = reader.bool(fields, "pending", path) ?? false
        guard let label, let amount else { return nil }
        var item = SummaryItem(label: label, amount: amount, type: pending ? .pending : .final)
        reader.readAppleItemExtras(fields, path, currency: amount.currency, into: &item)
        return item
    }

    private static func writeW3CAmount(_ money: Money) -> JSONValue {
        .sortedObject(["currency": .string(money.currency.code), "value": .string(money.decimalString)])
    }

    private static func writeW3CItem(_ item: SummaryItem, amount: Money? = nil) -> JSONValue {
        var object = ObjectBuilder()
        object.set("label", item.label)
        object.set("amount", writeW3CAmount(amount ?? item.amount))
        if item.type == .pending { object.set("pending", true) }
        AppleJSWriter.extras(item, into: &object)
        return object.value
    }

    private static func readShippingOption(
        _ fields: [String: JSONValue], _ path: String, _ reader: inout JSONReader
    ) -> ShippingMethod? {
        let identifier = reader.string(fields, "id", path, required: true)
        let label = reader.string(fields, "label", path, required: true)
        let detail = reader.string(fields, "detail", path)
        let amount = reader.amountObject(fields, "amount", path)
        let range = reader.dateRange(fields, path)
        let selected = reader.bool(fields, "selected", path)
        guard let identifier, let label, let amount else { return nil }
        return ShippingMethod(
            identifier: identifier, label: label, detail: detail, amount: amount, dateComponentsRange: range,
            selected: selected)
    }

    private static func writeShippingOption(_ method: ShippingMethod) -> JSONValue {
        var object = ObjectBuilder()
        object.set("id", method.identifier)
        object.set("label", method.label)
        object.set("detail", method.detail)
        object.set("amount", writeW3CAmount(method.amount))
        object.set("dateComponentsRange", AppleJSWriter.dateRange(method.dateComponentsRange))
        object.set("selected", method.selected)
        return object.value
    }

    /// The shipping contact fields the W3C/TapPay options ask for, in this order.
    private static let optionFields: [(String, ContactField)] = [
        ("requestShipping", .postalAddress), ("requestPayerName", .name), ("requestPayerEmail", .email),
        ("requestPayerPhone", .phone),
    ]

    private static func readOptions(
        _ options: [String: JSONValue], _ reader: inout JSONReader
    )
        -> ([ContactField], ShippingType?)
    {
        var fields: [ContactField] = []
        for (key, field) in optionFields where reader.bool(options, key, "$.options") == true {
            fields.append(field)
        }
        let type = reader.string(options, "shippingType", "$.options").map { text -> ShippingType in
            text == "pickup" ? .storePickup : ShippingType(rawValue: text)
        }
        return (fields, type)
    }

    private static func writeOptions(_ request: PaymentRequest) -> (JSONValue, needsExplicitFields: Bool) {
        var object = ObjectBuilder()
        var derived: [ContactField] = []
        for (key, field) in optionFields {
            let asked = request.requiredShippingContactFields.contains(field)
            object.set(key, asked)
            if asked { derived.append(field) }
        }
        if let type = request.shippingType {
            object.set("shippingType", type == .storePickup || type == .servicePickup ? "pickup" : type.rawValue)
        }
        return (object.value, derived != request.requiredShippingContactFields)
    }

    private static func writeW3C(_ request: PaymentRequest) -> JSONValue {
        var data = ObjectBuilder()
        data.set("version", request.applePayVersion ?? request.requiredVersion)
        data.set("merchantIdentifier", request.merchantIdentifier)
        data.set("merchantCapabilities", strings: request.merchantCapabilities.map(\.rawValue))
        data.set("supportedNetworks", strings: request.supportedNetworks.map(\.rawValue))
        data.set("countryCode", request.countryCode?.code)
        writeCommonAppleFields(request, into: &data)
        let (options, needsFields) = writeOptions(request)
        if needsFields {
            data.set("requiredShippingContactFields", strings: request.requiredShippingContactFields.map(\.rawValue))
        }
        if request.shippingType == .servicePickup { data.set("shippingType", request.shippingType?.rawValue) }

        var details = ObjectBuilder()
        details.set("total", writeW3CItem(request.total, amount: request.amountForApple))
        if !request.lineItems.isEmpty {
            details.set("displayItems", .array(request.lineItems.map { writeW3CItem($0) }))
        }
        if !request.shippingMethods.isEmpty {
            details.set("shippingOptions", .array(request.shippingMethods.map(writeShippingOption)))
        }
        var special = ObjectBuilder()
        AppleJSWriter.specialPayments(request, into: &special)
        if !special.fields.isEmpty {
            details.set(
                "modifiers",
                .array([.sortedObject(["supportedMethods": .string(applePayMethod), "data": special.value])]))
        }
        return .sortedObject([
            "methodData": .array([.sortedObject(["supportedMethods": .string(applePayMethod), "data": data.value])]),
            "details": details.value,
            "options": options,
        ])
    }

    // MARK: TapPay web

    private static func readTapPay(
        _ root: [String: JSONValue], _ reader: inout JSONReader, _ paths: inout ShapePaths
    ) -> PaymentRequest? {
        let networks = reader.strings(root, "supportedNetworks", "$", required: true) ?? []
        if let methods = reader.strings(root, "supportedMethods", "$", required: true), !methods.contains(tapPayMethod)
        {
            reader.report(
                "unsupported_method", "supportedMethods must include \"\(tapPayMethod)\"", at: "$.supportedMethods")
        }
        var total: SummaryItem?
        var isAmountPending = false
        if let fields = reader.object(root, "total", "$", required: true) {
            let label = reader.string(fields, "label", "$.total", required: true)
            isAmountPending = reader.bool(fields, "isAmountPending", "$.total") ?? false
            let shown = reader.bool(fields, "isShowTotalAmount", "$.total") ?? true
            // A hidden total ("amount pending") may carry no value (TapPay: 與 amount.value 擇一帶入). A shown
            // one without a value reads as zero too, and its missing_field waits for the deferred table: a
            // refused combination (88014, 88015 …) is reported instead of the missing value it explains.
            let missing = shown ? Self.missingAmountPath(fields["amount"], at: "$.total.amount") : nil
            if let missing {
                reader.postponed.append(
                    ValidationIssue(
                        code: "missing_field", message: "\(missing.hasSuffix(".value") ? "value" : "amount") is required",
                        path: missing))
            }
            let amount = reader.amountObject(
                fields, "amount", "$.total",
                pendingCurrency: shown && missing == nil ? nil : .some(Self.firstCurrency(root)))
            if let label, let amount {
                total = SummaryItem(label: label, amount: amount, type: shown ? .final : .pending)
            }
        }
        let (items, itemIndices) = indexed(reader.objects(root, "displayItems", "$")) { fields, path -> SummaryItem? in
            let label = reader.string(fields, "label", path, required: true)
            let pending = reader.bool(fields, "isAmountPending", path) ?? false
            // A pending item carries isAmountPending instead of amount.value.
            let amount = reader.amountObject(
                fields, "amount", path, pendingCurrency: pending ? .some(total?.amount.currency) : nil)
            guard let label, let amount else { return nil }
            return SummaryItem(label: label, amount: amount, type: pending ? .pending : .final)
        }
        let (methods, methodIndices) = indexed(reader.objects(root, "shippingOptions", "$")) {
            readShippingOption($0.fields, $0.path, &reader)
        }
        paths.lineItemIndices = itemIndices
        paths.shippingMethodIndices = methodIndices
        let (shippingFields, shippingType) = readOptions(reader.object(root, "options", "$") ?? [:], &reader)
        guard let total else { return nil }
        var request = PaymentRequest(
            total: total, isAmountPending: isAmountPending, shippingMethods: methods, shippingType: shippingType)
        request.supportedNetworks = networks.map(PaymentNetwork.init(rawValue:))
        request.merchantCapabilities = []
        request.lineItems = items
        request.requiredShippingContactFields = shippingFields
        return request
    }

    /// Where an amount object lacks its value: the object's path when it is absent, `….value` when only the
    /// value is; `nil` when the value is there.
    private static func missingAmountPath(_ amount: JSONValue?, at path: String) -> String? {
        guard let amount, amount != .null else { return path }
        guard let fields = amount.fields else { return nil }
        return fields["value"] == nil || fields["value"] == .null ? path + ".value" : nil
    }

    /// The first currency code the TapPay request names (total, then display items, then shipping options),
    /// for a hidden total that carries no amount object.
    private static func firstCurrency(_ root: [String: JSONValue]) -> Currency? {
        var amounts: [JSONValue?] = []
        if let total = root["total"]?.fields { amounts.append(total["amount"]) }
        for key in ["displayItems", "shippingOptions"] {
            if case .array(let entries) = root[key] {
                for entry in entries.compactMap(\.fields) { amounts.append(entry["amount"]) }
            }
        }
        for amount in amounts.compactMap({ $0?.fields }) {
            if case .string(let code) = amount["currency"], let currency = try? Currency(code: code) { return currency }
        }
        return nil
    }

    private static func writeTapPay(_ request: PaymentRequest) -> JSONValue {
        var object = ObjectBuilder()
        object.set("supportedNetworks", strings: request.supportedNetworks.map(\.tapPayName))
        object.set("supportedMethods", strings: [tapPayMethod])
        if !request.lineItems.isEmpty {
            object.set(
                "displayItems",
                .array(
                    request.lineItems.map { item in
                        .sortedObject([
                            "label": .string(item.label), "amount": writeW3CAmount(item.amount),
                            "isAmountPending": .bool(item.type == .pending),
                        ])
                    }))
        }
        object.set(
            "total",
            .sortedObject([
                "label": .string(request.total.label), "amount": writeW3CAmount(request.total.amount),
                "isAmountPending": .bool(request.isDeferred), "isShowTotalAmount": .bool(request.showsTotalAmount),
            ]))
        if !request.shippingMethods.isEmpty {
            object.set(
                "shippingOptions",
                .array(
                    request.shippingMethods.map { method in
                        var option = ObjectBuilder()
                        option.set("id", method.identifier)
                        option.set("label", method.label)
                        option.set("detail", method.detail)
                        option.set("amount", writeW3CAmount(method.amount))
                        return option.value
                    }))
        }
        object.set("options", writeOptions(request).0)
        return object.value
    }

    // MARK: Writing

    /// The request as a JSON value of `format`.
    package static func jsonValue(_ request: PaymentRequest, as format: PaymentRequestFormat) -> JSONValue {
        switch format {
        case .applePayJS: writeApplePayJS(request)
        case .w3c: writeW3C(request)
        case .tapPayWeb: writeTapPay(request)
        }
    }

    /// The request as JSON text of `format`: pretty printed, keys sorted, amounts with exactly the
    /// currency's decimals. Apple Pay JS and the W3C form carry the amount handed to Apple
    /// (``PaymentRequest/amountForApple``); TapPay's shape carries the merchant's amount.
    public static func encode(_ request: PaymentRequest, as format: PaymentRequestFormat) -> Data {
        jsonValue(request, as: format).sortedText()
    }

    /// What the target shape cannot carry of `request` (for `orchard request convert`'s notes).
    public static func losses(converting request: PaymentRequest, to format: PaymentRequestFormat) -> [String] {
        var losses: [String] = []
        switch format {
        case .applePayJS:
            if request.merchantIdentifier != nil {
                losses.append("merchantIdentifier (Apple Pay JS passes it with merchant validation)")
            }
            if let explicit = request.isAmountPending, explicit != deriveDeferred(request) {
                losses.append("isAmountPending (deferred authorization) has no Apple Pay JS field")
            }
        case .w3c:
            if let explicit = request.isAmountPending, explicit != deriveDeferred(request) {
                losses.append("isAmountPending (deferred authorization) has no W3C field")
            }
        case .tapPayWeb:
            if !request.merchantCapabilities.isEmpty { losses.append("merchantCapabilities (TapPay sets them)") }
            if request.merchantIdentifier != nil || request.countryCode != nil {
                losses.append("merchantIdentifier and countryCode (TapPay's setupApplePay supplies them)")
            }
            if request.recurringPaymentRequest != nil || request.automaticReloadPaymentRequest != nil
                || request.deferredPaymentRequest != nil || !request.multiTokenContexts.isEmpty
            {
                losses.append("recurring, automatic reload, deferred and multi-token requests")
            }
            if !request.requiredBillingContactFields.isEmpty || request.billingContact != nil
                || request.shippingContact != nil
            {
                losses.append("billing contact fields and prefilled contacts")
            }
            if request.lineItems.contains(where: { $0.paymentTiming != nil }) {
                losses.append("line items' payment timing")
            }
        }
        if request.amountForApple != request.total.amount, format != .tapPayWeb {
            losses.append(
                "the pending total is handed to Apple as \(request.amountForApple.decimalString) (older iOS and macOS refuse 0)"
            )
        }
        return losses
    }

    private static func deriveDeferred(_ request: PaymentRequest) -> Bool {
        var copy = request
        copy.isAmountPending = nil
        return copy.isDeferred
    }
}
