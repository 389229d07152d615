import Foundation
import OrchardBase
import OrchardCrypto
import OrchardJSON

/// What a connector makes of a merchant's processor settings body (``ProcessorConnector/draft(from:)``): the
/// environment, whether it moves real money, the fields shown back as they are and the secrets, kept only sealed.
public struct ProcessorSettingsDraft: Sendable {
    /// The processor's environment (`test`, `live`, `sandbox`, `production` …); nil when it has none.
    public var environment: String?
    /// Whether the environment moves real money (Adyen's `live`, Checkout.com's `production`): refused for sandbox
    /// merchants (`processor_not_allowed`).
    public var isLive: Bool
    /// The fields that are not secret (an account name, a channel id, a URL prefix), by their wire name.
    public var fields: [String: String]
    /// The secrets (an API key, an HMAC key, a webhook secret), by their wire name.
    public var secrets: [String: SecureBytes]

    public init(environment: String?, isLive: Bool, fields: [String: String], secrets: [String: SecureBytes]) {
        self.environment = environment
        self.isLive = isLive
        self.fields = fields
        self.secrets = secrets
    }
}

/// One version of a merchant's processor settings as stored: its secrets sealed with the master key. A version is
/// never changed: a change stores the next one, and a payment keeps the version it was authorized under.
public struct ProcessorSettingsRecord: Sendable, Hashable {
    public var merchantID: String
    /// 1 for the merchant's first settings, then one more for each change.
    public var version: Int
    /// The connector's type (`adyen`, `checkout_com`), or the gateway's own processor's name (`sandbox`).
    public var type: String
    public var environment: String?
    /// The fields that are not secret.
    public var fields: [String: String]
    /// The secrets as a JSON object of strings, sealed (``SealingContext/processorSecrets(merchantID:version:)``);
    /// nil when the type has none.
    public var secretsSealed: Data?
    public var createdAt: Date

    public init(
        merchantID: String, version: Int, type: String, environment: String?, fields: [String: String],
        secretsSealed: Data?, createdAt: Date
    ) {
        self.merchantID = merchantID
        self.version = version
        self.type = type
        self.environment = environment
        self.fields = fields
        self.secretsSealed = secretsSealed
        self.createdAt = createdAt
    }
}

/// One version of a merchant's processor settings as a connector uses it: the secrets opened, in zeroing memory.
/// Its description and mirror show no secret.
public struct ProcessorAccount: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var merchantID: String
    public var version: Int
    public var type: String
    public var environment: String?
    public var fields: [String: String]
    public var secrets: [String: SecureBytes]

    public init(
        merchantID: String, version: Int, type: String, environment: String?, fields: [String: String],
        secrets: [String: SecureBytes]
    ) {
        self.merchantID = merchantID
        self.version = version
        self.type = type
        self.environment = environment
        self.fields = fields
        self.secrets = secrets
    }

    /// The secret `name` as text (for a header or a MAC key), nil when the settings have none.
    public func secretText(_ name: String) -> String? {
        secrets[name].map { $0.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }
    }

    /// The type, version and environment; no field values, no secret.
    public var description: String {
        "ProcessorAccount(\(type) \(environment ?? "-") merchant \(merchantID) version \(version))"
    }

    /// Same as ``description``.
    public var debugDescription: String { description }

    /// Only what ``description`` shows.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "merchantID": merchantID, "version": version, "type": type, "environment": environment as Any,
            ])
    }
}

/// A merchant's processor settings as `GET /v1/processor` and the console show them: the type, the environment,
/// the fields that are not secret and the last four characters of each secret.
public struct ProcessorSettingsView: Sendable, Hashable {
    /// The type in force: the configured one, or the gateway's own processor for a sandbox merchant without
    /// settings; nil for a production merchant without settings.
    public var type: String?
    public var environment: String?
    /// Whether the merchant stored settings (false: the sandbox default, or nothing for a production merchant).
    public var configured: Bool
    /// The version in force, nil when none is stored.
    public var version: Int?
    public var fields: [String: String]
    /// Each secret's last four characters, by its name.
    public var secretHints: [String: String]
    /// When the version in force was stored.
    public var updatedAt: Date?
}

