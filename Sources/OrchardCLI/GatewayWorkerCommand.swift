import Foundation
import Gateway
import GatewaySQLite
import OrchardCrypto

/// `orchard gateway-worker`: an internal crash-consistency harness. It runs many payments against a SQLite
/// database with the sandbox acquirer (whose books live in the same file), printing `ACK <index> <payment id>
/// <status>` after each payment call returned — the payments a client would have seen acknowledged. Every
/// step uses a deterministic idempotency key, so running it again after a SIGKILL resumes (or cleanly fails)
/// the interrupted request and never charges twice; at the end it reconciles and prints `DONE`.
///
/// The tokens are opened by the harness itself (test account numbers, no Apple Pay cryptography), so the
/// run exercises the gateway from the prime onwards: claim, authorization, capture, refunds, outbox.
enum GatewayWorkerCommand {
    static let command = CLI.Command(
        name: "gateway-worker", summary: "internal: run many sandbox payments against a database (crash tests)"
    ) { arguments, io in
        run(arguments, io)
    }

    /// The amounts cycled through: approved, declined (…05), issuer timeout (…91), approved, approved.
    static let amounts: [Int64] = [10_000, 10_005, 10_091, 2_500, 7_700]

    static func run(_ arguments: [String], _ io: CLIOutput) -> Int32 {
        let path: String
        let count: Int
        do {
            let parsed = try Arguments(arguments, options: ["database", "count"], flags: [])
            path = try GatewayDatabase.sqlitePath(try parsed.required("database"))
            guard let value = Int(parsed.value("count") ?? "50"), value > 0 else { throw UsageError("--count N") }
            count = value
        } catch {
            io.err("orchard gateway-worker: \(error)\nusage: orchard gateway-worker --database sqlite:PATH [--count N]")
            return 2
        }
        do {
            let clock = SystemClock()
            let key = try MasterKey.resolve(databasePath: path, environment: .sandbox)
            let cipher = EnvelopeCipher(masterKey: key)
            let store = try SQLiteStore(path: path, cipher: cipher)
            var acquirer = SandboxAcquirer.Configuration()
            acquirer.unknownResolutionDelay = 0
            var configuration = GatewayConfiguration()
            // One worker at a time: a key left locked by a killed worker is resumed at once.
            configuration.idempotencyLockTimeout = 0
            let gateway = GatewayService(
                configuration: configuration, store: store,
                processor: SandboxAcquirer(ledger: store, clock: clock, configuration: acquirer),
                tokenOpener: HarnessOpener(), currencies: HarnessCurrencies(), paymentRequests: nil, cipher: cipher,
                clock: clock)
            let merchant: Merchant
            if let existing = try gateway.merchants.merchants(environment: .sandbox).first {
                merchant = existing
            } else {
                merchant = try gateway.merchants.create(
                    MerchantSpec(name: "Crash Harness", environment: .sandbox, merchantIdentifiers: ["merchant.harness"])
                ).0
            }
            for index in 0..<count {
                let amount = amounts[index % amounts.count]
                do {
                    let opened = OpenedToken(
                        transactionID: "harness-\(index)", transactionIdentifier: nil, network: "Visa",
                        methodType: "credit", accountNumber: SecureBytes(Array("4111111111111111".utf8)),
                        expirationDate: "491231", currencyNumericCode: "901", amount: amount,
                        cryptogram: SecureBytes(Array("harness-cryptogram-\(index)".utf8)), eci: "05",
                        cardholderName: nil, paymentDataType: "3DSecure")
                    let prime = try gateway.tokenize(merchant: merchant, opened: opened, idempotencyKey: "tok-\(index)")
                    opened.erase()
                    let payment = try gateway.payByPrime(
                        merchant: merchant,
                        PayByPrimeRequest(prime: prime.prime, amount: amount, currency: "TWD", orderNumber: "h-\(index)"),
                        idempotencyKey: "pay-\(index)")
                    io.out("ACK \(index) \(payment.id) \(payment.status.rawValue)")
                    if index % 4 == 3, payment.status == .captured {
                        let refund = try gateway.refund(
                            merchant: merchant, paymentID: payment.id, amount: 1_000, idempotencyKey: "refund-\(index)")
                        io.out("REFUND \(index) \(refund.refund.id) \(refund.refund.status.rawValue)")
                    }
                } catch let error where error.code == .cardDeclined && error.paymentID != nil {
                    io.out("ACK \(index) \(error.paymentID!) failed")
                } catch {
                    io.out("ERR \(index) \(error.code.rawValue)")
                }
            }
            let report = try gateway.reconcile(delay: 0)
            io.out("RECONCILED settled=\(report.settledPayments.count) unknown=\(report.stillUnknown.count)")
            io.out("DONE")
            return 0
        } catch {
            io.err("orchard gateway-worker: \(error)")
            return 1
        }
    }
}

/// The harness opens no tokens (it hands opened tokens to the gateway itself).
private struct HarnessOpener: PaymentTokenOpener {
    func open(token: Data, environment: GatewayEnvironment, keys: [ProcessingKeyMaterial], at time: Date)
        throws(GatewayError) -> OpenedToken
    {
        throw GatewayError.token(code: "malformed_token", reason: "the crash harness does not open tokens")
    }
}

/// The one currency the harness pays in.
private struct HarnessCurrencies: CurrencyCatalog {
    func numericCode(alphabetic: String) -> String? { alphabetic == "TWD" ? "901" : nil }
    func alphabeticCode(numeric: String) -> String? { numeric == "901" ? "TWD" : nil }
}
