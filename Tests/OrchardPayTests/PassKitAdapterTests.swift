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
