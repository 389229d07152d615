import ApplePayModel
import Foundation

/// `orchard demo`: shows Orchard's capabilities readably.
enum DemoCommand {
    /// The `demo` entry of the command table.
    static let command = CLI.Command(name: "demo", summary: "show the payment request model at work") {
        arguments, output in
        guard arguments.isEmpty else {
            output.err("usage: orchard demo")
            return 2
        }
        return RequestModelDemo.run(output: output) ? 0 : 1
    }
}

/// The payment request part of the demo: three realistic carts validated, their totals, what the
/// sheet shows and how long their primes live, one invalid request with its error codes, and the
/// three JSON shapes of one request.
public enum RequestModelDemo {
    /// Prints the demo to `output`; returns false when something did not come out as documented.
    @discardableResult
    public static func run(output: CLIOutput) -> Bool {
        var ok = true
        output.out("== Payment requests: money, rules and shapes ==")
        for (name, request) in PaymentRequestExamples.all {
            let validation = PaymentRequestValidator.validate(request, as: .applePayJS)
            ok = ok && validation.isValid
            output.out("")
            output.out("\(name): \(request.total.label), \(request.currency?.code ?? "?")")
            for item in request.lineItems {
                let amount = item.type == .pending ? "pending" : item.amount.decimalString
                output.out("  \(item.label.padding(toLength: 24, withPad: " ", startingAt: 0)) \(amount)")
            }
            for method in request.shippingMethods {
                output.out("  shipping option \(method.identifier): \(method.label) \(method.amount.decimalString)")
            }
            let total = validation.total.map(\.description) ?? "?"
            output.out(
                "  total: \(total), sheet shows: \(validation.totalDisplay == .amount ? total : "amount pending")")
            output.out("  handed to Apple: \(validation.amountForApple?.description ?? "?")")
            output.out(
                "  valid: \(validation.isValid), deferred: \(validation.isDeferred), prime lifetime: "
                    + lifetime(validation.primeLifetimeSeconds))
        }

        output.out("")
        output.out("compatibility: every item pending and the total pending")
        var allPending = PaymentRequestExamples.deferredTaxiFare
        allPending.lineItems.removeFirst()
        allPending.total.amount = .zero(.twd)
        let pendingValidation = PaymentRequestValidator.validate(allPending, as: .applePayJS)
        output.out(
            "  the merchant means \(allPending.total.amount.description); Apple is handed "
                + "\(allPending.amountForApple.description) (older iOS and macOS refuse 0); prime lifetime: "
                + lifetime(pendingValidation.primeLifetimeSeconds))
        ok = ok && pendingValidation.isValid && allPending.amountForApple == Money(minorUnits: 100, currency: .twd)

        output.out("")
        output.out("an invalid TapPay paymentRequest:")
        let invalid = """
            {
              "supportedNetworks": ["VISA", "MASTERCARD", "DINERSCLUB"],
              "supportedMethods": ["apple_pay"],
              "displayItems": [
                {"label": "Latte", "amount": {"currency": "TWD", "value": "120.005"}, "isAmountPending": false},
                {"label": "Gift wrap", "amount": {"currency": "TWD", "value": "0"}, "isAmountPending": false},
                {"label": "Delivery", "amount": {"currency": "USD", "value": "3.00"}, "isAmountPending": true}
              ],
              "total": {"label": "Orchard Coffee", "amount": {"currency": "TWD", "value": "150.00"},
                        "isAmountPending": false, "isShowTotalAmount": false},
              "options": {"requestPayerEmail": false, "requestPayerName": false, "requestPayerPhone": false,
                          "requestShipping": false}
            }
            """
        output.out(invalid.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n"))
        do {
            let validation = try PaymentRequestValidator.validate(
                json: Data(invalid.utf8), merchantIdentifier: "merchant.tw.orchard.coffee")
            output.out("  valid: \(validation.isValid)")
            for issue in validation.issues {
                output.out(
                    "  \(issue.code.padding(toLength: 20, withPad: " ", startingAt: 0)) \(issue.path): \(issue.message)"
                )
            }
            ok = ok && !validation.isValid
        } catch {
            output.out("  unreadable: \(error)")
            ok = false
        }

        output.out("")
        output.out("the TWD cart as Apple Pay JS's ApplePayPaymentRequest:")
        let cart = PaymentRequestExamples.twdCartWithDebitDiscount
        output.out(String(decoding: PaymentRequestCoder.encode(cart, as: .applePayJS), as: UTF8.self))
        output.out("")
        output.out("and as TapPay's paymentRequest:")
        output.out(String(decoding: PaymentRequestCoder.encode(cart, as: .tapPayWeb), as: UTF8.self))
        output.out("")
        output.out("try: orchard request validate FILE   and   orchard request convert --to w3c FILE")
        return ok
    }

    private static func lifetime(_ seconds: Int?) -> String {
        guard let seconds else { return "none (invalid)" }
        return seconds >= 86_400 ? "\(seconds / 86_400) days (\(seconds) s)" : "\(seconds) seconds"
    }
}
