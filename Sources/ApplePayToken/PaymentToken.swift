import Foundation
import OrchardCrypto
import OrchardJSON

/// The payment token format version.
public enum PaymentTokenVersion: String, Sendable {
    /// Elliptic-curve key agreement (ECDH P-256) and AES-256-GCM.
    case ecV1 = "EC_v1"
    /// RSA-OAEP key wrapping (SHA-256, MGF1-SHA-256) and AES-128-GCM.
    case rsaV1 = "RSA_v1"
}

/// The card that paid, as the wallet describes it (not authenticated by the signature).
public struct PaymentMethodInfo: Sendable, Hashable {
    /// A display name such as "Visa 1111".
    public var displayName: String?
    /// The card network, e.g. "Visa", "MasterCard".
    public var network: String?
    /// "debit", "credit", "prepaid" or "store".
    public var type: String?

    /// A payment method description.
    public init(displayName: String? = nil, network: String? = nil, type: String? = nil) {
        self.displayName = displayName
        self.network = network
        self.type = type
    }
}

/// A parsed Apple Pay payment token, not yet verified.
///
/// Accepts the whole token as `PKPaymentToken` and Apple Pay JS deliver it
/// (`{"paymentData": …, "paymentMethod": …, "transactionIdentifier": …}`) or its `paymentData` alone.
/// Every field is bounded in size; anything else is ``PaymentTokenError/Code/malformedToken``.
public struct PaymentToken: Sendable {
    /// The largest token JSON accepted, in bytes.
    public static let maximumSize = 64 * 1024

    /// The token's format version.
    public var version: PaymentTokenVersion
    /// `header.transactionId` (hex).
    public var transactionId: String
    /// `header.publicKeyHash` (base64 of the SHA-256 of the merchant public key's DER SubjectPublicKeyInfo).
    public var publicKeyHash: String
    /// `header.applicationData` (hex), when the payment request carried application data.
    public var applicationData: String?
    /// The top-level `transactionIdentifier`, when the whole token was given.
    public var transactionIdentifier: String?
    /// The top-level `paymentMethod`, when the whole token was given.
    public var paymentMethod: PaymentMethodInfo?

    /// The decoded `data`: ciphertext followed by the 16-byte GCM tag.
    package var ciphertext: [UInt8]
    /// The decoded `signature` (CMS SignedData, DER or BER).
    package var signature: [UInt8]
    /// The decoded `header.ephemeralPublicKey` (EC_v1) or `header.wrappedKey` (RSA_v1).
    package var keyMaterial: [UInt8]
    package var publicKeyHashBytes: [UInt8]
    package var transactionIdBytes: [UInt8]
    package var applicationDataBytes: [UInt8]

    /// The bounds of a token's JSON.
    private static let jsonLimits = JSONLimitSet(maxDepth: 8, maxNumberLength: 64)

    /// Parses token JSON.
    public init(json: Data) throws(PaymentTokenError) {
        try Self.checkSize(json.count)
        let root: JSONValue
        do {
            root = try JSONValue.parse(json, limits: Self.jsonLimits)
        } catch {
            throw PaymentTokenError(.malformedToken, "not JSON: \(error)")
        }
        try self.init(root: root)
    }

    /// Reads a token from its JSON's parse made by the caller (the HTTP edge parses the request body once), its
    /// text `byteCount` long: held to the same bounds as ``init(json:)-(Data)``'s own parse.
    public init(parsed root: JSONValue, byteCount: Int) throws(PaymentTokenError) {
        try Self.checkSize(byteCount)
        if let offset = Self.beyondLimits(root, depth: 0) {
            throw PaymentTokenError(.malformedToken, "not JSON: \(offset)")
        }
        try self.init(root: root)
    }

    private static func checkSize(_ count: Int) throws(PaymentTokenError) {
        guard count <= maximumSize else {
            throw PaymentTokenError(.malformedToken, "token larger than \(maximumSize) bytes")
        }
    }

    /// What in `value` a parse within ``jsonLimits`` would have refused, if anything.
    private static func beyondLimits(_ value: JSONValue, depth: Int) -> String? {
        switch value {
        case .object(let members):
            guard depth < jsonLimits.maxDepth else { return "nesting deeper than \(jsonLimits.maxDepth) levels" }
            for member in members { if let found = beyondLimits(member.value, depth: depth + 1) { return found } }
        case .array(let values):
            guard depth < jsonLimits.maxDepth else { return "nesting deeper than \(jsonLimits.maxDepth) levels" }
            for element in values { if let found = beyondLimits(element, depth: depth + 1) { return found } }
        case .number(let text) where text.utf8.count > jsonLimits.maxNumberLength: return "number too long"
        default: break
        }
        return nil
    }

