import Foundation
import OrchardPay
import Testing

/// The prime flow (`ApplePayCheckout`) through `SimulatedPaymentSheet` against a real gateway on loopback.
@Suite("ApplePayCheckout: the prime flow")
struct CheckoutTests {
    static let contact: Contact = {
        var contact = Contact()
        contact.givenName = "Mei"
        contact.familyName = "Lin"
        contact.emailAddress = "mei@example.com"
        contact.phoneNumber = "+886912345678"
        contact.addressLines = ["No. 7, Section 5, Xinyi Road"]
        contact.locality = "Taipei"
        contact.postalCode = "110"
        contact.countryCode = "TW"
        return contact
    }()

    static let bookCart = Cart(items: [PaymentItem(label: "Book", amount: dec("100.00"))])

    func run(
        _ gateway: LiveGateway, _ recorder: CheckoutRecorder, cart: Cart = bookCart, consumer: Consumer = Consumer(),
        steps: [SimulatedPaymentSheet.Step], card: SandboxCard = .visaCredit, sdk: GatewayClient? = nil,
        timer: ManualTimer? = nil, callbacks: DelegateCallbacks = .mainActor, afterStart: (() async -> Void)? = nil
    ) async throws -> (ApplePayCheckout, SimulatedPaymentSheet) {
        let sheet = SimulatedPaymentSheet(steps: steps, card: card, wallet: client(gateway))
        if let timer {
            sheet.handlerTimer = timer
            sheet.handlerBudget = 2
        }
        let checkout = try ApplePayCheckout(
            merchant: coffeeMerchant(gateway), consumer: consumer, cart: cart, delegate: recorder, sheet: sheet,
            gateway: sdk ?? client(gateway), callbacks: callbacks)
        checkout.start()
        await afterStart?()
        await recorder.finished.wait()
        await sheet.waitUntilDone()
        return (checkout, sheet)
    }

