import Foundation
import OrchardJSON

// Reading and writing the parts of a request that are spelled as Apple Pay JS spells them, in
// Apple Pay JS's request and inside the W3C form's Apple Pay data and modifier.

extension JSONReader {
    mutating func appleLineItem(_ fields: [String: JSONValue], _ path: String, currency: Currency?) -> SummaryItem? {
        let label = string(fields, "label", path, required: true)
        let amount = appleAmount(fields, "amount", path, currency: currency)
        var type = SummaryItemType.final
        if let text = string(fields, "type", path) {
            if let known = SummaryItemType(rawValue: text) {
                type = known
            } else {
                report(
                    "unknown_value", "type must be \"final\" or \"pending\", not '\(text.prefix(32))'",
                    at: path + ".type")
            }
        }
        guard let label, let amount else { return nil }
        var item = SummaryItem(label: label, amount: amount, type: type)
        readAppleItemExtras(fields, path, currency: currency, into: &item)
        return item
    }

    /// The Apple-only members of a line item: payment timing and its schedule.
    mutating func readAppleItemExtras(
        _ fields: [String: JSONValue], _ path: String, currency: Currency?, into item: inout SummaryItem
    ) {
        item.paymentTiming = string(fields, "paymentTiming", path).map(PaymentTiming.init(rawValue:))
        item.recurringPaymentStartDate = string(fields, "recurringPaymentStartDate", path)
        item.recurringPaymentIntervalUnit = string(fields, "recurringPaymentIntervalUnit", path).map(
            RecurringIntervalUnit.init(rawValue:))
        item.recurringPaymentIntervalCount = int(fields, "recurringPaymentIntervalCount", path)
        item.recurringPaymentEndDate = string(fields, "recurringPaymentEndDate", path)
        item.deferredPaymentDate = string(fields, "deferredPaymentDate", path)
        if let text = string(fields, "automaticReloadPaymentThresholdAmount", path) {
            item.automaticReloadPaymentThresholdAmount = money(
                text, currency: currency, at: path + ".automaticReloadPaymentThresholdAmount")
        }
    }

    mutating func dateComponents(_ fields: [String: JSONValue], _ path: String) -> DateComponentsValue {
        DateComponentsValue(
            years: int(fields, "years", path), months: int(fields, "months", path), days: int(fields, "days", path),
            hours: int(fields, "hours", path))
    }

    mutating func dateRange(_ fields: [String: JSONValue], _ path: String) -> ShippingDateRange? {
        guard let range = object(fields, "dateComponentsRange", path) else { return nil }
        let rangePath = path + ".dateComponentsRange"
        guard let start = object(range, "startDateComponents", rangePath, required: true),
            let end = object(range, "endDateComponents", rangePath, required: true)
        else { return nil }
        return ShippingDateRange(
            start: dateComponents(start, rangePath + ".startDateComponents"),
            end: dateComponents(end, rangePath + ".endDateComponents"))
    }

    mutating func appleShippingMethod(
        _ fields: [String: JSONValue], _ path: String, currency: Currency?
    )
        -> ShippingMethod?
    {
        let identifier = string(fields, "identifier", path, required: true)
        let label = string(fields, "label", path, required: true)
        let detail = string(fields, "detail", path)
        let amount = appleAmount(fields, "amount", path, currency: currency)
        let range = dateRange(fields, path)
        let selected = bool(fields, "selected", path)
        guard let identifier, let label, let amount else { return nil }
        return ShippingMethod(
            identifier: identifier, label: label, detail: detail, amount: amount, dateComponentsRange: range,
            selected: selected)
    }

    mutating func contact(_ object: [String: JSONValue], _ key: String, _ path: String) -> PaymentContact? {
        guard let fields = self.object(object, key, path) else { return nil }
        let contactPath = path + "." + key
        var contact = PaymentContact()
        for (name, keyPath) in PaymentContact.stringKeys {
            contact[keyPath: keyPath] = string(fields, name, contactPath)
        }
        contact.addressLines = strings(fields, "addressLines", contactPath)
        return contact
    }

    mutating func contactFields(_ object: [String: JSONValue], _ key: String, _ path: String) -> [ContactField]? {
        strings(object, key, path)?.map(ContactField.init(rawValue:))
    }

