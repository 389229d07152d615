import ApplePayModel
import OrchardBase
import Foundation
import OrchardCrypto
import OrchardJSON

/// A Payment Processing key of a merchant: the private key (kept in secure memory; a stored key stays sealed
/// until asked for) and its certificate.
public struct ProcessingKeyMaterial: Sendable {
    /// The key's id in the merchant's key ring (`pk_…`).
    public var id: String
    /// PEM of the certificate Apple (or the sandbox PKI) issued for it.
    public var certificatePEM: String
    /// Gives the private key's PEM: the key itself, or the opening of its sealed form.
    private let opening: @Sendable () throws(GatewayError) -> SecureBytes

    /// A key whose private key is at hand.
    public init(id: String, privateKeyPEM: SecureBytes, certificatePEM: String) {
        self.init(id: id, certificatePEM: certificatePEM) { () throws(GatewayError) in privateKeyPEM }
    }

    /// A key whose private key is opened by `opening` (it unseals the stored key), only when
    /// ``privateKeyPEM()`` is called: a token opener that has this key id loaded never asks.
    public init(
        id: String, certificatePEM: String, opening: @escaping @Sendable () throws(GatewayError) -> SecureBytes
    ) {
        self.id = id
        self.certificatePEM = certificatePEM
        self.opening = opening
    }

    /// PEM of the EC private key (unsealed now when the key is sealed: each call opens it again).
    public func privateKeyPEM() throws(GatewayError) -> SecureBytes { try opening() }
}

/// A verified and decrypted Apple Pay token, as much of it as the gateway needs.
/// Secrets live in ``SecureBytes`` and are erased with ``erase()``; nothing here prints them.
public final class OpenedToken: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The token header's transactionId (hex): the replay key.
    public let transactionID: String
    /// The outer token's transactionIdentifier, when present.
    public let transactionIdentifier: String?
    /// paymentMethod.network (`Visa`, `MasterCard` …).
    public let network: String?
    /// paymentMethod.type (`debit`, `credit`, `prepaid`, `store`).
    public let methodType: String?
    /// applicationPrimaryAccountNumber (the device PAN); empty once erased.
    public var accountNumber: SecureBytes { secrets.withLock { $0.accountNumber } }
    /// applicationExpirationDate, `YYMMDD`.
    public let expirationDate: String
    /// ISO 4217 numeric currency code, e.g. `901`.
    public let currencyNumericCode: String
    /// transactionAmount in minor units.
    public let amount: Int64
    /// onlinePaymentCryptogram (3DS) or nil; nil once erased.
    public var cryptogram: SecureBytes? { secrets.withLock { $0.cryptogram } }
    /// eciIndicator, when given.
    public let eci: String?
    public let cardholderName: String?
    /// paymentDataType (`3DSecure` or `EMV`).
    public let paymentDataType: String

    public init(
        transactionID: String, transactionIdentifier: String?, network: String?, methodType: String?,
        accountNumber: SecureBytes, expirationDate: String, currencyNumericCode: String, amount: Int64,
        cryptogram: SecureBytes?, eci: String?, cardholderName: String?, paymentDataType: String
    ) {
        self.transactionID = transactionID
        self.transactionIdentifier = transactionIdentifier
        self.network = network
        self.methodType = methodType
        self.secrets = Locked(Secrets(accountNumber: accountNumber, cryptogram: cryptogram))
        self.expirationDate = expirationDate
        self.currencyNumericCode = currencyNumericCode
        self.amount = amount
        self.eci = eci
        self.cardholderName = cardholderName
        self.paymentDataType = paymentDataType
    }

    /// The first eight (or fewer) digits of the account number.
    public var bin: String { accountNumber.withUnsafeBytes { String(decoding: $0.prefix(8), as: UTF8.self) } }
    /// The account number's prefixes of 4 to 11 digits, for the BIN table's longest-prefix match.
    public var binPrefixes: [String] {
        accountNumber.withUnsafeBytes { digits in
            (4...11).filter { $0 < digits.count }.map { String(decoding: digits.prefix($0), as: UTF8.self) }
        }
    }
    /// The last four digits of the account number (read from the bytes: the whole number never becomes a
    /// `String`).
    public var lastFour: String { accountNumber.withUnsafeBytes { String(decoding: $0.suffix(4), as: UTF8.self) } }

    /// The network for messages: `paymentMethod.network` when it is a short name (1 to 20 ASCII letters or
    /// digits), else `this card network`. The field is outside the token's signature, so it is never echoed
    /// as it came.
    public var networkLabel: String {
        guard let network, (1...20).contains(network.utf8.count),
            network.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) })
        else { return "this card network" }
        return network
    }

    /// The account number and the cryptogram, in a lock only so that ``erase()`` can empty them.
    private struct Secrets {
        var accountNumber: SecureBytes
        var cryptogram: SecureBytes?
    }
    private let secrets: Locked<Secrets>

    /// Erases the account number and the cryptogram.
    public func erase() {
        secrets.withLock {
            $0.accountNumber.erase()
            $0.cryptogram?.erase()
        }
    }

    public var description: String { "OpenedToken(\(network ?? "?") \(String(bin.prefix(6)))******\(lastFour))" }

    /// Same as ``description``.
    public var debugDescription: String { description }

    /// Only what ``description`` shows: never the account number, cryptogram, ECI, expiry or cardholder.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "network": network as Any, "bin": String(bin.prefix(6)), "lastFour": lastFour, "amount": amount,
                "currencyNumericCode": currencyNumericCode,
            ], displayStyle: .class)
    }
}

