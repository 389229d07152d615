import ApplePayModel
import ApplePaySandbox
import Foundation
import Gateway
import OrchardBase
import OrchardHTTP
import OrchardJSON

extension GatewayAPI {
    /// The sandbox-only routes, mounted only when the API has a ``sandboxWallet`` (the gateway runs in the
    /// sandbox); in production they do not exist and answer 404.
    func mountSandboxRoutes(_ router: inout Router) {
        guard let wallet = sandboxWallet else { return }
        router.post(
            "/v1/sandbox/wallet/tokens", scope: .client, summary: "createSandboxWalletToken",
            handler: endpoint { [self] call in try mintWalletToken(call, wallet: wallet) })
        router.get(
            "/v1/sandbox/wallet/cards", scope: .client, summary: "listSandboxWalletCards",
            handler: endpoint { _ in Self.walletCards() })
        router.get("/demo", summary: "getDemoStore") { [self] request, context in try demoPage(request) }
        router.get("/demo/{file}", summary: "getDemoFile") { request, context in
            try WebAssets.shared.response("demo/" + (try context.parameter("file")), for: request)
        }
        router.post("/demo/api/pay", summary: "payDemoOrder") { [self] request, context in
            try demoPay(request, context)
        }
    }

    /// `GET /v1/sandbox/wallet/cards`: the test cards the sandbox sheet offers (``SandboxTestCard``).
    static func walletCards() -> HTTPResponse {
        Wire.response([
            "data": SandboxTestCard.all.map { card in
                [
                    "card": card.id, "label": card.label, "network": card.network, "type": card.type,
                    "last_four": String(card.pan.suffix(4)),
                ]
            }
        ])
    }

    /// The sandbox merchant: the demo store's merchant.
    func demoMerchant() throws -> Merchant {
        guard let merchant = try gateway.merchants.merchants(environment: .sandbox).first else {
            throw HTTPAPIError.notFound("the sandbox has no merchant")
        }
        return merchant
    }

    /// `GET /demo`: the demo store's page, with the sandbox merchant's app id and app key (client credentials,
    /// meant for web pages) filled in, and orchard.js loaded as docs/web.md shows a merchant: by its versioned
    /// path, with its integrity.
    func demoPage(_ request: HTTPRequest) throws -> HTTPResponse {
        let assets = WebAssets.shared
        guard let asset = assets.assets["demo.html"], let script = assets.assets["orchard.js"] else {
            throw HTTPAPIError.notFound("the gateway has no web file demo.html")
        }
        let merchant = try demoMerchant()
        let credentials = try gateway.merchants.credentials(merchantID: merchant.id)
        let page = String(decoding: asset.body, as: UTF8.self)
            .replacingOccurrences(of: "{{ORCHARD_APP_ID}}", with: Self.htmlEscaped(credentials.appID))
            .replacingOccurrences(of: "{{ORCHARD_APP_KEY}}", with: Self.htmlEscaped(credentials.appKey))
            .replacingOccurrences(
                of: "{{ORCHARD_MERCHANT_IDENTIFIER}}",
                with: Self.htmlEscaped(merchant.merchantIdentifiers.first ?? "")
            )
            .replacingOccurrences(of: "{{ORCHARD_JS_SRC}}", with: script.versionedPath(of: "orchard.js"))
            .replacingOccurrences(of: "{{ORCHARD_JS_INTEGRITY}}", with: script.integrity)
        var headers = HTTPHeaders()
        headers["Content-Type"] = asset.contentType
        headers["Cache-Control"] = "no-store"
        headers["Content-Security-Policy"] = Self.demoContentSecurityPolicy
        return HTTPResponse(status: .ok, headers: headers, body: Data(page.utf8))
    }

    /// The demo page's policy, the strict one docs/web.md gives a merchant: every script, style and request is
    /// this origin's (its own files, orchard.js and the sandbox wallet's file), none inline, and no other site
    /// may frame it.
    static let demoContentSecurityPolicy =
        "default-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

    static func htmlEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "\"", with: "&quot;")
            .replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }

    /// `POST /demo/api/pay {prime, amount, currency, deferred?}`: the demo store's merchant server. It pays by
    /// prime as the sandbox merchant (`POST /v1/payments` with its secret key, inside the gateway) and answers
    /// `{payment, events}`: the payment and the webhook events about it.
    func demoPay(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        let merchant = try demoMerchant()
        let call = Call(
            request: request, context: context, merchant: merchant, idempotencyKey: nil, scope: .unattributed,
            parsedBody: Self.parse(request, context: context))
        let paid: HTTPResponse
        do { paid = try createPayment(call) } catch {
            let apiError = GatewayAPIError.from(error)
            context.record(apiError, cause: error)
            return apiError.response(requestID: context.requestID)
        }
        let payment = (try? JSONValue.parse(paid.body)).flatMap { $0.members == nil ? nil : $0 } ?? .object([])
        let paymentID = payment["id"]?.string
        // The subscripts answer nil for anything but an object: a payload without `data.id` is not about it.
        let events = try gateway.webhooks.events(merchant: merchant, limit: 100).reversed().compactMap { event -> Any? in
            guard let paymentID, let body = try? JSONValue.parse(event.payload),
                body["data"]?["id"]?.string == paymentID
            else { return nil }
            return body
        }
        return Wire.response(["payment": payment, "events": events])
    }

    /// `POST /v1/sandbox/wallet/tokens {amount, currency, card?}`: a real-format EC_v1 token for the amount,
    /// currency and test card, encrypted to the merchant's active processing key and signed by the sandbox PKI,
    /// as `POST /v1/tokens` accepts it.
    func mintWalletToken(_ call: Call, wallet: any SandboxTokenMinter) throws -> HTTPResponse {
        let body = try RequestBody(call, required: true)
        guard let currency = try body.currency("currency"), let amount = try body.amount("amount", currency: currency)
        else { throw body.missing("amount") }
        let card = try body.string("card", max: 32) ?? SandboxTestCard.visaCredit.id
        let data = try wallet.mintToken(
            merchant: call.merchant, amount: amount, currency: currency, card: card, at: gateway.now)
        guard let token = try? JSONValue.parse(data) else { throw HTTPAPIError.internalError() }
        return Wire.response(["token": token])
    }
}
