import OrchardBase
import Foundation
import OrchardCrypto
import OrchardJSON

/// The decrypted payment data of a token.
///
/// The plaintext JSON stays in a zeroing `SecureBytes` buffer; each accessor decodes its field on demand.
/// `description`, `debugDescription` and `dump` show the PAN only as BIN + last four and never the
/// cryptogram. Call ``erase()`` once the cryptogram has been used.
public final class DecryptedPaymentData: Sendable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    // Held in a lock only so that ``erase()`` can empty it; readers take a copy (copy-on-write) and read that.
    private let plaintext: Locked<SecureBytes>

    /// Validates and keeps `plaintext` (Apple's payment data JSON).
    package init(plaintext: SecureBytes) throws(PaymentTokenError) {
        self.plaintext = Locked(plaintext)
        do {
            try Self.validate(plaintext)
        } catch {
            erase()
            throw error
        }
    }

    /// The plaintext as it is now (empty once erased).
    private var bytes: SecureBytes { plaintext.withLock { $0 } }

    /// Creates payment data from plaintext JSON bytes (copied into a zeroing buffer) after validating it.
    public convenience init(json: [UInt8]) throws(PaymentTokenError) {
        try self.init(plaintext: SecureBytes(json))
    }

    private static func validate(_ plaintext: SecureBytes) throws(PaymentTokenError) {
        guard plaintext.count <= 32 * 1024 else { throw PaymentTokenError(.decryptionFailed, "payment data too large") }
        let root: JSONValue
        do {
            root = try plaintext.withUnsafeBytes { buffer throws(JSONParseError) in
                try JSONValue.parse(buffer, limits: jsonLimits)
            }
        } catch {
            throw PaymentTokenError(.decryptionFailed, "the payment data is not JSON")
        }
        guard root.members != nil else {
            throw PaymentTokenError(.decryptionFailed, "the payment data is not a JSON object")
        }
        func requireString(
            _ value: JSONValue?, _ name: String, digits: ClosedRange<Int>? = nil
        ) throws(PaymentTokenError) {
            guard let text = value?.string else {
                throw PaymentTokenError(.decryptionFailed, "the payment data lacks \(name)")
            }
            if let digits {
                guard digits.contains(text.utf8.count), text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
                    throw PaymentTokenError(
                        .decryptionFailed, "\(name) is not \(digits.lowerBound)…\(digits.upperBound) digits")
                }
            }
        }
        try requireString(root["applicationPrimaryAccountNumber"], "applicationPrimaryAccountNumber", digits: 8...19)
        try requireString(root["applicationExpirationDate"], "applicationExpirationDate", digits: 6...6)
        try requireString(root["currencyCode"], "currencyCode", digits: 3...3)
        guard Self.amount(root["transactionAmount"]) != nil else {
            throw PaymentTokenError(.decryptionFailed, "transactionAmount is not a non-negative integer")
        }
        if let name = root["cardholderName"], name != .null, name.string == nil {
            throw PaymentTokenError(.decryptionFailed, "cardholderName is not a string")
        }
        try requireString(root["paymentDataType"], "paymentDataType")
        guard let details = root["paymentData"], details.members != nil else {
            throw PaymentTokenError(.decryptionFailed, "the payment data lacks its paymentData object")
        }
        switch root["paymentDataType"]?.string {
        case "3DSecure": try requireString(details["onlinePaymentCryptogram"], "onlinePaymentCryptogram")
        case "EMV": try requireString(details["emvData"], "emvData")
        default: break
        }
    }

    private static func amount(_ value: JSONValue?) -> Int64? {
        switch value {
        case .number(let text), .string(let text):
            guard !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
            return Int64(text)
        default: return nil
        }
    }

    private func root() -> JSONValue {
        bytes.withUnsafeBytes { buffer in (try? JSONValue.parse(buffer, limits: Self.jsonLimits)) ?? .object([]) }
    }

    /// Apple's payment data nests a few levels; its numbers are short.
    private static let jsonLimits = JSONLimitSet(maxDepth: 16, maxNumberLength: 64)

    private func field(_ name: String) -> String? { root()[name]?.string }
    private func detail(_ name: String) -> String? { root()["paymentData"]?[name]?.string }

    /// The device PAN (DPAN) or merchant token PAN. Treat as a secret.
    public var applicationPrimaryAccountNumber: String { field("applicationPrimaryAccountNumber") ?? "" }
    /// The card's expiration date, YYMMDD.
    public var applicationExpirationDate: String { field("applicationExpirationDate") ?? "" }
    /// The ISO 4217 numeric currency code, e.g. "901" (TWD), "840" (USD).
    public var currencyCode: String { field("currencyCode") ?? "" }
    /// The amount in the currency's minor units.
    public var transactionAmount: Int64 { Self.amount(root()["transactionAmount"]) ?? 0 }
    /// The cardholder's name, when present.
    public var cardholderName: String? { field("cardholderName") }
    /// The device manufacturer's identifier.
    public var deviceManufacturerIdentifier: String { field("deviceManufacturerIdentifier") ?? "" }
    /// "3DSecure" or "EMV".
    public var paymentDataType: String { field("paymentDataType") ?? "" }
    /// The 3-D Secure online payment cryptogram (base64). Treat as a secret; erase after use.
    public var onlinePaymentCryptogram: String? { detail("onlinePaymentCryptogram") }
    /// The ECI indicator, when present.
    public var eciIndicator: String? { detail("eciIndicator") }
    /// The EMV payment structure (base64), for EMV payments.
    public var emvData: String? { detail("emvData") }
    /// The encrypted PIN block (hex), for EMV payments.
    public var encryptedPINData: String? { detail("encryptedPINData") }

    /// The PAN with all but the BIN (first six) and the last four digits masked: `411111******1111`.
    public var maskedPAN: String { Self.mask(applicationPrimaryAccountNumber) }
    /// The first six digits of the PAN.
    public var bin: String { String(applicationPrimaryAccountNumber.prefix(6)) }
    /// The last four digits of the PAN.
    public var lastFour: String { String(applicationPrimaryAccountNumber.suffix(4)) }

    /// Whether ``erase()`` has been called.
    public var isErased: Bool { bytes.isEmpty }

    /// Masks a PAN to BIN + last four (all but the last four when it is too short to show a BIN).
    public static func mask(_ pan: String) -> String {
        let digits = Array(pan)
        guard digits.count > 4 else { return String(repeating: "*", count: digits.count) }
        let shown = digits.count >= 13 ? 6 : 0
        return String(digits.prefix(shown)) + String(repeating: "*", count: digits.count - shown - 4)
            + String(digits.suffix(4))
    }

    /// The payment data as JSON: every field, unknown ones included, in their original order. Unless
    /// `revealing`, the PAN is masked and the cryptogram material (`onlinePaymentCryptogram`, `eciIndicator`,
    /// `emvData`, `encryptedPINData`) is removed; when `revealing`, the exact decrypted bytes.
    public func json(revealing: Bool) -> Data {
        if revealing { return bytes.withUnsafeBytes { Data($0) } }
        guard case .object(var members) = root() else { return Data("{}".utf8) }
        for index in members.indices {
            switch members[index].key {
            case "applicationPrimaryAccountNumber":
                if let pan = members[index].value.string { members[index].value = .string(Self.mask(pan)) }
            case "paymentData":
                if case .object(let inner) = members[index].value {
                    let secret: Set<String> = [
                        "onlinePaymentCryptogram", "eciIndicator", "emvData", "encryptedPINData",
                    ]
                    members[index].value = .object(inner.filter { !secret.contains($0.key) })
                }
            default: break
            }
        }
        return Data(JSONValue.object(members).serialized)
    }

    /// Overwrites the plaintext with zeros; afterwards every accessor returns an empty value.
    public func erase() { plaintext.withLock { $0.erase() } }

    /// A summary without secrets: masked PAN, expiry, amount, currency and type.
    public var description: String {
        if isErased { return "DecryptedPaymentData(erased)" }
        return
            "DecryptedPaymentData(pan: \(maskedPAN), expiration: \(applicationExpirationDate), amount: \(transactionAmount), currency: \(currencyCode), type: \(paymentDataType))"
    }

    /// Same as ``description``.
    public var debugDescription: String { description }

    /// Shows only the non-secret fields.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "maskedPAN": maskedPAN, "applicationExpirationDate": applicationExpirationDate,
                "currencyCode": currencyCode, "transactionAmount": transactionAmount,
                "paymentDataType": paymentDataType,
            ], displayStyle: .class)
    }
}

extension DecryptedPaymentData {
    /// The device PAN (DPAN) or merchant token PAN as ASCII digits in a zeroing buffer, read straight from the
    /// plaintext without making a `String` of it. Empty once erased.
    public var primaryAccountNumberBytes: SecureBytes {
        secureStringField(["applicationPrimaryAccountNumber"]) ?? SecureBytes([UInt8]())
    }

    /// The 3-D Secure online payment cryptogram (base64 text) in a zeroing buffer, read straight from the
    /// plaintext without making a `String` of it; nil when absent (EMV payments) or erased. Erase after use.
    public var onlinePaymentCryptogramBytes: SecureBytes? {
        secureStringField(["paymentData", "onlinePaymentCryptogram"])
    }

    /// The unescaped bytes of the string at `path` (object keys from the root), copied from the plaintext into
    /// a new zeroing buffer; nil when the path is absent or not a string.
    private func secureStringField(_ path: [String]) -> SecureBytes? { SecureJSON.string(at: path, in: bytes) }
}
