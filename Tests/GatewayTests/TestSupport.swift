import ApplePayModel
import Foundation
import Gateway
import GatewaySQLite
import OrchardCrypto
import Testing

/// Test-only token opener: reads a JSON description of a decrypted token (no cryptography). It stands in for
/// the ApplePayToken-backed opener in unit tests of the domain; it refuses tokens for merchants without keys
/// and tokens marked with a token-library error code.
struct DescribedTokenOpener: PaymentTokenOpener {
    func open(token: Data, environment: GatewayEnvironment, keys: [ProcessingKeyMaterial], at time: Date)
        throws(GatewayError) -> OpenedToken
    {
        guard let object = (try? JSONSerialization.jsonObject(with: token)) as? [String: Any] else {
            throw GatewayError.token(code: "malformed_token", reason: "not JSON")
        }
        if let code = object["error"] as? String { throw GatewayError.token(code: code, reason: "refused") }
        guard let key = object["key"] as? String, keys.contains(where: { $0.id == key }) else {
            throw GatewayError.token(code: "unknown_merchant_key", reason: "no key")
        }
        return OpenedToken(
            transactionID: object["transactionId"] as! String,
            transactionIdentifier: object["transactionIdentifier"] as? String,
            network: object["network"] as? String, methodType: object["type"] as? String,
            accountNumber: SecureBytes(Array((object["pan"] as! String).utf8)),
            expirationDate: object["expiry"] as? String ?? "301231",
            currencyNumericCode: object["currency"] as! String, amount: (object["amount"] as! NSNumber).int64Value,
            cryptogram: (object["cryptogram"] as? String).map { SecureBytes(Array(Data(base64Encoded: $0)!)) },
            eci: "05", cardholderName: nil, paymentDataType: "3DSecure")
    }
}

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

/// A gateway over a real SQLite file in a fresh temporary directory, a manual clock and the sandbox acquirer.
final class Harness: @unchecked Sendable {
    static let pan = "4111111111111111"
    static let cryptogram = "AOF7d7Jx0OMSAAKPmHr8AoABFA=="

    let directory: URL
    let clock = ManualClock(Date(timeIntervalSince1970: 1_800_000_000))
    let store: SQLiteStore
    let cipher: EnvelopeCipher
    let acquirer: SandboxAcquirer
    let gateway: GatewayService
    let merchant: Merchant
    let credentials: MerchantCredentials
    let keyID: String
    private var counter = 0

    init(gate: Bool = false, configure: (inout GatewayConfiguration) -> Void = { _ in }) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("orchard-gw-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let key = try MasterKey.load(file: directory.appendingPathComponent("master.key"), environment: .sandbox)
        cipher = EnvelopeCipher(masterKey: key)
        store = try SQLiteStore(path: directory.appendingPathComponent("gateway.db").path, cipher: cipher)
        var acquirerConfiguration = SandboxAcquirer.Configuration()
        acquirerConfiguration.slowDelay = 0
        acquirerConfiguration.unknownResolutionDelay = 60
        acquirer = SandboxAcquirer(ledger: store, clock: clock, configuration: acquirerConfiguration)
        var configuration = GatewayConfiguration()
        configure(&configuration)
        gateway = GatewayService(
            configuration: configuration, store: store, processor: gate ? GatedProcessor(acquirer) : acquirer,
            tokenOpener: DescribedTokenOpener(), currencies: ISO4217Currencies(),
            paymentRequests: ApplePayRequestEvaluator(), cipher: cipher, clock: clock)
        (merchant, credentials) = try gateway.merchants.create(
            MerchantSpec(name: "Test Shop", environment: .sandbox, merchantIdentifiers: ["merchant.test.shop"]))
        keyID = try gateway.merchants.addProcessingKey(
            merchantID: merchant.id, privateKeyPEM: SecureBytes(Array("test key".utf8)), certificatePEM: "test cert")
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    var databasePath: String { store.path }

    /// A described token with a fresh transactionId.
    func token(
        amount: Int64 = 10_000, currency: String = "901", pan: String = Harness.pan, network: String = "Visa",
        type: String = "credit", transactionIdentifier: String? = nil, error: String? = nil
    ) -> Data {
        counter += 1
        var object: [String: Any] = [
            "transactionId": "txn-\(counter)-\(UUID().uuidString)", "pan": pan, "amount": amount, "currency": currency,
            "cryptogram": Harness.cryptogram, "network": network, "type": type, "key": keyID,
        ]
        if let transactionIdentifier { object["transactionIdentifier"] = transactionIdentifier }
        if let error { object["error"] = error }
        return try! JSONSerialization.data(withJSONObject: object)
    }

    /// A payment request JSON (Apple Pay JS shape) for this merchant.
    func paymentRequest(_ request: PaymentRequest) -> Data {
        var request = request
        request.merchantIdentifier = "merchant.test.shop"
        return PaymentRequestCoder.encode(request, as: .applePayJS)
    }

    /// Tokenizes and pays by prime in one go.
    func pay(
        amount: Int64 = 10_000, currency: String = "TWD", captureMode: CaptureMode = .now, orderNumber: String? = nil,
        key: String? = nil
    ) throws -> Payment {
        let prime = try gateway.tokenize(merchant: merchant, token: token(amount: amount))
        return try gateway.payByPrime(
            merchant: merchant,
            PayByPrimeRequest(
                prime: prime.prime, amount: amount, currency: currency, orderNumber: orderNumber,
                captureMode: captureMode), idempotencyKey: key)
    }

    /// How many authorizations the acquirer recorded for a payment.
    func authorizations(_ paymentID: String) throws -> Int {
        try store.acquirerAuthorizations(merchantReference: paymentID).count
    }

    /// The event types recorded for the merchant, oldest first.
    func eventTypes() throws -> [String] {
        try gateway.events(merchant: merchant, limit: 100).reversed().map(\.type)
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
