import ApplePayModel
import ApplePaySandbox
import ApplePayToken
import Foundation
import Gateway
import GatewayAssembly
import GatewayPostgres
import GatewaySQLite
import OrchardCrypto
import Synchronization
import Testing

/// A processor wrapper that can hold `authorize` until released, to test requests in flight.
final class GatedProcessor: Processor, @unchecked Sendable {
    let inner: any Processor
    let entered = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    var name: String { inner.name }
    init(_ inner: any Processor) { self.inner = inner }
    func authorize(_ request: AuthorizationRequest) -> AuthorizationOutcome {
        entered.signal()
        release.wait()
        return inner.authorize(request)
    }
    func capture(reference: String, amount: Int64, currency: String, operationID: String) -> ProcessorOperationOutcome {
        inner.capture(reference: reference, amount: amount, currency: currency, operationID: operationID)
    }
    func void(reference: String, operationID: String) -> ProcessorOperationOutcome {
        inner.void(reference: reference, operationID: operationID)
    }
    func refund(reference: String, amount: Int64, currency: String, operationID: String) -> ProcessorOperationOutcome {
        inner.refund(reference: reference, amount: amount, currency: currency, operationID: operationID)
    }
    func query(merchantReference: String) -> ProcessorQueryResult { inner.query(merchantReference: merchantReference) }
}

/// A gateway over a real store (a SQLite file in a fresh temporary directory, or a fresh PostgreSQL database),
/// a manual clock, the sandbox acquirer,
/// the sandbox merchant provisioned with a processing key issued by a generated sandbox PKI, and real
/// tokens minted by that PKI.
final class Harness: @unchecked Sendable {
    static let pan = "4111111111111111"
    static let cryptogram = "AOF7d7Jx0OMSAAKPmHr8AoABFA=="

    let directory: URL
    let clock = ManualClock(Date(timeIntervalSince1970: 1_800_000_000))
    let backend: StoreBackend
    let store: any TestStore
    /// The PostgreSQL database (dropped with the harness), for the PostgreSQL backend.
    let postgres: PostgresTestDatabase?
    let cipher: EnvelopeCipher
    let acquirer: SandboxAcquirer
    let gateway: GatewayService
    let tokenOpener: ApplePayTokenOpener
    let merchant: Merchant
    let credentials: MerchantCredentials
    let keyID: String
    let minter: TokenMinter
    let certificatePEM: String

