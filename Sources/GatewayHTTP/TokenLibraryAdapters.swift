import ApplePaySandbox
import ApplePayToken
import Foundation
import Gateway
import OrchardCrypto

/// The gateway's ``PaymentTokenOpener`` backed by the token library: verifies the signature, the chain to the
/// environment's trust anchor and the signing time, then decrypts with the merchant key the token names.
/// Token library errors become ``GatewayError/token(code:reason:)`` with the library's code.
public struct TokenLibraryOpener: PaymentTokenOpener {
    /// The sandbox PKI's root: trusted for sandbox merchants.
    public var sandboxAnchor: TrustAnchor?
    /// Apple's root: trusted for production merchants.
    public var productionAnchor: TrustAnchor?
    /// How old (and how far in the future) a token's signing time may be.
    public var window: SigningTimeWindow

    /// An opener trusting `sandboxAnchor` for sandbox and `productionAnchor` for production merchants.
    public init(sandboxAnchor: TrustAnchor?, productionAnchor: TrustAnchor?, window: SigningTimeWindow = .default) {
        self.sandboxAnchor = sandboxAnchor
        self.productionAnchor = productionAnchor
        self.window = window
    }

    /// Verifies and decrypts `token` with whichever of `keys` it was encrypted for.
    public func open(token: Data, environment: GatewayEnvironment, keys: [ProcessingKeyMaterial], at time: Date)
        throws(GatewayError) -> OpenedToken
    {
        guard let anchor = environment == .sandbox ? sandboxAnchor : productionAnchor else {
            throw GatewayError.token(
                code: PaymentTokenError.Code.certificateUntrusted.rawValue,
                reason: "no trust anchor is configured for \(environment.rawValue)")
        }
        do {
            let parsed = try PaymentToken(json: token)
            var merchantKeys: [MerchantKey] = []
            for key in keys {
                let pem = key.privateKeyPEM.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
                if let merchantKey = try? MerchantKey(privateKeyPEM: pem, certificatePEM: key.certificatePEM) {
                    merchantKeys.append(merchantKey)
                }
            }
            let decryptor = PaymentTokenDecryptor(trustAnchor: anchor, keys: merchantKeys, window: window)
            let data = try decryptor.decrypt(parsed, at: time)
            defer { data.erase() }
            let cryptogram = data.onlinePaymentCryptogram.map { text in
                SecureBytes(Data(base64Encoded: text).map(Array.init) ?? Array(text.utf8))
            }
            return OpenedToken(
                transactionID: parsed.transactionId, transactionIdentifier: parsed.transactionIdentifier,
                network: parsed.paymentMethod?.network, methodType: parsed.paymentMethod?.type,
                accountNumber: SecureBytes(Array(data.applicationPrimaryAccountNumber.utf8)),
                expirationDate: data.applicationExpirationDate, currencyNumericCode: data.currencyCode,
                amount: data.transactionAmount, cryptogram: cryptogram, eci: data.eciIndicator,
                cardholderName: data.cardholderName, paymentDataType: data.paymentDataType)
        } catch {
            throw GatewayError.token(code: error.code.rawValue, reason: error.reason)
        }
    }
}

/// The gateway's ``SandboxKeyIssuer`` backed by the sandbox PKI: the PKI is serialized as a JSON object of PEMs
/// (certificates and private keys), kept sealed by the gateway.
public struct SandboxPKIIssuer: SandboxKeyIssuer {
    /// How long generated certificates are valid.
    public var validity: TimeInterval = 5 * 365 * 86_400

    /// An issuer.
    public init() {}

    /// Generates a sandbox PKI valid from a day before `now`.
    public func generatePKI(now: Date) throws -> SecureBytes {
        let pki = try SandboxPKI.generate(notBefore: now.addingTimeInterval(-86_400), notAfter: now.addingTimeInterval(validity))
        return try Self.serialize(pki)
    }

    /// Issues an EC P-256 processing key and its certificate for `merchantIdentifier`.
    public func issueProcessingKey(pki: SecureBytes, merchantIdentifier: String, id: String, now: Date) throws
        -> ProcessingKeyMaterial
    {
        let parsed = try Self.deserialize(pki)
        let key = try EVPKey.generateEC()
        let certificate = try parsed.issueMerchantCertificate(
            publicKey: key, merchantIdentifier: merchantIdentifier, notBefore: now.addingTimeInterval(-86_400),
            notAfter: now.addingTimeInterval(validity))
        return ProcessingKeyMaterial(
            id: id, privateKeyPEM: SecureBytes(Array(try key.privateKeyPEM().utf8)), certificatePEM: certificate.pem)
    }

    /// The PEM of the sandbox root.
    public func trustAnchorPEM(pki: SecureBytes) throws -> String { try Self.deserialize(pki).rootCertificatePEM }

    /// The PKI as sealed-storage bytes.
    public static func serialize(_ pki: SandboxPKI) throws -> SecureBytes {
        let object: [String: String] = [
            "root": pki.root.pem, "root_key": try pki.rootKey.privateKeyPEM(), "intermediate": pki.intermediate.pem,
            "intermediate_key": try pki.intermediateKey.privateKeyPEM(), "leaf": pki.leaf.pem,
            "leaf_key": try pki.leafKey.privateKeyPEM(),
        ]
        var bytes = [UInt8](try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
        defer { SecureBytes.zero(&bytes) }
        return SecureBytes(bytes)
    }

    /// The PKI from ``serialize(_:)``'s bytes.
    public static func deserialize(_ bytes: SecureBytes) throws -> SandboxPKI {
        let object = try bytes.withUnsafeBytes { try JSONSerialization.jsonObject(with: Data($0)) } as? [String: String]
        guard let object, let root = object["root"], let rootKey = object["root_key"],
            let intermediate = object["intermediate"], let intermediateKey = object["intermediate_key"],
            let leaf = object["leaf"], let leafKey = object["leaf_key"]
        else { throw GatewayError(.internalError, "the stored sandbox PKI is malformed") }
        return SandboxPKI(
            rootKey: try EVPKey(privateKeyPEM: rootKey), root: try X509Certificate(pem: root),
            intermediateKey: try EVPKey(privateKeyPEM: intermediateKey),
            intermediate: try X509Certificate(pem: intermediate), leafKey: try EVPKey(privateKeyPEM: leafKey),
            leaf: try X509Certificate(pem: leaf))
    }
}
