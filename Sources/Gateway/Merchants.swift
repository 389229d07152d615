import Foundation
import OrchardCrypto

/// A merchant, as the API shows it (no secrets).
public struct Merchant: Sendable, Hashable, Codable {
    public var id: String
    public var environment: GatewayEnvironment
    public var name: String
    public var countryCode: String
    public var merchantIdentifiers: [String]
    public var allowedCurrencies: [String]
    public var allowedNetworks: [String]
    public var webOrigins: [String]
    /// The domains registered for Apple Pay on the Web (`PUT /v1/apple-pay/domains`).
    public var applePayDomains: [String]
    /// The alias TapPay-style calls may send as `merchant_id` instead of ``id`` (`PUT /v1/compat/tappay`).
    public var tappayMerchantAlias: String?
    /// TapPay's numeric app id (`PUT /v1/compat/tappay`), which orchard.js's `setupSDK` takes as the app id.
    public var tappayAppID: Int?
    /// The PayerMax registration (`PUT /v1/compat/payermax`), if any.
    public var payerMax: PayerMaxRegistration?
    public var webhookURL: String?
    /// Whether deliveries to ``webhookURL`` go out; while false its events stay pending.
    public var webhookEnabled: Bool
    public var appID: String
    /// The public part of the secret key (`sk_live_` and its key id): names it without revealing it.
    public var secretKeyPrefix: String
    /// While a rotated secret key still works: when its overlap ends.
    public var previousSecretKeyExpiresAt: Date?
    /// When the merchant was disabled; nil while it is enabled.
    public var disabledAt: Date?
    public var createdAt: Date

    /// Whether the merchant is disabled (its requests answered `merchant_disabled`).
    public var isDisabled: Bool { disabledAt != nil }

    init(_ record: MerchantRecord) {
        id = record.id
        environment = record.environment
        name = record.name
        countryCode = record.countryCode
        merchantIdentifiers = record.merchantIdentifiers
        allowedCurrencies = record.allowedCurrencies
        allowedNetworks = record.allowedNetworks
        webOrigins = record.webOrigins
        applePayDomains = record.applePayDomains ?? []
        tappayMerchantAlias = record.tappayMerchantAlias
        tappayAppID = record.tappayAppID
        payerMax = record.payerMax
        webhookURL = record.webhookURL
        webhookEnabled = record.webhookEnabled
        appID = record.appID
        secretKeyPrefix = MerchantRegistry.secretKeyPrefix(record.environment) + record.secretKeyID
        previousSecretKeyExpiresAt = record.previousSecretKeyID == nil ? nil : record.previousSecretKeyExpiresAt
        disabledAt = record.disabledAt
        createdAt = record.createdAt
    }

    /// Whether `merchantID`, as a TapPay-style call sends it, names this merchant: its id or its alias.
    public func isNamed(byTapPayMerchantID merchantID: String) -> Bool {
        merchantID == id || (tappayMerchantAlias.map { $0 == merchantID } ?? false)
    }

    /// Whether the merchant accepts `currency` (alphabetic); an empty list accepts every currency.
    public func accepts(currency: String) -> Bool { allowedCurrencies.isEmpty || allowedCurrencies.contains(currency) }

    /// Whether the merchant accepts `network`; an empty list accepts every network.
    public func accepts(network: String?) -> Bool {
        allowedNetworks.isEmpty
            || allowedNetworks.contains { $0.caseInsensitiveCompare(network ?? "") == .orderedSame }
    }
}

/// What a new merchant is made of.
public struct MerchantSpec: Sendable, Hashable {
    public var name: String
    public var environment: GatewayEnvironment
    public var countryCode: String
    public var merchantIdentifiers: [String]
    public var allowedCurrencies: [String]
    public var allowedNetworks: [String]
    public var webOrigins: [String]

    public init(
        name: String, environment: GatewayEnvironment, countryCode: String = "TW", merchantIdentifiers: [String],
        allowedCurrencies: [String] = [], allowedNetworks: [String] = [], webOrigins: [String] = []
    ) {
        self.name = name
        self.environment = environment
        self.countryCode = countryCode
        self.merchantIdentifiers = merchantIdentifiers
        self.allowedCurrencies = allowedCurrencies
        self.allowedNetworks = allowedNetworks
        self.webOrigins = webOrigins
    }
}

