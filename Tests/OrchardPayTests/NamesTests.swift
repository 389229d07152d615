import Foundation
import OrchardPay
import Testing

/// The SDK's public names can be qualified with the module: no type is named `OrchardPay`.
@Suite("OrchardPay: unambiguous names")
struct NamesTests {
    @Test("OrchardPay.Cart, .Merchant, .Consumer, .Payment, .Contact and .PaymentMethod are the module's types")
    func moduleQualifiedNames() throws {
        var cart = OrchardPay.Cart(items: [OrchardPay.PaymentItem(label: "Tea", amount: Decimal(string: "80.00")!)])
        cart.add(OrchardPay.PaymentItem(label: "Cake", amount: Decimal(string: "20.00")!))
        let merchant = OrchardPay.Merchant(
            name: "Orchard Tea", merchantIdentifier: "merchant.dev.orchard.sandbox", countryCode: "TW",
            currencyCode: "TWD", supportedNetworks: [.visa])
        var contact = OrchardPay.Contact()
        contact.givenName = "Mei"
        let consumer = OrchardPay.Consumer(requiredShippingContactFields: [.name])
        let method = OrchardPay.PaymentMethod(type: .debit, network: .visa)
        let payment = OrchardPay.Payment(
            token: OrchardPay.PaymentToken(paymentData: Data("{}".utf8), paymentMethod: method, transactionIdentifier: "t1"),
            shippingContact: contact)
        let request = try OrchardPay.ApplePayCheckout.paymentRequest(merchant: merchant, consumer: consumer, cart: cart)
        #expect(request.total.amount.decimalString == "100.00")
        #expect(request.total.label == "Orchard Tea")
        #expect(payment.shippingContact?.givenName == "Mei")
        #expect(payment.token.paymentMethod.type == .debit)
        // The set-up namespace keeps its members under its new name.
        #expect(OrchardPay.OrchardPaySDK.defaultSandboxURL.absoluteString == "http://127.0.0.1:8080")
        #expect(OrchardPaySDK.Environment.sandbox.rawValue == "sandbox")
    }
}

/// The previous release's spellings still compile (with a deprecation warning at each use in an app). This
/// function is never called: being deprecated itself, it uses them without warnings, so the build checks them.
@available(*, deprecated, message: "compiles the deprecated spellings")
private func previousSpellingsStillCompile() throws {
    OrchardPay.setup(appID: "app_x", appKey: "ak_x", environment: .sandbox)
    OrchardPay.setup(OrchardPay.Configuration(
        appID: "app_x", appKey: "ak_x", environment: .sandbox, gatewayURL: OrchardPay.defaultSandboxURL))
    _ = OrchardPay.configuration
    _ = try OrchardPay.gatewayClient()
    OrchardPay.sheetProvider = nil
    _ = OrchardPay.canMakePayments()
    _ = OrchardPay.canMakePayments(usingNetworks: [.visa])
    OrchardPay.logHandler = nil
}
