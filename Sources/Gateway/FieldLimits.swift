import Foundation

/// Every limit on what a request may carry, in one place. The domain enforces each one; the HTTP layer reads the
/// same constant when it checks a field's shape; openapi.yaml states the same number, and
/// `Tests/GatewayHTTPTests/SpecAgreementTests.swift` compares every `maxLength`, `minLength`, `minimum`,
/// `maximum` and `maxItems` of the spec's requests with these.
///
/// A string's length is counted in Unicode scalars (as JSON Schema's `maxLength` counts code points), with
/// ``length(_:)``. A limit counted in bytes says so in its name. The one limit that is configuration rather
/// than a constant, `capture.delay_days`' maximum, is ``GatewayConfiguration/maxCaptureDelayDays``.
public enum FieldLimits {
    /// The length of `text` as every limit here counts it: Unicode scalars.
    public static func length(_ text: String) -> Int { text.unicodeScalars.count }

    /// Whether `text` is at most `limit` long.
    public static func fits(_ text: String, _ limit: Int) -> Bool { length(text) <= limit }

    /// `range` as the error messages say it ("1 to 100").
    public static func text(_ range: ClosedRange<Int>) -> String { "\(range.lowerBound) to \(range.upperBound)" }

    /// Whether the length of `text` is in `range`.
    public static func fits(_ text: String, _ range: ClosedRange<Int>) -> Bool { range.contains(length(text)) }

    // MARK: Characters

    /// What a text field may hold besides printable characters.
    public enum TextLayout: Sendable {
        /// One line (a name, a number, an id): no control character at all.
        case line
        /// Text that may run over lines (``multilineFields``): tab, line feed and carriage return too.
        case lines
    }

    /// The fields whose text may hold tabs and line breaks, by wire name (`metadata` for its values; its keys are
    /// one line). Every other text field is one line.
    public static let multilineFields: Set<String> = ["details", "reason", "cardholder.address", "metadata"]

    /// The layout of the field `name` (``multilineFields``).
    public static func layout(of name: String) -> TextLayout { multilineFields.contains(name) ? .lines : .line }

    /// The first character of `text` that no text field may hold, or nil: a C0 control (U+0000 to U+001F, but
    /// tab, line feed and carriage return in ``TextLayout/lines``), DEL (U+007F), or a bidirectional embedding,
    /// override or isolate (U+202A to U+202E, U+2066 to U+2069), which make text read otherwise than it is stored
    /// (in a log, a console page, Apple's payment sheet). PostgreSQL cannot store U+0000 at all, so it is refused
    /// before any store sees it, and both stores keep the same text.
    public static func forbiddenCharacter(in text: String, _ layout: TextLayout = .line) -> Unicode.Scalar? {
        text.unicodeScalars.first { scalar in
            switch scalar.value {
            case 0x09, 0x0A, 0x0D: layout == .line
            case 0x00...0x1F, 0x7F, 0x202A...0x202E, 0x2066...0x2069: true
            default: false
            }
        }
    }

    /// The rule of ``forbiddenCharacter(in:_:)`` for one-line fields as a regular expression: the `pattern`
    /// openapi.yaml states on each of them (SpecAgreementTests holds the two to each other).
    public static let linePattern = #"^[^\x00-\x1F\x7F\u202A-\u202E\u2066-\u2069]*$"#
    /// The same for fields that may run over lines (``multilineFields``): tab, line feed and carriage return pass.
    public static let linesPattern = #"^[^\x00-\x08\x0B\x0C\x0E-\x1F\x7F\u202A-\u202E\u2066-\u2069]*$"#

    /// Whether `text` holds no character ``forbiddenCharacter(in:_:)`` refuses.
    public static func isPlain(_ text: String, _ layout: TextLayout = .line) -> Bool {
        forbiddenCharacter(in: text, layout) == nil
    }

    /// `400 parameter_invalid` for `param` when `text` holds a character ``forbiddenCharacter(in:_:)`` refuses in
    /// that field (laid out as `layout`, by default ``layout(of:)``); the message names the character's code point.
    public static func checkCharacters(
        _ text: String?, param: String, layout: TextLayout? = nil
    ) throws(GatewayError) {
        let layout = layout ?? self.layout(of: param)
        guard let text, let scalar = forbiddenCharacter(in: text, layout) else { return }
        throw .invalid(
            param,
            String(format: "holds U+%04X: ", scalar.value)
                + (layout == .lines
                    ? "text without control characters (tabs and line breaks aside) or bidi overrides"
                    : "one line of text, without control characters or bidi overrides"))
    }

    /// `400 parameter_invalid` for `param` when `text` is longer than `limit` characters ("at most `limit`
    /// characters") or holds a character ``checkCharacters(_:param:layout:)`` refuses; nil passes.
    public static func checkText(_ text: String?, atMost limit: Int, param: String) throws(GatewayError) {
        if let text, !fits(text, limit) { throw .invalid(param, "at most \(limit) characters") }
        try checkCharacters(text, param: param)
    }

    /// Whether `text` has only printable ASCII characters and no space (`!` to `~`): merchant references and
    /// compatibility ids.
    public static func isPrintableASCII(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy { (0x21...0x7E).contains($0.value) }
    }

    // MARK: Listings

    /// A page's size (`limit`).
    public static let pageSize: ClosedRange<Int> = 1...100
    /// A page's size when the request names none.
    public static let defaultPageSize = 20
    /// An object id as a filter (`object_id` of the event listing).
    public static let identifier: ClosedRange<Int> = 1...64

