import Foundation
import Gateway
import Testing

/// The domain capabilities the TapPay-compatible routes rely on: each rule lives here, not in the route layer.
@Suite("Compatibility capabilities of the domain")
struct CompatDomainTests {
    @Test(
        "bank_transaction_id names one payment of a merchant: a repeat is refused before its prime is claimed",
        arguments: StoreBackend.all)
    func bankTransactionID(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        func pay(_ reference: String) throws -> (String, Payment) {
            let prime = try h.gateway.payments.tokenize(merchant: h.merchant, token: h.token()).prime
            let payment = try h.gateway.payments.payByPrime(
                merchant: h.merchant,
                PayByPrimeRequest(prime: prime, amount: 10_000, currency: "TWD", bankTransactionID: reference))
            return (prime, payment)
        }
        let (_, first) = try pay("BT-1")
        #expect(first.bankTransactionID == "BT-1")
        #expect(try h.gateway.payments.payment(merchant: h.merchant, id: first.id).bankTransactionID == "BT-1")
        let prime = try h.gateway.payments.tokenize(merchant: h.merchant, token: h.token()).prime
        let repeated = PayByPrimeRequest(prime: prime, amount: 10_000, currency: "TWD", bankTransactionID: "BT-1")
        expectGatewayError(.duplicateBankTransactionID) { try h.gateway.payments.payByPrime(merchant: h.merchant, repeated) }
        // The refused call left its prime unclaimed: it pays under another reference.
        var other = repeated
        other.bankTransactionID = "BT-2"
        #expect(try h.gateway.payments.payByPrime(merchant: h.merchant, other).status == .captured)
        let found = try h.gateway.payments.list(merchant: h.merchant, query: PaymentQuery(bankTransactionID: "BT-1"))
        #expect(found.payments.map(\.id) == [first.id])
        #expect(try h.authorizations(first.id) == 1)
        var spaced = other
        spaced.bankTransactionID = "has space"
        expectGatewayError(.parameterInvalid) { try h.gateway.payments.payByPrime(merchant: h.merchant, spaced) }
    }