    @Test("the callbacks come in TapPay's order; the prime pays by prime and showPaymentResult(true) succeeds")
    func primeFlowEndToEnd() async throws {
        let gateway = try LiveGateway()
        let recorder = CheckoutRecorder(gateway)
        let consumer = Consumer(requiredShippingContactFields: [.email, .name], requiredBillingContactFields: [])
        let (checkout, sheet) = try await run(
            gateway, recorder, consumer: consumer,
            steps: [.selectShippingContact(Self.contact), .selectPaymentMethod(.credit), .authorize])

        #expect(
            recorder.events.current == [
                "didStart", "didSelectShippingContact:TW", "didSelectPaymentMethod:credit", "canAuthorize",
                "didReceivePrime", "showPaymentResult",
                "didSucceed", "didFinish",
            ])
        let prime = try #require(recorder.prime.current)
        #expect(prime.prime.hasPrefix("prm_"))
        #expect(prime.expiry == gateway.nowMillis + 90_000)
        #expect(prime.card.bincode == "476112")
        #expect(prime.card.lastFour.count == 4)
        #expect(prime.card.type == 1)
        #expect(prime.card.funding == 0)
        #expect(!prime.card.issuer.isEmpty)
        #expect(prime.card.countryCode == "TW")
        #expect(prime.reference.affiliateCodes == [])
        let payment = try #require(recorder.payment.current)
        #expect(payment.status == 200)
        #expect(payment.json["status"] as? String == "captured")
        #expect(payment.json["amount"] as? String == "100.00")
        let result = try #require(recorder.result.current)
        #expect(result.status == 0)
        #expect(result.code == nil)
        #expect(result.amount == dec("100.00"))
        #expect(result.paymentMethod?.network == .visa)
        #expect(checkout.consumer.shippingContact?.emailAddress == "mei@example.com")
        #expect(checkout.consumer.paymentMethod?.type == .credit)
        #expect(checkout.prime?.prime == prime.prime)
        #expect(checkout.prime?.totalAmount == dec("100.00"))
        #expect(checkout.result == result)
        #expect(authorizationResults(sheet).map(\.status) == [.success])
        #expect(sheet.events.last == .finished)
        // A checkout runs once: a second start or result changes nothing, and didFinish stays single.
        checkout.start()
        checkout.showPaymentResult(false)
        try await Task.sleep(for: .milliseconds(50))
        #expect(recorder.events.current.filter { $0 == "didFinish" }.count == 1)
        #expect(recorder.events.current.count == 8)
        // The prime is one-time: paying it again is refused.
        let again = try await gateway.payPrime(prime.prime, amount: "100.00")
        #expect(again.status != 200)
    }

    @Test("TapPay's debit discount: choosing a debit card takes 1.00 off the total shown and charged")
    func debitDiscountChangesTotal() async throws {
        let gateway = try LiveGateway()
        let recorder = CheckoutRecorder(gateway)
        let (checkout, sheet) = try await run(
            gateway, recorder,
            steps: [
                .selectPaymentMethod(.debit), .selectPaymentMethod(.credit), .selectPaymentMethod(.debit), .authorize,
            ], card: .visaDebit)
        #expect(shownTotals(sheet) == ["100.00", "99.00", "100.00", "99.00"])
        #expect(authorizedAmounts(sheet) == ["99.00"])
        #expect(checkout.cart.totalAmount == dec("99.00"))
        #expect(checkout.cart.items.map(\.label) == ["Book", "Discount"])
        #expect(recorder.payment.current?.json["amount"] as? String == "99.00")
        #expect(recorder.result.current?.amount == dec("99.00"))
        #expect(recorder.result.current?.status == 0)
        #expect(recorder.prime.current?.card.funding == 1)
    }

    @Test("choosing a shipping method recomputes the total with its amount")
    func shippingMethodRecomputesTotal() async throws {
        let gateway = try LiveGateway()
        let recorder = CheckoutRecorder(gateway)
        let twd = { (text: String) in try! Money(text, currency: .twd) }
        let cart = Cart(
            items: [PaymentItem(label: "Tea, 2 boxes", amount: dec("500.00"))],
            shippingMethods: [
                ShippingMethod(identifier: "standard", label: "Standard", amount: twd("60.00"), selected: true),
                ShippingMethod(identifier: "express", label: "Express", amount: twd("150.00")),
            ])
        let (checkout, sheet) = try await run(
            gateway, recorder, cart: cart, steps: [.selectShippingMethod("express"), .authorize])
        #expect(shownTotals(sheet) == ["560.00", "650.00"])
        #expect(authorizedAmounts(sheet) == ["650.00"])
        #expect(checkout.cart.shippingMethod?.identifier == "express")
        #expect(checkout.paymentRequest.lineItems.map(\.label) == ["Tea, 2 boxes", "Express"])
        #expect(recorder.events.current.contains("didSelectShippingMethod:express"))
        #expect(recorder.payment.current?.json["amount"] as? String == "650.00")
        #expect(recorder.result.current?.status == 0)
    }

    @Test(
        "TapPay's deferred table: the unsupported combinations are refused at init with 88013–88016",
        arguments: [
            ("88013", false, false, [PaymentItem(label: "Ride", amount: dec("100.00"))]),
            ("88013", false, false, [PaymentItem.pending(label: "NT$5 per mile")]),
            ("88014", true, true, [PaymentItem.pending(label: "NT$5 per mile")]),
            ("88015", false, true, [PaymentItem.pending(label: "NT$5 per mile")]),
            (
                "88015", false, true,
                [PaymentItem(label: "Initial charge", amount: dec("100.00")), PaymentItem.pending(label: "Per mile")]
            ),
            ("88016", false, true, [PaymentItem(label: "Free", amount: dec("0")), PaymentItem(label: "x", amount: 0)]),
            ("88016", false, true, [PaymentItem(label: "Refund", amount: dec("-5.00"))]),
        ])
    func deferredTableRefusals(code: String, pending: Bool, showTotal: Bool, items: [PaymentItem]) throws {
        let gateway = try LiveGateway()
        let cart = Cart(items: items, isAmountPending: pending, isShowTotalAmount: showTotal)
        let error = #expect(throws: CheckoutError.self) {
            try ApplePayCheckout(
                merchant: coffeeMerchant(gateway), consumer: Consumer(), cart: cart,
                delegate: CheckoutRecorder(gateway), sheet: SimulatedPaymentSheet(steps: []))
        }
        #expect(error?.code == code)
        #expect(error?.issues.contains { $0.code == code } == true)
    }

    @Test("the model's rules are refused at init too, with their codes")
    func modelRulesRefused() throws {
        let gateway = try LiveGateway()
        var merchant = coffeeMerchant(gateway)
        merchant.capabilities = [.supportsCredit]
        let cases: [(Merchant, Cart, String)] = [
            (merchant, Self.bookCart, "missing_supports_3ds"),
            (
                coffeeMerchant(gateway), Cart(items: [PaymentItem(label: "x", amount: dec("1.005"))]),
                "too_many_decimals"
            ),
            (
                Merchant(
                    name: "X", merchantIdentifier: gateway.merchantIdentifier, countryCode: "TW", currencyCode: "ZZZ",
                    supportedNetworks: [.visa]), Self.bookCart, "unknown_currency"
            ),
        ]
        for (merchant, cart, code) in cases {
            let error = #expect(throws: CheckoutError.self) {
                try ApplePayCheckout(
                    merchant: merchant, consumer: Consumer(), cart: cart, delegate: CheckoutRecorder(gateway),
                    sheet: SimulatedPaymentSheet(steps: []))
            }
            #expect(error?.code == code)
        }
    }

    @Test("a deferred cart of pending items hands the sheet a total of 1 and its prime lives 30 days")
    func deferredCartCompatibilityRule() async throws {
        let gateway = try LiveGateway()
        let recorder = CheckoutRecorder(gateway)
        recorder.deferredAmount = "250.00"
        let cart = Cart(
            items: [PaymentItem.pending(label: "NT$5 per mile")], isAmountPending: true, isShowTotalAmount: false)
        let (checkout, sheet) = try await run(gateway, recorder, cart: cart, steps: [.authorize])
        #expect(checkout.paymentRequest.total.type == .pending)
        #expect(checkout.paymentRequest.total.amount.isZero)
        #expect(shownTotals(sheet) == ["1.00"])
        #expect(authorizedAmounts(sheet) == ["1.00"])
        #expect(recorder.prime.current?.expiry == gateway.nowMillis + 30 * 24 * 3_600_000)
        #expect(recorder.payment.current?.json["amount"] as? String == "250.00")
        #expect(recorder.result.current?.status == 0)
    }

    @Test("a deferred cart with its total shown charges the shown total and its prime lives 30 days")
    func deferredCartShownTotal() async throws {
        let gateway = try LiveGateway()
        let recorder = CheckoutRecorder(gateway)
        let cart = Cart(
            items: [PaymentItem(label: "Initial charge", amount: dec("100.00"))], isAmountPending: true,
            isShowTotalAmount: true)
        let (_, sheet) = try await run(gateway, recorder, cart: cart, steps: [.authorize])
        #expect(shownTotals(sheet) == ["100.00"])
        #expect(recorder.prime.current?.expiry == gateway.nowMillis + 30 * 24 * 3_600_000)
        #expect(recorder.result.current?.status == 0)
    }

    @Test("closing the sheet before authorizing reports didCancel, then didFinish once")
    func cancelBeforeAuthorizing() async throws {
        let gateway = try LiveGateway()
        let recorder = CheckoutRecorder(gateway)
        _ = try await run(gateway, recorder, steps: [.selectPaymentMethod(.credit), .cancel])
        #expect(recorder.events.current == ["didStart", "didSelectPaymentMethod:credit", "didCancel", "didFinish"])
        #expect(recorder.prime.current == nil)
    }

    @Test("closing the sheet while the prime is being made reports the real outcome, never a cancel")
    func cancelWhileTokenizing() async throws {
        let gateway = try LiveGateway()
        let recorder = CheckoutRecorder(gateway)
        let (_, sheet) = try await run(gateway, recorder, steps: [.authorize, .cancelWhilePending])
        #expect(
            recorder.events.current == [
                "didStart", "canAuthorize", "didReceivePrime", "showPaymentResult", "didSucceed", "didFinish",
            ])
        #expect(recorder.payment.current?.json["status"] as? String == "captured")
        // The sheet closed first, and got the result late.
        let finished = try #require(sheet.events.firstIndex(of: .finished))
        let result = try #require(sheet.events.firstIndex(of: .authorizationResult(.init(status: .success))))
        #expect(finished < result)
    }

    @Test("closing the sheet while the merchant's server pays waits for showPaymentResult")
    func cancelWhilePaying() async throws {
        let gateway = try LiveGateway()
        let recorder = CheckoutRecorder(gateway)
        let closed = Signal()
        let sheetBox = Guarded<SimulatedPaymentSheet?>(nil)
        recorder.onPrime = { checkout, prime in
            Task {
                await closed.wait()
                let answer = try? await gateway.payPrime(prime, amount: "100.00")
                recorder.payment.withLock { $0 = answer }
                checkout.showPaymentResult(answer?.status == 200)
            }
        }
        let sheet = SimulatedPaymentSheet(steps: [.authorize, .cancelWhilePending], wallet: client(gateway))
        sheetBox.withLock { $0 = sheet }
        let checkout = try ApplePayCheckout(
            merchant: coffeeMerchant(gateway), consumer: Consumer(), cart: Self.bookCart, delegate: recorder,
            sheet: sheet, gateway: client(gateway))
        checkout.start()
        // Pay only once the sheet has closed.
        while !sheet.events.contains(.finished) { try await Task.sleep(for: .milliseconds(5)) }
        closed.fire()
        await recorder.finished.wait()
        #expect(!recorder.events.current.contains("didCancel"))
        #expect(recorder.events.current.suffix(2) == ["didSucceed", "didFinish"])
        #expect(recorder.payment.current?.status == 200)
    }

    @Test("a declined charge: the merchant's showPaymentResult(false) reports didFail with merchant_declined")
    func merchantDeclined() async throws {
        let gateway = try LiveGateway()
        let recorder = CheckoutRecorder(gateway)
        let (_, sheet) = try await run(gateway, recorder, steps: [.authorize], card: .declined)
        #expect(recorder.payment.current?.status == 402)
        #expect(recorder.payment.current?.errorCode == "card_declined")
        let result = try #require(recorder.result.current)
        #expect(result.status == -2)
        #expect(result.code == "merchant_declined")
        #expect(result.amount == dec("100.00"))
        #expect(recorder.events.current.suffix(2) == ["didFail:merchant_declined", "didFinish"])
        #expect(authorizationResults(sheet).map(\.status) == [.failure])
    }

    @Test("a gateway error becomes a TransactionResult with the gateway's status and code")
    func gatewayErrorMapsToResult() async throws {
        let gateway = try LiveGateway()
        let recorder = CheckoutRecorder(gateway)
        let sdk = GatewayClient(configuration: configuration(gateway, appKey: "ak_wrong_key_0000000000000000"))
        _ = try await run(gateway, recorder, steps: [.authorize], sdk: sdk)
        let result = try #require(recorder.result.current)
        #expect(result.status == 401)
        #expect(result.code == "invalid_credentials")
        #expect(!result.message.isEmpty)
        #expect(result.amount == dec("100.00"))
        #expect(result.paymentMethod?.network == .visa)
        #expect(recorder.events.current == ["didStart", "canAuthorize", "didFail:invalid_credentials", "didFinish"])
    }

    @Test("the network being down gives didFail with network_error and a clear message")
    func networkDown() async throws {
        let gateway = try LiveGateway()
        let recorder = CheckoutRecorder(gateway)
        let sdk = GatewayClient(configuration: configuration(gateway, url: URL(string: "http://127.0.0.1:1")!))
        _ = try await run(gateway, recorder, steps: [.authorize], sdk: sdk)
        let result = try #require(recorder.result.current)
        #expect(result.status == -1)
        #expect(result.code == "network_error")
        #expect(result.message.contains("could not be reached"))
        #expect(result.message.contains("127.0.0.1:1"))
    }

    @Test("an invalid shipping contact is shippingContactInvalid with the field; a corrected one goes through")
    func invalidShippingContact() async throws {
        let gateway = try LiveGateway()
        let recorder = CheckoutRecorder(gateway)
        var noPostalCode = Self.contact
        noPostalCode.postalCode = nil
        var badEmail = Self.contact
        badEmail.emailAddress = "mei.example.com"
        let consumer = Consumer(requiredShippingContactFields: [.email, .postalAddress])
        let (_, sheet) = try await run(
            gateway, recorder, consumer: consumer,
            steps: [
                .selectShippingContact(noPostalCode), .authorize, .selectShippingContact(badEmail), .authorize,
                .selectShippingContact(Self.contact), .authorize,
            ])
        let results = authorizationResults(sheet)
        #expect(results.count == 3)
        #expect(
            results.first?.errors == [
                PaymentSheetError(
                    .shippingContactInvalid, contactField: .postalAddress, postalAddressKey: "postalCode",
                    message: "Enter a postal code")
            ])
        #expect(results.dropFirst().first?.errors.map(\.contactField) == [.email])
        #expect(results.dropFirst().first?.errors.map(\.code) == [.shippingContactInvalid])
        #expect(results.last?.status == .success)
        #expect(recorder.events.current.filter { $0 == "canAuthorize" }.count == 1)
        #expect(recorder.result.current?.status == 0)
    }

    @Test("canAuthorize false shows the contact as invalid and nothing is tokenized")
    func merchantRefusesContact() async throws {
        let gateway = try LiveGateway()
        let recorder = CheckoutRecorder(gateway)
        recorder.accepts = false
        let (_, sheet) = try await run(gateway, recorder, steps: [.selectShippingContact(Self.contact), .authorize])
        #expect(authorizationResults(sheet).first?.errors.map(\.code) == [.shippingContactInvalid])
        #expect(recorder.prime.current == nil)
        #expect(
            recorder.events.current == ["didStart", "didSelectShippingContact:TW", "canAuthorize", "didCancel", "didFinish"])
    }

    @Test("a card handler that misses the sheet's budget gets the fallback update; its late cart is ignored")
    func slowHandlerGetsFallback() async throws {
        let gateway = try LiveGateway()
        let recorder = CheckoutRecorder(gateway)
        let timer = ManualTimer()
        let entered = Signal()
        let returned = Signal()
        let release = DispatchSemaphore(value: 0)
        recorder.onSelectMethod = {
            entered.fire()
            release.wait()
        }
        let discount = recorder.cartForMethod
        recorder.cartForMethod = { method, cart in
            defer { returned.fire() }
            return discount(method, cart)
        }
        // The handler blocks its thread: with callbacks off the main actor (.background), as before they moved there.
        let (checkout, sheet) = try await run(
            gateway, recorder, steps: [.selectPaymentMethod(.debit), .authorize], card: .visaDebit, timer: timer,
            callbacks: .background
        ) {
            await entered.wait()
            await timer.armed.wait()
            timer.expire()
        }
        // The whole payment went through while the handler was still blocked; now it answers, too late.
        #expect(recorder.events.current.last == "didFinish")
        release.signal()
        await returned.wait()
        try await Task.sleep(for: .milliseconds(50))
        #expect(shownTotals(sheet) == ["100.00", "100.00"])
        #expect(authorizedAmounts(sheet) == ["100.00"])
        #expect(checkout.cart.totalAmount == dec("100.00"))
        #expect(recorder.result.current?.status == 0)
        #expect(recorder.payment.current?.json["amount"] as? String == "100.00")
    }
}

