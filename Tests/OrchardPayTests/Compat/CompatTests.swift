import Foundation
import OrchardPay
import OrchardPayCompat
import Testing

#if canImport(PassKit)
    import PassKit
#else
    import PassKitShim
#endif

/// The test module's `print`, which only the seed samples call (TapPaySample.swift, PayerMaxSample.swift): their
/// lines go to ``SeedConsole`` for the tests to read, and the samples stay as the seeds wrote them.
func print(_ items: Any..., separator: String = " ", terminator: String = "\n") {
    SeedConsole.shared.write(items.map { "\($0)" }.joined(separator: separator))
}

/// What the seed samples print, for the tests to read.
final class SeedConsole: @unchecked Sendable {
    static let shared = SeedConsole()
    private let state = Guarded<(lines: [String], finished: Signal)>(([], Signal()))

    /// Forgets the lines and arms a new finish signal.
    func reset() { state.withLock { $0 = ([], Signal()) } }
    /// Records a line; a sample's last line of a payment fires the finish signal.
    func write(_ line: String) {
        let signal = state.withLock { state -> Signal? in
            state.lines.append(line)
            let last = ["Apple Pay Did Finish", "支付成功", "支付失败", "初始化 Apple Pay 失败", "获取订单参数失败"]
            return last.contains { line.hasPrefix($0) } ? state.finished : nil
        }
        signal?.fire()
    }
    /// The lines printed since ``reset()``.
    var lines: [String] { state.withLock { $0.lines } }
    /// Waits for the sample's last line.
    func waitUntilFinished() async { await state.withLock { $0.finished }.wait() }
    /// The lines that start with one of `markers`, in order.
    func markers(_ markers: [String]) -> [String] {
        lines.compactMap { line in markers.first { line.hasPrefix($0) } }
    }
}

/// The merchant's server of the PayerMax sample: creates the order session on the test's gateway.
struct OrderParams {
    var amount: String
    var currency: String
    var country: String
    var merchantId: String
    var orderToken: String
}

/// The gateway the PayerMax sample's server talks to.
let sampleBackend = Guarded<(gateway: LiveGateway?, amount: String)>((nil, "250.00"))

extension CheckoutViewController {
    /// The seed leaves it to the app (S004 214): here the merchant's server creates an order session
    /// (`POST /v1/sessions`, PayerMax's `/applyApplePaySession`) and answers its parameters.
    func fetchOrderParamsFromYourServer(_ completion: @escaping @MainActor (Result<OrderParams, Error>) -> Void) {
        let (gateway, amount) = sampleBackend.current
        Task { @MainActor in
            do {
                let gateway = try #require(gateway)
                let created = try await gateway.createSession(amount: amount, outTradeNo: "trade-\(UUID().uuidString.prefix(8))")
                let token = try #require(created.json["order_token"] as? String)
                completion(
                    .success(
                        OrderParams(
                            amount: created.json["amount"] as? String ?? amount, currency: "TWD", country: "TW",
                            merchantId: gateway.merchantIdentifier, orderToken: token)))
            } catch {
                completion(.failure(error))
            }
        }
    }
}

extension SetupTests {
    /// The seeds' Swift samples on OrchardPayCompat through SimulatedPaymentSheet, against a real gateway. They set
    /// OrchardPay up process-wide, so they run one at a time with the other set-up tests.
    @Suite("OrchardPayCompat: TapPay's and PayerMax's Swift names")
    @MainActor
    struct CompatTests {
        /// Sets the compat layer up for `gateway` and makes each payment's sheet play `steps`; answers the sheets made.
        func prepare(
            _ gateway: LiveGateway, steps: [SimulatedPaymentSheet.Step], card: SandboxCard = .visaCredit
        ) -> Guarded<[SimulatedPaymentSheet]> {
            SeedConsole.shared.reset()
            OrchardCompat.gatewayURL = gateway.url
            let sheets = Guarded<[SimulatedPaymentSheet]>([])
            let wallet = client(gateway)
            OrchardCompat.makePaymentSheet = {
                let sheet = SimulatedPaymentSheet(steps: steps, card: card, wallet: wallet)
                sheet.billingContact = CheckoutTests.contact
                sheets.withLock { $0.append(sheet) }
                return sheet
            }
            return sheets
        }

