import Foundation
import OrchardCrypto
import OrchardJSON

// Apple Pay on the Web: merchant validation (the merchant session Apple gives over mutual TLS), the merchant
// identity key and certificate, the registered domains and the domain association file.

extension GatewayError.Code {
    /// The validation URL is not https, not on one of Apple's merchant-session hosts, or not under
    /// `/paymentservices/`.
    public static let validationURLNotAllowed = GatewayError.Code(rawValue: "validation_url_not_allowed")
    /// The domain is not one of the merchant's registered Apple Pay domains.
    public static let domainNotRegistered = GatewayError.Code(rawValue: "domain_not_registered")
    /// The merchant identifier the page names is not one of the merchant's.
    public static let merchantIdentifierNotRegistered = GatewayError.Code(rawValue: "merchant_identifier_not_registered")
    /// Another merchant of this gateway already registered the domain.
    public static let domainAlreadyRegistered = GatewayError.Code(rawValue: "domain_already_registered")
    /// The merchant has no identity certificate and key (or no identity key awaiting its certificate).
    public static let merchantIdentityMissing = GatewayError.Code(rawValue: "merchant_identity_missing")
    /// Apple did not give a merchant session: it answered an error status (``GatewayError/upstreamStatus``),
    /// something that is not a JSON object, or could not be reached.
    public static let applePayValidationFailed = GatewayError.Code(rawValue: "apple_pay_validation_failed")
}

/// The merchant identity as mutual TLS presents it: the certificate and its private key (secure memory).
public struct MerchantIdentityMaterial: Sendable {
    /// PEM of the Merchant Identity certificate.
    public var certificatePEM: String
    /// PEM of its RSA private key.
    public var privateKeyPEM: SecureBytes

    public init(certificatePEM: String, privateKeyPEM: SecureBytes) {
        self.certificatePEM = certificatePEM
        self.privateKeyPEM = privateKeyPEM
    }
}

/// Why a merchant-session call got no answer (the reason names the transport failure, never a body or key).
public struct MerchantSessionTransportError: Error, Sendable, CustomStringConvertible {
    /// A short stable code of the transport (`tls_failed`, `timeout` …).
    public var code: String
    /// What went wrong.
    public var reason: String

    public init(code: String, reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { "\(code): \(reason)" }
}

/// Posts the merchant-session request to Apple over mutual TLS (the product's implementation is on libcurl).
public protocol MerchantSessionTransport: Sendable {
    /// POSTs the JSON `body` to `url` presenting `identity` as the client certificate, over TLS 1.2 or later,
    /// within `timeout` seconds; returns Apple's status and body as received.
    func postMerchantSession(
        url: String, body: Data, identity: MerchantIdentityMaterial, timeout: TimeInterval
    ) throws(MerchantSessionTransportError) -> (status: Int, body: Data)
}

/// How merchant validation reaches Apple.
public struct MerchantValidationConfiguration: Sendable {
    /// Apple's merchant-session hosts (port 443): the validation URL's host must be exactly one of them.
    public static let appleHosts: Set<String> = {
        var hosts: Set<String> = [
            "apple-pay-gateway.apple.com", "cn-apple-pay-gateway.apple.com", "apple-pay-gateway-cert.apple.com",
            "cn-apple-pay-gateway-cert.apple.com",
        ]
        for region in ["nc", "pr"] {
            for pod in 1...5 {
                hosts.insert("apple-pay-gateway-\(region)-pod\(pod).apple.com")
                hosts.insert("apple-pay-gateway-\(region)-pod\(pod)-dr.apple.com")
            }
        }
        for region in ["sh", "tj"] {
            for pod in 1...3 { hosts.insert("cn-apple-pay-gateway-\(region)-pod\(pod).apple.com") }
        }
        return hosts
    }()

    /// Extra `host:port` pairs accepted besides Apple's hosts: a local stand-in for Apple in sandbox tests
    /// (`--apple-pay-extra-validation-host`). Empty by default; production refuses to start with one.
    public var extraHosts: [String] = []
    /// The longest the call to Apple may take, in seconds.
    public var timeout: TimeInterval = 10