/// A merchant's credentials: shown once at creation (and, in sandbox, again by `orchard merchant show`).
public struct MerchantCredentials: Sendable, Hashable, Codable {
    public var merchantID: String
    /// Public: identifies the merchant's apps.
    public var appID: String
    /// For clients (iOS/web SDK): safe to ship in an app; only opens client routes.
    public var appKey: String
    /// For the merchant's server (`sk_test_…`/`sk_live_…`): never ship it.
    public var secretKey: String
}

/// The contexts that bind sealed values to their records.
public enum SealingContext {
    public static func webhookSecrets(merchantID: String) -> String { "webhook_secrets:\(merchantID)" }
    public static func credentials(merchantID: String) -> String { "merchant_credentials:\(merchantID)" }
    public static func processingKey(id: String) -> String { "processing_key:\(id)" }
    public static func identityKey(merchantID: String) -> String { "identity_key:\(merchantID)" }
    public static func primeCardData(primeHash: String) -> String { "prime_card:\(primeHash)" }
    public static func paymentCardData(paymentID: String) -> String { "payment_card:\(paymentID)" }
    public static func setting(_ name: String) -> String { "setting:\(name)" }
    public static func processorSecrets(merchantID: String, version: Int) -> String {
        "processor_secrets:\(merchantID):\(version)"
    }
}

/// Random identifiers and key hashing.
package enum Identifiers {
    package static func make(_ prefix: String, _ count: Int = 24) throws(GatewayError) -> String {
        do { return prefix + (try SecureRandom.alphanumeric(count)) } catch {
            throw GatewayError(.internalError, "random generator failed")
        }
    }

    /// The 36 digits of ``ordered(_:_:at:)``'s time: digits and lower-case letters, which sort alike by bytes
    /// (SQLite) and under PostgreSQL's locale collations, which fold case.
    private static let timeDigits = Array("0123456789abcdefghijklmnopqrstuvwxyz".utf8)
    /// How many digits the time takes: 36⁹ milliseconds is over 3,000 years.
    private static let timeDigitCount = 9

    /// An identifier of a record that guards nothing (a payment, a refund, an event): `prefix`, then `time` in
    /// Unix milliseconds as 9 base-36 digits, then random alphanumerics up to `count`. Later times sort after
    /// earlier ones, so the rows a batch inserts land at the end of the indexes on these ids (a few pages
    /// written per commit, not one per row). Secrets and lookup keys stay ``make(_:_:)``: wholly random.
    package static func ordered(_ prefix: String, _ count: Int = 24, at time: Date) throws(GatewayError) -> String {
        var millis = UInt64(max(0, time.unixMilliseconds))
        var digits = [UInt8](repeating: timeDigits[0], count: timeDigitCount)
        for position in digits.indices.reversed() {
            digits[position] = timeDigits[Int(millis % UInt64(timeDigits.count))]
            millis /= UInt64(timeDigits.count)
        }
        return try make(prefix + String(decoding: digits, as: UTF8.self), count - timeDigitCount)
    }

    package static func sha256Hex(_ text: String) -> String { Hex.encode(SHA256.hash(Array(text.utf8))) }

    /// Whether `candidate` hashes to `expectedHex`, compared in constant time.
    package static func matches(_ candidate: String, hashHex expectedHex: String) -> Bool {
        guard let expected = Hex.decode(expectedHex) else { return false }
        return ConstantTime.equals(SHA256.hash(Array(candidate.utf8)), expected)
    }
}

/// Merchants, their credentials, keys, webhook endpoint and tables.
public final class MerchantRegistry: Sendable {
    let store: any Store
    let cipher: EnvelopeCipher
    let clock: any GatewayClock
    /// Names (lower-case) refused as Apple Pay domains with the names below them
    /// (``GatewayConfiguration/deniedApplePayDomains``).
    let deniedApplePayDomains: [String]

    /// Apple's own domains: no merchant registers them, or a name below them, as its Apple Pay domain.
    public static let appleOwnedDomains = ["apple.com", "icloud.com", "me.com", "mac.com", "apple.com.cn", "icloud.com.cn"]

    /// How many characters of a secret key are public: its prefix (`sk_live_`, `sk_test_`) and its 12-character
    /// key id, which finds the merchant and names the key in the audit log.
    public static let secretKeyPublicLength = 20

    public init(
        store: any Store, cipher: EnvelopeCipher, clock: any GatewayClock,
        deniedApplePayDomains: [String] = MerchantRegistry.appleOwnedDomains
    ) {
        self.store = store
        self.cipher = cipher
        self.clock = clock
        self.deniedApplePayDomains = deniedApplePayDomains.compactMap(ApplePayDomain.normalized)
    }