    @Test(
        "the store refuses a second payment with a merchant's bank_transaction_id as a StoreConflict, writing nothing",
        arguments: StoreBackend.all)
    func bankTransactionIDConflict(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let prime = try h.gateway.payments.tokenize(merchant: h.merchant, token: h.token()).prime
        let first = try h.gateway.payments.payByPrime(
            merchant: h.merchant,
            PayByPrimeRequest(prime: prime, amount: 10_000, currency: "TWD", bankTransactionID: "BT-index"))
        var copy = first
        copy.id = "pay_conflicting_copy"
        #expect(throws: StoreConflict(.paymentBankTransactionID)) {
            try h.store.write { tx in try tx.insertPayment(copy) }
        }
        #expect(try h.store.write { tx in try tx.payment(id: copy.id) } == nil)
        // Without a bank transaction id (or with another) the same row inserts.
        copy.bankTransactionID = nil
        try h.store.write { tx in try tx.insertPayment(copy) }
        var other = copy
        other.id = "pay_other_reference"
        other.bankTransactionID = "BT-other"
        try h.store.write { tx in try tx.insertPayment(other) }
        #expect(try h.store.write { tx in try tx.payment(id: other.id) }?.bankTransactionID == "BT-other")
    }

    @Test(
        "a scheduled capture can be cancelled while authorized; not once captured, nor when none is scheduled",
        arguments: StoreBackend.all)
    func cancelScheduledCapture(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let prime = try h.gateway.payments.tokenize(merchant: h.merchant, token: h.token()).prime
        let payment = try h.gateway.payments.payByPrime(
            merchant: h.merchant,
            PayByPrimeRequest(prime: prime, amount: 10_000, currency: "TWD", captureMode: .afterDays(2)))
        #expect(payment.status == .authorized)
        #expect(payment.captureAt != nil)
        let unscheduled = try h.gateway.payments.cancelScheduledCapture(merchant: h.merchant, paymentID: payment.id)
        #expect(unscheduled.status == .authorized)
        #expect(unscheduled.captureAt == nil)
        #expect(try h.gateway.payments.payment(merchant: h.merchant, id: payment.id).captureAt == nil)
        expectGatewayError(.invalidStateTransition) {
            try h.gateway.payments.cancelScheduledCapture(merchant: h.merchant, paymentID: payment.id)
        }
        // Reconciliation after the original date captures nothing.
        h.clock.advance(by: 3 * 86_400)
        _ = try h.gateway.payments.reconcile()
        #expect(try h.gateway.payments.payment(merchant: h.merchant, id: payment.id).status == .authorized)
        let captured = try h.gateway.payments.capture(merchant: h.merchant, paymentID: payment.id)
        #expect(captured.status == .captured)
        expectGatewayError(.invalidStateTransition) {
            try h.gateway.payments.cancelScheduledCapture(merchant: h.merchant, paymentID: payment.id)
        }
    }

    @Test("the TapPay merchant alias is stored, names the merchant, and is bounded", arguments: StoreBackend.all)
    func tappayAlias(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let merchant = try h.gateway.merchants.setTapPayCompat(merchantID: h.merchant.id, merchantAlias: "GlobalTesting_CTBC")
        #expect(try h.gateway.merchants.merchant(id: h.merchant.id).tappayMerchantAlias == "GlobalTesting_CTBC")
        #expect(merchant.isNamed(byTapPayMerchantID: "GlobalTesting_CTBC"))
        #expect(merchant.isNamed(byTapPayMerchantID: h.merchant.id))
        #expect(!merchant.isNamed(byTapPayMerchantID: "Other_CTBC"))
        expectGatewayError(.parameterInvalid) {
            try h.gateway.merchants.setTapPayCompat(merchantID: h.merchant.id, merchantAlias: String(repeating: "a", count: 51))
        }
        let cleared = try h.gateway.merchants.setTapPayCompat(merchantID: h.merchant.id, merchantAlias: .some(nil))
        #expect(cleared.tappayMerchantAlias == nil)
        #expect(!cleared.isNamed(byTapPayMerchantID: "GlobalTesting_CTBC"))
    }

    @Test(
        "TapPay's numeric app id is stored, authenticates client calls with the app key, is bounded and unique",
        arguments: StoreBackend.all)
    func tappayAppID(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let registry = h.gateway.merchants
        expectGatewayError(.invalidCredentials) { try registry.authenticateClient(appID: "12345", appKey: h.credentials.appKey) }
        let set = try registry.setTapPayCompat(merchantID: h.merchant.id, merchantAlias: "GlobalTesting_CTBC", appID: 12345)
        #expect(set.tappayAppID == 12345)
        // Leaving a field out keeps it; the other one changes alone.
        let kept = try registry.setTapPayCompat(merchantID: h.merchant.id, merchantAlias: .some(nil))
        #expect(kept.tappayAppID == 12345 && kept.tappayMerchantAlias == nil)
        #expect(try registry.merchant(id: h.merchant.id).tappayAppID == 12345)
        #expect(try registry.authenticateClient(appID: "12345", appKey: h.credentials.appKey).id == h.merchant.id)
        #expect(try registry.authenticateClient(appID: h.credentials.appID, appKey: h.credentials.appKey).id == h.merchant.id)
        expectGatewayError(.invalidCredentials) { try registry.authenticateClient(appID: "12345", appKey: "wrong") }
        // Only the digits of the number name it: no sign, no leading zero, nothing around it.
        for spelling in ["012345", "+12345", "12345 ", "1234５", "-12345", "12345.0"] {
            expectGatewayError(.invalidCredentials) {
                try registry.authenticateClient(appID: spelling, appKey: h.credentials.appKey)
            }
        }
        for outside in [0, -1, 2_147_483_648] {
            expectGatewayError(.parameterInvalid) { try registry.setTapPayCompat(merchantID: h.merchant.id, appID: outside) }
        }
        #expect(try registry.setTapPayCompat(merchantID: h.merchant.id, appID: 2_147_483_647).tappayAppID == 2_147_483_647)
        _ = try registry.setTapPayCompat(merchantID: h.merchant.id, appID: 12345)
        let (other, _) = try registry.create(
            MerchantSpec(name: "Other", environment: .sandbox, merchantIdentifiers: ["merchant.other"]))
        expectGatewayError(.tappayAppIDTaken) { try registry.setTapPayCompat(merchantID: other.id, appID: 12345) }
        #expect(try registry.merchant(id: other.id).tappayAppID == nil)
        // Setting its own number again is no conflict; once removed, the number is free for another merchant.
        _ = try registry.setTapPayCompat(merchantID: h.merchant.id, appID: 12345)
        #expect(try registry.setTapPayCompat(merchantID: h.merchant.id, appID: .some(nil)).tappayAppID == nil)
        expectGatewayError(.invalidCredentials) { try registry.authenticateClient(appID: "12345", appKey: h.credentials.appKey) }
        #expect(try registry.setTapPayCompat(merchantID: other.id, appID: 12345).tappayAppID == 12345)
    }

    @Test(
        "the store refuses a second merchant with a TapPay app id as a StoreConflict, writing nothing",
        arguments: StoreBackend.all)
    func tappayAppIDConflict(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        _ = try h.gateway.merchants.setTapPayCompat(merchantID: h.merchant.id, appID: 777)
        let (other, _) = try h.gateway.merchants.create(
            MerchantSpec(name: "Other", environment: .sandbox, merchantIdentifiers: ["merchant.other"]))
        var record = try #require(try h.store.read { try $0.merchant(id: other.id) })
        record.tappayAppID = 777
        // The domain's check runs first; the index holds against two writers that both passed it.
        #expect(throws: StoreConflict(.merchantTapPayAppID)) { try h.store.write { tx in try tx.updateMerchant(record) } }
        #expect(try h.store.read { try $0.merchant(id: other.id) }?.tappayAppID == nil)
        #expect(try h.store.read { try $0.merchant(tappayAppID: 777) }?.id == h.merchant.id)
        record.tappayAppID = 778
        try h.store.write { tx in try tx.updateMerchant(record) }
        #expect(try h.store.read { try $0.merchant(tappayAppID: 778) }?.id == other.id)
    }
}