        /// The seed's view controller with its merchant, consumer and cart, for the sandbox merchant.
        func seedViewController(_ gateway: LiveGateway, deferred: Bool = false) -> ViewController {
            let controller = ViewController()
            controller.setupMerchant()
            controller.setupConsumer()
            if deferred { controller.setupDeferredCart() } else { controller.setupCart() }
            // The merchant's own identifier (the seed's is "merchant.apple.pay") and a shipping method, which the
            // seed's didSuccessPayment reads.
            controller.merchant.applePayMerchantIdentifier = gateway.merchantIdentifier
            let standard = PKShippingMethod(label: "Standard", amount: NSDecimalNumber(string: "0"))
            standard.identifier = "standard"
            standard.detail = "3 days"
            controller.merchant.shippingMethods = [standard]
            return controller
        }

        static let tapPayMarkers = [
            "Apple Pay On Start", "======> didSelectShippingMethod", "======> didSelectPaymentMethod",
            "======> canAuthorizePaymentWithShippingContact", "======> didReceivePrime", "Apple Pay Did Success",
            "Apple Pay Did Failure", "Apple Pay Did Cancel", "Apple Pay Did Finish",
        ]

        @Test("TapPay's sample: the callbacks in TapPay's order, the debit discount, a prime the server pays")
        func tapPaySample() async throws {
            let gateway = try LiveGateway()
            let sheets = prepare(
                gateway, steps: [.selectShippingMethod("standard"), .selectShippingContact(CheckoutTests.contact),
                                 .selectPaymentMethod(.debit), .authorize],
                card: .visaDebit)
            TPDSetup.setWithAppId(gateway.appID, withAppKey: gateway.appKey, with: TPDServerType.sandBox)
            let controller = seedViewController(gateway)
            #expect(controller.cart.totalAmount == NSDecimalNumber(string: "100.00"))

            controller.didClickBuyButton()
            await SeedConsole.shared.waitUntilFinished()
            await sheets.current.first?.waitUntilDone()

            #expect(
                SeedConsole.shared.markers(Self.tapPayMarkers) == [
                    "Apple Pay On Start", "======> didSelectShippingMethod", "======> didSelectPaymentMethod",
                    "======> canAuthorizePaymentWithShippingContact", "======> didReceivePrime", "Apple Pay Did Success",
                    "Apple Pay Did Finish",
                ])
            let lines = SeedConsole.shared.lines
            #expect(lines.contains("Apple Pay Did Success ==> Amount : 99"))
            #expect(lines.contains("total Amount :   99"))
            #expect(lines.contains("Shipping Method.identifier : Optional(\"standard\")"))
            #expect(lines.contains("type : \(PKPaymentMethodType.debit.rawValue)"))
            #expect(lines.contains("Network : Visa"))
            #expect(lines.contains("shippingContact.emailAddress : Optional(\"mei@example.com\")"))
            #expect(controller.consumer.paymentMethod.type == .debit)
            #expect(controller.applePay.checkout?.result?.status == 0)

            let primeLine = try #require(lines.first { $0.hasPrefix("Prime : ") })
            let prime = String(primeLine.dropFirst("Prime : ".count))
            #expect(prime.hasPrefix("prm_"))
            #expect(lines.contains("Expiry Millis : \(gateway.nowMillis + 90_000)"))
            // The seed's step 1: the merchant's server pays the prime for the sheet's total.
            let paid = try await gateway.payPrime(prime, amount: "99.00")
            #expect(paid.status == 200)
            #expect(paid.json["amount"] as? String == "99.00")
            let again = try await gateway.payPrime(prime, amount: "99.00")
            #expect(again.errorCode == "prime_already_used")
        }