    public init() {}

    /// The URL to call for `text` (rebuilt from the parts checked, so nothing else reaches the HTTP client), or
    /// nil when it is not allowed: `https://`, a host of ``appleHosts`` (port 443) or of ``extraHosts``, a path
    /// starting `/paymentservices/` of non-empty plain segments (letters, digits, `-`, `_`, `.`, `~`; no `.` or
    /// `..`),
    /// no user, query or fragment.
    public func allowedURL(_ text: String) -> String? {
        guard text.utf8.count <= FieldLimits.url, text.lowercased().hasPrefix("https://") else { return nil }
        let rest = text.dropFirst("https://".count)
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        let authority = rest[..<slash].lowercased()
        let path = String(rest[slash...])
        let pathCharacters = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~/")
        guard path.hasPrefix("/paymentservices/"), path.allSatisfy({ pathCharacters.contains($0) }) else {
            return nil
        }
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        guard segments.count >= 2, segments.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." }) else { return nil }
        var host = authority
        var port: String?
        if let colon = authority.lastIndex(of: ":") {
            host = String(authority[..<colon])
            port = String(authority[authority.index(after: colon)...])
        }
        let hostCharacters = Set("abcdefghijklmnopqrstuvwxyz0123456789-.")
        guard !host.isEmpty, host.allSatisfy({ hostCharacters.contains($0) }) else { return nil }
        if Self.appleHosts.contains(host), port == nil || port == "443" {
            return "https://\(host)\(path)"
        }
        guard let port, !port.isEmpty, port.allSatisfy(\.isASCII), port.allSatisfy(\.isNumber),
            extraHosts.contains("\(host):\(port)")
        else { return nil }
        return "https://\(host):\(port)\(path)"
    }
}

/// Domains as the gateway keeps them.
package enum ApplePayDomain {
    /// `text` lower-cased without a trailing dot, when it is a host name (labels of 1 to 63 letters, digits or
    /// `-`, not starting or ending with `-`, at most 253 characters in all).
    package static func normalized(_ text: String) -> String? {
        var name = text.lowercased()
        if name.hasSuffix(".") { name.removeLast() }
        guard FieldLimits.domainNameBytes.contains(name.utf8.count) else { return nil }
        let characters = Set("abcdefghijklmnopqrstuvwxyz0123456789-")
        for label in name.split(separator: ".", omittingEmptySubsequences: false) {
            guard (1...63).contains(label.count), label.allSatisfy({ characters.contains($0) }),
                label.first != "-", label.last != "-"
            else { return nil }
        }
        return name
    }

    /// Why `text` cannot be a merchant's Apple Pay domain, or nil when it can: not a host name; an IP literal
    /// (v4 or v6: a domain is proven by a name the merchant owns, and no one owns an address that way); a single
    /// label (`com`, `shop`); `localhost` or a name below it; or a name on `denied` or below one of them (Apple's
    /// own domains, the gateway's own host names).
    package static func refusal(_ text: String, denied: [String]) -> String? {
        let trimmed = text.hasSuffix(".") ? String(text.dropLast()) : text
        if trimmed.contains(":") || trimmed.hasPrefix("[") {
            return "\(text) is an IP address; an Apple Pay domain is a host name the merchant owns"
        }
        guard let name = normalized(text) else {
            return "\(text) is not a host name such as shop.example (no scheme, port or path)"
        }
        let labels = name.split(separator: ".")
        if let last = labels.last, last.allSatisfy(\.isNumber) {
            return "\(text) is an IP address; an Apple Pay domain is a host name the merchant owns"
        }
        if name == "localhost" || name.hasSuffix(".localhost") {
            return "\(text) is a localhost name, this machine's; an Apple Pay domain is a public host name"
        }
        if labels.count < 2 { return "\(text) is a single label; an Apple Pay domain is a name such as shop.example" }
        if let entry = denied.first(where: { name == $0 || name.hasSuffix("." + $0) }) {
            return "\(text) is denied: \(entry) and the names below it are not a merchant's (Apple's own domains and "
                + "the gateway's own host names are on the deny list)"
        }
        return nil
    }

    /// The host of a `Host` header value (`shop.example:8443` → `shop.example`), normalized.
    package static func host(ofHeader value: String) -> String? {
        var host = Substring(value.trimmingCharacters(in: .whitespaces))
        if let colon = host.lastIndex(of: ":"), host[host.index(after: colon)...].allSatisfy(\.isNumber) {
            host = host[..<colon]
        }
        return normalized(String(host))
    }
}

extension MerchantRegistry {
    static func domainAssociationSetting(_ merchantID: String) -> String {
        "apple_pay_domain_association:\(merchantID)"
    }