/// The shipping contact hook and coupon codes of the prime flow.
@Suite("ApplePayCheckout: shipping contacts and coupon codes")
struct CheckoutHookTests {
    static func twd(_ text: String) -> Money { try! Money(text, currency: .twd) }

    static func contact(_ country: String, postalCode: String = "110") -> Contact {
        var contact = Contact()
        contact.locality = "City"
        contact.postalCode = postalCode
        contact.countryCode = country
        return contact
    }

    static let teaCart = Cart(
        items: [PaymentItem(label: "Tea", amount: dec("500.00"))],
        shippingMethods: [ShippingMethod(identifier: "standard", label: "Standard", amount: twd("60.00"))])

    /// Shipping to Japan costs 400 by air; postal code 999 cannot be served.
    static let perAddress: @Sendable (Contact, Cart) -> CartUpdate = { contact, cart in
        var cart = cart
        if contact.postalCode == "999" {
            return CartUpdate(
                cart: cart,
                errors: [PaymentSheetError(.shippingAddressUnserviceable, message: "We cannot deliver there")])
        }
        if contact.countryCode == "JP" {
            cart.shippingMethods = [ShippingMethod(identifier: "air", label: "Air mail", amount: twd("400.00"))]
        }
        return CartUpdate(cart: cart)
    }