        @Test("TapPay's sample: a declined card reaches didFailurePayment with the gateway's status, then didFinish")
        func tapPayDeclined() async throws {
            let gateway = try LiveGateway()
            _ = prepare(gateway, steps: [.selectShippingContact(CheckoutTests.contact), .authorize], card: .declined)
            TPDSetup.setWithAppId(gateway.appID, withAppKey: gateway.appKey, with: .sandBox)
            let controller = seedViewController(gateway)
            controller.didClickBuyButton()
            await SeedConsole.shared.waitUntilFinished()
            // The sheet's card is declined when charged, so the prime comes out; the seed reports success at once
            // (showPaymentResult(true)) and the server's charge is refused.
            let lines = SeedConsole.shared.lines
            let primeLine = try #require(lines.first { $0.hasPrefix("Prime : ") })
            let paid = try await gateway.payPrime(String(primeLine.dropFirst("Prime : ".count)), amount: "100.00")
            #expect(paid.errorCode == "card_declined")
        }

        @Test("TapPay's sample: a cancel before authorizing is didCancel then didFinish; the deferred cart opens the sheet")
        func tapPayCancelDeferred() async throws {
            let gateway = try LiveGateway()
            let sheets = prepare(gateway, steps: [.cancel])
            TPDSetup.setWithAppId(gateway.appID, withAppKey: gateway.appKey, with: .sandBox)
            let controller = seedViewController(gateway, deferred: true)
            controller.didClickBuyButton()
            await SeedConsole.shared.waitUntilFinished()
            #expect(
                SeedConsole.shared.markers(Self.tapPayMarkers) == [
                    "Apple Pay On Start", "Apple Pay Did Cancel", "Apple Pay Did Finish",
                ])
            let shown = try #require(sheets.current.first?.shownRequest)
            #expect(shown.isAmountPending == true)
            #expect(shown.total.type == .pending)
            #expect(shown.lineItems.map(\.type) == [.final, .pending])
        }

        @Test("88013–88016: a cart TapPay's table refuses is didFailurePayment with the code as status, then didFinish")
        func deferredTableCodes() async throws {
            let gateway = try LiveGateway()
            _ = prepare(gateway, steps: [.authorize])
            TPDSetup.setWithAppId(gateway.appID, withAppKey: gateway.appKey, with: .sandBox)
            func item(_ amount: String) -> TPDPaymentItem {
                TPDPaymentItem(itemName: "Item", withAmount: NSDecimalNumber(string: amount))
            }
            let pending = TPDPaymentItem.pendingPaymentItem(withItemName: "NT$5 per miles")
            let cases: [(items: [TPDPaymentItem], pending: Bool, show: Bool, code: Int)] = [
                ([item("100.00")], false, false, TPDErrorCode.amountPendingAndTotalHidden),
                ([pending], true, true, TPDErrorCode.allItemsPendingWithTotalShown),
                ([item("100.00"), pending], false, true, TPDErrorCode.pendingItemsWithoutAmountPending),
                ([item("0.00")], false, true, TPDErrorCode.totalNotPositive),
            ]
            #expect(cases.map(\.code) == [88013, 88014, 88015, 88016])
            for entry in cases {
                let controller = seedViewController(gateway)
                controller.cart = TPDCart()
                for item in entry.items { controller.cart.add(item) }
                controller.cart.isAmountPending = entry.pending
                controller.cart.isShowTotalAmount = entry.show
                SeedConsole.shared.reset()
                controller.didClickBuyButton()
                await SeedConsole.shared.waitUntilFinished()
                #expect(
                    SeedConsole.shared.markers(Self.tapPayMarkers) == ["Apple Pay Did Failure", "Apple Pay Did Finish"])
                #expect(SeedConsole.shared.lines.contains { $0.hasSuffix("ErrorCode : \(entry.code)") })
            }
        }

        @Test("TPDSetup takes the app id as a string (the seed's sample) and as an integer; the server type is the environment")
        func appIDStringAndInteger() throws {
            OrchardCompat.gatewayURL = nil
            #expect(AppDelegate().applicationDidFinishLaunching())
            #expect(OrchardPaySDK.configuration?.appID == "APP_ID")
            #expect(OrchardPaySDK.configuration?.appKey == "APP_KEY")
            #expect(OrchardPaySDK.configuration?.environment == .sandbox)
            #expect(OrchardPaySDK.configuration?.gatewayURL == OrchardPaySDK.defaultSandboxURL)

            let setup = TPDSetup.setWithAppId(11340, withAppKey: "ak_numeric", with: TPDServerType.sandBox)
            #expect(setup.appID == "11340")
            #expect(OrchardPaySDK.configuration?.appID == "11340")
            #expect(OrchardPaySDK.configuration?.appKey == "ak_numeric")

            OrchardCompat.gatewayURL = URL(string: "https://pay.example.com")
            TPDSetup.setWithAppKey("ak_live", withAppId: 7, with: .production)
            #expect(OrchardPaySDK.configuration?.appID == "7")
            #expect(OrchardPaySDK.configuration?.environment == .production)
            #expect(OrchardPaySDK.configuration?.gatewayURL == URL(string: "https://pay.example.com"))
            OrchardCompat.gatewayURL = nil
            TPDSetup.setWithAppId("app_x", withAppKey: "ak_x", with: .production)
            let error = #expect(throws: CheckoutError.self) { try OrchardPaySDK.gatewayClient() }
            #expect(error?.code == CheckoutError.gatewayNotConfigured)
            #expect(TPDServerType.sandBox.rawValue == 0 && TPDServerType.production.rawValue == 1)
        }

        @Test("the integer app id is sent as its digits: a gateway that knows no such app id refuses the token, reported by didFailurePayment")
        func integerAppIDReachesTheGateway() async throws {
            // The gateway has no numeric app ids of its own: the integer form sends its digits as the app id, so a
            // merchant whose app id is digits is reached and any other is refused with the gateway's code.
            let gateway = try LiveGateway()
            _ = prepare(gateway, steps: [.selectShippingContact(CheckoutTests.contact), .authorize])
            TPDSetup.setWithAppId(11340, withAppKey: gateway.appKey, with: .sandBox)
            let controller = seedViewController(gateway)
            controller.didClickBuyButton()
            await SeedConsole.shared.waitUntilFinished()
            #expect(SeedConsole.shared.markers(Self.tapPayMarkers).suffix(2) == ["Apple Pay Did Failure", "Apple Pay Did Finish"])
            #expect(controller.applePay.checkout?.result?.code == "invalid_credentials")
        }

        @Test("PMAPIClient's publishable key is the app id and app key; its environment sets OrchardPay up again")
        func publishableKey() {
            OrchardCompat.gatewayURL = URL(string: "https://pay.example.com")
            defer {
                OrchardCompat.gatewayURL = nil
                PMAPIClient.environment = .sandbox
            }
            OrchardPaySDK.setup(appID: "app_before", appKey: "ak_before", environment: .sandbox)
            #expect(PayerMaxAppDelegate().applicationDidFinishLaunching())   // the seed's placeholder has no ':'
            #expect(OrchardPaySDK.configuration?.appID == "app_before")
            PMAPIClient.defaultPublishableKey = "app_123:ak_456"
            #expect(PMAPIClient.defaultPublishableKey == "app_123:ak_456")
            #expect(OrchardPaySDK.configuration?.appID == "app_123")
            #expect(OrchardPaySDK.configuration?.appKey == "ak_456")
            #expect(OrchardPaySDK.configuration?.environment == .sandbox)
            #expect(OrchardPaySDK.configuration?.gatewayURL == URL(string: "https://pay.example.com"))
            PMAPIClient.environment = .production
            #expect(OrchardPaySDK.configuration?.environment == .production)
            #expect(OrchardPaySDK.configuration?.appID == "app_123")
        }

        @Test("TPDApplePay's availability and set-up view are OrchardPaySDK's")
        func availability() throws {
            let saved = OrchardPaySDK.sheetProvider
            defer { OrchardPaySDK.sheetProvider = saved }
            let opened = Guarded(0)
            var wallet = SimulatedPaymentSheet.Availability(networks: [.visa])
            wallet.onOpenPaymentSetup = { opened.withLock { $0 += 1 } }
            OrchardPaySDK.sheetProvider = wallet
            #expect(TPDApplePay.canMakePayments())
            #expect(TPDApplePay.canMakePayments(usingNetworks: [.visa, .JCB]))
            #expect(!TPDApplePay.canMakePayments(usingNetworks: [.amex]))
            #expect(PMApplePayConfiguration.canMakePayments())
            TPDApplePay.showSetupView()
            #expect(opened.current == 1)
            OrchardPaySDK.sheetProvider = SimulatedPaymentSheet.Availability(supported: false)
            #expect(!TPDApplePay.canMakePayments())
            #expect(!PMApplePayConfiguration.canMakePayments())
        }

        @Test("TapPay's names carry OrchardPay's values: merchant, consumer, items, card information")
        func tapPayValues() {
            let merchant = TPDMerchant()
            #expect(merchant.countryCode == "TW" && merchant.currencyCode == "TWD")
            merchant.merchantCapability = [.capability3DS, .credit]
            merchant.supportedNetworks = [.visa, .JCB]
            #expect(merchant.merchant.capabilities == [.supports3DS, .supportsCredit])
            #expect(merchant.merchant.supportedNetworks == [.visa, .jcb])
            let consumer = TPDConsumer()
            consumer.requiredShippingAddressFields = [.email, .name, .phone]
            consumer.requiredBillingAddressFields = [.postalAddress]
            #expect(consumer.consumer.requiredShippingContactFields == [.email, .name, .phone])
            #expect(consumer.consumer.requiredBillingContactFields == [.postalAddress])
            let item = TPDPaymentItem(itemName: "Tea", withAmount: NSDecimalNumber(string: "0.10"))
            #expect(item.item.amount == dec("0.10"))
            let cart = TPDCart()
            cart.add(item)
            cart.add(TPDPaymentItem(itemName: "Tea", withAmount: NSDecimalNumber(string: "0.20")))
            cart.add(.pendingPaymentItem(withItemName: "Later"))
            #expect(cart.totalAmount == NSDecimalNumber(string: "0.30"))
            #expect(cart.paymentItems.map(\.isPending) == [false, false, true])
            let card = TPDCardInfo(
                CardInfo(
                    bincode: "476112", lastFour: "0492", issuer: "Bank", issuerZhTW: "銀行", bankID: "012", funding: 1,
                    type: 1, level: "CLASSIC", country: "TAIWAN", countryCode: "TW"))
            #expect(card.bincode == "476112" && card.lastFour == "0492" && card.issuerZhTW == "銀行")
            #expect(card.issuerZhTw == "銀行" && card.bankId == "012" && card.cardType == 1 && card.funding == 1)
        }

        @Test("PayerMax's sample: the order token is paid through the session flow and didCompleteWith says success")
        func payerMaxSample() async throws {
            let gateway = try LiveGateway()
            _ = prepare(gateway, steps: [.authorize])
            sampleBackend.withLock { $0 = (gateway, "250.00") }
            defer { sampleBackend.withLock { $0 = (nil, "250.00") } }
            PMAPIClient.defaultPublishableKey = "\(gateway.appID):\(gateway.appKey)"
            #expect(OrchardPaySDK.configuration?.appID == gateway.appID)
            #expect(OrchardPaySDK.configuration?.gatewayURL == gateway.url)

            let controller = CheckoutViewController()
            controller.handleApplePayButtonTapped()
            await SeedConsole.shared.waitUntilFinished()
            #expect(SeedConsole.shared.lines == ["支付成功"])
            let session = try await gateway.client("GET", "/v1/sessions/\(controller.orderToken)")
            #expect(session.json["status"] as? String == "completed")
            #expect(session.json["amount"] as? String == "250.00")
        }

        @Test("PayerMax's sample: an amount other than the session's is refused and didCompleteWith says error")
        func payerMaxAmountMismatch() async throws {
            let gateway = try LiveGateway()
            _ = prepare(gateway, steps: [.authorize])
            // The server creates the session for 250.00 but the app shows 260.00.
            sampleBackend.withLock { $0 = (gateway, "250.00") }
            defer { sampleBackend.withLock { $0 = (nil, "250.00") } }
            PMAPIClient.defaultPublishableKey = "\(gateway.appID):\(gateway.appKey)"
            let request = PMApplePayConfiguration.paymentRequest(
                withMerchantIdentifier: gateway.merchantIdentifier, country: "TW", currency: "TWD")
            request.paymentSummaryItems = [PKPaymentSummaryItem(label: "Tea", amount: NSDecimalNumber(string: "260.00"))]
            let created = try await gateway.createSession(amount: "250.00", outTradeNo: "trade-mismatch")
            let controller = CheckoutViewController()
            controller.orderToken = try #require(created.json["order_token"] as? String)
            let context = try #require(PMApplePayContext(paymentRequest: request, delegate: controller))
            context.presentApplePay(on: controller)
            await SeedConsole.shared.waitUntilFinished()
            #expect(SeedConsole.shared.lines.first?.hasPrefix("支付失败") == true)
            #expect((context.context.sessionPayment) == nil)
        }

        @Test("PMApplePayContext is nil for a request OrchardPay cannot show, and PassKit's request says the session's fields")
        func payerMaxRequest() throws {
            let gateway = try LiveGateway()
            _ = prepare(gateway, steps: [])
            PMAPIClient.defaultPublishableKey = "\(gateway.appID):\(gateway.appKey)"
            let controller = CheckoutViewController()
            let request = PMApplePayConfiguration.paymentRequest(
                withMerchantIdentifier: gateway.merchantIdentifier, country: "TW", currency: "TWD")
            #expect(request.merchantCapabilities.contains(.threeDSecure))
            #expect(request.supportedNetworks == [.visa, .masterCard, .amex, .JCB, .chinaUnionPay])
            #expect(request.countryCode == "TW" && request.currencyCode == "TWD")
            request.paymentSummaryItems = [PKPaymentSummaryItem(label: "Tea", amount: NSDecimalNumber(string: "250.00"))]
            let context = try #require(PMApplePayContext(paymentRequest: request, delegate: controller))
            #expect(context.context.paymentRequest.total.amount == (try Money("250.00", currency: .twd)))

            let unknown = PMApplePayConfiguration.paymentRequest(
                withMerchantIdentifier: gateway.merchantIdentifier, country: "TW", currency: "XXX")
            unknown.paymentSummaryItems = request.paymentSummaryItems
            #expect(PMApplePayContext(paymentRequest: unknown, delegate: controller) == nil)
            let tooPrecise = PMApplePayConfiguration.paymentRequest(
                withMerchantIdentifier: gateway.merchantIdentifier, country: "TW", currency: "TWD")
            tooPrecise.paymentSummaryItems = [PKPaymentSummaryItem(label: "Tea", amount: NSDecimalNumber(string: "1.005"))]
            #expect(PMApplePayContext(paymentRequest: tooPrecise, delegate: controller) == nil)
            let noMerchant = PMApplePayConfiguration.paymentRequest(withMerchantIdentifier: "", country: "TW", currency: "TWD")
            noMerchant.paymentSummaryItems = request.paymentSummaryItems
            #expect(PMApplePayContext(paymentRequest: noMerchant, delegate: controller) == nil)
            OrchardCompat.makePaymentSheet = nil
            #if !canImport(PassKit)
                #expect(PMApplePayContext(paymentRequest: request, delegate: controller) == nil)
            #endif
        }
    }
}