    static func identityKeySetting(_ merchantID: String) -> String { "merchant_identity_key:\(merchantID)" }

    /// Replaces the merchant's Apple Pay domains (host names, stored lower-case, duplicates dropped); returns them.
    /// Only names a merchant can own are taken (``ApplePayDomain/refusal(_:denied:)``, with the deny list
    /// ``deniedApplePayDomains``); a domain another merchant registered is refused (`domain_already_registered`:
    /// the gateway's operator settles it with ``releaseApplePayDomain(_:scope:)``).
    @discardableResult
    public func setApplePayDomains(
        merchantID: String, domains: [String], scope requestScope: RequestScope = .unattributed
    ) throws(GatewayError) -> [String] {
        guard domains.count <= FieldLimits.applePayDomains else {
            throw .invalid("domains", "at most \(FieldLimits.applePayDomains) domains")
        }
        var normalized: [String] = []
        for (index, domain) in domains.enumerated() {
            if let refusal = ApplePayDomain.refusal(domain, denied: deniedApplePayDomains) {
                throw .invalid("domains[\(index)]", refusal)
            }
            guard let name = ApplePayDomain.normalized(domain) else { continue }
            if !normalized.contains(name) { normalized.append(name) }
        }
        try gatewayThrowing {
            try store.write { tx in
                guard var record = try tx.merchant(id: merchantID) else { throw GatewayError(.merchantNotFound) }
                for environment in GatewayEnvironment.allCases {
                    for other in try tx.merchants(environment: environment) where other.id != merchantID {
                        if let taken = normalized.first(where: { (other.applePayDomains ?? []).contains($0) }) {
                            throw GatewayError(
                                .domainAlreadyRegistered,
                                "\(taken) is registered by another merchant; if the domain is yours, the gateway's "
                                    + "operator can release it (orchard merchant release-domain --domain \(taken))",
                                param: "domains")
                        }
                    }
                }
                record.applePayDomains = normalized
                try tx.updateMerchant(record)
                try AuditLog.record(
                    in: tx, merchantID: merchantID, action: AuditLog.Action.applePayDomainsUpdate,
                    detail: ["domains": String(normalized.count)], at: clock.now(), actor: requestScope.actor)
            }
        }
        return normalized
    }

    /// Releases `domain` from the merchant that registered it (the operator settling a conflict, after checking
    /// who owns the domain): removed from its Apple Pay domains, with the audit entry `apple_pay_domain.release`
    /// on that merchant; returns its id. `domain_not_registered` when no merchant has it.
    @discardableResult
    public func releaseApplePayDomain(
        _ domain: String, scope requestScope: RequestScope = .unattributed
    ) throws(GatewayError) -> String {
        guard let name = ApplePayDomain.normalized(domain) else {
            throw .invalid("domain", "a host name such as shop.example (no scheme, port or path)")
        }
        let now = clock.now()
        return try gatewayThrowing {
            try store.write { tx in
                for environment in GatewayEnvironment.allCases {
                    for var record in try tx.merchants(environment: environment)
                    where (record.applePayDomains ?? []).contains(name) {
                        record.applePayDomains = (record.applePayDomains ?? []).filter { $0 != name }
                        try tx.updateMerchant(record)
                        try AuditLog.record(
                            in: tx, merchantID: record.id, action: AuditLog.Action.applePayDomainRelease,
                            detail: ["domain": name], at: now, actor: requestScope.actor)
                        return record.id
                    }
                }
                throw GatewayError(.domainNotRegistered, "no merchant registered \(name)", param: "domain")
            }
        }
    }