    func run(
        _ gateway: LiveGateway, _ recorder: CheckoutRecorder, cart: Cart, steps: [SimulatedPaymentSheet.Step],
        card: SandboxCard = .visaCredit
    ) async throws -> (ApplePayCheckout, SimulatedPaymentSheet) {
        let sheet = SimulatedPaymentSheet(steps: steps, card: card, wallet: client(gateway))
        let checkout = try ApplePayCheckout(
            merchant: coffeeMerchant(gateway), consumer: Consumer(), cart: cart, delegate: recorder, sheet: sheet,
            gateway: client(gateway))
        checkout.start()
        await recorder.finished.wait()
        await sheet.waitUntilDone()
        return (checkout, sheet)
    }

    static func updates(_ sheet: SimulatedPaymentSheet) -> [PaymentRequestUpdate] {
        sheet.events.compactMap { event in
            if case .updated(let update, _) = event { return update }
            return nil
        }
    }

    @Test("a shipping contact gets its address's shipping methods and costs; the charge follows them")
    func perAddressShipping() async throws {
        let gateway = try LiveGateway()
        let recorder = CheckoutRecorder(gateway)
        recorder.cartForContact = Self.perAddress
        let (checkout, sheet) = try await run(
            gateway, recorder, cart: Self.teaCart, steps: [.selectShippingContact(Self.contact("JP")), .authorize])
        let update = try #require(Self.updates(sheet).first)
        #expect(update.status == .success)
        #expect(update.shippingMethods?.map(\.identifier) == ["air"])
        #expect(update.lineItems.map(\.label) == ["Tea", "Air mail"])
        #expect(shownTotals(sheet) == ["560.00", "900.00"])
        #expect(authorizedAmounts(sheet) == ["900.00"])
        #expect(checkout.cart.shippingMethod?.identifier == "air")
        #expect(recorder.events.current.contains("didSelectShippingContact:JP"))
        #expect(recorder.payment.current?.json["amount"] as? String == "900.00")
        #expect(recorder.result.current?.status == 0)
    }

