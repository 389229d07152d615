import OrchardPay
import SwiftUI

/// The demo's two checkouts. In a real app the "merchant server" calls below are your own backend, which
/// holds the secret key; the demo calls a sandbox gateway's server routes through `MerchantServer`.
@MainActor
final class DemoStore: ObservableObject {
    @Published var events: [String] = []
    @Published var simulated = false
    private var checkout: ApplePayCheckout?
    private let server = MerchantServer()

    func log(_ line: String) { events.append(line) }

    // MARK: Prime flow

    func payByPrime() {
        let merchant = Merchant(
            name: "Orchard Coffee", merchantIdentifier: DemoSettings.merchantIdentifier, countryCode: "TW",
            currencyCode: "TWD", supportedNetworks: [.visa, .masterCard, .jcb, .amex],
            capabilities: [.supports3DS, .supportsCredit, .supportsDebit])
        let consumer = Consumer(requiredShippingContactFields: [.email, .name, .phone])
        let cart = Cart(items: [PaymentItem(label: "Book", amount: Decimal(string: "100.00")!)])
        do {
            let sheet: any PaymentSheet =
                simulated
                ? SimulatedPaymentSheet(steps: [.selectPaymentMethod(.debit), .authorize], card: .visaDebit)
                : PassKitPaymentSheet()
            checkout = try ApplePayCheckout(
                merchant: merchant, consumer: consumer, cart: cart, delegate: self, sheet: sheet)
            checkout?.start()
        } catch {
            log("cannot start: \(error)")  // CheckoutError: 88013…88016 or a model code
        }
    }

    // MARK: Session flow

    func payOrderSession() async {
        do {
            let session = try await server.createSession(
                amount: "250.00", outTradeNo: "demo-\(UUID().uuidString.prefix(8))")
            var request = ApplePayContext.paymentRequest(
                merchantIdentifier: session.merchantIdentifier, country: session.country, currency: session.currency)
            request.total = SummaryItem(
                label: "Orchard Tea", amount: try Money(session.amount, currency: try Currency(code: session.currency)))
            let sheet: any PaymentSheet = simulated ? SimulatedPaymentSheet(steps: [.authorize]) : PassKitPaymentSheet()
            let context = ApplePayContext(
                paymentRequest: request, delegate: SessionDelegate(orderToken: session.orderToken, store: self),
                sheet: sheet)
            await context.present()
        } catch {
            log("session: \(error)")
        }
    }
}

extension DemoStore: ApplePayCheckoutDelegate {
    nonisolated func checkoutDidStart(_ c: ApplePayCheckout) { Task { @MainActor in log("didStart") } }

    nonisolated func checkout(_ c: ApplePayCheckout, didSelect paymentMethod: PaymentMethod, cart: Cart) -> Cart {
        var cart = cart
        if paymentMethod.type == .debit { cart.add(PaymentItem(label: "Discount", amount: Decimal(string: "-1.00")!)) }
        return cart
    }

    nonisolated func checkout(
        _ c: ApplePayCheckout, didReceivePrime prime: String, expiryMillis: Int64, cardInfo: CardInfo,
        merchantReferenceInfo: MerchantReferenceInfo
    ) {
        let amount = "\(c.cart.totalAmount)"
        Task { @MainActor in
            log("prime for \(cardInfo.bincode)…\(cardInfo.lastFour), expires \(expiryMillis)")
            // Your server pays the prime with its secret key (POST /v1/payments).
            let paid = (try? await server.payPrime(prime, amount: amount)) ?? false
            c.showPaymentResult(paid)
        }
    }

    nonisolated func checkout(_ c: ApplePayCheckout, didSucceed result: TransactionResult) {
        Task { @MainActor in log("didSucceed \(result.amount)") }
    }

    nonisolated func checkout(_ c: ApplePayCheckout, didFail result: TransactionResult) {
        Task { @MainActor in log("didFail \(result.status) \(result.code ?? "") \(result.message)") }
    }

    nonisolated func checkoutDidCancel(_ c: ApplePayCheckout) { Task { @MainActor in log("didCancel") } }

    nonisolated func checkoutDidFinish(_ c: ApplePayCheckout) { Task { @MainActor in log("didFinish") } }
}

/// The session flow's delegate: returns the order token the merchant's server created.
final class SessionDelegate: ApplePayContextDelegate, @unchecked Sendable {
    let orderToken: String
    weak var store: DemoStore?

    init(orderToken: String, store: DemoStore) {
        self.orderToken = orderToken
        self.store = store
    }

    func applePayContext(
        _ c: ApplePayContext, didCreatePaymentMethod m: PaymentMethod, payment: Payment
    ) async throws
        -> String
    {
        orderToken
    }

    func applePayContext(_ c: ApplePayContext, didCompleteWith status: ApplePayContext.PaymentStatus, error: Error?) {
        let line = "session: \(status.rawValue) \(error.map { "\($0)" } ?? "")"
        Task { @MainActor [store] in store?.log(line) }
    }
}
