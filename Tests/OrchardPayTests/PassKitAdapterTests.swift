#if !canImport(PassKit)
    import Foundation
    import OrchardPay
    @preconcurrency import PassKitShim
    import Testing

    /// The PassKit adapter (`PassKitPaymentSheet`), compiled against PassKitShim, with a stand-in for the system's
    /// sheet playing the customer, against a real gateway on loopback.
    @Suite("PassKitPaymentSheet on PassKitShim")
    struct PassKitAdapterTests {
        @MainActor
        func checkout(
            _ gateway: LiveGateway, _ recorder: CheckoutRecorder, customer: PassKitCustomer, cart: Cart = CheckoutTests.bookCart,
            consumer: Consumer = Consumer()
        ) async throws -> ApplePayCheckout {
            let sheet = PassKitPaymentSheet()
            sheet.makeController = customer.controllers()
            let checkout = try ApplePayCheckout(
                merchant: coffeeMerchant(gateway), consumer: consumer, cart: cart, delegate: recorder, sheet: sheet,
                gateway: client(gateway))
            checkout.start()
            await recorder.finished.wait()
            await customer.waitUntilFinished()
            return checkout
        }

        @Test("the prime flow through PKPaymentAuthorizationController: debit discount, token, prime, payment")
        @MainActor
        func primeFlow() async throws {
            let gateway = try LiveGateway()
            let recorder = CheckoutRecorder(gateway)
            let customer = PassKitCustomer(
                steps: [.selectPaymentMethod(.debit), .authorize()], wallet: client(gateway), card: .visaDebit)
            let checkout = try await checkout(gateway, recorder, customer: customer)
            let request = try #require(customer.presented.first)
            #expect(request.merchantIdentifier == gateway.merchantIdentifier)
            #expect(request.currencyCode == "TWD")
            #expect(request.countryCode == "TW")
            #expect(request.supportedNetworks == [.visa, .masterCard, .JCB, .amex])
            #expect(request.merchantCapabilities == [.threeDSecure, .credit, .debit])
            #expect(request.paymentSummaryItems.map(\.label) == ["Book", "Orchard Coffee"])
            #expect(customer.paymentMethodUpdates.first?.paymentSummaryItems.map(\.amount.stringValue) == ["100", "-1", "99"])
            #expect(customer.authorizedAmounts == ["99.00"])
            #expect(customer.results.map(\.status) == [.success])
            #expect(recorder.result.current?.status == 0)
            #expect(recorder.payment.current?.json["amount"] as? String == "99.00")
            #expect(checkout.consumer.paymentMethod?.type == .debit)
            #expect(customer.dismissals == 1)
        }

        @Test("canAuthorizeWith false: PassKit gets a shipping-contact error for the whole contact, not unknownError")
        @MainActor
        func refusedContactHighlightsTheShippingContact() async throws {
            let gateway = try LiveGateway()
            let recorder = CheckoutRecorder(gateway)
            recorder.accepts = false
            let contact = passKitContact(given: "Mei", family: "Lin", email: "mei@example.com")
            let customer = PassKitCustomer(
                steps: [.selectShippingContact(contact), .authorize(shipping: contact)], wallet: client(gateway))
            _ = try await checkout(gateway, recorder, customer: customer)
            let result = try #require(customer.results.first)
            #expect(result.status == .failure)
            let error = try #require(result.errors.first) as NSError
            #expect(error.domain == PKPaymentErrorDomain)
            #expect(error.code == PKPaymentError.Code.shippingContactInvalidError.rawValue)
            #expect(error.userInfo[PKPaymentErrorKey.contactFieldUserInfoKey.rawValue] == nil)
            #expect(recorder.prime.current == nil)
            #expect(
                recorder.events.current == ["didStart", "didSelectShippingContact:", "canAuthorize", "didCancel", "didFinish"])
        }

        @Test("a missing billing name: PassKit's billing-contact error on the name field; corrected, it pays")
        @MainActor
        func billingNameHighlighted() async throws {
            let gateway = try LiveGateway()
            let recorder = CheckoutRecorder(gateway)
            let consumer = Consumer(requiredBillingContactFields: [.name])
            let customer = PassKitCustomer(
                steps: [.authorize(billing: passKitContact(email: "x@example.com")),
                        .authorize(billing: passKitContact(given: "Mei", family: "Lin"))],
                wallet: client(gateway))
            _ = try await checkout(gateway, recorder, customer: customer, consumer: consumer)
            #expect(customer.results.map(\.status) == [.failure, .success])
            let error = try #require(customer.results.first?.errors.first) as NSError
            #expect(error.code == PKPaymentError.Code.billingContactInvalidError.rawValue)
            #expect(error.userInfo[PKPaymentErrorKey.contactFieldUserInfoKey.rawValue] as? String == PKContactField.name.rawValue)
            #expect(error.userInfo[NSLocalizedDescriptionKey] as? String == "Enter a name")
            #expect(recorder.result.current?.status == 0)
        }

        @Test("a shipping address without a postal code: PassKit's address error on the postal code key")
        @MainActor
        func postalCodeHighlighted() async throws {
            let gateway = try LiveGateway()
            let recorder = CheckoutRecorder(gateway)
            let consumer = Consumer(requiredShippingContactFields: [.postalAddress])
            let incomplete = passKitContact(street: "No. 7 Xinyi Road", city: "Taipei", country: "tw")
            let complete = passKitContact(street: "No. 7 Xinyi Road", city: "Taipei", postalCode: "110", country: "tw")
            let customer = PassKitCustomer(
                steps: [.authorize(shipping: incomplete), .authorize(shipping: complete)], wallet: client(gateway))
            let checkout = try await checkout(gateway, recorder, customer: customer, consumer: consumer)
            let error = try #require(customer.results.first?.errors.first) as NSError
            #expect(error.code == PKPaymentError.Code.shippingContactInvalidError.rawValue)
            #expect(error.userInfo[PKPaymentErrorKey.contactFieldUserInfoKey.rawValue] as? String == PKContactField.postalAddress.rawValue)
            #expect(error.userInfo[PKPaymentErrorKey.postalAddressUserInfoKey.rawValue] as? String == CNPostalAddressPostalCodeKey)
            #expect(customer.results.last?.status == .success)
            #expect(checkout.consumer.shippingContact?.countryCode == "TW")
            #expect(checkout.consumer.shippingContact?.postalCode == "110")
        }

        @Test("the cart's selected shipping method opens first on PassKit's sheet; prefilled contacts and store pickup reach it")
        @MainActor
        func requestFieldsReachPassKit() async throws {
            let gateway = try LiveGateway()
            let recorder = CheckoutRecorder(gateway)
            let twd = { (text: String) in try! Money(text, currency: .twd) }
            let cart = Cart(
                items: [PaymentItem(label: "Tea", amount: dec("500.00"))],
                shippingMethods: [
                    ShippingMethod(identifier: "standard", label: "Standard", amount: twd("60.00")),
                    ShippingMethod(identifier: "express", label: "Express", amount: twd("150.00"), selected: true),
                ])
            var consumer = Consumer(requiredShippingContactFields: [.name])
            consumer.shippingContact = CheckoutTests.contact
            consumer.billingContact = CheckoutTests.contact
            consumer.shippingContactEditingMode = .storePickup
            let customer = PassKitCustomer(
                steps: [.authorize(shipping: passKitContact(given: "Mei", family: "Lin"))], wallet: client(gateway))
            _ = try await checkout(gateway, recorder, customer: customer, cart: cart, consumer: consumer)
            let request = try #require(customer.presented.first)
            #expect(request.shippingMethods?.map(\.identifier) == ["express", "standard"])
            #expect(request.paymentSummaryItems.map(\.amount.stringValue) == ["500", "150", "650"])
            #expect(request.shippingContact?.name?.givenName == "Mei")
            #expect(request.shippingContact?.postalAddress?.postalCode == "110")
            #expect(request.billingContact?.emailAddress == "mei@example.com")
            #expect(request.shippingContactEditingMode == .storePickup)
            #expect(customer.authorizedAmounts == ["650.00"])
            #expect(recorder.result.current?.status == 0)
        }

        @Test("the session flow hands PassKit the request's recurring payment and pays the session")
        @MainActor
        func sessionRecurringRequest() async throws {
            let gateway = try LiveGateway()
            let created = try await gateway.createSession(amount: "300.00", outTradeNo: "club-1")
            let orderToken = try #require(created.json["order_token"] as? String)
            var request = ApplePayContext.paymentRequest(
                merchantIdentifier: gateway.merchantIdentifier, country: "TW", currency: "TWD")
            var monthly = SummaryItem(label: "Tea club", amount: try Money("300.00", currency: .twd))
            monthly.paymentTiming = .recurring
            monthly.recurringPaymentIntervalUnit = .month
            monthly.recurringPaymentIntervalCount = 1
            request.total = SummaryItem(label: "Orchard Tea", amount: try Money("300.00", currency: .twd))
            request.recurringPaymentRequest = RecurringPaymentRequest(
                paymentDescription: "Orchard tea club", regularBilling: monthly,
                managementURL: "https://shop.example/club")
            let customer = PassKitCustomer(steps: [.authorize()], wallet: client(gateway))
            let sheet = PassKitPaymentSheet()
            sheet.makeController = customer.controllers()
            let recorder = ContextRecorder(orderToken: orderToken)
            let context = ApplePayContext(paymentRequest: request, delegate: recorder, sheet: sheet, gateway: client(gateway))
            await context.present()
            await customer.waitUntilFinished()
            let recurring = try #require(customer.presented.first?.recurringPaymentRequest)
            #expect(recurring.paymentDescription == "Orchard tea club")
            #expect(recurring.regularBilling.intervalUnit == .month)
            #expect(recurring.managementURL.absoluteString == "https://shop.example/club")
            #expect(recorder.outcomes.current.map(\.0) == [.success])
            #expect(context.sessionPayment?.status == "captured")
        }

        @Test("coupons and shipping contacts on PassKit's sheet: the coupon field, coupon errors, per-address methods")
        @MainActor
        func couponsAndContacts() async throws {
            let gateway = try LiveGateway()
            let recorder = CheckoutRecorder(gateway)
            recorder.cartForContact = CheckoutHookTests.perAddress
            recorder.cartForCoupon = { code, cart in
                var cart = cart
                guard code == "TEA10" else {
                    return CartUpdate(cart: cart, errors: [PaymentSheetError(.couponCodeExpired, message: "Expired")])
                }
                cart.add(PaymentItem(label: "Coupon", amount: dec("-50.00")))
                return CartUpdate(cart: cart)
            }
            var cart = CheckoutHookTests.teaCart
            cart.supportsCouponCode = true
            let customer = PassKitCustomer(
                steps: [
                    .enterCouponCode("OLD"), .enterCouponCode("TEA10"),
                    .selectShippingContact(passKitContact(city: "Osaka", postalCode: "530", country: "jp")),
                    .selectShippingContact(passKitContact(city: "Nowhere", postalCode: "999", country: "jp")),
                    .authorize(),
                ], wallet: client(gateway))
            _ = try await checkout(gateway, recorder, customer: customer, cart: cart)
            let request = try #require(customer.presented.first)
            #expect(request.supportsCouponCode)
            let expired = try #require(customer.couponCodeUpdates.first)
            #expect(expired.status == .failure)
            #expect(expired.errors.first.map { $0 as NSError }?.code == PKPaymentError.Code.couponCodeExpiredError.rawValue)
            #expect(customer.couponCodeUpdates.last?.paymentSummaryItems.last?.amount == NSDecimalNumber(string: "510"))
            let japan = try #require(customer.shippingContactUpdates.first)
            #expect(japan.shippingMethods.map(\.identifier) == ["air"])
            #expect(japan.paymentSummaryItems.last?.amount == NSDecimalNumber(string: "850"))
            let nowhere = try #require(customer.shippingContactUpdates.last)
            #expect(nowhere.status == .failure)
            #expect(
                nowhere.errors.first.map { $0 as NSError }?.code == PKPaymentError.Code.shippingAddressUnserviceableError.rawValue)
            #expect(customer.authorizedAmounts == ["850.00"])
            #expect(recorder.payment.current?.json["amount"] as? String == "850.00")
        }

        @Test("abort() dismisses PassKit's controller and the checkout fails with aborted")
        @MainActor
        func abortDismissesTheController() async throws {
            let gateway = try LiveGateway()
            let recorder = CheckoutRecorder(gateway)
            let selected = Signal()
            recorder.onSelectMethod = { selected.fire() }
            let customer = PassKitCustomer(steps: [.selectPaymentMethod(.credit), .waitForDismiss], wallet: client(gateway))
            let sheet = PassKitPaymentSheet()
            sheet.makeController = customer.controllers()
            let checkout = try ApplePayCheckout(
                merchant: coffeeMerchant(gateway), consumer: Consumer(), cart: CheckoutTests.bookCart,
                delegate: recorder, sheet: sheet, gateway: client(gateway))
            checkout.start()
            await selected.wait()
            checkout.abort()
            await recorder.finished.wait()
            await customer.waitUntilFinished()
            #expect(customer.dismissals == 1)
            #expect(recorder.result.current?.code == CheckoutError.aborted)
            #expect(recorder.events.current.filter { $0 == "didFinish" }.count == 1)
        }

        @Test("a controller nothing can show: present answers false and the checkout fails with sheet_unavailable")
        func nothingPresents() async throws {
            let gateway = try LiveGateway()
            let recorder = CheckoutRecorder(gateway)
            let checkout = try ApplePayCheckout(
                merchant: coffeeMerchant(gateway), consumer: Consumer(), cart: CheckoutTests.bookCart,
                delegate: recorder, sheet: PassKitPaymentSheet(), gateway: client(gateway))
            checkout.start()
            await recorder.finished.wait()
            #expect(recorder.result.current?.code == CheckoutError.sheetUnavailable)
            #expect(recorder.result.current?.status == -3)
        }
    }
#endif