    private init(root: JSONValue) throws(PaymentTokenError) {
        guard root.members != nil else { throw PaymentTokenError(.malformedToken, "the token is not a JSON object") }
        let paymentData: JSONValue
        if let nested = root["paymentData"] {
            paymentData = nested
            transactionIdentifier = try Self.optionalString(root, "transactionIdentifier", limit: 256)
            if let method = root["paymentMethod"], method != .null {
                guard method.members != nil else {
                    throw PaymentTokenError(.malformedToken, "paymentMethod is not an object")
                }
                paymentMethod = PaymentMethodInfo(
                    displayName: try Self.optionalString(method, "displayName", limit: 256),
                    network: try Self.optionalString(method, "network", limit: 256),
                    type: try Self.optionalString(method, "type", limit: 256))
            } else {
                paymentMethod = nil
            }
        } else {
            paymentData = root
            transactionIdentifier = nil
            paymentMethod = nil
        }
        guard paymentData.members != nil else {
            throw PaymentTokenError(.malformedToken, "paymentData is not an object")
        }
        let versionText = try Self.string(paymentData, "version", limit: 32)
        guard let version = PaymentTokenVersion(rawValue: versionText) else {
            throw PaymentTokenError(.unsupportedVersion, "version \"\(versionText.prefix(32))\" is not EC_v1 or RSA_v1")
        }
        self.version = version
        ciphertext = try Self.base64(paymentData, "data", limit: 48 * 1024)
        guard ciphertext.count >= AESGCM.tagLength else {
            throw PaymentTokenError(.malformedToken, "data is shorter than its tag")
        }
        signature = try Self.base64(paymentData, "signature", limit: 16 * 1024)
        guard let header = paymentData["header"], header.members != nil else {
            throw PaymentTokenError(.malformedToken, "missing header")
        }
        switch version {
        case .ecV1: keyMaterial = try Self.base64(header, "ephemeralPublicKey", limit: 512)
        case .rsaV1: keyMaterial = try Self.base64(header, "wrappedKey", limit: 2048)
        }
        guard !keyMaterial.isEmpty else { throw PaymentTokenError(.malformedToken, "empty key material") }
        publicKeyHash = try Self.string(header, "publicKeyHash", limit: 64)
        guard let hashBytes = Self.decodeBase64(publicKeyHash), hashBytes.count == 32 else {
            throw PaymentTokenError(.malformedToken, "publicKeyHash is not base64 of 32 bytes")
        }
        publicKeyHashBytes = hashBytes
        transactionId = try Self.string(header, "transactionId", limit: 256)
        guard let transactionBytes = Hex.decode(transactionId), !transactionBytes.isEmpty else {
            throw PaymentTokenError(.malformedToken, "transactionId is not hex")
        }
        transactionIdBytes = transactionBytes
        applicationData = try Self.optionalString(header, "applicationData", limit: 1024)
        if let applicationData {
            guard let bytes = Hex.decode(applicationData), !bytes.isEmpty else {
                throw PaymentTokenError(.malformedToken, "applicationData is not hex")
            }
            applicationDataBytes = bytes
        } else {
            applicationDataBytes = []
        }
    }

    /// Parses token JSON text.
    public init(json: String) throws(PaymentTokenError) {
        try self.init(json: Data(json.utf8))
    }

    /// The bytes the CMS signature covers: the ephemeral public key or wrapped key, the ciphertext,
    /// the transaction id and the application data (both hex-decoded).
    package var signedContent: [UInt8] {
        var content: [UInt8] = []
        content.reserveCapacity(
            keyMaterial.count + ciphertext.count + transactionIdBytes.count + applicationDataBytes.count)
        content += keyMaterial
        content += ciphertext
        content += transactionIdBytes
        content += applicationDataBytes
        return content
    }

