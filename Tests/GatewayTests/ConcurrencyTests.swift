import ApplePayModel
import ApplePaySandbox
import ApplePayToken
import Foundation
import Gateway
import GatewayAssembly
import GatewaySQLite
import Synchronization
import Testing

/// Races over one real database (a SQLite file, or a PostgreSQL database): each thread goes through its own
/// `GatewayService` on its own store (as two server processes would), so only the database's transactions keep
/// the money rules.
@Suite("Concurrent claims over one database")
struct ConcurrencyTests {
    /// A gateway on a second connection to the harness's database (same master key, clock and acquirer rules).
    static func secondGateway(_ h: Harness) throws -> GatewayService {
        let store = try h.reopenedStore()
        var acquirerConfiguration = SandboxAcquirer.Configuration()
        acquirerConfiguration.slowDelay = 0
        acquirerConfiguration.unknownResolutionDelay = 60
        let pki = try #require(try SandboxPKIIssuer.storedPKI(store: store, cipher: h.cipher))
        return GatewayService(
            configuration: GatewayConfiguration(), store: store,
            processor: SandboxAcquirer(ledger: store, clock: h.clock, configuration: acquirerConfiguration),
            tokenOpener: ApplePayTokenOpener(trustAnchors: [.sandbox: try TrustAnchor(pem: pki.root.pem)]),
            currencies: ISO4217Currencies(), paymentRequests: ApplePayRequestEvaluator(), cipher: h.cipher,
            clock: h.clock)
    }

    /// Runs `body` on `count` threads released together, alternating between the two gateways; returns each
    /// thread's outcome (nil on success, else the gateway error's code).
    static func race(
        _ count: Int, _ gateways: [GatewayService], _ body: @Sendable @escaping (GatewayService, Int) throws -> Void
    ) -> [String?] {
        runTogether(count, describe: { ($0 as? GatewayError)?.code.rawValue ?? "unexpected: \($0)" }) { index in
            try body(gateways[index % gateways.count], index)
        }
    }

    @Test(
        "refunds that each fit but together exceed the captured amount: only those that fit succeed",
        arguments: StoreBackend.all)
    func concurrentRefunds(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let gateways = [h.gateway, try Self.secondGateway(h)]
        let merchant = h.merchant
        for _ in 0..<3 {
            let payment = try h.pay(amount: 10_000)
            #expect(payment.status == .captured)
            let outcomes = Self.race(6, gateways) { gateway, _ in
                _ = try gateway.refunds.refund(merchant: merchant, paymentID: payment.id, amount: 3_000)
            }
            #expect(outcomes.filter { $0 == nil }.count == 3, "\(outcomes)")
            #expect(outcomes.filter { $0 == GatewayError.Code.refundExceedsCapture.rawValue }.count == 3, "\(outcomes)")
            let stored = try h.gateway.payments.payment(merchant: merchant, id: payment.id)
            #expect(stored.refunds.count == 3)
            #expect(stored.refunds.reduce(0) { $0 + $1.amount } == 9_000)
            #expect(stored.refundedAmount == 9_000)
            #expect(stored.refundedAmount <= stored.capturedAmount)
            #expect(stored.status == .partiallyRefunded)
        }
    }

    @Test("two refunds of the rest at once: one refunds it, the other is refused", arguments: StoreBackend.all)
    func concurrentRestRefunds(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let gateways = [h.gateway, try Self.secondGateway(h)]
        let merchant = h.merchant
        let payment = try h.pay(amount: 10_000)
        let outcomes = Self.race(4, gateways) { gateway, _ in
            _ = try gateway.refunds.refund(merchant: merchant, paymentID: payment.id)
        }
        #expect(outcomes.filter { $0 == nil }.count == 1, "\(outcomes)")
        let stored = try h.gateway.payments.payment(merchant: merchant, id: payment.id)
        #expect(stored.refunds.map(\.amount) == [10_000])
        #expect(stored.status == .refunded)
    }

    @Test(
        "partial captures of one authorization at once: exactly one is taken, never more than authorized",
        arguments: StoreBackend.all)
    func concurrentCaptures(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let gateways = [h.gateway, try Self.secondGateway(h)]
        let merchant = h.merchant
        let payment = try h.pay(amount: 10_000, captureMode: .manual)
        #expect(payment.status == .authorized)
        let outcomes = Self.race(4, gateways) { gateway, index in
            _ = try gateway.payments.capture(merchant: merchant, paymentID: payment.id, amount: Int64(6_000 + index))
        }
        #expect(outcomes.filter { $0 == nil }.count == 1, "\(outcomes)")
        let stored = try h.gateway.payments.payment(merchant: merchant, id: payment.id)
        #expect(stored.status == .captured)
        #expect((6_000..<6_004).contains(stored.capturedAmount))
        #expect(try h.eventTypes().filter { $0 == "payment.captured" }.count == 1)
    }

    @Test("one prime paid from several threads at once: one payment, one authorization", arguments: StoreBackend.all)
    func concurrentPrimeClaims(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let merchant = h.merchant
        let (_, outcomes, payments) = try Self.payOnePrimeAtOnce(h, idempotencyKey: nil)
        #expect(outcomes.filter { $0 == nil }.count == 1, "\(outcomes)")
        #expect(outcomes.filter { $0 == GatewayError.Code.primeAlreadyUsed.rawValue }.count == 5, "\(outcomes)")
        let id = try #require(payments.first)
        #expect(try h.authorizations(id) == 1)
        #expect(try h.gateway.payments.list(merchant: merchant, query: PaymentQuery()).payments.count == 1)
    }