    mutating func countries(_ object: [String: JSONValue], _ key: String, _ path: String) -> [CountryCode] {
        guard let codes = strings(object, key, path) else { return [] }
        return codes.enumerated().compactMap { index, code in country(code, at: "\(path).\(key)[\(index)]") }
    }

    /// recurringPaymentRequest, automaticReloadPaymentRequest, deferredPaymentRequest and
    /// multiTokenContexts, as Apple Pay JS spells them.
    mutating func appleSpecialPayments(
        _ fields: [String: JSONValue], _ path: String, currency: Currency?, into request: inout PaymentRequest
    ) {
        if let recurring = object(fields, "recurringPaymentRequest", path) {
            let p = path + ".recurringPaymentRequest"
            let description = string(recurring, "paymentDescription", p, required: true)
            let regular = object(recurring, "regularBilling", p, required: true).flatMap {
                appleLineItem($0, p + ".regularBilling", currency: currency)
            }
            let trial = object(recurring, "trialBilling", p).flatMap {
                appleLineItem($0, p + ".trialBilling", currency: currency)
            }
            let agreement = string(recurring, "billingAgreement", p)
            let management = string(recurring, "managementURL", p, required: true)
            let notification = string(recurring, "tokenNotificationURL", p)
            if let description, let regular, let management {
                request.recurringPaymentRequest = RecurringPaymentRequest(
                    paymentDescription: description, regularBilling: regular, trialBilling: trial,
                    billingAgreement: agreement, managementURL: management, tokenNotificationURL: notification)
            }
        }
        if let reload = object(fields, "automaticReloadPaymentRequest", path) {
            let p = path + ".automaticReloadPaymentRequest"
            let description = string(reload, "paymentDescription", p, required: true)
            let billing = object(reload, "automaticReloadBilling", p, required: true).flatMap {
                appleLineItem($0, p + ".automaticReloadBilling", currency: currency)
            }
            let agreement = string(reload, "billingAgreement", p)
            let management = string(reload, "managementURL", p, required: true)
            let notification = string(reload, "tokenNotificationURL", p)
            if let description, let billing, let management {
                request.automaticReloadPaymentRequest = AutomaticReloadPaymentRequest(
                    paymentDescription: description, automaticReloadBilling: billing, billingAgreement: agreement,
                    managementURL: management, tokenNotificationURL: notification)
            }
        }
        if let deferred = object(fields, "deferredPaymentRequest", path) {
            let p = path + ".deferredPaymentRequest"
            let description = string(deferred, "paymentDescription", p, required: true)
            let billing = object(deferred, "deferredBilling", p, required: true).flatMap {
                appleLineItem($0, p + ".deferredBilling", currency: currency)
            }
            let agreement = string(deferred, "billingAgreement", p)
            let management = string(deferred, "managementURL", p, required: true)
            let notification = string(deferred, "tokenNotificationURL", p)
            let cancellation = string(deferred, "freeCancellationDate", p)
            let zone = string(deferred, "freeCancellationDateTimeZone", p)
            if let description, let billing, let management {
                request.deferredPaymentRequest = DeferredPaymentRequest(
                    paymentDescription: description, deferredBilling: billing, billingAgreement: agreement,
                    managementURL: management, tokenNotificationURL: notification, freeCancellationDate: cancellation,
                    freeCancellationDateTimeZone: zone)
            }
        }
        if let contexts = objects(fields, "multiTokenContexts", path) {
            request.multiTokenContexts = contexts.compactMap { context, p in
                let merchant = string(context, "merchantIdentifier", p, required: true)
                let external = string(context, "externalIdentifier", p, required: true)
                let name = string(context, "merchantName", p, required: true)
                let domain = string(context, "merchantDomain", p)
                let amount = appleAmount(context, "amount", p, currency: currency)
                guard let merchant, let external, let name, let amount else { return nil }
                return MultiTokenContext(
                    merchantIdentifier: merchant, externalIdentifier: external, merchantName: name,
                    merchantDomain: domain, amount: amount)
            }
        }
    }
}

enum AppleJSWriter {
    static func lineItem(_ item: SummaryItem, amount: Money? = nil) -> JSONValue {
        var object = ObjectBuilder()
        object.set("label", item.label)
        object.set("amount", (amount ?? item.amount).decimalString)
        object.set("type", item.type.rawValue)
        extras(item, into: &object)
        return object.value
    }

