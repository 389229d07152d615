import ApplePaySandbox
import ApplePayToken
import Foundation
import Gateway
import GatewayAssembly
import GatewaySQLite
import OrchardBase
import OrchardCrypto

/// `orchard gateway-worker`: an internal crash-consistency harness. It provisions the sandbox (PKI and
/// merchant) on first run, then runs many payments through the whole product path — a token minted by the
/// sandbox PKI, tokenize, pay by prime with the sandbox acquirer (whose books live in the same file),
/// refunds — printing `ACK <index> <payment id> <status>` after each payment call returned: the payments a
/// client would have seen acknowledged. Every step uses a deterministic idempotency key and every token a
/// deterministic transactionId, so running it again after a SIGKILL resumes (or cleanly fails) the
/// interrupted request and never charges twice. At the end it reconciles and prints `DONE`.
/// `--kill-after-commits N` SIGKILLs the worker right after its Nth batch commit (after the setup): the
/// commit is durable, its answer not printed.
enum GatewayWorkerCommand {
    static let command = CLI.Command(
        name: "gateway-worker", summary: "internal: run many sandbox payments against a database (crash tests)",
        run: run)

    /// The amounts cycled through: approved, declined (…05), issuer timeout (…91), approved, approved.
    static let amounts: [Int64] = [10_000, 10_005, 10_091, 2_500, 7_700]

    static func run(_ arguments: [String], _ io: CLIOutput) -> Int32 {
        let path: String
        let count: Int
        var killAfterCommits: Int?
        do {
            let parsed = try Arguments(arguments, options: ["database", "count", "kill-after-commits"], flags: [])
            path = try GatewayDatabase.sqlitePath(try parsed.required("database"))
            guard let value = Int(parsed.value("count") ?? "50"), value > 0 else { throw UsageError("--count N") }
            count = value
            if let text = parsed.value("kill-after-commits") {
                guard let value = Int(text), value > 0 else { throw UsageError("--kill-after-commits N") }
                killAfterCommits = value
            }
        } catch {
            io.err(
                "orchard gateway-worker: \(error)\nusage: orchard gateway-worker --database sqlite:PATH [--count N] "
                    + "[--kill-after-commits N]")
            return 2
        }
        do {
            let clock = SystemClock()
            let key = try MasterKey.resolve(
                databasePath: path, environment: .sandbox, variables: ProcessEnvironment.variables)
            let cipher = EnvelopeCipher(masterKey: key)
            let store = try SQLiteStore(path: path)
            let scope = RequestScope(actor: CLI.auditActor("gateway-worker", arguments))
            let setup = try MerchantRegistry(store: store, cipher: cipher, clock: clock).ensureSandbox(
                issuer: SandboxPKIIssuer(), scope: scope)
            var acquirer = SandboxAcquirer.Configuration()
            acquirer.unknownResolutionDelay = 0
            var configuration = GatewayConfiguration()
            // One worker at a time: a key left locked by a killed worker is resumed at once.
            configuration.idempotencyLockTimeout = 0
            // A killed worker's processor calls are over: nothing is in flight.
            configuration.authorizationTimeout = 0
            let gateway = GatewayService(
                configuration: configuration, store: store,
                processor: SandboxAcquirer(ledger: store, clock: clock, configuration: acquirer),
                tokenOpener: ApplePayTokenOpener(trustAnchors: [.sandbox: try TrustAnchor(pem: setup.trustAnchorPEM)]),
                currencies: ISO4217Currencies(), paymentRequests: ApplePayRequestEvaluator(), cipher: cipher,
                clock: clock)
            let merchant = setup.merchant
            guard let certificate = try gateway.merchants.processingCertificates(merchantID: merchant.id).last,
                let pki = try SandboxPKIIssuer.storedPKI(store: store, cipher: cipher)
            else { throw GatewayError(.noProcessingKey, "the sandbox merchant has no processing key") }
            let minter = TokenMinter(pki: pki)
            if let killAfterCommits {
                // SIGKILL right after the Nth batch commit from here on: durable, not yet answered.
                let commits = Locked(0)
                store.afterBatchCommit = {
                    let count = commits.withLock { count in
                        count += 1
                        return count
                    }
                    if count == killAfterCommits { kill(getpid(), SIGKILL) }
                }
            }
            for index in 0..<count {
                let amount = amounts[index % amounts.count]
                do {
                    var mint = MintRequest(merchantCertificatePEM: certificate.certificatePEM, signingTime: clock.now())
                    mint.amount = amount
                    mint.currencyCode = "901"
                    mint.transactionIdentifier = Hex.encode(SHA256.hash(Array("harness-\(index)".utf8)))
                    let prime = try gateway.payments.tokenize(
                        merchant: merchant, token: try minter.mint(mint), idempotencyKey: "tok-\(index)", scope: scope)
                    let payment = try gateway.payments.payByPrime(
                        merchant: merchant,
                        PayByPrimeRequest(
                            prime: prime.prime, amount: amount, currency: "TWD", orderNumber: "h-\(index)"),
                        idempotencyKey: "pay-\(index)", scope: scope)
                    io.out("ACK \(index) \(payment.id) \(payment.status.rawValue)")
                    if index % 4 == 3, payment.status == .captured {
                        let refund = try gateway.refunds.refund(
                            merchant: merchant, paymentID: payment.id, amount: 1_000, idempotencyKey: "refund-\(index)",
                            scope: scope)
                        io.out("REFUND \(index) \(refund.refund.id) \(refund.refund.status.rawValue)")
                    }
                } catch let error as GatewayError
                    where (error.code == .cardDeclined || error.code == .processorUnavailable) && error.paymentID != nil
                {
                    io.out("ACK \(index) \(error.paymentID!) failed")
                } catch let error as GatewayError {
                    io.out("ERR \(index) \(error.code.rawValue)")
                }
            }
            let report = try gateway.payments.reconcile(delay: 0)
            io.out("RECONCILED settled=\(report.settledPayments.count) unknown=\(report.stillUnknown.count)")
            io.out("DONE")
            return 0
        } catch {
            io.err("orchard gateway-worker: \(error)")
            return 1
        }
    }
}
