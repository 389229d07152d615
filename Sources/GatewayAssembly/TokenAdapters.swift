import ApplePaySandbox
import ApplePayToken
import Foundation
import Gateway
import OrchardBase
import OrchardCrypto

/// The product's ``PaymentTokenOpener``: ApplePayToken's verification (CMS signature, chain to the
/// environment's trust anchor, signing-time window) and decryption with the merchant's key ring.
/// Token errors come out with the token library's code (``GatewayError/token(code:reason:)``).
public final class ApplePayTokenOpener: PaymentTokenOpener, Sendable {
    private let anchors: [GatewayEnvironment: [TrustAnchor]]
    private let window: SigningTimeWindow
    private struct Cache {
        /// Parsed merchant keys by key id (a key id's material never changes).
        var keys: [String: MerchantKey] = [:]
        /// One decryptor per environment and key ring, kept so its chain cache serves every token: a new
        /// decryptor per token would validate the Apple chain from scratch each time.
        var decryptors: [String: PaymentTokenDecryptor] = [:]
    }
    private let cache = Locked(Cache())

    /// An opener trusting `trustAnchors[environment]` for each environment (the sandbox PKI's root for
    /// sandbox, Apple Root CA - G3 for production).
    public convenience init(trustAnchors: [GatewayEnvironment: TrustAnchor], window: SigningTimeWindow = .default) {
        self.init(anchors: trustAnchors.mapValues { [$0] }, window: window)
    }

    /// An opener trusting each of `anchors[environment]` for each environment, tried in order: a token whose chain
    /// does not lead to the first is tried with the next (the sandbox trusts the test PKI, and Apple Root CA - G3
    /// too when it is given, for tokens from a device with a sandbox tester account).
    public init(anchors: [GatewayEnvironment: [TrustAnchor]], window: SigningTimeWindow = .default) {
        self.anchors = anchors
        self.window = window
    }

    /// How many certificate sets the kept decryptors have validated and cached (for tests and diagnostics).
    package var cachedCertificateSets: Int {
        cache.withLock { $0.decryptors.values.reduce(0) { $0 + $1.cachedCertificateSets } }
    }

    private func decryptor(
        environment: GatewayEnvironment, anchor: TrustAnchor, material: [ProcessingKeyMaterial]
    ) throws(GatewayError) -> PaymentTokenDecryptor {
        let ring =
            environment.rawValue + "|" + anchor.sha256Fingerprint + "|"
            + material.map(\.id).sorted().joined(separator: ",")
        if let cached = cache.withLock({ $0.decryptors[ring] }) { return cached }
        var merchantKeys: [MerchantKey] = []
        for key in material { merchantKeys.append(try merchantKey(key)) }
        let decryptor = PaymentTokenDecryptor(trustAnchor: anchor, keys: merchantKeys, window: window)
        cache.withLock { $0.decryptors[ring] = decryptor }
        return decryptor
    }

    private func merchantKey(_ material: ProcessingKeyMaterial) throws(GatewayError) -> MerchantKey {
        if let cached = cache.withLock({ $0.keys[material.id] }) { return cached }
        // Only now, on a miss, is the private key opened (unsealed).
        let pem = try material.privateKeyPEM()
        do {
            let key = try MerchantKey(privateKeyPEM: pem, certificatePEM: material.certificatePEM)
            cache.withLock { $0.keys[material.id] = key }
            return key
        } catch let error as PaymentTokenError {
            throw GatewayError.token(code: error.code.rawValue, reason: error.reason)
        } catch {
            throw GatewayError.token(
                code: PaymentTokenError.Code.invalidMerchantKey.rawValue, reason: "a processing key does not load")
        }
    }

    public func open(
        token: SubmittedToken, environment: GatewayEnvironment, keys material: [ProcessingKeyMaterial], at time: Date
    )
        throws(GatewayError) -> OpenedToken
    {
        guard let trusted = anchors[environment], !trusted.isEmpty else {
            throw GatewayError(.internalError, "no trust anchor configured for \(environment.rawValue)")
        }
        var decryptors: [PaymentTokenDecryptor] = []
        for anchor in trusted {
            decryptors.append(try decryptor(environment: environment, anchor: anchor, material: material))
        }
        do throws(PaymentTokenError) {
            // The caller's parse when it has one; else the token library parses (and refuses) the text itself.
            let parsed: PaymentToken
            if let value = token.parsed {
                parsed = try PaymentToken(parsed: value, byteCount: token.bytes.count)
            } else {
                parsed = try PaymentToken(json: token.bytes)
            }
            var data: DecryptedPaymentData?
            var untrusted: PaymentTokenError?
            for decryptor in decryptors where data == nil {
                do {
                    data = try decryptor.decrypt(parsed, at: time)
                } catch  where error.code == .certificateUntrusted {
                    // Its chain does not lead to this anchor: the next one may be its root.
                    untrusted = untrusted ?? error
                }
            }
            guard let data else {
                throw untrusted ?? PaymentTokenError(.certificateUntrusted, "no trust anchor")
            }
            defer { data.erase() }
            return OpenedToken(
                transactionID: parsed.transactionId, transactionIdentifier: parsed.transactionIdentifier,
                network: parsed.paymentMethod?.network, methodType: parsed.paymentMethod?.type,
                accountNumber: data.primaryAccountNumberBytes,
                expirationDate: data.applicationExpirationDate, currencyNumericCode: data.currencyCode,
                amount: data.transactionAmount,
                cryptogram: data.onlinePaymentCryptogramBytes, eci: data.eciIndicator,
                cardholderName: data.cardholderName, paymentDataType: data.paymentDataType)
        } catch {
            throw GatewayError.token(code: error.code.rawValue, reason: error.reason)
        }
    }
}