    static func extras(_ item: SummaryItem, into object: inout ObjectBuilder) {
        object.set("paymentTiming", item.paymentTiming?.rawValue)
        object.set("recurringPaymentStartDate", item.recurringPaymentStartDate)
        object.set("recurringPaymentIntervalUnit", item.recurringPaymentIntervalUnit?.rawValue)
        object.set("recurringPaymentIntervalCount", item.recurringPaymentIntervalCount)
        object.set("recurringPaymentEndDate", item.recurringPaymentEndDate)
        object.set("deferredPaymentDate", item.deferredPaymentDate)
        object.set("automaticReloadPaymentThresholdAmount", item.automaticReloadPaymentThresholdAmount?.decimalString)
    }

    static func dateComponents(_ value: DateComponentsValue) -> JSONValue {
        var object = ObjectBuilder()
        object.set("years", value.years)
        object.set("months", value.months)
        object.set("days", value.days)
        object.set("hours", value.hours)
        return object.value
    }

    static func dateRange(_ range: ShippingDateRange?) -> JSONValue? {
        guard let range else { return nil }
        return .sortedObject([
            "startDateComponents": dateComponents(range.start), "endDateComponents": dateComponents(range.end),
        ])
    }

    static func shippingMethod(_ method: ShippingMethod) -> JSONValue {
        var object = ObjectBuilder()
        object.set("identifier", method.identifier)
        object.set("label", method.label)
        object.set("detail", method.detail)
        object.set("amount", method.amount.decimalString)
        object.set("dateComponentsRange", dateRange(method.dateComponentsRange))
        object.set("selected", method.selected)
        return object.value
    }

    static func contact(_ contact: PaymentContact?) -> JSONValue? {
        guard let contact else { return nil }
        var object = ObjectBuilder()
        for (name, keyPath) in PaymentContact.stringKeys { object.set(name, contact[keyPath: keyPath]) }
        object.set("addressLines", strings: contact.addressLines)
        return object.value
    }

    static func specialPayments(_ request: PaymentRequest, into object: inout ObjectBuilder) {
        if let recurring = request.recurringPaymentRequest {
            var value = ObjectBuilder()
            value.set("paymentDescription", recurring.paymentDescription)
            value.set("regularBilling", lineItem(recurring.regularBilling))
            value.set("trialBilling", recurring.trialBilling.map { lineItem($0) })
            value.set("billingAgreement", recurring.billingAgreement)
            value.set("managementURL", recurring.managementURL)
            value.set("tokenNotificationURL", recurring.tokenNotificationURL)
            object.set("recurringPaymentRequest", value.value)
        }
        if let reload = request.automaticReloadPaymentRequest {
            var value = ObjectBuilder()
            value.set("paymentDescription", reload.paymentDescription)
            value.set("automaticReloadBilling", lineItem(reload.automaticReloadBilling))
            value.set("billingAgreement", reload.billingAgreement)
            value.set("managementURL", reload.managementURL)
            value.set("tokenNotificationURL", reload.tokenNotificationURL)
            object.set("automaticReloadPaymentRequest", value.value)
        }
        if let deferred = request.deferredPaymentRequest {
            var value = ObjectBuilder()
            value.set("paymentDescription", deferred.paymentDescription)
            value.set("deferredBilling", lineItem(deferred.deferredBilling))
            value.set("billingAgreement", deferred.billingAgreement)
            value.set("managementURL", deferred.managementURL)
            value.set("tokenNotificationURL", deferred.tokenNotificationURL)
            value.set("freeCancellationDate", deferred.freeCancellationDate)
            value.set("freeCancellationDateTimeZone", deferred.freeCancellationDateTimeZone)
            object.set("deferredPaymentRequest", value.value)
        }
        if !request.multiTokenContexts.isEmpty {
            object.set(
                "multiTokenContexts",
                .array(
                    request.multiTokenContexts.map { context in
                        var value = ObjectBuilder()
                        value.set("merchantIdentifier", context.merchantIdentifier)
                        value.set("externalIdentifier", context.externalIdentifier)
                        value.set("merchantName", context.merchantName)
                        value.set("merchantDomain", context.merchantDomain)
                        value.set("amount", context.amount.decimalString)
                        return value.value
                    }))
        }
    }
}
