import ApplePayModel
import ApplePaySandbox
import Foundation
import Gateway

extension GatewayAPI {
    /// The sandbox-only routes, mounted only when the API has a ``sandboxWallet`` (the gateway runs in the
    /// sandbox); in production they do not exist and answer 404.
    func mountSandboxRoutes(_ router: inout Router) {
        guard let wallet = sandboxWallet else { return }
        router.post(
            "/v1/sandbox/wallet/tokens", scope: .client, summary: "createSandboxWalletToken",
            handler: endpoint { [self] call in try mintWalletToken(call, wallet: wallet) })
    }

    /// `POST /v1/sandbox/wallet/tokens {amount, currency, card?}`: a real-format EC_v1 token for the amount,
    /// currency and test card, encrypted to the merchant's active processing key and signed by the sandbox PKI,
    /// as `POST /v1/tokens` accepts it.
    func mintWalletToken(_ call: Call, wallet: SandboxWallet) throws -> HTTPResponse {
        let body = try RequestBody(call, required: true)
        guard let currency = try body.currency("currency"), let amount = try body.amount("amount", currency: currency)
        else { throw body.missing("amount") }
        let cardID = try body.string("card", max: 32) ?? SandboxTestCard.visaCredit.id
        guard let card = SandboxTestCard.named(cardID) else {
            throw body.invalid("card", "one of " + SandboxTestCard.all.map(\.id).joined(separator: ", "))
        }
        let data = try wallet.mintToken(
            merchant: call.merchant, amount: amount, currency: currency, card: card, at: gateway.now)
        guard let token = try? JSONSerialization.jsonObject(with: data) else { throw HTTPAPIError.internalError() }
        return Wire.response(["token": token])
    }
}