    /// Keeps the domain association file Apple gives (served at
    /// `/.well-known/apple-developer-merchantid-domain-association` for the merchant's domains).
    public func setDomainAssociation(merchantID: String, file: Data) throws(GatewayError) {
        guard FieldLimits.domainAssociationBytes.contains(file.count) else {
            throw .invalid("body", "the domain association file, 1 byte to 64 KiB")
        }
        try gatewayThrowing {
            try store.write { tx in
                guard try tx.merchant(id: merchantID) != nil else { throw GatewayError(.merchantNotFound) }
                try tx.setSetting(Self.domainAssociationSetting(merchantID), value: file)
            }
        }
    }

    /// The domain association file to serve for a request whose `Host` header is `host`: the file of the merchant
    /// that registered the host, or nil (unknown host, or no file uploaded).
    public func domainAssociation(host: String) throws(GatewayError) -> Data? {
        guard let name = ApplePayDomain.host(ofHeader: host) else { return nil }
        return try gatewayThrowing {
            try store.read { tx -> Data? in
                for environment in GatewayEnvironment.allCases {
                    for record in try tx.merchants(environment: environment)
                    where (record.applePayDomains ?? []).contains(name) {
                        return try tx.setting(Self.domainAssociationSetting(record.id))
                    }
                }
                return nil
            }
        }
    }

    /// The id of the newest identity key (made by ``createKeyCSR(merchant:type:purpose:)`` with purpose
    /// `identity`), which ``attachIdentityCertificate(merchant:certificate:)`` attaches to.
    func pendingIdentityKeyID(merchantID: String) throws(GatewayError) -> String? {
        try gatewayThrowing { try store.read { try $0.setting(Self.identityKeySetting(merchantID)) } }.map {
            String(decoding: $0, as: UTF8.self)
        }
    }

    /// Attaches Apple's Merchant Identity certificate (PEM or DER, as Apple's `.cer` is) to the newest identity key:
    /// refused unless it carries that key's public key.
    package func attachIdentityCertificate(
        merchant: Merchant, certificate: [UInt8], scope requestScope: RequestScope = .unattributed
    ) throws(GatewayError) -> MerchantKeyStatus {
        guard let parsed = try? X509Certificate.load(certificate) else {
            throw GatewayError(.certificateInvalid, "not an X.509 certificate (PEM or DER)", param: "certificate")
        }
        guard let keyID = try pendingIdentityKeyID(merchantID: merchant.id) else {
            throw GatewayError(
                .merchantIdentityMissing, "no identity key: POST /v1/merchant-identity/csr first")
        }
        do {
            return try attachCertificate(
                merchant: merchant, keyID: keyID, certificatePEM: parsed.pem, scope: requestScope)
        } catch  where error.param == "certificate_pem" {
            var error = error
            error.param = "certificate"
            throw error
        }
    }
}

extension MerchantKeys {
    /// A Merchant Identity key (RSA 2048, sealed in the gateway) and its CSR for Apple, under an idempotency key.
    public func createIdentityCSR(
        merchant: Merchant, idempotencyKey: String? = nil, scope requestScope: RequestScope = .unattributed
    ) throws(GatewayError) -> MerchantKeyCSR {
        try idempotent(
            merchant, key: idempotencyKey, operation: "merchant_identity_csr", fingerprint: [],
            requestScope: requestScope
        ) { scope throws(GatewayError) in
            try merchants.createKeyCSR(
                merchant: merchant, type: "rsa", purpose: "identity", requestScope: requestScope, idempotency: scope)
        }
    }

