import Foundation
import OrchardBase
import OrchardCrypto

/// Why a webhook signature was refused, with a stable code.
///
/// Equality compares codes only, so callers can match
/// `error == WebhookSignatureError(code: .signatureMismatch)`. Descriptions never contain a secret.
public struct WebhookSignatureError: CodedError, Sendable {
    /// A stable, documented error code.
    public struct Code: Hashable, Sendable, RawRepresentable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The `Orchard-Signature` header is absent or empty.
        public static let headerMissing = Code(rawValue: "signature_header_missing")
        /// The header is not a comma-separated list of `key=value` items with exactly one decimal `t`,
        /// or a `v1` value is not 64 hex digits, or it is too long.
        public static let headerMalformed = Code(rawValue: "signature_header_malformed")
        /// The header carries no `v1` signature (only schemes this version does not know).
        public static let noSupportedScheme = Code(rawValue: "signature_no_supported_scheme")
        /// No secret was given to verify with.
        public static let secretMissing = Code(rawValue: "signature_secret_missing")
        /// The signed timestamp is further from now than the tolerance allows (a replay, or a skewed clock).
        public static let timestampOutOfTolerance = Code(rawValue: "signature_timestamp_out_of_tolerance")
        /// No `v1` signature matches the body under any of the secrets.
        public static let signatureMismatch = Code(rawValue: "signature_mismatch")
    }

    /// What went wrong, as a stable code.
    public var code: Code
    /// A human-readable reason (never a secret).
    public var reason: String

    public init(code: Code, reason: String = "") {
        self.code = code
        self.reason = reason
    }
}

/// The parsed value of an `Orchard-Signature` header: `t=<unix seconds>,v1=<hex>[,v1=<hex>…]`.
///
/// Items of schemes other than `t` and `v1` (say a future `v2=`) are kept in ``otherItems`` and otherwise
/// ignored, so a receiver keeps working when the gateway adds a scheme.
public struct WebhookSignatureHeader: Sendable, Hashable, CustomStringConvertible {
    /// The signing time, in seconds since 1970 (UTC).
    public var timestamp: Int64
    /// The `v1` signatures: lowercase hex HMAC-SHA256 values, one per secret in force.
    public var v1: [String]
    /// Items of other schemes, in order, as `(key, value)` pairs.
    public var otherItems: [WebhookSignatureItem]

    /// A header of `timestamp` and `v1` signatures.
    public init(timestamp: Int64, v1: [String], otherItems: [WebhookSignatureItem] = []) {
        self.timestamp = timestamp
        self.v1 = v1
        self.otherItems = otherItems
    }

    /// The longest header value accepted by ``init(parsing:)``: 4096 bytes.
    public static let maximumLength = 4096

    /// Parses a header value. Whitespace around items is ignored; unknown schemes are tolerated.
    ///
    /// - Throws: `signature_header_missing` for an empty value, `signature_header_malformed` for anything
    ///   that is not `key=value` items with exactly one decimal `t` and `v1` values of 64 hex digits,
    ///   `signature_no_supported_scheme` when no `v1` item is present.
    public init(parsing value: String) throws(WebhookSignatureError) {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { throw WebhookSignatureError(code: .headerMissing) }
        guard trimmed.utf8.count <= Self.maximumLength else {
            throw WebhookSignatureError(code: .headerMalformed, reason: "longer than \(Self.maximumLength) bytes")
        }
        var timestamp: Int64?
        var v1: [String] = []
        var other: [WebhookSignatureItem] = []
        for rawItem in trimmed.split(separator: ",", omittingEmptySubsequences: false) {
            let item = rawItem.trimmingCharacters(in: .whitespaces)
            guard let equals = item.firstIndex(of: "=") else {
                throw WebhookSignatureError(code: .headerMalformed, reason: "an item is not key=value")
            }
            let key = String(item[..<equals]).trimmingCharacters(in: .whitespaces)
            let itemValue = String(item[item.index(after: equals)...]).trimmingCharacters(in: .whitespaces)
            guard !key.isEmpty else { throw WebhookSignatureError(code: .headerMalformed, reason: "an empty key") }
            switch key {
            case "t":
                guard timestamp == nil else {
                    throw WebhookSignatureError(code: .headerMalformed, reason: "more than one t")
                }
                guard !itemValue.isEmpty, itemValue.utf8.count <= 18,
                    itemValue.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                    let seconds = Int64(itemValue)
                else { throw WebhookSignatureError(code: .headerMalformed, reason: "t is not decimal seconds") }
                timestamp = seconds
            case WebhookSignature.scheme:
                guard itemValue.utf8.count == 64, let bytes = Hex.decode(itemValue), bytes.count == 32 else {
                    throw WebhookSignatureError(code: .headerMalformed, reason: "v1 is not 64 hex digits")
                }
                v1.append(itemValue.lowercased())
            default:
                other.append(WebhookSignatureItem(key: key, value: itemValue))
            }
        }
        guard let timestamp else { throw WebhookSignatureError(code: .headerMalformed, reason: "no t") }
        guard !v1.isEmpty else {
            throw WebhookSignatureError(code: .noSupportedScheme, reason: "no v1 signature")
        }
        self.init(timestamp: timestamp, v1: v1, otherItems: other)
    }

    /// The header value: `t=…` then each `v1=…`, then the other items, comma-separated.
    public var description: String {
        (["t=\(timestamp)"] + v1.map { "\(WebhookSignature.scheme)=\($0)" } + otherItems.map { "\($0.key)=\($0.value)" })
            .joined(separator: ",")
    }
}

