import Foundation
import OrchardPay
import Testing

/// `OrchardPaySDK.setup`, availability and logging: process-wide state, so these run one at a time.
@Suite("OrchardPay: set-up, availability, logs", .serialized)
struct SetupTests {
    @Test("setup: the sandbox defaults to a local orchard serve; production needs the gateway's URL")
    func setupDefaults() throws {
        OrchardPaySDK.setup(appID: "app_test", appKey: "ak_test", environment: .sandbox)
        #expect(OrchardPaySDK.configuration?.gatewayURL == OrchardPaySDK.defaultSandboxURL)
        #expect(OrchardPaySDK.configuration?.appID == "app_test")
        #expect(throws: Never.self) { try OrchardPaySDK.gatewayClient() }
        OrchardPaySDK.setup(appID: "app_test", appKey: "ak_test", environment: .production)
        let error = #expect(throws: CheckoutError.self) { try OrchardPaySDK.gatewayClient() }
        #expect(error?.code == CheckoutError.gatewayNotConfigured)
        OrchardPaySDK.setup(
            appID: "app_test", appKey: "ak_test", environment: .production,
            gatewayURL: URL(string: "https://pay.example.com"))
        #expect(OrchardPaySDK.configuration?.environment == .production)
    }

    @Test("the simulated wallet refuses a production set-up")
    func walletIsSandboxOnly() async throws {
        let gateway = try LiveGateway()
        var production = configuration(gateway)
        production.environment = .production
        let error = await #expect(throws: CheckoutError.self) {
            try await GatewayClient(configuration: production).sandboxWalletToken(
                amount: try Money("1.00", currency: .twd), card: .visaCredit)
        }
        #expect(error?.code == CheckoutError.sandboxOnly)
    }

    @Test("canMakePayments is answered by the active provider; no card of the networks means \"Set up\"")
    func availability() {
        let saved = OrchardPaySDK.sheetProvider
        defer { OrchardPaySDK.sheetProvider = saved }
        OrchardPaySDK.sheetProvider = nil
        #expect(!OrchardPaySDK.canMakePayments())
        OrchardPaySDK.sheetProvider = SimulatedPaymentSheet.Availability(networks: [.visa, .jcb])
        #expect(OrchardPaySDK.canMakePayments())
        #expect(OrchardPaySDK.canMakePayments(usingNetworks: [.masterCard, .jcb]))
        #expect(!OrchardPaySDK.canMakePayments(usingNetworks: [.amex]))
        OrchardPaySDK.sheetProvider = SimulatedPaymentSheet.Availability(supported: false)
        #expect(!OrchardPaySDK.canMakePayments(usingNetworks: [.visa]))
    }

    @Test("paymentButton: buy with a card of the networks and capabilities, set up without one, none without Apple Pay")
    @MainActor
    func paymentButtonChoice() {
        let saved = OrchardPaySDK.sheetProvider
        defer { OrchardPaySDK.sheetProvider = saved }
        let opened = Guarded(0)
        var wallet = SimulatedPaymentSheet.Availability(networks: [.visa], cardTypes: [.credit])
        wallet.onOpenPaymentSetup = { opened.withLock { $0 += 1 } }
        OrchardPaySDK.sheetProvider = wallet
        #expect(OrchardPaySDK.paymentButton(networks: [.visa, .jcb]) == .buy)
        #expect(OrchardPaySDK.paymentButton(networks: [.visa], capabilities: [.supports3DS, .supportsCredit]) == .buy)
        // A credit card only, and the merchant takes debit cards only: "Set up Apple Pay".
        #expect(!OrchardPaySDK.canMakePayments(usingNetworks: [.visa], capabilities: [.supports3DS, .supportsDebit]))
        #expect(OrchardPaySDK.paymentButton(networks: [.visa], capabilities: [.supports3DS, .supportsDebit]) == .setUp)
        #expect(OrchardPaySDK.paymentButton(networks: [.amex]) == .setUp)
        #expect(OrchardPaySDK.openPaymentSetup())
        #expect(opened.current == 1)
        OrchardPaySDK.sheetProvider = SimulatedPaymentSheet.Availability(supported: false)
        #expect(OrchardPaySDK.paymentButton(networks: [.visa]) == .unavailable)
        #expect(!OrchardPaySDK.openPaymentSetup())
        OrchardPaySDK.sheetProvider = nil
        #expect(OrchardPaySDK.paymentButton(networks: [.visa]) == .unavailable)
        #expect(!OrchardPaySDK.openPaymentSetup())
    }

    @Test("both flows on the set-up's gateway; the logs never hold the token, DPAN, cryptogram, prime or app key")
    func nothingSecretInLogs() async throws {
        let gateway = try LiveGateway()
        let lines = Guarded<[String]>([])
        OrchardPaySDK.logHandler = { line in lines.withLock { $0.append(line) } }
        defer { OrchardPaySDK.logHandler = nil }
        OrchardPaySDK.setup(appID: gateway.appID, appKey: gateway.appKey, environment: .sandbox, gatewayURL: gateway.url)

        let transport = RecordingTransport()
        let recorder = CheckoutRecorder(gateway)
        let sheet = SimulatedPaymentSheet(steps: [.selectPaymentMethod(.debit), .authorize], card: .visaDebit)
        let checkout = try ApplePayCheckout(
            merchant: coffeeMerchant(gateway), consumer: Consumer(), cart: CheckoutTests.bookCart,
            delegate: recorder, sheet: sheet, gateway: client(gateway, transport: transport))
        checkout.start()
        await recorder.finished.wait()
        #expect(recorder.result.current?.status == 0)

        let created = try await gateway.createSession(amount: "210.00", outTradeNo: "trade-logs")
        let orderToken = try #require(created.json["order_token"] as? String)
        var request = ApplePayContext.paymentRequest(
            merchantIdentifier: gateway.merchantIdentifier, country: "TW", currency: "TWD")
        request.total = SummaryItem(label: "Orchard Tea", amount: try Money("210.00", currency: .twd))
        let contextRecorder = ContextRecorder(orderToken: orderToken)
        let context = ApplePayContext(
            paymentRequest: request, delegate: contextRecorder,
            sheet: SimulatedPaymentSheet(steps: [.authorize]), gateway: client(gateway, transport: transport))
        await context.present()
        #expect(contextRecorder.outcomes.current.map(\.0) == [.success])

        // What must never be logged: every string of the tokens sent, the prime, the app key, the sandbox DPAN
        // and cryptogram.
        var secrets = [gateway.appKey, "4761120010000492", "AgAAAAAAAAAAAAAAAAAAAAAAAAA="]
        if let prime = recorder.prime.current?.prime { secrets.append(prime) }
        for exchange in transport.exchanges.current {
            guard let body = exchange.request.httpBody,
                let json = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
                let token = json["token"] as? [String: Any], let data = token["paymentData"] as? [String: Any]
            else { continue }
            let header = data["header"] as? [String: Any] ?? [:]
            secrets += [data["data"], data["signature"], header["ephemeralPublicKey"], header["publicKeyHash"]]
                .compactMap { $0 as? String }
        }
        #expect(secrets.count >= 11)
        let log = lines.current.joined(separator: "\n")
        #expect(lines.current.count >= 6)
        #expect(log.contains("POST /v1/tokens → 200"))
        for secret in secrets where secret.count >= 8 {
            #expect(!log.contains(secret), "a secret reached the log")
            #expect(!log.contains(secret.prefix(24)), "part of a secret reached the log")
        }
        // Nor do the token's descriptions print its payment data.
        let token = PaymentToken(
            paymentData: Data(#"{"data":"c2VjcmV0LXBheW1lbnQtZGF0YQ=="}"#.utf8),
            paymentMethod: PaymentMethod(type: .credit), transactionIdentifier: "abc123")
        var dumped = ""
        dump(token, to: &dumped)
        for text in [token.description, String(reflecting: token), dumped, "\(Payment(token: token))"] {
            #expect(!text.contains("c2VjcmV0"))
        }
    }
}

