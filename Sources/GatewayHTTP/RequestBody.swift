import ApplePayModel
import Foundation
import Gateway
import OrchardHTTP
import OrchardJSON

/// A JSON object from a request body (or a nested object), with typed, bounded field access whose errors name
/// the field as a JSON path (`cardholder.email`).
struct RequestBody {
    let members: [JSONMember]
    let path: String
    /// The parsed body the members come from (their bytes, for ``json(_:required:)``).
    let source: JSONBody?

    /// The body's object (parsed once per request, ``GatewayAPI/Call/parsedBody``); an empty body is `{}` unless
    /// `required`.
    init(_ call: GatewayAPI.Call, required: Bool) throws(GatewayAPIError) {
        path = ""
        if call.request.body.isEmpty {
            guard !required else {
                throw GatewayAPIError.make(
                    .badRequest, .invalidRequest, "invalid_json", "a JSON object body is required")
            }
            members = []
            source = nil
            return
        }
        guard let parsed = call.parsedBody, let members = parsed.json.members else {
            throw GatewayAPIError.make(.badRequest, .invalidRequest, "invalid_json", "the body is not a JSON object")
        }
        self.members = members
        self.source = parsed
    }

    init(members: [JSONMember], path: String, source: JSONBody?) {
        self.members = members
        self.path = path
        self.source = source
    }

    func name(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    private func member(_ key: String) -> JSONMember? {
        guard let member = members.first(where: { $0.key == key }), member.value != .null else { return nil }
        return member
    }

    /// The value of `key`, nil when the body leaves it out. `null` counts as left out only for a field the spec
    /// types as nullable (`nullable`); for any other field it is refused (`parameter_invalid`), as the spec's type
    /// (a string, a number, an object …) does not take it.
    private func present(_ key: String, nullable: Bool) throws(GatewayAPIError) -> JSONValue? {
        if !nullable, raw(key) == .null { throw invalid(key, "must not be null; leave it out for the default") }
        return member(key)?.value
    }

    /// The value of `key` as it was sent, `null` included; nil when the body has no such member.
    func raw(_ key: String) -> JSONValue? { members.first { $0.key == key }?.value }

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
    func string(
        _ key: String, max: Int, required: Bool = false, nullable: Bool = false
    ) throws(GatewayAPIError) -> String? {
        guard let value = try present(key, nullable: nullable) else {
            if required { throw missing(key) }
            return nil
        }
        guard case .string(let text) = value else { throw invalid(key, "must be a string") }
        guard FieldLimits.fits(text, max) else {
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
    func integer(_ key: String, nullable: Bool = false) throws(GatewayAPIError) -> Int? {
        guard let value = try present(key, nullable: nullable) else { return nil }
        // The number's exact text: an integer that fits 64 bits, or a double with no fraction (never a boolean).
        guard case .number(let text) = value else { throw invalid(key, "must be a whole number") }
        if let integer = Int64(text) { return Int(integer) }
        if let number = Double(text), let integer = Int(exactly: number) { return integer }
        throw invalid(key, "must be a whole number")
    }

    /// A boolean field: JSON `true` or `false` only (never 0 or 1).
    func boolean(_ key: String, nullable: Bool = false) throws(GatewayAPIError) -> Bool? {
        guard let value = try present(key, nullable: nullable) else { return nil }
        guard case .bool(let flag) = value else { throw invalid(key, "must be true or false") }
        return flag
    }

    /// A nested object.
    func nested(_ key: String, required: Bool = false) throws(GatewayAPIError) -> RequestBody? {
        guard let value = try present(key, nullable: false) else {
            if required { throw missing(key) }
            return nil
        }
        guard case .object(let nested) = value else { throw invalid(key, "must be an object") }
        return RequestBody(members: nested, path: name(key), source: source)
    }

    /// The JSON of a nested object (a token, a payment request) exactly as its bytes came in the body: never
    /// re-serialized, so what is verified is what was sent.
    func json(_ key: String, required: Bool = false) throws(GatewayAPIError) -> Data? {
        try document(key, required: required)?.bytes
    }

    /// ``json(_:required:)`` with the body parse's value of it, so the domain does not parse it again.
    func document(_ key: String, required: Bool = false) throws(GatewayAPIError) -> SubmittedToken? {
        guard try nested(key, required: required) != nil, let member = member(key) else { return nil }
        guard let data = source?.bytes(of: member) else { throw invalid(key, "must be a JSON object") }
        return SubmittedToken(bytes: data, parsed: member.value)
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
    func amount(
        _ key: String, currency: Currency, required: Bool = true, nullable: Bool = false
    ) throws(GatewayAPIError) -> Int64? {
        guard let value = try present(key, nullable: nullable) else {
            if required { throw missing(key) }
            return nil
        }
        guard case .string(let text) = value else {
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