    /// Attaches Apple's Merchant Identity certificate (PEM or DER, as Apple's `.cer` is) to the newest identity key,
    /// refused unless it carries that key's public key; under an idempotency key.
    public func attachIdentityCertificate(
        merchant: Merchant, certificate: [UInt8], idempotencyKey: String? = nil,
        scope requestScope: RequestScope = .unattributed
    ) throws(GatewayError) -> MerchantKeyStatus {
        try idempotent(
            merchant, key: idempotencyKey, operation: "merchant_identity_certificate",
            fingerprint: [Hex.encode(SHA256.hash(certificate))], requestScope: requestScope
        ) { _ throws(GatewayError) in
            try merchants.attachIdentityCertificate(merchant: merchant, certificate: certificate, scope: requestScope)
        }
    }
}

/// Merchant validation for Apple Pay on the Web: checks the browser's validation URL and domain, then asks Apple
/// for a merchant session with the merchant's identity certificate and returns Apple's body unchanged.
public final class MerchantValidationService: Sendable {
    /// The merchants (domains, identity).
    public let merchants: MerchantRegistry
    /// How Apple is called.
    public let transport: any MerchantSessionTransport
    /// Extra hosts and the timeout.
    public let configuration: MerchantValidationConfiguration

    public init(
        merchants: MerchantRegistry, transport: any MerchantSessionTransport,
        configuration: MerchantValidationConfiguration = .init()
    ) {
        self.merchants = merchants
        self.transport = transport
        self.configuration = configuration
    }

    /// Apple's merchant session (its JSON body, byte for byte) for `merchant` on `domain`.
    ///
    /// Checks in order: the validation URL (`validation_url_not_allowed`), the domain
    /// (`domain_not_registered`), the merchant identifier the page named, when it named one, against the
    /// merchant's (`merchant_identifier_not_registered`), the identity (`merchant_identity_missing`); then POSTs
    /// `{merchantIdentifier, displayName, initiative: "web", initiativeContext: domain}` over mutual TLS, with the
    /// page's merchant identifier or else the merchant's first. Apple's error status, a body that is not a JSON
    /// object, or no answer is `apple_pay_validation_failed`. Nothing of the session is logged or kept.
    public func merchantSession(
        merchant: Merchant, validationURL: String, domain: String, displayName: String?,
        merchantIdentifier: String? = nil
    ) throws(GatewayError) -> Data {
        guard let url = configuration.allowedURL(validationURL) else {
            throw GatewayError(
                .validationURLNotAllowed,
                "the validation URL must be https on one of Apple's merchant-session hosts, under /paymentservices/",
                param: "validation_url")
        }
        guard let name = ApplePayDomain.normalized(domain), merchant.applePayDomains.contains(name) else {
            throw GatewayError(
                .domainNotRegistered, "the domain is not one of the merchant's Apple Pay domains", param: "domain")
        }
        if let merchantIdentifier, !merchant.merchantIdentifiers.contains(merchantIdentifier) {
            throw GatewayError(
                .merchantIdentifierNotRegistered, "the merchant identifier is not one of the merchant's",
                param: "merchant_identifier")
        }
        let title = displayName ?? merchant.name
        guard FieldLimits.fits(title, FieldLimits.displayName) else {
            throw .invalid("display_name", "1 to \(FieldLimits.displayName.upperBound) characters")
        }
        // Apple shows it on the payment sheet: one line, read as it is stored.
        try FieldLimits.checkCharacters(title, param: "display_name")
        guard let identity = try merchants.identity(merchantID: merchant.id) else {
            throw GatewayError(
                .merchantIdentityMissing,
                "no merchant identity certificate: POST /v1/merchant-identity/csr, then upload Apple's certificate")
        }
        let body = try gatewayThrowing {
            try WireFormat.json([
                "merchantIdentifier": merchantIdentifier ?? merchant.merchantIdentifiers.first ?? "", "displayName": title,
                "initiative": "web", "initiativeContext": name,
            ])
        }
        let answer: (status: Int, body: Data)
        do {
            answer = try transport.postMerchantSession(
                url: url, body: body, identity: identity, timeout: configuration.timeout)
        } catch {
            throw GatewayError(.applePayValidationFailed, "Apple could not be reached (\(error.code))")
        }
        guard answer.status == 200 else {
            throw GatewayError(
                .applePayValidationFailed, "Apple answered HTTP \(answer.status)", upstreamStatus: answer.status)
        }
        guard (try? JSONValue.parse(answer.body, maximumDepth: 512))?.members != nil else {
            throw GatewayError(
                .applePayValidationFailed, "Apple's answer is not a JSON object", upstreamStatus: answer.status)
        }
        return answer.body
    }
}