    /// Pays one new prime of 10,000 TWD from 6 threads at once over the harness's gateway and a second one,
    /// each with `idempotencyKey` (if any); returns the prime request, each thread's outcome and the ids of
    /// the payments the threads got, in the order they got them.
    static func payOnePrimeAtOnce(
        _ h: Harness, idempotencyKey: String?
    ) throws -> (request: PayByPrimeRequest, outcomes: [String?], payments: [String]) {
        let gateways = [h.gateway, try secondGateway(h)]
        let merchant = h.merchant
        let prime = try h.gateway.payments.tokenize(merchant: merchant, token: h.token())
        let request = PayByPrimeRequest(prime: prime.prime, amount: 10_000, currency: "TWD")
        let payments = Mutex([String]())
        let outcomes = race(6, gateways) { gateway, _ in
            let payment = try gateway.payments.payByPrime(merchant: merchant, request, idempotencyKey: idempotencyKey)
            payments.withLock { $0.append(payment.id) }
        }
        return (request, outcomes, payments.withLock { $0 })
    }

    @Test(
        "one prime paid with one idempotency key from several threads at once: one payment, replays or in flight",
        arguments: StoreBackend.all)
    func concurrentSameKeyPayments(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let merchant = h.merchant
        // The key is claimed in the transaction that claims the prime: a thread that loses that race answers
        // as a claim made first would have (the stored payment, or in flight), never prime_already_used.
        let (request, outcomes, payments) = try Self.payOnePrimeAtOnce(h, idempotencyKey: "same-key")
        let allowed: Set<String?> = [nil, GatewayError.Code.idempotencyInFlight.rawValue]
        #expect(outcomes.allSatisfy { allowed.contains($0) }, "\(outcomes)")
        #expect(Set(payments).count == 1, "\(outcomes)")
        #expect(try h.gateway.payments.list(merchant: merchant, query: PaymentQuery()).payments.count == 1)
        let id = try #require(payments.first)
        #expect(try h.authorizations(id) == 1)
        let again = try h.gateway.payments.payByPrime(merchant: merchant, request, idempotencyKey: "same-key")
        #expect(again.id == id)
    }

    @Test(
        "six primes paid with one bank_transaction_id at once: one charge, the others duplicate_bank_transaction_id with their primes unclaimed",
        arguments: StoreBackend.all)
    func concurrentBankTransactionIDs(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let gateways = [h.gateway, try Self.secondGateway(h)]
        let merchant = h.merchant
        for round in 0..<3 {
            let reference = "BT-race-\(round)"
            let primes = try (0..<6).map { _ in try h.gateway.payments.tokenize(merchant: merchant, token: h.token()).prime }
            let payments = Mutex([Int: String]())
            let outcomes = Self.race(6, gateways) { gateway, index in
                let payment = try gateway.payments.payByPrime(
                    merchant: merchant,
                    PayByPrimeRequest(prime: primes[index], amount: 10_000, currency: "TWD", bankTransactionID: reference))
                payments.withLock { $0[index] = payment.id }
            }
            #expect(outcomes.filter { $0 == nil }.count == 1, "\(outcomes)")
            #expect(
                outcomes.filter { $0 == GatewayError.Code.duplicateBankTransactionID.rawValue }.count == 5, "\(outcomes)")
            let (winner, id) = try #require(payments.withLock { $0 }.first)
            #expect(try h.authorizations(id) == 1)
            let found = try h.gateway.payments.list(merchant: merchant, query: PaymentQuery(bankTransactionID: reference))
            #expect(found.payments.map(\.id) == [id])
            // The refusal came before the prime was claimed: each loser's prime still pays under its own reference.
            for index in primes.indices where index != winner {
                let paid = try h.gateway.payments.payByPrime(
                    merchant: merchant,
                    PayByPrimeRequest(
                        prime: primes[index], amount: 10_000, currency: "TWD",
                        bankTransactionID: "\(reference)-retry-\(index)"))
                #expect(paid.status == .captured)
            }
        }
    }

    @Test(
        "one token tokenized from several threads at once: one prime, the others are replays",
        arguments: StoreBackend.all)
    func concurrentTokenize(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let gateways = [h.gateway, try Self.secondGateway(h)]
        let merchant = h.merchant
        let token = h.token()
        let outcomes = Self.race(6, gateways) { gateway, _ in
            _ = try gateway.payments.tokenize(merchant: merchant, token: token)
        }
        #expect(outcomes.filter { $0 == nil }.count == 1, "\(outcomes)")
        #expect(outcomes.filter { $0 == GatewayError.Code.tokenReplayed.rawValue }.count == 5, "\(outcomes)")
    }

    @Test("four tokens paying one session at once without idempotency keys: one charge", arguments: StoreBackend.all)
    func concurrentSessionPays(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let gateways = [h.gateway, try Self.secondGateway(h)]
        let merchant = h.merchant
        let session = try h.gateway.sessions.create(
            merchant: merchant,
            CreateSessionRequest(outTradeNo: "race-1", amount: 10_000, currency: "TWD", country: "TW"))
        let tokens = (0..<4).map { _ in h.token() }
        let outcomes = Self.race(4, gateways) { gateway, index in
            _ = try gateway.sessions.pay(merchant: merchant, orderToken: session.orderToken, token: tokens[index])
        }
        #expect(outcomes.filter { $0 == nil }.count == 1, "\(outcomes)")
        #expect(try h.gateway.payments.list(merchant: merchant, query: PaymentQuery()).payments.count == 1)
    }
}