    init(
        _ backend: StoreBackend = .sqlite, database: PostgresTestDatabase? = nil, gate: Bool = false,
        configure: (inout GatewayConfiguration) -> Void = { _ in },
        processor wrap: ((SandboxAcquirer) -> any Processor)? = nil,
        connectors: ((SandboxAcquirer) -> [any ProcessorConnector])? = nil, productionTrustsSandbox: Bool = false
    ) throws {
        if database == nil { try backend.requireServer() }
        self.backend = backend
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("orchard-gw-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("gateway.db").path
        let key = try MasterKey.resolve(databasePath: path, environment: .sandbox, variables: [:])
        cipher = EnvelopeCipher(masterKey: key)
        switch backend {
        case .sqlite:
            postgres = nil
            store = try SQLiteStore(path: path)
        case .postgres:
            let database = try database ?? PostgresTestDatabase()
            postgres = database
            store = try database.store()
        }
        let setup = try MerchantRegistry(store: store, cipher: cipher, clock: clock).ensureSandbox(
            issuer: SandboxPKIIssuer())
        merchant = setup.merchant
        credentials = try #require(setup.newCredentials)
        var acquirerConfiguration = SandboxAcquirer.Configuration()
        acquirerConfiguration.slowDelay = 0
        acquirerConfiguration.unknownResolutionDelay = 60
        acquirer = SandboxAcquirer(ledger: store, clock: clock, configuration: acquirerConfiguration)
        var configuration = GatewayConfiguration()
        configure(&configuration)
        let anchor = try TrustAnchor(pem: setup.trustAnchorPEM)
        // A production merchant's tokens verify under the sandbox root only where a test asks for it (a stand-in
        // for Apple's root, so production payments can be made in tests).
        let opener = ApplePayTokenOpener(
            trustAnchors: productionTrustsSandbox ? [.sandbox: anchor, .production: anchor] : [.sandbox: anchor])
        tokenOpener = opener
        var processor: any Processor = gate ? GatedProcessor(acquirer) : acquirer
        if let wrap { processor = wrap(acquirer) }
        gateway = GatewayService(
            configuration: configuration, store: store, processor: processor,
            connectors: connectors?(acquirer) ?? [],
            tokenOpener: opener, currencies: ISO4217Currencies(), paymentRequests: ApplePayRequestEvaluator(),
            cipher: cipher, clock: clock)
        let certificate = try #require(try gateway.merchants.processingCertificates(merchantID: merchant.id).first)
        keyID = certificate.id
        certificatePEM = certificate.certificatePEM
        minter = TokenMinter(pki: try #require(try SandboxPKIIssuer.storedPKI(store: store, cipher: cipher)))
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    /// The SQLite file (SQLite backend).
    var databasePath: String { directory.appendingPathComponent("gateway.db").path }

    /// Everything the database holds, as bytes to search for secrets: the SQLite file with its WAL and shared
    /// memory, or every row of every PostgreSQL table in text form.
    func storedContents() throws -> [(name: String, bytes: Data)] {
        switch store {
        case let store as PostgresStore: return [("the PostgreSQL tables", Data(try store.textDump().utf8))]
        default:
            return ["", "-wal", "-shm"].compactMap { suffix in
                FileManager.default.contents(atPath: databasePath + suffix).map { ("gateway.db" + suffix, $0) }
            }
        }
    }

    /// The forms `needles` would take in ``storedContents()``: as they are, and (PostgreSQL) in the hex text form
    /// of `bytea` values.
    func storedForms(_ needles: [Data]) -> [Data] {
        guard backend == .postgres else { return needles }
        return needles + needles.map { Data($0.map { String(format: "%02x", $0) }.joined().utf8) }
    }

    /// A second store on the harness's database (another connection, or another instance's pool).
    func reopenedStore() throws -> any TestStore {
        switch backend {
        case .sqlite: try SQLiteStore(path: databasePath)
        case .postgres: try #require(postgres).store()
        }
    }

    /// A real token minted by the sandbox PKI for the merchant's processing certificate, signed now.
    func token(
        amount: Int64 = 10_000, currency: String = "901", pan: String = Harness.pan, network: String = "Visa",
        type: String = "credit", transactionIdentifier: String? = nil, tamper: MintRequest.Tamper = .none,
        certificatePEM: String? = nil, emvData: String? = nil
    ) -> Data {
        var request = MintRequest(
            merchantCertificatePEM: certificatePEM ?? self.certificatePEM, signingTime: clock.now())
        request.amount = amount
        request.currencyCode = currency
        request.pan = pan
        request.network = network
        request.type = type
        request.cryptogram = Harness.cryptogram
        request.transactionIdentifier = transactionIdentifier
        request.tamper = tamper
        request.emvData = emvData
        return try! minter.mint(request)
    }

    /// A production merchant with a processing key issued by the sandbox PKI (its tokens verify only in a harness
    /// made with `productionTrustsSandbox`), and its processing certificate.
    func productionMerchant() throws -> (merchant: Merchant, certificatePEM: String) {
        let (merchant, _) = try gateway.merchants.create(
            MerchantSpec(name: "Live Shop", environment: .production, merchantIdentifiers: ["merchant.com.live"]))
        let context = SealingContext.setting(MerchantRegistry.sandboxPKISetting)
        let pki = try cipher.open(
            try #require(try store.read { try $0.setting(MerchantRegistry.sandboxPKISetting) }), context: context)
        let key = try SandboxPKIIssuer().issueProcessingKey(
            pki: pki, merchantIdentifier: "merchant.com.live", id: "pk_live_test", now: clock.now())
        try gateway.keys.addProcessingKey(
            merchantID: merchant.id, privateKeyPEM: try key.privateKeyPEM(), certificatePEM: key.certificatePEM,
            id: key.id)
        return (merchant, key.certificatePEM)
    }

    /// A payment request JSON (Apple Pay JS shape) for this merchant.
    func paymentRequest(_ request: PaymentRequest) -> Data {
        var request = request
        request.merchantIdentifier = merchant.merchantIdentifiers[0]
        return PaymentRequestCoder.encode(request, as: .applePayJS)
    }

    /// Tokenizes and pays by prime in one go.
    func pay(
        amount: Int64 = 10_000, currency: String = "TWD", captureMode: CaptureMode = .now, orderNumber: String? = nil,
        key: String? = nil
    ) throws -> Payment {
        let prime = try gateway.payments.tokenize(merchant: merchant, token: token(amount: amount))
        return try gateway.payments.payByPrime(
            merchant: merchant,
            PayByPrimeRequest(
                prime: prime.prime, amount: amount, currency: currency, orderNumber: orderNumber,
                captureMode: captureMode), idempotencyKey: key)
    }

    /// Pays `prime` for the harness's merchant.
    func payByPrime(_ prime: String, amount: Int64, currency: String, deferred: Bool = false) throws -> Payment {
        try gateway.payments.payByPrime(
            merchant: merchant, PayByPrimeRequest(prime: prime, amount: amount, currency: currency, deferred: deferred))
    }

    /// How many authorizations the acquirer recorded for a payment.
    func authorizations(_ paymentID: String) throws -> Int {
        try store.acquirerAuthorizations(merchantReference: paymentID).count
    }

    /// The event types recorded for the merchant, oldest first.
    func eventTypes() throws -> [String] {
        try gateway.webhooks.events(merchant: merchant, limit: 100).reversed().map(\.type)
    }
}

/// Expects `body` to throw a gateway error with `code`, returning it.
@discardableResult
func expectGatewayError<T>(
    _ code: GatewayError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> T
) -> GatewayError? {
    do {
        _ = try body()
        Issue.record("expected \(code.rawValue), got success", sourceLocation: sourceLocation)
        return nil
    } catch let error as GatewayError {
        #expect(error.code == code, "got \(error)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected \(code.rawValue), got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// Runs `body` on `count` threads released together; returns each thread's outcome: nil on success, else
/// `describe` of what it threw (`not_run` for a thread that never ran).
func runTogether(
    _ count: Int, describe: @Sendable @escaping (any Error) -> String,
    _ body: @Sendable @escaping (Int) throws -> Void
) -> [String?] {
    let results = Mutex([String?](repeating: "not_run", count: count))
    let start = DispatchSemaphore(value: 0)
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        Thread.detachNewThread {
            start.wait()
            var outcome: String?
            do { try body(index) } catch { outcome = describe(error) }
            results.withLock { $0[index] = outcome }
            group.leave()
        }
    }
    for _ in 0..<count { start.signal() }
    group.wait()
    return results.withLock { $0 }
}