/// One `key=value` item of a signature header whose scheme this version does not interpret.
public struct WebhookSignatureItem: Sendable, Hashable {
    /// The scheme name, e.g. `v0`.
    public var key: String
    /// The item's value, as received.
    public var value: String

    public init(key: String, value: String) {
        self.key = key
        self.value = value
    }
}

/// Signs and verifies webhook bodies.
///
/// The gateway sends `Orchard-Signature: t=<unix>,v1=<hex>` where `<hex>` is the lowercase hex
/// HMAC-SHA256, keyed with the UTF-8 bytes of the endpoint's signing secret, of the text `"<t>."`
/// followed by the raw body bytes. During a secret rotation the header carries one `v1` per secret in force.
///
/// A merchant server verifies a delivery with the raw body (before any JSON parsing):
///
/// ```swift
/// let header = request.headers["Orchard-Signature"] ?? ""
/// try WebhookSignature.verify(header: header, body: rawBody, secret: "whsec_…")
/// ```
public enum WebhookSignature {
    /// The header's name: `Orchard-Signature`.
    public static let headerName = "Orchard-Signature"
    /// The signature scheme this version signs and verifies: `v1` (HMAC-SHA256, hex).
    public static let scheme = "v1"
    /// The default tolerance between the signed timestamp and the verifier's clock: 300 seconds.
    public static let defaultTolerance: TimeInterval = 300

    /// The lowercase hex HMAC-SHA256 of `"<timestamp>.<body>"` under the UTF-8 bytes of `secret`.
    public static func signature(secret: String, timestamp: Int64, body: Data) -> String {
        var message = Array("\(timestamp).".utf8)
        message.append(contentsOf: body)
        var key = Array(secret.utf8)
        defer { SecureBytes.zero(&key) }
        return Hex.encode(HMACSHA256.authenticationCode(key: key, message: message))
    }

    /// The header carrying one `v1` signature per secret, all over the same timestamp.
    public static func header(secrets: [String], timestamp: Int64, body: Data) -> WebhookSignatureHeader {
        WebhookSignatureHeader(
            timestamp: timestamp, v1: secrets.map { signature(secret: $0, timestamp: timestamp, body: body) })
    }

    /// The header for a body signed at `date` (whole seconds, rounded down).
    public static func header(secrets: [String], at date: Date, body: Data) -> WebhookSignatureHeader {
        header(secrets: secrets, timestamp: unixSeconds(date), body: body)
    }

    /// Verifies a received `Orchard-Signature` header value against the raw body.
    ///
    /// Succeeds when some `v1` signature equals the HMAC under some secret in `secrets` (compared in
    /// constant time) and the timestamp is within `tolerance` seconds of `now`, either way.
    ///
    /// - Parameters:
    ///   - header: the header's value as received.
    ///   - body: the raw request body, byte for byte.
    ///   - secrets: the endpoint's signing secrets (several while the merchant rotates its own copy).
    ///   - tolerance: how far the signed time may be from `now`, in seconds (default 300).
    ///   - now: the verifier's clock (injectable for tests).
    /// - Returns: the parsed header.
    /// - Throws: ``WebhookSignatureError`` with `signature_header_missing`, `signature_header_malformed`,
    ///   `signature_no_supported_scheme`, `signature_secret_missing`, `signature_mismatch` or
    ///   `signature_timestamp_out_of_tolerance` (checked after the signature).
    @discardableResult
    public static func verify(
        header: String, body: Data, secrets: [String], tolerance: TimeInterval = defaultTolerance,
        now: Date = Date()
    ) throws(WebhookSignatureError) -> WebhookSignatureHeader {
        let parsed = try WebhookSignatureHeader(parsing: header)
        let usable = secrets.filter { !$0.isEmpty }
        guard !usable.isEmpty else { throw WebhookSignatureError(code: .secretMissing) }
        var matched = false
        for secret in usable {
            let expected = Hex.decode(signature(secret: secret, timestamp: parsed.timestamp, body: body)) ?? []
            for candidate in parsed.v1 {
                // Every pair is compared, so the time taken does not say which one matched.
                if ConstantTime.equals(expected, Hex.decode(candidate) ?? []) { matched = true }
            }
        }
        guard matched else {
            throw WebhookSignatureError(code: .signatureMismatch, reason: "no v1 signature matches the body")
        }
        let age = now.timeIntervalSince1970 - Double(parsed.timestamp)
        guard abs(age) <= max(tolerance, 0) else {
            throw WebhookSignatureError(
                code: .timestampOutOfTolerance,
                reason: "signed \(Int64(age.rounded())) s from now, tolerance \(Int64(tolerance)) s")
        }
        return parsed
    }

    /// Verifies with a single secret; see ``verify(header:body:secrets:tolerance:now:)``.
    @discardableResult
    public static func verify(
        header: String, body: Data, secret: String, tolerance: TimeInterval = defaultTolerance, now: Date = Date()
    ) throws(WebhookSignatureError) -> WebhookSignatureHeader {
        try verify(header: header, body: body, secrets: [secret], tolerance: tolerance, now: now)
    }

    /// Whole seconds since 1970, rounded down.
    static func unixSeconds(_ date: Date) -> Int64 { Int64(date.timeIntervalSince1970.rounded(.down)) }
}