    @Test("an address the merchant cannot serve comes back as shippingAddressUnserviceable; another one pays")
    func unserviceableAddress() async throws {
        let gateway = try LiveGateway()
        let recorder = CheckoutRecorder(gateway)
        recorder.cartForContact = Self.perAddress
        let (_, sheet) = try await run(
            gateway, recorder, cart: Self.teaCart,
            steps: [
                .selectShippingContact(Self.contact("TW", postalCode: "999")), .selectShippingContact(Self.contact("TW")),
                .authorize,
            ])
        let updates = Self.updates(sheet)
        #expect(updates.first?.status == .failure)
        #expect(updates.first?.errors.map(\.code) == [.shippingAddressUnserviceable])
        #expect(updates.first?.errors.first?.message == "We cannot deliver there")
        #expect(updates.last?.errors == [])
        #expect(recorder.result.current?.status == 0)
    }

    @Test("a new cart for the address keeps the card's discount: the card's cart is asked again, from the new cart")
    func contactAfterCardKeepsDiscount() async throws {
        let gateway = try LiveGateway()
        let recorder = CheckoutRecorder(gateway)
        recorder.cartForContact = Self.perAddress
        let (_, sheet) = try await run(
            gateway, recorder, cart: Self.teaCart,
            steps: [.selectPaymentMethod(.debit), .selectShippingContact(Self.contact("JP")), .authorize],
            card: .visaDebit)
        // 500 + 60 − 1, then 500 + 400 − 1 (not −2, not without the discount).
        #expect(shownTotals(sheet) == ["560.00", "559.00", "899.00"])
        #expect(recorder.events.current.filter { $0 == "didSelectPaymentMethod:debit" }.count == 2)
        #expect(recorder.payment.current?.json["amount"] as? String == "899.00")
    }