/// The product's ``SandboxKeyIssuer``: ApplePaySandbox's PKI, serialized as the PEMs of its certificates and
/// keys (the gateway stores that sealed in its database, so `orchard sandbox mint --database` can mint
/// tokens the server trusts).
public struct SandboxPKIIssuer: SandboxKeyIssuer {
    /// How long the PKI's certificates are valid.
    public var pkiValidity: TimeInterval
    /// How long issued processing certificates are valid.
    public var certificateValidity: TimeInterval

    public init(pkiValidity: TimeInterval = 10 * 365 * 86_400, certificateValidity: TimeInterval = 2 * 365 * 86_400) {
        self.pkiValidity = pkiValidity
        self.certificateValidity = certificateValidity
    }

    /// The members of the serialized form, a JSON object of PEM strings: certificates and their private keys.
    private enum Member {
        static let root = "root", rootKey = "rootKey", intermediate = "intermediate"
        static let intermediateKey = "intermediateKey", leaf = "leaf", leafKey = "leafKey"
    }

    public func generatePKI(now: Date) throws -> SecureBytes {
        let pki = try SandboxPKI.generate(
            notBefore: now.addingTimeInterval(-86_400), notAfter: now.addingTimeInterval(pkiValidity))
        let members: [(String, SecureBytes)] = [
            (Member.root, SecureBytes(pki.root.pem.utf8)), (Member.rootKey, try pki.rootKey.privateKeyPEM()),
            (Member.intermediate, SecureBytes(pki.intermediate.pem.utf8)),
            (Member.intermediateKey, try pki.intermediateKey.privateKeyPEM()),
            (Member.leaf, SecureBytes(pki.leaf.pem.utf8)), (Member.leafKey, try pki.leafKey.privateKeyPEM()),
        ]
        var bytes: [UInt8] = [UInt8(ascii: "{")]
        defer { SecureBytes.zero(&bytes) }
        for (index, (name, value)) in members.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            SecureJSON.appendMember(name, value, to: &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
        return SecureBytes(bytes)
    }

    /// The PKI of a serialized form made by ``generatePKI(now:)``; the private keys go from it to OpenSSL in
    /// zeroing buffers, never as `String`s.
    public static func pki(serialized: SecureBytes) throws -> SandboxPKI {
        func member(_ name: String) throws -> SecureBytes {
            guard let value = SecureJSON.string(at: [name], in: serialized) else {
                throw GatewayError(.internalError, "the stored sandbox PKI has no \(name)")
            }
            return value
        }
        func certificate(_ name: String) throws -> X509Certificate {
            try X509Certificate(pem: String(decoding: try member(name).copyBytes(), as: UTF8.self))
        }
        return SandboxPKI(
            rootKey: try EVPKey(privateKeyPEM: try member(Member.rootKey)), root: try certificate(Member.root),
            intermediateKey: try EVPKey(privateKeyPEM: try member(Member.intermediateKey)),
            intermediate: try certificate(Member.intermediate),
            leafKey: try EVPKey(privateKeyPEM: try member(Member.leafKey)),
            leaf: try certificate(Member.leaf))
    }

    /// The sandbox PKI stored (sealed) in a gateway database, if it was provisioned.
    public static func storedPKI(store: any Store, cipher: EnvelopeCipher) throws(GatewayError) -> SandboxPKI? {
        let sealed = try gatewayThrowing { try store.read { try $0.setting(MerchantRegistry.sandboxPKISetting) } }
        guard let sealed else { return nil }
        let bytes = try cipher.open(sealed, context: SealingContext.setting(MerchantRegistry.sandboxPKISetting))
        return try gatewayThrowing { try pki(serialized: bytes) }
    }

    public func issueProcessingKey(
        pki serialized: SecureBytes, merchantIdentifier: String, id: String, now: Date
    ) throws
        -> ProcessingKeyMaterial
    {
        let pki = try Self.pki(serialized: serialized)
        let key = try EVPKey.generateEC(curve: "P-256")
        let certificate = try pki.issueMerchantCertificate(
            publicKey: key, merchantIdentifier: merchantIdentifier, notBefore: now.addingTimeInterval(-86_400),
            notAfter: now.addingTimeInterval(certificateValidity))
        return ProcessingKeyMaterial(id: id, privateKeyPEM: try key.privateKeyPEM(), certificatePEM: certificate.pem)
    }

    public func trustAnchorPEM(pki serialized: SecureBytes) throws -> String {
        try Self.pki(serialized: serialized).root.pem
    }

    /// A row for each ``SandboxTestCard``.
    public var binEntries: [BINEntry] {
        SandboxTestCard.all.map { card in
            BINEntry(
                prefix: card.binPrefix, issuer: card.issuer, bankID: card.bankID, level: card.level,
                country: card.country, countryCode: card.countryCode,
                funding: CardInfo.fundingNumber(methodType: card.type), issuerZhTW: card.issuerZhTW)
        }
    }
}