    /// Creates a merchant with fresh credentials, returned once.
    public func create(
        _ spec: MerchantSpec, scope requestScope: RequestScope = .unattributed
    ) throws(GatewayError) -> (Merchant, MerchantCredentials) {
        let (record, credentials) = try newMerchant(spec)
        try gatewayThrowing { try store.write { tx in try Self.insert(record, in: tx, by: requestScope.actor) } }
        return (Merchant(record), credentials)
    }

    /// Inserts a merchant made by ``newMerchant(_:)`` in `tx`, with its `merchant.create` audit entry by `actor`.
    static func insert(_ record: MerchantRecord, in tx: any StoreTransaction, by actor: AuditActor) throws {
        try tx.insertMerchant(record)
        try AuditLog.record(
            in: tx, merchantID: record.id, action: AuditLog.Action.merchantCreate,
            detail: ["environment": record.environment.rawValue, "name": record.name], at: record.createdAt,
            actor: actor)
    }

    /// A new merchant's record (its secrets sealed, its keys hashed) and its credentials, checked against `spec`'s
    /// rules; nothing is stored yet.
    func newMerchant(_ spec: MerchantSpec) throws(GatewayError) -> (MerchantRecord, MerchantCredentials) {
        guard !spec.name.isEmpty, spec.name.count <= 100 else { throw .invalid("name", "1 to 100 characters") }
        try FieldLimits.checkCharacters(spec.name, param: "name")
        guard spec.countryCode.count == 2 else { throw .invalid("country_code", "ISO 3166 alpha-2") }
        guard !spec.merchantIdentifiers.isEmpty, spec.merchantIdentifiers.count <= 20,
            spec.merchantIdentifiers.allSatisfy({ FieldLimits.fits($0, FieldLimits.merchantIdentifier) })
        else { throw .invalid("merchant_identifiers", "1 to 20 identifiers of at most 255 characters") }
        guard spec.allowedCurrencies.allSatisfy({ $0.count == 3 && $0.allSatisfy { $0.isASCII && $0.isLetter } }) else {
            throw .invalid("allowed_currencies", "ISO 4217 alphabetic codes")
        }
        guard spec.webOrigins.count <= 50, spec.allowedNetworks.count <= 20 else {
            throw .invalid("web_origins", "at most 50 origins and 20 networks")
        }
        try Self.checkWebOrigins(spec.webOrigins)
        let id = try Identifiers.make("mch_", 16)
        let appID = try Identifiers.make("app_", 16)
        let appKey = try Self.newAppKey()
        let (secretKeyID, secretKey) = try Self.newSecretKey(spec.environment)
        let credentials = MerchantCredentials(merchantID: id, appID: appID, appKey: appKey, secretKey: secretKey)
        // A signing secret from the start, so events sent to a session's notify_url are signed even before a
        // webhook endpoint is configured (setWebhookEndpoint rotates it).
        let webhookSecret = try WebhookSecretRing.newSecret()
        let webhookSecretsSealed = try cipher.seal(
            try gatewayThrowing {
                try WebhookSecretRing(entries: [.init(secret: webhookSecret, retiresAt: nil)]).plaintext()
            },
            context: SealingContext.webhookSecrets(merchantID: id))
        var sealedCredentials: Data?
        if spec.environment == .sandbox {
            // Stored format (sealed credentials), read back by Codable: its bytes stay as they are.
            let json = try gatewayThrowing { try JSONEncoder().encode(credentials) }
            sealedCredentials = try cipher.seal(Array(json), context: SealingContext.credentials(merchantID: id))
        }
        let record = MerchantRecord(
            id: id, environment: spec.environment, name: spec.name, countryCode: spec.countryCode.uppercased(),
            merchantIdentifiers: spec.merchantIdentifiers,
            allowedCurrencies: spec.allowedCurrencies.map { $0.uppercased() },
            allowedNetworks: spec.allowedNetworks, webOrigins: spec.webOrigins, webhookURL: nil,
            webhookSecretsSealed: webhookSecretsSealed, appID: appID, appKeyHash: Identifiers.sha256Hex(appKey),
            secretKeyID: secretKeyID, secretKeyHash: Identifiers.sha256Hex(secretKey),
            credentialsSealed: sealedCredentials, identityCertificatePEM: nil, identityKeySealed: nil,
            createdAt: clock.now())
        return (record, credentials)
    }

