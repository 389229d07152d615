import Foundation
import OrchardJSON

/// Reads fields of a JSON object one by one, collecting every problem with its path instead of
/// stopping at the first.
struct JSONReader {
    var issues: [ValidationIssue] = []
    /// Set when an amount could not be read, so that sum rules do not report a consequence as a cause.
    var amountsIncomplete = false
    /// Issues the rules report only when TapPay's deferred table accepts the request
    /// (``PaymentRequestDecoding/postponedIssues``).
    var postponed: [ValidationIssue] = []

    mutating func report(_ code: String, _ message: String, at path: String) {
        issues.append(ValidationIssue(code: code, message: message, path: path))
    }

    mutating func value(_ object: [String: JSONValue], _ key: String, _ path: String, required: Bool) -> JSONValue? {
        guard let value = object[key], value != .null else {
            if required { report("missing_field", "\(key) is required", at: path + "." + key) }
            return nil
        }
        return value
    }

    mutating func object(
        _ object: [String: JSONValue], _ key: String, _ path: String, required: Bool = false
    )
        -> [String: JSONValue]?
    {
        guard let value = value(object, key, path, required: required) else { return nil }
        guard let found = value.fields else {
            report("invalid_type", "\(key) must be an object, not \(value.typeName)", at: path + "." + key)
            return nil
        }
        return found
    }

    mutating func array(
        _ object: [String: JSONValue], _ key: String, _ path: String, required: Bool = false
    )
        -> [JSONValue]?
    {
        guard let value = value(object, key, path, required: required) else { return nil }
        guard case .array(let found) = value else {
            report("invalid_type", "\(key) must be an array, not \(value.typeName)", at: path + "." + key)
            return nil
        }
        return found
    }

    /// The elements of an array that are objects, with their paths.
    mutating func objects(
        _ object: [String: JSONValue], _ key: String, _ path: String, required: Bool = false
    )
        -> [(fields: [String: JSONValue], path: String)]?
    {
        guard let elements = array(object, key, path, required: required) else { return nil }
        var found: [(fields: [String: JSONValue], path: String)] = []
        for (index, element) in elements.enumerated() {
            let elementPath = "\(path).\(key)[\(index)]"
            guard let fields = element.fields else {
                report("invalid_type", "must be an object, not \(element.typeName)", at: elementPath)
                continue
            }
            found.append((fields, elementPath))
        }
        return found
    }

    mutating func string(
        _ object: [String: JSONValue], _ key: String, _ path: String, required: Bool = false
    )
        -> String?
    {
        guard let value = value(object, key, path, required: required) else { return nil }
        guard case .string(let found) = value else {
            report("invalid_type", "\(key) must be a string, not \(value.typeName)", at: path + "." + key)
            return nil
        }
        return found
    }

    mutating func bool(_ object: [String: JSONValue], _ key: String, _ path: String, required: Bool = false) -> Bool? {
        guard let value = value(object, key, path, required: required) else { return nil }
        guard case .bool(let found) = value else {
            report("invalid_type", "\(key) must be true or false, not \(value.typeName)", at: path + "." + key)
            return nil
        }
        return found
    }

    mutating func int(_ object: [String: JSONValue], _ key: String, _ path: String, required: Bool = false) -> Int? {
        guard let value = value(object, key, path, required: required) else { return nil }
        guard case .number(let text) = value, let number = Decimal(string: text),
            let found = Int(exactly: NSDecimalNumber(decimal: number).doubleValue),
            Decimal(found) == number
        else {
            report("invalid_type", "\(key) must be an integer", at: path + "." + key)
            return nil
        }
        return found
    }

    mutating func strings(
        _ object: [String: JSONValue], _ key: String, _ path: String, required: Bool = false
    )
        -> [String]?
    {
        guard let elements = array(object, key, path, required: required) else { return nil }
        var found: [String] = []
        for (index, element) in elements.enumerated() {
            guard case .string(let text) = element else {
                report("invalid_type", "must be a string, not \(element.typeName)", at: "\(path).\(key)[\(index)]")
                continue
            }
            found.append(text)
        }
        return found
    }

    /// An amount string in `currency`; nil (and a reported problem) when it cannot be read.
    mutating func money(_ text: String?, currency: Currency?, at path: String) -> Money? {
        guard let text else {
            amountsIncomplete = true
            return nil
        }
        guard let currency else {
            amountsIncomplete = true
            return nil
        }
        do {
            return try Money(text, currency: currency)
        } catch {
            amountsIncomplete = true
            report(error.code.rawValue, error.reason, at: path)
            return nil
        }
    }

    /// An Apple Pay JS amount string (`"amount": "12.75"`).
    mutating func appleAmount(
        _ object: [String: JSONValue], _ key: String, _ path: String, currency: Currency?
    )
        -> Money?
    {
        guard let value = value(object, key, path, required: true) else {
            amountsIncomplete = true
            return nil
        }
        guard case .string(let text) = value else {
            amountsIncomplete = true
            report(
                "invalid_amount", "\(key) must be a decimal string such as \"12.75\", not \(value.typeName)",
                at: path + "." + key)
            return nil
        }
        return money(text, currency: currency, at: path + "." + key)
    }

    /// A W3C/TapPay amount object (`"amount": {"currency": "TWD", "value": "12.75"}`).
    /// An `{currency, value}` amount. With `pendingCurrency` (TapPay's pending items and hidden totals,
    /// whose `isAmountPending`/`isShowTotalAmount` stands "instead of amount.value"), a missing `value` — or a
    /// missing amount object — reads as zero in the amount's own currency, else in `pendingCurrency`'s.
    mutating func amountObject(
        _ object: [String: JSONValue], _ key: String, _ path: String, pendingCurrency: Currency?? = nil
    ) -> Money? {
        if let pendingCurrency, object[key] == nil || object[key] == .null {
            guard let currency = pendingCurrency else {
                amountsIncomplete = true
                report(
                    "missing_currency", "no amount of the request names its currency",
                    at: path + "." + key + ".currency")
                return nil
            }
            return .zero(currency)
        }
        guard let fields = self.object(object, key, path, required: true) else {
            amountsIncomplete = true
            return nil
        }
        let amountPath = path + "." + key
        let code = string(fields, "currency", amountPath, required: true)
        var currency: Currency?
        if let code {
            do {
                currency = try Currency(code: code)
            } catch {
                report(error.code.rawValue, error.reason, at: amountPath + ".currency")
            }
        }
        guard let raw = value(fields, "value", amountPath, required: pendingCurrency == nil) else {
            if pendingCurrency != nil, let currency { return .zero(currency) }
            amountsIncomplete = true
            return nil
        }
        guard case .string(let text) = raw else {
            amountsIncomplete = true
            report(
                "invalid_amount", "value must be a decimal string such as \"12.75\", not \(raw.typeName)",
                at: amountPath + ".value")
            return nil
        }
        return money(text, currency: currency, at: amountPath + ".value")
    }

    mutating func currency(_ text: String?, at path: String) -> Currency? {
        guard let text else { return nil }
        do {
            return try Currency(code: text)
        } catch {
            report(error.code.rawValue, error.reason, at: path)
            return nil
        }
    }

    mutating func country(_ text: String?, at path: String) -> CountryCode? {
        guard let text else { return nil }
        do {
            return try CountryCode(text)
        } catch {
            report(error.code.rawValue, error.reason, at: path)
            return nil
        }
    }
}
