import Foundation
import OrchardPay
import Testing

/// Where the coordinators call their delegates: the main actor by default, off it with `.background`.
@Suite("OrchardPay: delegate callbacks on the main actor")
struct CallbackTests {
    func checkout(_ callbacks: DelegateCallbacks?) async throws -> CheckoutRecorder {
        let gateway = try LiveGateway()
        let recorder = CheckoutRecorder(gateway)
        var cart = CheckoutHookTests.teaCart
        cart.supportsCouponCode = true
        let sheet = SimulatedPaymentSheet(
            steps: [
                .selectShippingContact(CheckoutHookTests.contact("TW")), .enterCouponCode("TEA10"),
                .selectShippingMethod("standard"), .selectPaymentMethod(.credit), .authorize,
            ], wallet: client(gateway))
        let checkout: ApplePayCheckout
        if let callbacks {
            checkout = try ApplePayCheckout(
                merchant: coffeeMerchant(gateway), consumer: Consumer(), cart: cart, delegate: recorder, sheet: sheet,
                gateway: client(gateway), callbacks: callbacks)
        } else {
            checkout = try ApplePayCheckout(
                merchant: coffeeMerchant(gateway), consumer: Consumer(), cart: cart, delegate: recorder, sheet: sheet,
                gateway: client(gateway))
        }
        #expect(checkout.callbacks == callbacks ?? .mainActor)
        checkout.start()
        await recorder.finished.wait()
        await sheet.waitUntilDone()
        return recorder
    }

    static let everyCallback = [
        "didStart", "didSelectShippingContact:TW", "didChangeCouponCode:TEA10", "didSelectShippingMethod:standard",
        "didSelectPaymentMethod:credit", "canAuthorize", "didReceivePrime", "didSucceed", "didFinish",
    ]

    @Test("the prime flow: by default every callback, the selection hooks included, runs on the main actor")
    func checkoutOnMainActor() async throws {
        let recorder = try await checkout(nil)
        #expect(recorder.threads.current.map(\.event) == Self.everyCallback)
        #expect(recorder.threads.current.filter { !$0.onMain }.map(\.event) == [])
    }

    @Test("the prime flow with .background: no callback runs on the main thread (the behaviour before)")
    func checkoutInBackground() async throws {
        let recorder = try await checkout(.background)
        #expect(recorder.threads.current.map(\.event) == Self.everyCallback)
        #expect(recorder.threads.current.filter(\.onMain).map(\.event) == [])
    }

    @Test("the session flow: didCompleteWith on the main actor by default, off it with .background")
    func contextCallbacks() async throws {
        for callbacks in [DelegateCallbacks.mainActor, .background] {
            let gateway = try LiveGateway()
            let created = try await gateway.createSession(amount: "90.00", outTradeNo: "threads-\(callbacks)")
            let orderToken = try #require(created.json["order_token"] as? String)
            var request = ApplePayContext.paymentRequest(
                merchantIdentifier: gateway.merchantIdentifier, country: "TW", currency: "TWD")
            request.total = SummaryItem(label: "Orchard Tea", amount: try Money("90.00", currency: .twd))
            let recorder = ContextRecorder(orderToken: orderToken)
            let context = ApplePayContext(
                paymentRequest: request, delegate: recorder,
                sheet: SimulatedPaymentSheet(steps: [.authorize], wallet: client(gateway)), gateway: client(gateway),
                callbacks: callbacks)
            await context.present()
            #expect(recorder.outcomes.current.map(\.0) == [.success])
            #expect(recorder.completedOnMain.current == [callbacks == .mainActor])
        }
    }
}