    /// The merchant whose app id and app key these are (client routes); `merchant_disabled` once the right
    /// credentials are given for a disabled merchant. `appID` is the app id (`app_…`) or the digits of the
    /// merchant's TapPay numeric app id (``Merchant/tappayAppID``).
    public func authenticateClient(appID: String, appKey: String) throws(GatewayError) -> Merchant {
        let record = try gatewayThrowing {
            try store.read { tx in
                if let number = FieldLimits.tappayAppID(appID) { return try tx.merchant(tappayAppID: number) }
                return try tx.merchant(appID: appID)
            }
        }
        guard let record, Identifiers.matches(appKey, hashHex: record.appKeyHash) else {
            throw GatewayError(.invalidCredentials, "unknown app id or wrong app key")
        }
        return try Self.enabled(record)
    }

    /// The merchant whose secret key this is (server routes).
    public func authenticateServer(secretKey: String) throws(GatewayError) -> Merchant {
        Merchant(try authenticatedSecretKey(secretKey).record)
    }

    /// The enabled merchant's record whose secret key this is, with the key's id: its current key, or the key
    /// the last rotation replaced, within its overlap. `invalid_credentials` for any other string,
    /// `merchant_disabled` for the right key of a disabled merchant.
    func authenticatedSecretKey(_ secretKey: String) throws(GatewayError) -> (record: MerchantRecord, keyID: String) {
        let utf8 = Array(secretKey.utf8)
        guard utf8.count == 52, secretKey.hasPrefix("sk_test_") || secretKey.hasPrefix("sk_live_") else {
            throw GatewayError(.invalidCredentials, "malformed secret key")
        }
        let keyID = String(decoding: utf8[8..<Self.secretKeyPublicLength], as: UTF8.self)
        let record = try gatewayThrowing { try store.read { try $0.merchant(secretKeyID: keyID) } }
        guard let record, let key = record.workingSecretKey(keyID, at: clock.now()),
            Identifiers.matches(secretKey, hashHex: key.hash)
        else { throw GatewayError(.invalidCredentials, "unknown secret key") }
        _ = try Self.enabled(record)
        return (record, keyID)
    }

    /// The merchant of `record`, unless it is disabled (`merchant_disabled`).
    static func enabled(_ record: MerchantRecord) throws(GatewayError) -> Merchant {
        guard record.disabledAt == nil else {
            throw GatewayError(.merchantDisabled, "this merchant is disabled; orchard merchant enable restores it")
        }
        return Merchant(record)
    }

    func record(_ id: String) throws(GatewayError) -> MerchantRecord {
        let record = try gatewayThrowing { try store.read { try $0.merchant(id: id) } }
        guard let record else { throw GatewayError(.merchantNotFound, "no merchant \(id)") }
        return record
    }

    /// The merchant with `id`.
    public func merchant(id: String) throws(GatewayError) -> Merchant { Merchant(try record(id)) }

    /// Every merchant of `environment`, oldest first.
    public func merchants(environment: GatewayEnvironment) throws(GatewayError) -> [Merchant] {
        try gatewayThrowing { try store.read { try $0.merchants(environment: environment) } }.map(Merchant.init)
    }

    /// The credentials again — sandbox only; production keys are shown once.
    public func credentials(merchantID: String) throws(GatewayError) -> MerchantCredentials {
        let record = try record(merchantID)
        guard record.environment == .sandbox, let sealed = record.credentialsSealed else {
            throw GatewayError(.forbidden, "production credentials are shown only once")
        }
        let bytes = try cipher.open(sealed, context: SealingContext.credentials(merchantID: merchantID))
        // Stored format (sealed credentials), written by Codable.
        return try gatewayThrowing { try JSONDecoder().decode(MerchantCredentials.self, from: Data(bytes.copyBytes())) }
    }

    /// An active processing key's record, its private key sealed; nothing is stored yet.
    func processingKey(
        merchantID: String, privateKeyPEM: SecureBytes, certificatePEM: String, id: String
    ) throws(GatewayError) -> ProcessingKeyRecord {
        ProcessingKeyRecord(
            id: id, merchantID: merchantID,
            privateKeySealed: try cipher.seal(privateKeyPEM, context: SealingContext.processingKey(id: id)),
            certificatePEM: certificatePEM, active: true, createdAt: clock.now())
    }