#if !canImport(PassKit)
    @preconcurrency import PassKitShim

    extension SetupTests {
        @Test("PassKitAvailability asks PassKit with its networks and capabilities and opens Wallet's set-up")
        @MainActor
        func passKitAvailability() {
            let saved = PKShimDevice.current
            defer { PKShimDevice.current = saved }
            let provider = PassKitAvailability()
            // PassKit's answers on a platform without it: no Apple Pay.
            PKShimDevice.current = PKShimDevice()
            #expect(!provider.canMakePayments())
            #expect(!provider.openPaymentSetup())
            PKShimDevice.current = PKShimDevice(
                supportsApplePay: true, cards: [PKShimDevice.Card(network: .JCB, type: .debit)])
            #expect(provider.canMakePayments())
            #expect(provider.canMakePayments(usingNetworks: [.jcb]))
            #expect(!provider.canMakePayments(usingNetworks: [.visa, .masterCard]))
            #expect(provider.canMakePayments(usingNetworks: [.jcb], capabilities: [.supports3DS, .supportsDebit]))
            #expect(!provider.canMakePayments(usingNetworks: [.jcb], capabilities: [.supports3DS, .supportsCredit]))
            #expect(provider.openPaymentSetup())
            #expect(PKShimDevice.current.paymentSetupRequests == 1)
            let savedProvider = OrchardPaySDK.sheetProvider
            defer { OrchardPaySDK.sheetProvider = savedProvider }
            OrchardPaySDK.sheetProvider = provider
            let button = OrchardPaySDK.paymentButton(networks: [.jcb], capabilities: [.supports3DS, .supportsCredit])
            #expect(button == .setUp)
            #expect(button.passKitButtonType() == .setUp)
            #expect(OrchardPaySDK.paymentButton(networks: [.jcb]).passKitButtonType(callToAction: .checkout) == .checkout)
            #expect(ApplePayButtonKind.unavailable.passKitButtonType() == nil)
        }
    }
#endif