    @Test("coupon codes: the request offers the field; an invalid or expired code shows its error, a valid one its discount")
    func couponCodes() async throws {
        let gateway = try LiveGateway()
        let recorder = CheckoutRecorder(gateway)
        recorder.cartForCoupon = { code, cart in
            var cart = cart
            switch code {
            case "TEA10":
                cart.add(PaymentItem(label: "Coupon TEA10", amount: dec("-50.00")))
                return CartUpdate(cart: cart)
            case "SPRING":
                return CartUpdate(cart: cart, errors: [PaymentSheetError(.couponCodeExpired, message: "Expired")])
            default:
                return CartUpdate(cart: cart, errors: [PaymentSheetError(.couponCodeInvalid, message: "Unknown code")])
            }
        }
        var cart = Self.teaCart
        cart.supportsCouponCode = true
        cart.couponCode = "WELCOME"
        let (checkout, sheet) = try await run(
            gateway, recorder, cart: cart,
            steps: [.enterCouponCode("NOPE"), .enterCouponCode("SPRING"), .enterCouponCode("TEA10"), .authorize])
        let updates = Self.updates(sheet)
        #expect(updates.map { $0.errors.map(\.code) } == [[.couponCodeInvalid], [.couponCodeExpired], []])
        #expect(updates.map(\.status) == [.failure, .failure, .success])
        #expect(shownTotals(sheet) == ["560.00", "560.00", "560.00", "510.00"])
        #expect(checkout.cart.couponCode == "TEA10")
        #expect(checkout.paymentRequest.supportsCouponCode == true)
        #expect(checkout.paymentRequest.couponCode == "TEA10")
        #expect(recorder.events.current.filter { $0.hasPrefix("didChangeCouponCode") } == [
            "didChangeCouponCode:NOPE", "didChangeCouponCode:SPRING", "didChangeCouponCode:TEA10",
        ])
        #expect(recorder.payment.current?.json["amount"] as? String == "510.00")
    }

    @Test("a coupon step on a request without the coupon field is skipped; an invalid cart from a hook is ignored")
    func couponFieldAndInvalidCart() async throws {
        let gateway = try LiveGateway()
        let recorder = CheckoutRecorder(gateway)
        recorder.cartForContact = { _, cart in
            var cart = cart
            cart.add(PaymentItem(label: "Too precise", amount: dec("0.001")))
            return CartUpdate(cart: cart)
        }
        let (checkout, sheet) = try await run(
            gateway, recorder, cart: Self.teaCart,
            steps: [.enterCouponCode("TEA10"), .selectShippingContact(Self.contact("TW")), .authorize])
        #expect(sheet.events.contains(.skipped(.enterCouponCode("TEA10"), reason: "the request offers no coupon code field")))
        #expect(shownTotals(sheet) == ["560.00", "560.00"])
        #expect(checkout.cart.items.map(\.label) == ["Tea"])
        #expect(recorder.result.current?.status == 0)
    }
}