    /// The active processing keys, newest first. Each private key stays sealed until its
    /// ``ProcessingKeyMaterial/privateKeyPEM()`` is asked for (a token opener asks only for a key it has not
    /// loaded yet), so a tokenize does not unseal the key ring every time.
    package func activeProcessingKeys(merchantID: String) throws(GatewayError) -> [ProcessingKeyMaterial] {
        let keys = try gatewayThrowing { try store.read { try $0.processingKeys(merchantID: merchantID) } }
        let cipher = self.cipher
        return keys.reversed().filter(\.active).map { key in
            let (id, sealed) = (key.id, key.privateKeySealed)
            return ProcessingKeyMaterial(id: id, certificatePEM: key.certificatePEM) { () throws(GatewayError) in
                try cipher.open(sealed, context: SealingContext.processingKey(id: id))
            }
        }
    }

    /// The certificates of the key ring (id, PEM, active), oldest first.
    package func processingCertificates(
        merchantID: String
    ) throws(GatewayError) -> [(
        id: String, certificatePEM: String, active: Bool
    )] {
        try gatewayThrowing { try store.read { try $0.processingKeys(merchantID: merchantID) } }.map {
            (id: $0.id, certificatePEM: $0.certificatePEM, active: $0.active)
        }
    }

    /// Sets the webhook endpoint and rotates its signing secret: the new secret is returned (shown once) and
    /// the previous one keeps signing alongside it for 24 hours (``WebhookSecretRing/rotationOverlap``).
    /// With `enabled` false the URL is kept but deliveries to it are held (its events stay pending).
    public func setWebhookEndpoint(
        merchantID: String, url: String, enabled: Bool = true, scope requestScope: RequestScope = .unattributed
    ) throws(GatewayError) -> (
        url: String, secret: String
    ) {
        guard let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme?.lowercased() ?? ""),
            parsed.host != nil, FieldLimits.fits(url, FieldLimits.url), FieldLimits.isPlain(url)
        else { throw .invalid("url", "an http(s) URL of at most 2048 characters") }
        let secret = try WebhookSecretRing.newSecret()
        let now = clock.now()
        try gatewayThrowing {
            try store.write { tx in
                guard var record = try tx.merchant(id: merchantID) else { throw GatewayError(.merchantNotFound) }
                let context = SealingContext.webhookSecrets(merchantID: merchantID)
                var ring = WebhookSecretRing(entries: [])
                if let sealed = record.webhookSecretsSealed {
                    ring = try WebhookSecretRing(plaintext: try cipher.open(sealed, context: context).copyBytes())
                }
                ring.rotate(to: secret, at: now)
                record.webhookSecretsSealed = try cipher.seal(try ring.plaintext(), context: context)
                record.webhookURL = url
                record.webhookEnabled = enabled
                try tx.updateMerchant(record)
                // The host only: a URL's path or query may carry the merchant's own token.
                try AuditLog.record(
                    in: tx, merchantID: merchantID, action: AuditLog.Action.webhookEndpointUpdate,
                    detail: ["host": parsed.host ?? "", "enabled": String(enabled)], at: now,
                    actor: requestScope.actor)
                try AuditLog.record(
                    in: tx, merchantID: merchantID, action: AuditLog.Action.webhookSecretRotate, at: now,
                    actor: requestScope.actor)
            }
        }
        return (url, secret)
    }

    /// The webhook signing secrets in force now, newest first.
    public func webhookSecrets(merchantID: String) throws(GatewayError) -> [String] {
        let record = try record(merchantID)
        guard let sealed = record.webhookSecretsSealed else { return [] }
        let now = clock.now()
        return try gatewayThrowing {
            try WebhookSecretRing.secrets(sealed: sealed, merchantID: merchantID, cipher: cipher, at: now)
        }
    }

    /// Stores the Merchant Identity certificate and its private key (sealed), for Apple Pay on the Web, recording
    /// the generated key's id (`mk_…`) as the audit entry's target when there is one.
    package func setIdentity(
        merchantID: String, certificatePEM: String, privateKeyPEM: SecureBytes, keyID: String? = nil,
        scope requestScope: RequestScope = .unattributed
    ) throws(GatewayError) {
        let sealed = try cipher.seal(privateKeyPEM, context: SealingContext.identityKey(merchantID: merchantID))
        try auditedWrite(merchantID, AuditLog.Action.identityCertificate, target: keyID, by: requestScope) { tx in
            guard var record = try tx.merchant(id: merchantID) else { throw GatewayError(.merchantNotFound) }
            record.identityCertificatePEM = certificatePEM
            record.identityKeySealed = sealed
            try tx.updateMerchant(record)
        }
    }

    /// The Merchant Identity certificate and key, when set.
    package func identity(merchantID: String) throws(GatewayError) -> MerchantIdentityMaterial? {
        let record = try record(merchantID)
        guard let certificate = record.identityCertificatePEM, let sealed = record.identityKeySealed else { return nil }
        return MerchantIdentityMaterial(
            certificatePEM: certificate,
            privateKeyPEM: try cipher.open(sealed, context: SealingContext.identityKey(merchantID: merchantID)))
    }

    /// The BIN table's columns and the longest value each takes (openapi.yaml's putBinTable).
    public static let binTableColumnLimits: [String: Int] = [
        "bin_prefix": 11, "issuer": 100, "bank_id": 20, "funding": 7, "level": 40, "country": 60, "country_code": 2,
        "issuer_zh_tw": 100,
    ]

    /// Replaces the merchant's BIN table with the CSV's rows; returns how many were loaded.
    ///
    /// Header: `bin_prefix,issuer,bank_id,funding,level,country,country_code` (any order; only `bin_prefix`
    /// is required);
    /// `bin_prefix` (or `bin`) is 4 to 11 digits, unique; `funding` is `credit`/`debit`/`prepaid` or 0/1/2.
    /// At most ``FieldLimits/binTableBytes`` of CSV and 200000 rows; a refused table leaves the current one, and its
    /// error names each bad line in ``GatewayError/rows``.
    @discardableResult
    public func loadBINTable(
        merchantID: String, csv: String, scope requestScope: RequestScope = .unattributed
    ) throws(GatewayError) -> Int {
        func refuse(_ line: Int, _ message: String) -> GatewayError {
            RowProblems.refuse(.binTableInvalid, row: line, label: "line", message)
        }
        guard csv.utf8.count <= FieldLimits.binTableBytes else {
            throw refuse(1, "at most \(FieldLimits.binTableBytes) bytes of CSV")
        }
        let rows = CSV.parse(csv)
        guard let header = rows.first?.map({ $0.lowercased().trimmingCharacters(in: .whitespaces) }),
            let binColumn = header.firstIndex(of: "bin_prefix") ?? header.firstIndex(of: "bin")
        else { throw refuse(1, "a header with a bin_prefix column") }
        guard header.count <= Self.binTableColumnLimits.count else {
            throw refuse(1, "at most \(Self.binTableColumnLimits.count) columns")
        }
        var problems = RowProblems()
        var firstLine: [String: Int] = [:]
        var entries: [BINEntry] = []
        for (number, row) in rows.dropFirst().enumerated() where !(row.count == 1 && row[0].isEmpty) {
            let line = number + 2
            guard row.count <= header.count else {
                problems.add(row: line, "more columns than the header's \(header.count)")
                continue
            }
            var messages: [String] = []
            func column(_ name: String) -> String? {
                guard let index = header.firstIndex(of: name), index < row.count else { return nil }
                let value = row[index].trimmingCharacters(in: .whitespaces)
                if let limit = Self.binTableColumnLimits[name], value.count > limit {
                    messages.append("\(name) is longer than \(limit) characters")
                }
                if let scalar = FieldLimits.forbiddenCharacter(in: value) {
                    messages.append(String(format: "\(name) holds U+%04X (a control character or bidi override)", scalar.value))
                }
                return value.isEmpty ? nil : value
            }
            let bin = binColumn < row.count ? row[binColumn].trimmingCharacters(in: .whitespaces) : ""
            if !((4...11).contains(bin.count) && bin.allSatisfy(\.isASCII) && bin.allSatisfy(\.isNumber)) {
                messages.append("bin_prefix must be 4 to 11 digits")
            } else if let first = firstLine[bin] {
                messages.append("bin_prefix \(bin) is already on line \(first)")
            } else {
                firstLine[bin] = line
            }
            let funding = column("funding").map { value -> Int in
                switch value.lowercased() {
                case "credit", "0": 0
                case "debit", "1": 1
                case "prepaid", "2": 2
                default: -1
                }
            }
            let entry = BINEntry(
                prefix: bin, issuer: column("issuer"), bankID: column("bank_id"), level: column("level"),
                country: column("country"), countryCode: column("country_code"), funding: funding,
                issuerZhTW: column("issuer_zh_tw"))
            if messages.isEmpty {
                entries.append(entry)
            } else {
                problems.add(row: line, messages.joined(separator: "; "))
            }
        }
        try problems.check(.binTableInvalid, label: "line")
        guard entries.count <= 200_000 else { throw refuse(200_002, "at most 200000 rows") }
        try auditedWrite(
            merchantID, AuditLog.Action.binTableReplace, detail: ["rows": String(entries.count)], by: requestScope
        ) {
            try $0.replaceBINTable(merchantID: merchantID, entries: entries)
        }
        return entries.count
    }

    /// Runs `change` in a write transaction that also records `action` on the merchant in the audit log, now,
    /// by the request's actor.
    func auditedWrite<T>(
        _ merchantID: String, _ action: String, target: String? = nil, detail: [String: String] = [:],
        by requestScope: RequestScope, _ change: (any StoreTransaction) throws -> T
    ) throws(GatewayError) -> T {
        let now = clock.now()
        return try gatewayThrowing {
            try store.write { tx in
                let result = try change(tx)
                try AuditLog.record(
                    in: tx, merchantID: merchantID, action: action, target: target, detail: detail, at: now,
                    actor: requestScope.actor)
                return result
            }
        }
    }
}