    /// Whether `text` has the shape of an id (openapi.yaml's `Identifier`): ``identifier`` ASCII letters, digits
    /// or `_`.
    public static func isIdentifier(_ text: String) -> Bool {
        identifier.contains(text.utf8.count)
            && text.utf8.allSatisfy { $0 == UInt8(ascii: "_") || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0)
                || (0x61...0x7A).contains($0) }
    }

    // MARK: Payments

    /// A prime (`prime` of a payment request).
    public static let prime: ClosedRange<Int> = 1...64
    /// `order_number`, of a payment and as a listing filter.
    public static let orderNumber: ClosedRange<Int> = 1...50
    /// `details` of a payment.
    public static let details = 100
    /// Each cardholder field, by wire name (openapi.yaml's `Cardholder`).
    public static let cardholder: [String: Int] = [
        "name": 100, "email": 254, "phone_number": 20, "address": 200, "zip_code": 10, "national_id": 20,
    ]
    /// `reason` of a refund.
    public static let refundReason = 200
    /// How many `metadata` entries a request may carry.
    public static let metadataEntries = 20
    /// A `metadata` key.
    public static let metadataKey: ClosedRange<Int> = 1...40
    /// A `metadata` value.
    public static let metadataValue = 500

    /// A payment's `bank_transaction_id` (TapPay's unique merchant reference for the charge).
    public static let bankTransactionID: ClosedRange<Int> = 1...64
    /// The merchant alias TapPay-style calls may send as `merchant_id` (TapPay's `String(50)`).
    public static let merchantAlias: ClosedRange<Int> = 1...50
    /// TapPay's numeric app id (`PUT /v1/compat/tappay`, `setupSDK(12345, …)`): TapPay's `int`, a positive 32-bit
    /// integer.
    public static let tappayAppIDRange: ClosedRange<Int> = 1...2_147_483_647

    /// The TapPay numeric app id `text` spells (ASCII digits only, no sign or leading zero, in
    /// ``tappayAppIDRange``), or nil: how a numeric app id sent as `X-Orchard-App-Id` is told from `app_…`.
    public static func tappayAppID(_ text: String) -> Int? {
        let utf8 = text.utf8
        guard let first = utf8.first, first != UInt8(ascii: "0"), utf8.count <= 10,
            utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }), let number = Int(text),
            tappayAppIDRange.contains(number)
        else { return nil }
        return number
    }
    /// PayerMax's `merchantNo` (`PUT /v1/compat/payermax`; PayerMax's envelope allows 32).
    public static let payerMaxMerchantNo: ClosedRange<Int> = 1...32
    /// The merchant's RSA public key for PayerMax-compatible calls (`public_key_pem`), in bytes.
    public static let publicKeyPEM = 4096

    // MARK: Order sessions

    /// `out_trade_no`, of a session and as a listing filter.
    public static let outTradeNo: ClosedRange<Int> = 1...64
    /// `subject` of a session.
    public static let subject: ClosedRange<Int> = 1...256
    /// `user_id` of a session.
    public static let userID: ClosedRange<Int> = 1...64
    /// `expires_in_seconds` of a session.
    public static let sessionLifetimeSeconds: ClosedRange<Int> = 60...86_400

    // MARK: URLs, keys and certificates

    /// A URL the merchant gives (`notify_url`, the webhook endpoint's `url`, Apple's `validation_url`).
    public static let url = 2048
    /// A PEM certificate upload (`certificate_pem`, `certificate`).
    public static let certificatePEM: ClosedRange<Int> = 1...16_384
    /// An idempotency key, in bytes of printable ASCII.
    public static let idempotencyKeyBytes: ClosedRange<Int> = 1...255
    /// A merchant identifier (`merchant.com.example`).
    public static let merchantIdentifier: ClosedRange<Int> = 1...255
    /// A secret key as the console's sign-in takes it (characters, as the spec's `maxLength` counts them: a key is
    /// ASCII, so anything else is a wrong key, not a bad field).
    public static let secretKey = 100

    // MARK: Apple Pay on the Web

    /// A domain name (`domain`, each of `domains`), in bytes.
    public static let domainNameBytes: ClosedRange<Int> = 1...253
    /// How many Apple Pay domains a merchant may register.
    public static let applePayDomains = 100
    /// The domain association file, in bytes.
    public static let domainAssociationBytes: ClosedRange<Int> = 1...65_536
    /// An Apple Pay token's JSON (`POST /v1/tokens`, a session's pay), in bytes. The token library bounds its
    /// own input the same (`PaymentToken.maximumSize`, below this module; `SpecAgreementTests` compares them).
    public static let tokenBytes: ClosedRange<Int> = 1...65_536

    // MARK: Request bodies

    /// The BIN table's CSV, the body of `PUT /v1/bin-table`, in bytes (8 MiB): its body cap, where other routes
    /// have the server's (`--max-body-bytes`, 64 KiB by default), and the domain's bound on the table.
    public static let binTableBytes = 8 << 20
    /// The body cap of `PUT /v1/co-brand-table`, in bytes (1 MiB: 10000 ranges).
    public static let coBrandTableBytes = 1 << 20

    /// `display_name` of a merchant session.
    public static let displayName: ClosedRange<Int> = 1...64

    // MARK: Processor settings

    /// Each field of the processor settings (`PUT /v1/processor`): an account name, a key, a prefix.
    public static let processorSetting: ClosedRange<Int> = 1...1024

    // MARK: Card tables

    /// How many ranges a co-brand table may hold.
    public static let coBrandRanges = 10_000
}