/// `abort()`: the app closes the sheet from code.
@Suite("ApplePayCheckout: abort")
struct CheckoutAbortTests {
    func checkout(
        _ gateway: LiveGateway, _ recorder: CheckoutRecorder, sheet: any PaymentSheet, sdk: GatewayClient? = nil
    ) throws -> ApplePayCheckout {
        try ApplePayCheckout(
            merchant: coffeeMerchant(gateway), consumer: Consumer(), cart: CheckoutTests.bookCart, delegate: recorder,
            sheet: sheet, gateway: sdk ?? client(gateway))
    }

    @Test("before the customer authorizes: the sheet closes and the checkout fails with aborted, not a cancel")
    func abortBeforeAuthorizing() async throws {
        let gateway = try LiveGateway()
        let recorder = CheckoutRecorder(gateway)
        let selected = Signal()
        recorder.onSelectMethod = { selected.fire() }
        let sheet = SimulatedPaymentSheet(steps: [.selectPaymentMethod(.credit), .idle], wallet: client(gateway))
        let checkout = try checkout(gateway, recorder, sheet: sheet)
        checkout.abort()  // before start: nothing
        checkout.start()
        await selected.wait()
        checkout.abort()
        await recorder.finished.wait()
        await sheet.waitUntilDone()
        #expect(recorder.events.current == ["didStart", "didSelectPaymentMethod:credit", "didFail:aborted", "didFinish"])
        let result = try #require(recorder.result.current)
        #expect(result.status == -4)
        #expect(result.code == CheckoutError.aborted)
        #expect(result.amount == dec("100.00"))
        #expect(sheet.events.suffix(2) == [.dismissed, .finished])
        #expect(recorder.prime.current == nil)
        // Afterwards it does nothing.
        checkout.abort()
        #expect(recorder.events.current.count == 4)
    }