/// A small CSV reader (RFC 4180 quoting).
enum CSV {
    static func parse(_ text: String) -> [[String]] {
        var rows: [[String]] = []
        var row: [String] = []
        var field = ""
        var quoted = false
        var iterator = Array(text).makeIterator()
        var pending: Character?
        while let c = pending ?? iterator.next() {
            pending = nil
            if quoted {
                if c == "\"" {
                    if let next = iterator.next() {
                        if next == "\"" { field.append("\"") } else { quoted = false; pending = next }
                    } else {
                        quoted = false
                    }
                } else {
                    field.append(c)
                }
            } else if c == "\"" {
                quoted = true
            } else if c == "," {
                row.append(field)
                field = ""
            } else if c == "\n" || c == "\r\n" || c == "\r" {
                row.append(field)
                rows.append(row)
                row = []
                field = ""
            } else {
                field.append(c)
            }
        }
        if !field.isEmpty || !row.isEmpty {
            row.append(field)
            rows.append(row)
        }
        return rows
    }
}

/// The sandbox's first run: a persisted sandbox PKI and a sandbox merchant with a processing key it issued.
public struct SandboxSetup: Sendable {
    /// The sandbox PKI (serialized, with its private keys), for minting tokens.
    public var pki: SecureBytes
    /// The PEM of the sandbox root: the trust anchor of the sandbox token opener.
    public var trustAnchorPEM: String
    /// The sandbox merchant.
    public var merchant: Merchant
    /// Set only on the run that created the merchant: show them once.
    public var newCredentials: MerchantCredentials?
}