/// What a connection test found (``ProcessorConnector/testConnection(_:)``).
public struct ProcessorConnectionTest: Sendable, Hashable {
    /// The test's outcome.
    public enum Outcome: String, Sendable, Hashable {
        /// The processor accepted the credentials.
        case ok
        /// The processor refused them, or could not be reached.
        case failed
        /// The processor's API has no call that tests credentials without moving money.
        case cannotTest = "cannot_test"
    }
    public var outcome: Outcome
    /// What was done and found, for a person (no secret).
    public var message: String
    /// The HTTP status the processor answered, when it answered.
    public var httpStatus: Int?

    public init(outcome: Outcome, message: String, httpStatus: Int? = nil) {
        self.outcome = outcome
        self.message = message
        self.httpStatus = httpStatus
    }
}

/// A processor connector (Adyen, Checkout.com …): it checks its settings, makes a ``Processor`` for a version of
/// them, tests them, and reads the processor's notifications. The domain knows connectors only through this port,
/// by their type.
public protocol ProcessorConnector: Sendable {
    /// The settings' `type` (`adyen`, `checkout_com`).
    var type: String { get }
    /// The names of the secret fields, in the order they are kept.
    var secretFields: [String] { get }
    /// Checks a settings body (every member but `type`, by name) and splits it into fields and secrets:
    /// `parameter_missing` or `parameter_invalid` naming the field; an unknown member is `parameter_invalid`.
    func draft(from body: [String: String]) throws(GatewayError) -> ProcessorSettingsDraft
    /// The processor for a version of the settings (the same for every call with that version).
    func processor(for account: ProcessorAccount) throws(GatewayError) -> any Processor
    /// Tests the settings against the processor with a call that moves no money, or says it cannot.
    func testConnection(_ account: ProcessorAccount) -> ProcessorConnectionTest
    /// The path of its notification route under `/v1/processors/` (`adyen/notifications`), before the merchant
    /// id; nil when it has none.
    var notificationPath: String? { get }
    /// Verifies a notification request with `account`'s secrets and reads it:
    /// ``GatewayError/Code/processorSignatureInvalid`` when any part of it is not authentic (nothing of it is then
    /// applied).
    func notifications(
        _ request: ProcessorNotificationRequest, account: ProcessorAccount
    ) throws(GatewayError) -> ProcessorNotificationBatch
}

extension GatewayService {
    // MARK: - Processor settings

    /// The connector of `type`, nil for the gateway's own processor.
    func connector(_ type: String) throws(GatewayError) -> (any ProcessorConnector)? {
        if type == processor.name { return nil }
        guard let connector = connectors[type] else {
            throw GatewayError(.internalError, "no connector for processor type \(type)")
        }
        return connector
    }

    /// The types `PUT /v1/processor` takes: the gateway's own processor and every connector's.
    public var processorTypes: [String] { [processor.name] + connectors.keys.sorted() }