    @Test("while the prime is being made: the sheet closes at once, and the prime and the payment are reported")
    func abortWhileTokenizing() async throws {
        let gateway = try LiveGateway()
        let recorder = CheckoutRecorder(gateway)
        let transport = GatedTransport(holding: "/v1/tokens")
        let sheet = SimulatedPaymentSheet(steps: [.authorize], wallet: client(gateway))
        let checkout = try checkout(
            gateway, recorder, sheet: sheet,
            sdk: GatewayClient(configuration: configuration(gateway), transport: transport))
        checkout.start()
        await transport.reached.wait()
        checkout.abort()
        while !sheet.events.contains(.finished) { try await Task.sleep(nanoseconds: 5_000_000) }
        transport.release.fire()
        await recorder.finished.wait()
        await sheet.waitUntilDone()
        #expect(
            recorder.events.current == [
                "didStart", "canAuthorize", "didReceivePrime", "showPaymentResult", "didSucceed", "didFinish",
            ])
        #expect(recorder.payment.current?.json["status"] as? String == "captured")
        let dismissed = try #require(sheet.events.firstIndex(of: .dismissed))
        let answered = try #require(sheet.events.firstIndex(of: .authorizationResult(.init(status: .success))))
        #expect(dismissed < answered)
    }

    @Test("while the merchant's server pays: the real outcome, never a cancel or aborted")
    func abortWhilePaying() async throws {
        let gateway = try LiveGateway()
        let recorder = CheckoutRecorder(gateway)
        recorder.onPrime = { checkout, prime in
            checkout.abort()
            Task {
                let answer = try? await gateway.payPrime(prime, amount: "100.00")
                recorder.payment.withLock { $0 = answer }
                checkout.showPaymentResult(answer?.status == 200)
            }
        }
        let sheet = SimulatedPaymentSheet(steps: [.authorize], wallet: client(gateway))
        let checkout = try checkout(gateway, recorder, sheet: sheet)
        checkout.start()
        await recorder.finished.wait()
        await sheet.waitUntilDone()
        #expect(recorder.events.current == ["didStart", "canAuthorize", "didReceivePrime", "didSucceed", "didFinish"])
        #expect(recorder.result.current?.status == 0)
        #expect(recorder.payment.current?.status == 200)
        #expect(sheet.events.contains(.dismissed))
    }

    @Test("an authorization the sheet delivers after abort() is refused and nothing is tokenized")
    func authorizationAfterAbortIsRefused() async throws {
        let gateway = try LiveGateway()
        let recorder = CheckoutRecorder(gateway)
        let sheet = ManualSheet()
        let transport = RecordingTransport()
        let checkout = try checkout(
            gateway, recorder, sheet: sheet, sdk: GatewayClient(configuration: configuration(gateway), transport: transport))
        checkout.start()
        await sheet.presented.wait()
        checkout.abort()
        #expect(sheet.dismissals.current == 1)
        let token = try await client(gateway).sandboxWalletToken(amount: try Money("100.00", currency: .twd), card: .visaCredit)
        let result = await sheet.authorize(token)
        #expect(result.status == .failure)
        sheet.finish()
        await recorder.finished.wait()
        #expect(transport.requests(endingIn: "/v1/tokens").isEmpty)
        #expect(recorder.events.current == ["didStart", "didFail:aborted", "didFinish"])
    }
}