/// An Apple Pay token's JSON as it was sent, with its one parse: the HTTP edge hands over the value it parsed
/// with the request body, and no later step parses the token again.
public struct SubmittedToken: Sendable {
    /// The token's JSON text, exactly as sent.
    public let bytes: Data
    /// The parse of ``bytes``; nil when they are not JSON (the opener then refuses them as a malformed token).
    public let parsed: JSONValue?

    /// A token whose parse the caller already has.
    public init(bytes: Data, parsed: JSONValue) {
        self.bytes = bytes
        self.parsed = parsed
    }

    /// A token parsed here, once.
    public init(_ bytes: Data) {
        self.bytes = bytes
        parsed = try? JSONValue.parse(bytes)
    }

    /// `paymentData.header.transactionId`, read without verifying it: what identifies a token (a retried request
    /// may carry a re-serialized copy).
    var transactionID: String? { parsed?["paymentData"]?["header"]?["transactionId"]?.string?.lowercased() }

    /// What stands for the token in an idempotency fingerprint: its `transactionId`, else its bytes' digest.
    var fingerprint: String { transactionID ?? Hex.encode(SHA256.hash([UInt8](bytes))) }
}

/// Verifies and decrypts Apple Pay tokens (the product's implementation is backed by ApplePayToken).
public protocol PaymentTokenOpener: Sendable {
    /// Verifies `token` (the `{paymentData, paymentMethod, transactionIdentifier}` JSON, with its parse)
    /// against the environment's trust anchor at `time` and decrypts it with whichever of `keys` it was
    /// encrypted for. Token errors are thrown with ``GatewayError/token(code:reason:)``: the token library's code.
    func open(
        token: SubmittedToken, environment: GatewayEnvironment, keys: [ProcessingKeyMaterial], at time: Date
    )
        throws(GatewayError) -> OpenedToken
}

/// ISO 4217 lookups (the product's implementation is backed by ApplePayModel's `Currency`).
public protocol CurrencyCatalog: Sendable {
    /// The numeric code (`"901"`) of an alphabetic code (`"TWD"`), nil when unknown.
    func numericCode(alphabetic: String) -> String?
    /// The alphabetic code of a numeric code, nil when unknown.
    func alphabeticCode(numeric: String) -> String?
}

/// What the payment request sent with a token decides about the prime.
public struct PaymentRequestTerms: Sendable, Hashable {
    /// Whether the request was a deferred payment (no amount check at pay time).
    public var isDeferred: Bool
    /// 90 seconds, or 30 days for deferred payments.
    public var primeLifetime: TimeInterval

    /// The total the sheet showed (minor units, ISO 4217 alphabetic), when the request fixed one: the token's
    /// amount and currency must equal it.
    public var totalAmount: Int64?
    public var totalCurrency: String?

    public init(isDeferred: Bool, primeLifetime: TimeInterval, totalAmount: Int64? = nil, totalCurrency: String? = nil)
    {
        self.isDeferred = isDeferred
        self.primeLifetime = primeLifetime
        self.totalAmount = totalAmount
        self.totalCurrency = totalCurrency
    }

    /// An immediate payment: 90 seconds.
    public static let immediate = PaymentRequestTerms(isDeferred: false, primeLifetime: 90)
}

/// Validates an Apple Pay payment request JSON (the product's implementation is backed by ApplePayModel's
/// `PaymentRequestValidator`).
public protocol PaymentRequestEvaluator: Sendable {
    /// The terms of `json`; throws `payment_request_invalid` when it is not a valid request.
    func evaluate(
        paymentRequest json: Data, merchantIdentifier: String, countryCode: String?
    )
        throws(GatewayError) -> PaymentRequestTerms
}

/// The sandbox wallet, as the HTTP layer needs it: real-format Apple Pay tokens for a sandbox merchant's test card,
/// which the gateway's own token path then takes like a device's (`POST /v1/sandbox/wallet/tokens`, the demo
/// store). GatewayAssembly's `SandboxWallet` is the one in use; the HTTP layer mounts the sandbox routes only when
/// it is given one.
public protocol SandboxTokenMinter: Sendable {
    /// The token JSON for `amount` (minor units) of `currency`, paid with the sandbox's test card named `card`,
    /// signed at `date`, for `merchant`'s active processing certificate. Another card is `parameter_invalid` on
    /// `card`; only a sandbox merchant gets tokens (`forbidden` otherwise).
    func mintToken(merchant: Merchant, amount: Int64, currency: Currency, card: String, at date: Date)
        throws(GatewayError) -> Data
}

/// The sandbox PKI, as the gateway needs it: generated once, persisted (encrypted), issuing processing keys.
public protocol SandboxKeyIssuer: Sendable {
    /// Generates a new sandbox PKI and returns its serialized form (it contains private keys).
    func generatePKI(now: Date) throws -> SecureBytes
    /// Issues a new processing key and its certificate for `merchantIdentifier` from the serialized PKI.
    func issueProcessingKey(
        pki: SecureBytes, merchantIdentifier: String, id: String, now: Date
    ) throws
        -> ProcessingKeyMaterial
    /// The PEM of the PKI's root, the sandbox trust anchor.
    func trustAnchorPEM(pki: SecureBytes) throws -> String
    /// The sandbox merchant's BIN table: a row for each test card, so its `card_info` is complete.
    var binEntries: [BINEntry] { get }
}
