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

    // MARK: Listings

    /// A page's size (`limit`).
    public static let pageSize: ClosedRange<Int> = 1...100
    /// A page's size when the request names none.
    public static let defaultPageSize = 20
    /// An object id as a filter (`object_id` of the event listing).
    public static let identifier: ClosedRange<Int> = 1...64

    // MARK: Payments

    /// A prime (`prime` of a payment request).
    public static let prime: ClosedRange<Int> = 1...64
    /// `order_number`, of a payment and as a listing filter.
    public static let orderNumber = 50
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
    /// A secret key as the console's sign-in takes it, in bytes.
    public static let secretKeyBytes = 100

    // MARK: Apple Pay on the Web

    /// A domain name (`domain`, each of `domains`), in bytes.
    public static let domainNameBytes: ClosedRange<Int> = 1...253
    /// How many Apple Pay domains a merchant may register.
    public static let applePayDomains = 100
    /// The domain association file, in bytes.
    public static let domainAssociationBytes: ClosedRange<Int> = 1...65_536
    /// `display_name` of a merchant session.
    public static let displayName: ClosedRange<Int> = 1...64

    // MARK: Processor settings

    /// Each field of the processor settings (`PUT /v1/processor`): an account name, a key, a prefix.
    public static let processorSetting: ClosedRange<Int> = 1...1024

    // MARK: Card tables

    /// How many ranges a co-brand table may hold.
    public static let coBrandRanges = 10_000
}
