import ApplePayModel
import Foundation
import GatewayAssembly
import GatewayHTTP
import OrchardHTTP

/// `orchard demo`: the payment request model at work, then the gateway's whole flow over real HTTP.
enum DemoCommand {
    /// The `demo` entry of the command table.
    static let command = CLI.Command(
        name: "demo", summary: "walk the whole payment flow over HTTP (a server of its own, or --url)", run: run)

    static let usage = """
        usage: orchard demo [--url URL --database sqlite:PATH] [--master-key HEX]

        First the payment request model at work, then the gateway's whole flow over real HTTP: a sandbox token
        for a TWD cart, tokenize to a prime, pay by prime, the signed webhook checked by a local receiver, a
        partial refund, the session flow with a retried payment answered from the idempotency store, a declined
        card and a reused prime.

        Without --url the demo starts a server of its own on a free loopback port with a temporary SQLite
        database, and removes both at the end. With --url it talks to that running server (on this machine:
        the webhook receiver listens on 127.0.0.1); --database (default sqlite:./orchard.db) is that server's
        database, read for the sandbox merchant's keys and to mint tokens its sandbox PKI signs. The master key
        comes from --master-key, ORCHARD_MASTER_KEY or <database>.master-key. The demo points the sandbox
        merchant's webhook endpoint at its own receiver.

        Exit status: 0 when every step behaved as expected, 1 when one did not (the failed checks are listed),
        2 bad usage.
        """

    static func run(_ arguments: [String], _ io: CLIOutput) -> Int32 {
        let parsed: Arguments
        do {
            parsed = try Arguments.parse(arguments, options: ["url", "database", "master-key"])
            guard parsed.positionals.isEmpty else { throw UsageError("unexpected argument \(parsed.positionals[0])") }
            if parsed.value("database") != nil, parsed.value("url") == nil {
                throw UsageError("--database goes with --url (without --url the demo uses a temporary database)")
            }
        } catch {
            return io.report(error, of: "orchard demo", usage: usage, failure: nil)
        }
        let modelOK = RequestModelDemo.run(output: io)
        io.out("")
        let flowOK: Bool
        if let url = parsed.value("url") {
            var options: GatewayRuntime.Options
            do {
                options = try GatewayDatabase.options(parsed.value("database") ?? "sqlite:./orchard.db")
                options.auditActor = CLI.auditActor("demo", [])
            } catch {
                io.err("orchard demo: \(error)")
                return 2
            }
            guard options.postgres != nil || FileManager.default.fileExists(atPath: options.databasePath) else {
                io.err("orchard demo: no database at \(options.databasePath); give the server's --database")
                return 2
            }
            let path = GatewayDatabase.display(options)
            options.masterKeyHex =
                parsed.masterKeyHex
            do {
                let runtime = try GatewayRuntime(options)
                flowOK = GatewayDemo(baseURL: url, runtime: runtime, io: io).run(
                    serverNote: "the server at \(url), database \(path)")
            } catch {
                io.err("orchard demo: cannot open the database \(path): \(error)")
                return 1
            }
        } else {
            flowOK = runInProcess(io)
        }
        if !modelOK { io.err("orchard demo: the payment request section did not come out as documented") }
        return modelOK && flowOK ? 0 : 1
    }

    /// Starts `orchard serve` in-process on a free loopback port over a temporary database, runs the flow, then
    /// stops the server and removes the database.
    static func runInProcess(_ io: CLIOutput) -> Bool {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "orchard-demo-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = directory.appendingPathComponent("orchard.db").path
        let running: ServeCommand.Running
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let settings = try ServeCommand.registry().resolve(
                arguments: [
                    "--database", "sqlite:\(database)", "--host", "127.0.0.1", "--port", "0", "--log-level", "error",
                    "--reconcile-interval", "0",
                ],
                environment: [:])
            // The first-run credentials banner is the serve command's; the demo shows the keys itself.
            running = try ServeCommand.start(
                settings: settings, io: CLIOutput(out: { _ in }, err: { io.err(String($0.dropLast())) }))
        } catch {
            io.err("orchard demo: cannot start the in-process server: \(error)")
            return false
        }
        defer { running.stop() }
        return GatewayDemo(baseURL: running.server.baseURL, runtime: running.runtime, io: io).run(
            serverNote: "started in-process, temporary database \(database)")
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