extension GatewayError.Code {
    /// Another instance provisioned the sandbox merchant in the same moment (the `sandbox_merchant` setting was
    /// taken): the provisioning is rolled back and read again. Never an answer of the API.
    static let sandboxProvisionedElsewhere = GatewayError.Code(rawValue: "sandbox_provisioned_elsewhere")
}

extension MerchantRegistry {
    /// The setting under which the sealed sandbox PKI is kept.
    public static let sandboxPKISetting = "sandbox_pki"
    /// The setting that names the provisioned sandbox merchant (its id). Its name is unique in the settings
    /// table, so of instances provisioning an empty database together exactly one stores it: the guard that
    /// leaves one sandbox merchant whatever the order they start in.
    public static let sandboxMerchantSetting = "sandbox_merchant"

    /// Loads (or on first run generates and stores, sealed) the sandbox PKI, and provisions the sandbox
    /// merchant with a processing key issued by it and its BIN table when there is none yet — all in one
    /// transaction, guarded by the unique ``sandboxMerchantSetting``: several instances starting together on an
    /// empty database make one sandbox merchant, and each of them returns it (the one that made it with its
    /// credentials).
    public func ensureSandbox(
        issuer: any SandboxKeyIssuer, name: String = "Sandbox Merchant",
        merchantIdentifier: String = "merchant.dev.orchard.sandbox", countryCode: String = "TW",
        scope requestScope: RequestScope = .unattributed
    ) throws(GatewayError) -> SandboxSetup {
        let spec = MerchantSpec(
            name: name, environment: .sandbox, countryCode: countryCode, merchantIdentifiers: [merchantIdentifier])
        var attempt = 0
        while true {
            attempt += 1
            // Every start after the first: both are there, and a read finds them.
            if let (pki, merchant) = try gatewayThrowing({ try store.read(Self.provisionedSandbox) }) {
                return try sandboxSetup(issuer: issuer, sealedPKI: pki, merchant: merchant)
            }
            do {
                return try provisionSandbox(issuer: issuer, spec: spec, by: requestScope.actor)
            } catch where error.code == .sandboxProvisionedElsewhere && attempt < 3 {
                continue
            }
        }
    }

