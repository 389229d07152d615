import ApplePayModel
import Foundation
import Gateway
import OrchardHTTP

/// A JSON object from a request body (or a nested object), with typed, bounded field access whose errors name
/// the field as a JSON path (`cardholder.email`).
struct RequestBody {
    let object: [String: Any]
    let path: String

    /// The body's object (parsed once per request, ``GatewayAPI/Call/parsedBody``); an empty body is `{}` unless
    /// `required`.
    init(_ call: GatewayAPI.Call, required: Bool) throws(GatewayAPIError) {
        path = ""
        if call.request.body.isEmpty {
            guard !required else {
                throw GatewayAPIError.make(
                    .badRequest, .invalidRequest, "invalid_json", "a JSON object body is required")
            }
            object = [:]
            return
        }
        guard let object = call.parsedBody as? [String: Any] else {
            throw GatewayAPIError.make(.badRequest, .invalidRequest, "invalid_json", "the body is not a JSON object")
        }
        self.object = object
    }

    init(object: [String: Any], path: String) {
        self.object = object
        self.path = path
    }

    func name(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    private func present(_ key: String) -> Any? {
        guard let value = object[key], !(value is NSNull) else { return nil }
        return value
    }

    func missing(_ key: String) -> GatewayAPIError {
        GatewayAPIError.make(
            .badRequest, .invalidRequest, "parameter_missing", "\(name(key)) is required", param: name(key))
    }

    func invalid(_ key: String, _ message: String) -> GatewayAPIError {
        GatewayAPIError.make(
            .badRequest, .invalidRequest, "parameter_invalid", "\(name(key)): \(message)", param: name(key))
    }

    /// A string field of at most `max` characters, counted as Unicode scalars (a grapheme cluster can hold any
    /// number of combining marks, so counting clusters would not bound the size).
    func string(_ key: String, max: Int, required: Bool = false) throws(GatewayAPIError) -> String? {
        guard let value = present(key) else {
            if required { throw missing(key) }
            return nil
        }
        guard let text = value as? String else { throw invalid(key, "must be a string") }
        guard text.unicodeScalars.count <= max else {
            throw GatewayAPIError.make(
                .badRequest, .invalidRequest, "string_too_long", "\(name(key)) is longer than \(max) characters",
                param: name(key))
        }
        if required, text.isEmpty { throw invalid(key, "must not be empty") }
        return text
    }

    func requiredString(_ key: String, max: Int) throws(GatewayAPIError) -> String {
        guard let value = try string(key, max: max, required: true) else { throw missing(key) }
        return value
    }

    /// A whole-number field (a JSON integer, or a number with no fraction such as `2.0`).
    func integer(_ key: String) throws(GatewayAPIError) -> Int? {
        guard let value = present(key) else { return nil }
        // The strict parse gives Int64 or Double; Foundation would also cast a Bool (or 0/1) to a number.
        if let integer = value as? Int64, type(of: value) == Int64.self { return Int(integer) }
        if let number = value as? Double, type(of: value) == Double.self, let integer = Int(exactly: number) {
            return integer
        }
        throw invalid(key, "must be a whole number")
    }

    /// A boolean field: JSON `true` or `false` only (never 0 or 1).
    func boolean(_ key: String) throws(GatewayAPIError) -> Bool? {
        guard let value = present(key) else { return nil }
        guard type(of: value) == Bool.self, let flag = value as? Bool else {
            throw invalid(key, "must be true or false")
        }
        return flag
    }

    /// A nested object.
    func nested(_ key: String, required: Bool = false) throws(GatewayAPIError) -> RequestBody? {
        guard let value = present(key) else {
            if required { throw missing(key) }
            return nil
        }
        guard let nested = value as? [String: Any] else { throw invalid(key, "must be an object") }
        return RequestBody(object: nested, path: name(key))
    }

    /// The raw JSON of a nested object (a token, a payment request), re-encoded.
    func json(_ key: String, required: Bool = false) throws(GatewayAPIError) -> Data? {
        guard let nested = try nested(key, required: required) else { return nil }
        guard let data = try? WireFormat.json(nested.object) else { throw invalid(key, "must be a JSON object") }
        return data
    }

    /// A currency code (upper-case ISO 4217).
    func currency(_ key: String, required: Bool = true) throws(GatewayAPIError) -> Currency? {
        guard let code = try string(key, max: 3, required: required) else { return nil }
        guard code.count == 3, code.allSatisfy({ $0.isASCII && $0.isUppercase }),
            let currency = try? Currency(code: code)
        else {
            throw GatewayAPIError.make(
                .badRequest, .invalidRequest, "unknown_currency", "\(code) is not an ISO 4217 currency code",
                param: name(key))
        }
        return currency
    }

    /// An amount (decimal string) in `currency`, in minor units; positive unless `allowZero`.
    func amount(_ key: String, currency: Currency, required: Bool = true) throws(GatewayAPIError) -> Int64? {
        guard let value = present(key) else {
            if required { throw missing(key) }
            return nil
        }
        guard let text = value as? String else {
            throw GatewayAPIError.make(
                .badRequest, .invalidRequest, "invalid_amount", "\(name(key)) must be a decimal string like \"100.00\"",
                param: name(key))
        }
        return try Self.minorUnits(text, currency: currency, param: name(key))
    }

    static func minorUnits(_ text: String, currency: Currency, param: String) throws(GatewayAPIError) -> Int64 {
        do throws(MoneyError) {
            return try AmountRules.minorUnits(text, currency: currency, param: param)
        } catch {
            throw GatewayAPIError.from(error, param: param)
        }
    }
}
