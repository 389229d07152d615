import ApplePayModel
import ApplePaySandbox
import Foundation
import Gateway

/// Mints sandbox Apple Pay tokens for a merchant: real-format tokens encrypted to the merchant's active
/// processing certificate and signed by the sandbox PKI the gateway trusts. `orchard sandbox mint --database`
/// and the sandbox wallet route (`POST /v1/sandbox/wallet/tokens`) both use it; it exists only in the sandbox.
public struct SandboxWallet: SandboxTokenMinter {
    /// The sandbox PKI whose leaf signs.
    public let pki: SandboxPKI
    /// Where the merchants' processing certificates are.
    public let merchants: MerchantRegistry

    /// A wallet signing with `pki` for the merchants of `merchants`.
    public init(pki: SandboxPKI, merchants: MerchantRegistry) {
        self.pki = pki
        self.merchants = merchants
    }

    /// The wallet of a provisioned sandbox (``MerchantRegistry/ensureSandbox(issuer:name:merchantIdentifier:countryCode:)``).
    public init(setup: SandboxSetup, merchants: MerchantRegistry) throws(GatewayError) {
        let pki: SandboxPKI
        do { pki = try SandboxPKIIssuer.pki(serialized: setup.pki) } catch {
            throw GatewayError(.internalError, "the stored sandbox PKI cannot be read")
        }
        self.init(pki: pki, merchants: merchants)
    }

    /// The token JSON for `amount` (minor units) of `currency`, paid with `card`, signed at `date`, for
    /// `merchant`'s active processing certificate. Only sandbox merchants get tokens.
    public func mintToken(
        merchant: Merchant, amount: Int64, currency: Currency, card: SandboxTestCard = .visaCredit,
        at date: Date
    ) throws(GatewayError) -> Data {
        try mintToken(
            merchant: merchant, amount: amount, currency: currency, pan: card.pan, network: card.network,
            type: card.type, at: date)
    }

    /// ``SandboxTokenMinter``'s: the test card by its id (``SandboxTestCard/named(_:)``); an unknown one is
    /// `parameter_invalid` on `card`.
    public func mintToken(
        merchant: Merchant, amount: Int64, currency: Currency, card: String, at date: Date
    ) throws(GatewayError) -> Data {
        guard let testCard = SandboxTestCard.named(card) else {
            throw .invalid("card", "one of " + SandboxTestCard.all.map(\.id).joined(separator: ", "))
        }
        return try mintToken(merchant: merchant, amount: amount, currency: currency, card: testCard, at: date)
    }

    /// The token JSON with an explicit device account number, network and type (`orchard sandbox mint --pan`).
    public func mintToken(
        merchant: Merchant, amount: Int64, currency: Currency, pan: String, network: String, type: String,
        at date: Date
    ) throws(GatewayError) -> Data {
        guard merchant.environment == .sandbox else {
            throw GatewayError(.forbidden, "sandbox tokens are only minted for sandbox merchants")
        }
        guard (12...19).contains(pan.count), pan.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw .invalid("pan", "12 to 19 digits")
        }
        guard amount > 0 else { throw .invalid("amount", "greater than zero") }
        guard
            let certificate = try merchants.processingCertificates(merchantID: merchant.id)
                .last(where: { $0.active })?.certificatePEM
        else { throw GatewayError(.noProcessingKey, "the merchant has no active processing certificate") }
        var request = MintRequest(merchantCertificatePEM: certificate, signingTime: date)
        request.merchantIdentifier = merchant.merchantIdentifiers.first
        request.amount = amount
        request.currencyCode = currency.numericCode
        request.pan = pan
        request.network = network
        request.type = type
        do { return try TokenMinter(pki: pki).mint(request) } catch {
            throw GatewayError(.internalError, "the sandbox token could not be minted")
        }
    }
}