    /// The stored sandbox PKI (sealed) and the sandbox merchant, when both are there: the merchant the
    /// ``sandboxMerchantSetting`` names, or (a database provisioned before the setting) the first sandbox merchant.
    static func provisionedSandbox(_ tx: any StoreTransaction) throws -> (Data, MerchantRecord)? {
        guard let pki = try tx.setting(sandboxPKISetting) else { return nil }
        if let id = try tx.setting(sandboxMerchantSetting).map({ String(decoding: $0, as: UTF8.self) }),
            let merchant = try tx.merchant(id: id)
        {
            return (pki, merchant)
        }
        return try tx.merchants(environment: .sandbox).first.map { (pki, $0) }
    }

    /// The first run's provisioning, in one write transaction: the PKI (unless stored), then, unless a sandbox
    /// merchant exists by then, the merchant, its processing key, its BIN table and the guard setting.
    private func provisionSandbox(
        issuer: any SandboxKeyIssuer, spec: MerchantSpec, by actor: AuditActor
    ) throws(GatewayError) -> SandboxSetup {
        let now = clock.now()
        let context = SealingContext.setting(Self.sandboxPKISetting)
        let (pki, merchant, credentials) = try gatewayThrowing {
            try store.write { tx -> (SecureBytes, MerchantRecord, MerchantCredentials?) in
                let pki: SecureBytes
                if let sealed = try tx.setting(Self.sandboxPKISetting) {
                    pki = try cipher.open(sealed, context: context)
                } else {
                    pki = try issuer.generatePKI(now: now)
                    try tx.setSetting(Self.sandboxPKISetting, value: try cipher.seal(pki, context: context))
                }
                if let (_, existing) = try Self.provisionedSandbox(tx) { return (pki, existing, nil) }
                let (record, credentials) = try newMerchant(spec)
                try Self.insert(record, in: tx, by: actor)
                let identifier = spec.merchantIdentifiers[0]
                let issued = try issuer.issueProcessingKey(
                    pki: pki, merchantIdentifier: identifier, id: try Identifiers.make("pk_", 16), now: now)
                let key = try processingKey(
                    merchantID: record.id, privateKeyPEM: try issued.privateKeyPEM(),
                    certificatePEM: issued.certificatePEM, id: issued.id)
                try tx.insertProcessingKey(key)
                try AuditLog.record(
                    in: tx, merchantID: record.id, action: AuditLog.Action.processingKeyCertificate, target: key.id,
                    at: now, actor: actor)
                try tx.replaceBINTable(merchantID: record.id, entries: issuer.binEntries)
                guard try tx.insertSetting(Self.sandboxMerchantSetting, value: Data(record.id.utf8)) else {
                    throw GatewayError(.sandboxProvisionedElsewhere, "another instance provisioned the sandbox")
                }
                return (pki, record, credentials)
            }
        }
        return try sandboxSetup(issuer: issuer, pki: pki, merchant: merchant, credentials: credentials)
    }

    private func sandboxSetup(
        issuer: any SandboxKeyIssuer, sealedPKI: Data, merchant: MerchantRecord
    ) throws(GatewayError) -> SandboxSetup {
        let pki = try cipher.open(sealedPKI, context: SealingContext.setting(Self.sandboxPKISetting))
        return try sandboxSetup(issuer: issuer, pki: pki, merchant: merchant, credentials: nil)
    }

    private func sandboxSetup(
        issuer: any SandboxKeyIssuer, pki: SecureBytes, merchant: MerchantRecord, credentials: MerchantCredentials?
    ) throws(GatewayError) -> SandboxSetup {
        let anchor = try gatewayThrowing { try issuer.trustAnchorPEM(pki: pki) }
        return SandboxSetup(pki: pki, trustAnchorPEM: anchor, merchant: Merchant(merchant), newCredentials: credentials)
    }
}