    /// Stores a new version of the merchant's processor settings from `body` (its `type` and the type's fields, as
    /// strings), its secrets sealed, with an audit entry (type, environment, version; never a secret). A live or
    /// production environment for a sandbox merchant, or the sandbox acquirer for a production one, is
    /// `processor_not_allowed`. Payments made before keep the version they were authorized under.
    @discardableResult
    public func setProcessorSettings(
        merchantID: String, body: [String: String], scope requestScope: RequestScope = .unattributed
    ) throws(GatewayError) -> ProcessorSettingsView {
        let merchant = try merchants.merchant(id: merchantID)
        guard let type = body["type"] else { throw GatewayError(.parameterMissing, "type is required", param: "type") }
        guard processorTypes.contains(type) else {
            throw .invalid("type", "one of \(processorTypes.joined(separator: ", "))")
        }
        var fields = body
        fields["type"] = nil
        for (name, value) in fields where !FieldLimits.fits(value, FieldLimits.processorSetting) {
            throw .invalid(name, "\(FieldLimits.text(FieldLimits.processorSetting)) characters")
        }
        let draft: ProcessorSettingsDraft
        if let connector = try connector(type) {
            draft = try connector.draft(from: fields)
            if merchant.environment == .sandbox, draft.isLive {
                throw GatewayError(
                    .processorNotAllowed,
                    "a sandbox merchant takes only a test or sandbox processor environment, not \(draft.environment ?? "")",
                    param: "environment")
            }
        } else {
            if let extra = fields.keys.sorted().first {
                throw .invalid(extra, "the \(type) processor takes no setting but type")
            }
            guard merchant.environment == .sandbox else {
                throw GatewayError(
                    .processorNotAllowed,
                    "the \(type) acquirer moves no money: a production merchant needs a processor",
                    param: "type")
            }
            draft = ProcessorSettingsDraft(environment: nil, isLive: false, fields: [:], secrets: [:])
        }
        let now = Date(unixMilliseconds: clock.now().unixMilliseconds)
        let record: ProcessorSettingsRecord = try write { tx in
            let version = (try tx.processorSettings(merchantID: merchantID, version: nil)?.version ?? 0) + 1
            var sealed: Data?
            if !draft.secrets.isEmpty {
                var plaintext: [UInt8] = [UInt8(ascii: "{")]
                defer { SecureBytes.zero(&plaintext) }
                for (index, name) in draft.secrets.keys.sorted().enumerated() {
                    if index > 0 { plaintext.append(UInt8(ascii: ",")) }
                    SecureJSON.appendMember(name, draft.secrets[name] ?? SecureBytes([]), to: &plaintext)
                }
                plaintext.append(UInt8(ascii: "}"))
                sealed = try cipher.seal(
                    plaintext, context: SealingContext.processorSecrets(merchantID: merchantID, version: version))
            }
            let record = ProcessorSettingsRecord(
                merchantID: merchantID, version: version, type: type, environment: draft.environment,
                fields: draft.fields, secretsSealed: sealed, createdAt: now)
            try tx.insertProcessorSettings(record)
            var detail = ["type": type, "version": String(version)]
            detail["environment"] = draft.environment
            try AuditLog.record(
                in: tx, merchantID: merchantID, action: AuditLog.Action.processorSettingsUpdate, detail: detail, at: now,
                actor: requestScope.actor)
            return record
        }
        return try view(of: record, merchant: merchant)
    }

    /// The merchant's processor settings in force, secrets shown by their last four characters only.
    public func processorSettings(merchantID: String) throws(GatewayError) -> ProcessorSettingsView {
        let merchant = try merchants.merchant(id: merchantID)
        guard let record = try read({ try $0.processorSettings(merchantID: merchantID, version: nil) }) else {
            return ProcessorSettingsView(
                type: merchant.environment == .sandbox ? processor.name : nil, environment: nil, configured: false,
                version: nil, fields: [:], secretHints: [:], updatedAt: nil)
        }
        return try view(of: record, merchant: merchant)
    }

    func view(of record: ProcessorSettingsRecord, merchant: Merchant) throws(GatewayError) -> ProcessorSettingsView {
        let account = try account(of: record)
        var hints: [String: String] = [:]
        for (name, secret) in account.secrets {
            hints[name] = secret.withUnsafeBytes { String(decoding: $0.suffix(4), as: UTF8.self) }
        }
        return ProcessorSettingsView(
            type: record.type, environment: record.environment, configured: true, version: record.version,
            fields: record.fields, secretHints: hints, updatedAt: record.createdAt)
    }

