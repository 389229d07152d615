import OrchardBase
import Foundation
import OrchardCrypto
import OrchardJSON

/// The decrypted payment data of a token.
///
/// The plaintext is parsed once, when the data is made. Its secrets (the DPAN, the online payment cryptogram, the
/// EMV data and the encrypted PIN block) go from the plaintext straight into zeroing `SecureBytes` buffers:
/// no `String` and no `Data` ever holds them. The other fields are read into plain values. `description`,
/// `debugDescription` and `dump` show the PAN only as BIN + last four and never the cryptogram. Call
/// ``erase()`` once the cryptogram has been used: it zeros the plaintext and every secret.
public final class DecryptedPaymentData: Sendable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// The plaintext and the secrets read from it, held in a lock only so that ``erase()`` can zero them;
    /// readers take a copy (copy-on-write) and read that.
    private struct Secrets {
        var plaintext: SecureBytes
        var accountNumber = SecureBytes([UInt8]())
        var cryptogram: SecureBytes?
        var emvData: SecureBytes?
        var encryptedPINData: SecureBytes?

        mutating func erase() {
            plaintext.erase()
            accountNumber.erase()
            cryptogram?.erase()
            emvData?.erase()
            encryptedPINData?.erase()
        }
    }
    private let secrets: Locked<Secrets>

    /// The card's expiration date, YYMMDD.
    public let applicationExpirationDate: String
    /// The ISO 4217 numeric currency code, e.g. "901" (TWD), "840" (USD).
    public let currencyCode: String
    /// The amount in the currency's minor units.
    public let transactionAmount: Int64
    /// The cardholder's name, when present.
    public let cardholderName: String?
    /// The device manufacturer's identifier.
    public let deviceManufacturerIdentifier: String
    /// "3DSecure" or "EMV".
    public let paymentDataType: String
    /// The ECI indicator, when present.
    public let eciIndicator: String?

    /// The members whose string values are secrets, read into ``SecureBytes`` and never decoded to `String`.
    private enum Secret {
        static let accountNumber = "applicationPrimaryAccountNumber", cryptogram = "onlinePaymentCryptogram"
        static let emvData = "emvData", encryptedPINData = "encryptedPINData"
        static let all: Set<String> = [accountNumber, cryptogram, emvData, encryptedPINData]
        /// Removed from ``DecryptedPaymentData/json(revealing:)``'s `paymentData` unless revealing.
        static let material: Set<String> = [cryptogram, "eciIndicator", emvData, encryptedPINData]
    }

    /// Apple's payment data nests a few levels; its numbers are short.
    private static let jsonLimits = JSONLimitSet(maxDepth: 16, maxNumberLength: 64)

    /// Validates `plaintext` (Apple's payment data JSON), parsing it once, and keeps it.
    package init(plaintext: SecureBytes) throws(PaymentTokenError) {
        var secrets = Secrets(plaintext: plaintext)
        do throws(PaymentTokenError) {
            let root = try Self.parse(plaintext)
            func string(_ value: JSONValue?, _ name: String, digits: ClosedRange<Int>? = nil)
                throws(PaymentTokenError) -> String
            {
                guard let text = value?.string else {
                    throw PaymentTokenError(.decryptionFailed, "the payment data lacks \(name)")
                }
                if let digits, !Self.isDigits(text.utf8, digits) {
                    throw PaymentTokenError(
                        .decryptionFailed, "\(name) is not \(digits.lowerBound)…\(digits.upperBound) digits")
                }
                return text
            }
            /// The secret at `member` of `object`, unescaped from the plaintext into a zeroing buffer.
            func secret(_ object: JSONValue, _ member: String) throws(PaymentTokenError) -> SecureBytes? {
                guard let found = object.members?.first(where: { $0.key == member }) else { return nil }
                guard case .string = found.value, let range = found.valueRange, range.count >= 2 else {
                    throw PaymentTokenError(.decryptionFailed, "\(member) is not a string")
                }
                return plaintext.withUnsafeBytes { buffer -> SecureBytes? in
                    var unescaped = [UInt8]()
                    unescaped.reserveCapacity(range.count)
                    defer { SecureBytes.zero(&unescaped) }
                    let inner = (range.lowerBound + 1)..<(range.upperBound - 1)
                    guard SecureJSONScanner.unescape(buffer, inner, into: &unescaped) else { return nil }
                    return SecureBytes(unescaped)
                }
            }
            guard let accountNumber = try secret(root, Secret.accountNumber) else {
                throw PaymentTokenError(.decryptionFailed, "the payment data lacks \(Secret.accountNumber)")
            }
            secrets.accountNumber = accountNumber
            guard accountNumber.withUnsafeBytes({ Self.isDigits($0, 8...19) }) else {
                throw PaymentTokenError(.decryptionFailed, "\(Secret.accountNumber) is not 8…19 digits")
            }
            applicationExpirationDate = try string(
                root["applicationExpirationDate"], "applicationExpirationDate", digits: 6...6)
            currencyCode = try string(root["currencyCode"], "currencyCode", digits: 3...3)
            guard let amount = Self.amount(root["transactionAmount"]) else {
                throw PaymentTokenError(.decryptionFailed, "transactionAmount is not a non-negative integer")
            }
            transactionAmount = amount
            switch root["cardholderName"] {
            case nil, .null?: cardholderName = nil
            case .string(let name)?: cardholderName = name
            default: throw PaymentTokenError(.decryptionFailed, "cardholderName is not a string")
            }
            deviceManufacturerIdentifier = root["deviceManufacturerIdentifier"]?.string ?? ""
            paymentDataType = try string(root["paymentDataType"], "paymentDataType")
            guard let details = root["paymentData"], details.members != nil else {
                throw PaymentTokenError(.decryptionFailed, "the payment data lacks its paymentData object")
            }
            eciIndicator = details["eciIndicator"]?.string
            secrets.cryptogram = try secret(details, Secret.cryptogram)
            secrets.emvData = try secret(details, Secret.emvData)
            secrets.encryptedPINData = try secret(details, Secret.encryptedPINData)
            switch paymentDataType {
            case "3DSecure" where secrets.cryptogram == nil:
                throw PaymentTokenError(.decryptionFailed, "the payment data lacks \(Secret.cryptogram)")
            case "EMV" where secrets.emvData == nil:
                throw PaymentTokenError(.decryptionFailed, "the payment data lacks \(Secret.emvData)")
            default: break
            }
        } catch {
            secrets.erase()
            throw error
        }
        self.secrets = Locked(secrets)
    }

    /// Creates payment data from plaintext JSON bytes (copied into a zeroing buffer) after validating it.
    public convenience init(json: [UInt8]) throws(PaymentTokenError) {
        try self.init(plaintext: SecureBytes(json))
    }

    /// The plaintext's one parse: its secrets stay undecoded (``JSONValue/parse(_:limits:opaqueKeys:)``).
    private static func parse(_ plaintext: SecureBytes) throws(PaymentTokenError) -> JSONValue {
        guard plaintext.count <= 32 * 1024 else { throw PaymentTokenError(.decryptionFailed, "payment data too large") }
        let root: JSONValue
        do {
            root = try plaintext.withUnsafeBytes { buffer throws(JSONParseError) in
                try JSONValue.parse(buffer, limits: jsonLimits, opaqueKeys: Secret.all)
            }
        } catch {
            throw PaymentTokenError(.decryptionFailed, "the payment data is not JSON")
        }
        guard root.members != nil else {
            throw PaymentTokenError(.decryptionFailed, "the payment data is not a JSON object")
        }
        return root
    }

    private static func isDigits<Bytes: Collection>(_ bytes: Bytes, _ count: ClosedRange<Int>) -> Bool
    where Bytes.Element == UInt8 {
        count.contains(bytes.count) && bytes.allSatisfy { (0x30...0x39).contains($0) }
    }

    private static func amount(_ value: JSONValue?) -> Int64? {
        switch value {
        case .number(let text), .string(let text):
            guard !text.isEmpty, isDigits(text.utf8, 1...19) else { return nil }
            return Int64(text)
        default: return nil
        }
    }

    private var current: Secrets { secrets.withLock { $0 } }

    /// The device PAN (DPAN) or merchant token PAN as ASCII digits in a zeroing buffer; empty once erased.
    public var primaryAccountNumberBytes: SecureBytes { current.accountNumber }

    /// The 3-D Secure online payment cryptogram (base64 text) in a zeroing buffer; nil when absent (EMV
    /// payments) or erased. Erase after use.
    public var onlinePaymentCryptogramBytes: SecureBytes? {
        current.cryptogram.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The EMV payment structure (base64 text), for EMV payments, in a zeroing buffer; nil when absent or erased.
    public var emvDataBytes: SecureBytes? { current.emvData.flatMap { $0.isEmpty ? nil : $0 } }

    /// The encrypted PIN block (hex text), for EMV payments, in a zeroing buffer; nil when absent or erased.
    public var encryptedPINDataBytes: SecureBytes? {
        current.encryptedPINData.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The PAN with all but the BIN (first six) and the last four digits masked: `411111******1111`.
    public var maskedPAN: String { primaryAccountNumberBytes.withUnsafeBytes { Self.mask($0) } }
    /// The first six digits of the PAN.
    public var bin: String {
        primaryAccountNumberBytes.withUnsafeBytes { String(decoding: $0.prefix(6), as: UTF8.self) }
    }
    /// The last four digits of the PAN.
    public var lastFour: String {
        primaryAccountNumberBytes.withUnsafeBytes { String(decoding: $0.suffix(4), as: UTF8.self) }
    }

    /// Whether ``erase()`` has been called.
    public var isErased: Bool { current.plaintext.isEmpty }

    /// The plaintext and secret allocations, whole (past their count once erased), for tests that check
    /// ``erase()`` zeroed them; valid while this value lives.
    package var secretAllocations: [UnsafeRawBufferPointer] {
        let held = current
        return [held.plaintext, held.accountNumber, held.cryptogram, held.emvData, held.encryptedPINData]
            .compactMap { $0?.allocation }
    }

    /// Masks PAN digits to BIN + last four (all but the last four when too short to show a BIN).
    public static func mask<Digits: Collection>(_ digits: Digits) -> String where Digits.Element == UInt8 {
        guard digits.count > 4 else { return String(repeating: "*", count: digits.count) }
        let shown = digits.count >= 13 ? 6 : 0
        return String(decoding: digits.prefix(shown), as: UTF8.self)
            + String(repeating: "*", count: digits.count - shown - 4)
            + String(decoding: digits.suffix(4), as: UTF8.self)
    }

    /// The payment data as JSON: every field, unknown ones included, in their original order. Unless
    /// `revealing`, the PAN is masked and the cryptogram material (`onlinePaymentCryptogram`, `eciIndicator`,
    /// `emvData`, `encryptedPINData`) is removed; when `revealing`, the exact decrypted bytes.
    public func json(revealing: Bool) -> Data {
        let plaintext = current.plaintext
        if revealing { return plaintext.withUnsafeBytes { Data($0) } }
        guard !plaintext.isEmpty, case .object(var members) = try? Self.parse(plaintext) else {
            return Data("{}".utf8)
        }
        for index in members.indices {
            switch members[index].key {
            case Secret.accountNumber: members[index].value = .string(maskedPAN)
            case "paymentData":
                if case .object(let inner) = members[index].value {
                    members[index].value = .object(inner.filter { !Secret.material.contains($0.key) })
                }
            default: break
            }
        }
        return Data(JSONValue.object(members).serialized)
    }

    /// Overwrites the plaintext and every secret with zeros; afterwards the secret accessors return empty
    /// values. (A copy a caller took keeps its bytes until that copy is erased.)
    public func erase() { secrets.withLock { $0.erase() } }

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