    static func string(_ object: JSONValue, _ key: String, limit: Int) throws(PaymentTokenError) -> String {
        guard let value = object[key] else { throw PaymentTokenError(.malformedToken, "missing \(key)") }
        guard let text = value.string else { throw PaymentTokenError(.malformedToken, "\(key) is not a string") }
        guard text.utf8.count <= limit else {
            throw PaymentTokenError(.malformedToken, "\(key) longer than \(limit) bytes")
        }
        return text
    }

    static func optionalString(_ object: JSONValue, _ key: String, limit: Int) throws(PaymentTokenError) -> String? {
        guard let value = object[key], value != .null else { return nil }
        return try string(object, key, limit: limit)
    }

    static func base64(_ object: JSONValue, _ key: String, limit: Int) throws(PaymentTokenError) -> [UInt8] {
        let text = try string(object, key, limit: limit * 4 / 3 + 4)
        guard let bytes = decodeBase64(text) else { throw PaymentTokenError(.malformedToken, "\(key) is not base64") }
        return bytes
    }

    /// Strict base64 (RFC 4648 §4): the standard alphabet, a length that is a multiple of 4, at most two
    /// `=` only at the end, no whitespace; decoded straight from the string's UTF-8 bytes.
    static func decodeBase64(_ text: String) -> [UInt8]? {
        var text = text
        return text.withUTF8 { Base64Decoder.decode($0) }
    }
}

/// The base64 decoder for token fields.
package enum Base64Decoder {
    /// 6-bit values of the standard alphabet; 0xFF elsewhere.
    private static let table: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, character) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated() {
            table[Int(character)] = UInt8(index)
        }
        return table
    }()

    /// For the four positions of a quad, each character's value already shifted into place, or bit 31
    /// for a character outside the alphabet: one OR per character assembles the three bytes.
    private static let quadTables: [UInt32] = {
        var tables = [UInt32](repeating: 0x8000_0000, count: 4 * 256)
        for position in 0..<4 {
            for character in 0..<256 where table[character] != 0xFF {
                tables[position * 256 + character] = UInt32(table[character]) << (18 - 6 * position)
            }
        }
        return tables
    }()

    /// The bytes `input` encodes, or nil when it is not strict padded base64.
    package static func decode(_ input: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        let count = input.count
        guard count % 4 == 0 else { return nil }
        guard count > 0, let source = input.baseAddress else { return count == 0 ? [] : nil }
        var padding = 0
        if source[count - 1] == UInt8(ascii: "=") { padding += 1 }
        if source[count - 2] == UInt8(ascii: "=") { padding += 1 }
        let outputCount = count / 4 * 3 - padding
        return table.withUnsafeBufferPointer { table -> [UInt8]? in
            quadTables.withUnsafeBufferPointer { quadTables -> [UInt8]? in
                let values = table.baseAddress!
                let quads = quadTables.baseAddress!
                // Any character outside the alphabet sets a high bit of `invalid` (or of `invalidQuads`);
                // checked once at the end.
                var invalid: UInt8 = 0
                var invalidQuads: UInt32 = 0
                let output = [UInt8](unsafeUninitializedCapacity: outputCount) { out, initialized in
                    let target = out.baseAddress!
                    var written = 0
                    var index = 0
                    let fullQuads = padding == 0 ? count : count - 4
                    while index < fullQuads {
                        let word =
                            quads[Int(source[index])] | quads[256 + Int(source[index + 1])]
                            | quads[512 + Int(source[index + 2])] | quads[768 + Int(source[index + 3])]
                        invalidQuads |= word
                        target[written] = UInt8(truncatingIfNeeded: word >> 16)
                        target[written + 1] = UInt8(truncatingIfNeeded: word >> 8)
                        target[written + 2] = UInt8(truncatingIfNeeded: word)
                        written += 3
                        index += 4
                    }
                    if padding > 0 {
                        // The last quad: "xx==" or "xxx=".
                        let a = values[Int(source[index])]
                        let b = values[Int(source[index + 1])]
                        let c = padding == 1 ? values[Int(source[index + 2])] : 0
                        invalid |= a | b | c
                        let word = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6
                        target[written] = UInt8(truncatingIfNeeded: word >> 16)
                        written += 1
                        if padding == 1 {
                            target[written] = UInt8(truncatingIfNeeded: word >> 8)
                            written += 1
                        }
                    }
                    initialized = written
                }
                return invalid & 0xC0 == 0 && invalidQuads & 0x8000_0000 == 0 ? output : nil
            }
        }
    }
}