    /// Tests the merchant's processor settings in force with a call that moves no money (or says it cannot).
    public func testProcessorConnection(merchantID: String) throws(GatewayError) -> ProcessorConnectionTest {
        let merchant = try merchants.merchant(id: merchantID)
        guard let record = try read({ try $0.processorSettings(merchantID: merchantID, version: nil) }),
            let connector = try connector(record.type)
        else {
            if merchant.environment == .production {
                throw GatewayError(.processorNotConfigured, "the merchant has no processor settings")
            }
            return ProcessorConnectionTest(
                outcome: .ok, message: "the \(processor.name) acquirer is built in: nothing to connect to")
        }
        return connector.testConnection(try account(of: record))
    }

    /// The settings `record` with its secrets opened.
    func account(of record: ProcessorSettingsRecord) throws(GatewayError) -> ProcessorAccount {
        var secrets: [String: SecureBytes] = [:]
        if let sealed = record.secretsSealed {
            let plaintext = try cipher.open(
                sealed, context: SealingContext.processorSecrets(merchantID: record.merchantID, version: record.version)
            )
            for name in try connector(record.type)?.secretFields ?? [] {
                if let value = SecureJSON.string(at: [name], in: plaintext) { secrets[name] = value }
            }
        }
        return ProcessorAccount(
            merchantID: record.merchantID, version: record.version, type: record.type,
            environment: record.environment, fields: record.fields, secrets: secrets)
    }

    // MARK: - The processor of a payment

    /// The processor a new payment of `merchant` goes to, with the settings version it records: the merchant's
    /// settings in force, or for a sandbox merchant without settings the gateway's own processor. A production
    /// merchant without settings is `processor_not_configured`.
    func newPaymentProcessor(for merchant: Merchant) throws(GatewayError) -> (processor: any Processor, version: Int?) {
        let record = try read { try $0.processorSettings(merchantID: merchant.id, version: nil) }
        guard let record, try connector(record.type) != nil else {
            if merchant.environment == .production {
                throw GatewayError(
                    .processorNotConfigured,
                    "the merchant has no processor: set one with PUT /v1/processor or orchard merchant set-processor")
            }
            return (processor, record?.version)
        }
        return (try processor(merchantID: merchant.id, version: record.version, record: record), record.version)
    }

    /// The processor of a payment: the one of the settings version it was authorized under (the gateway's own
    /// without one), even when the merchant's settings changed since.
    func processor(for payment: Payment) throws(GatewayError) -> any Processor {
        guard let version = payment.processorSettingsVersion else { return processor }
        return try processor(merchantID: payment.merchantID, version: version, record: nil)
    }

    /// The processor of a settings version, made once (a version never changes) and kept.
    func processor(
        merchantID: String, version: Int, record known: ProcessorSettingsRecord?
    ) throws(GatewayError) -> any Processor {
        let key = "\(merchantID)#\(version)"
        if let cached = processorCache.withLock({ $0[key] }) { return cached }
        var record = known
        if record == nil { record = try read { try $0.processorSettings(merchantID: merchantID, version: version) } }
        guard let record else {
            throw GatewayError(.internalError, "the processor settings version \(version) of \(merchantID) is missing")
        }
        guard let connector = try connector(record.type) else { return processor }
        let made = try connector.processor(for: try account(of: record))
        processorCache.withLock { $0[key] = made }
        return made
    }
}

/// The body of `PUT /v1/processor` and of `orchard merchant set-processor --config`: a JSON object whose members are
/// strings (`null` ones are left out), read the same way by both.
public enum ProcessorSettingsBody {
    /// The members of `json` by name; `parameter_invalid` for a body that is not an object or a member that is not
    /// a string (`null` included).
    public static func fields(_ json: JSONValue) throws(GatewayError) -> [String: String] {
        guard let members = json.members else {
            throw GatewayError(.parameterInvalid, "the processor settings are a JSON object of strings")
        }
        var fields: [String: String] = [:]
        for member in members {
            switch member.value {
            // null is no way to leave a field out here: no processor setting is nullable.
            case .null: throw .invalid(member.key, "must be a string; leave it out rather than null")
            case .string(let text):
                try FieldLimits.checkCharacters(text, param: member.key)
                fields[member.key] = text
            default: throw .invalid(member.key, "must be a string")
            }
        }
        return fields
    }
}
