import Foundation
import Gateway
import GatewayAssembly
import OrchardCrypto
import Testing

/// A connector of type `testpsp` for the domain's tests: `environment` `test` or `live`, a `merchant_account`, an
/// `api_key` secret. Its processor is the sandbox acquirer under another name, and it remembers which settings
/// version each processor call came through.
final class RecordingConnector: ProcessorConnector, @unchecked Sendable {
    let acquirer: SandboxAcquirer
    private let lock = NSLock()
    /// The settings version of every processor call, in order, with the call's kind.
    private(set) var calls: [(kind: String, version: Int)] = []
    /// The API keys the processors were made with, by version.
    private(set) var keys: [Int: String] = [:]

    init(_ acquirer: SandboxAcquirer) { self.acquirer = acquirer }

    let type = "testpsp"
    let secretFields = ["api_key"]

    func draft(from body: [String: String]) throws(GatewayError) -> ProcessorSettingsDraft {
        for name in body.keys where !["environment", "merchant_account", "api_key"].contains(name) {
            throw GatewayError.invalid(name, "not a setting of testpsp")
        }
        guard let environment = body["environment"] else {
            throw GatewayError(.parameterMissing, "environment", param: "environment")
        }
        guard ["test", "live"].contains(environment) else { throw GatewayError.invalid("environment", "test or live") }
        guard let account = body["merchant_account"] else {
            throw GatewayError(.parameterMissing, "merchant_account", param: "merchant_account")
        }
        guard let key = body["api_key"] else { throw GatewayError(.parameterMissing, "api_key", param: "api_key") }
        return ProcessorSettingsDraft(
            environment: environment, isLive: environment == "live", fields: ["merchant_account": account],
            secrets: ["api_key": SecureBytes(Array(key.utf8))])
    }

    func processor(for account: ProcessorAccount) throws(GatewayError) -> any Processor {
        lock.withLock { keys[account.version] = account.secretText("api_key") }
        return VersionedProcessor(connector: self, version: account.version)
    }

    func testConnection(_ account: ProcessorAccount) -> ProcessorConnectionTest {
        ProcessorConnectionTest(outcome: .ok, message: "testpsp accepted \(account.fields["merchant_account"] ?? "")")
    }

    fileprivate func note(_ kind: String, _ version: Int) { lock.withLock { calls.append((kind, version)) } }
}

/// The sandbox acquirer as `testpsp`, noting its settings version on each call.
private struct VersionedProcessor: Processor {
    let connector: RecordingConnector
    let version: Int
    var name: String { connector.type }

    func authorize(_ request: AuthorizationRequest) -> AuthorizationOutcome {
        connector.note("authorize", version)
        return connector.acquirer.authorize(request)
    }
    func capture(reference: String, amount: Int64, currency: String, operationID: String) -> ProcessorOperationOutcome {
        connector.note("capture", version)
        return connector.acquirer.capture(
            reference: reference, amount: amount, currency: currency, operationID: operationID)
    }
    func void(reference: String, operationID: String) -> ProcessorOperationOutcome {
        connector.note("void", version)
        return connector.acquirer.void(reference: reference, operationID: operationID)
    }
    func refund(reference: String, amount: Int64, currency: String, operationID: String) -> ProcessorOperationOutcome {
        connector.note("refund", version)
        return connector.acquirer.refund(
            reference: reference, amount: amount, currency: currency, operationID: operationID)
    }
    func query(merchantReference: String) -> ProcessorQueryResult {
        connector.acquirer.query(merchantReference: merchantReference)
    }
}

@Suite("Per-merchant processor settings: versions, sealed secrets, who may use what, and the processor of a payment")
struct ProcessorSettingsTests {
    static func harness(_ backend: StoreBackend) throws -> (Harness, RecordingConnector) {
        var connector: RecordingConnector?
        let h = try Harness(
            backend,
            connectors: { acquirer in
                let made = RecordingConnector(acquirer)
                connector = made
                return [made]
            }, productionTrustsSandbox: true)
        return (h, try #require(connector))
    }

    @Test(
        "a sandbox merchant: the sandbox acquirer by default, then its own settings; secrets sealed, shown by their last four",
        arguments: StoreBackend.all)
    func sandboxMerchant(_ backend: StoreBackend) throws {
        let (h, _) = try Self.harness(backend)
        let initial = try h.gateway.processorSettings(merchantID: h.merchant.id)
        #expect(initial.type == "sandbox" && !initial.configured && initial.version == nil)
        let secret = "key-ABCDEFGH-secret-Zq9W"
        let view = try h.gateway.setProcessorSettings(
            merchantID: h.merchant.id,
            body: ["type": "testpsp", "environment": "test", "merchant_account": "Shop", "api_key": secret])
        #expect(view.type == "testpsp" && view.environment == "test" && view.version == 1 && view.configured)
        #expect(view.fields == ["merchant_account": "Shop"] && view.secretHints == ["api_key": "Zq9W"])
        #expect(try h.gateway.processorSettings(merchantID: h.merchant.id) == view)
        let second = try h.gateway.setProcessorSettings(merchantID: h.merchant.id, body: ["type": "sandbox"])
        #expect(second.version == 2 && second.type == "sandbox" && second.secretHints.isEmpty)
        // The secret is sealed: no trace of it in the database files or rows.
        for (name, bytes) in try h.storedContents() {
            for form in h.storedForms([Data(secret.utf8)]) {
                #expect(bytes.range(of: form) == nil, "the API key is readable in \(name)")
            }
        }
        // Each change is an audit entry naming the type, environment and version, never the secret.
        let entries = try h.gateway.auditLog(merchant: h.merchant, limit: 100, startingAfter: nil).entries
            .filter { $0.action == "processor_settings.update" }.sorted {
                $0.detail["version"] ?? "" < $1.detail["version"] ?? ""
            }
        #expect(entries.map { $0.detail["version"] } == ["1", "2"])
        #expect(entries.first?.detail == ["type": "testpsp", "environment": "test", "version": "1"])
    }

    @Test(
        "refused settings: unknown type or field, a missing field, live for a sandbox merchant, sandbox for a production one",
        arguments: StoreBackend.all)
    func refused(_ backend: StoreBackend) throws {
        let (h, _) = try Self.harness(backend)
        let id = h.merchant.id
        let good = ["type": "testpsp", "environment": "test", "merchant_account": "Shop", "api_key": "k"]
        expectGatewayError(.parameterMissing) { try h.gateway.setProcessorSettings(merchantID: id, body: [:]) }
        let unknown = expectGatewayError(.parameterInvalid) {
            try h.gateway.setProcessorSettings(merchantID: id, body: ["type": "paypal"])
        }
        #expect(unknown?.param == "type")
        var extra = good
        extra["colour"] = "red"
        #expect(
            expectGatewayError(.parameterInvalid) { try h.gateway.setProcessorSettings(merchantID: id, body: extra) }?
                .param == "colour")
        var missing = good
        missing["api_key"] = nil
        #expect(
            expectGatewayError(.parameterMissing) { try h.gateway.setProcessorSettings(merchantID: id, body: missing) }?
                .param == "api_key")
        var long = good
        long["merchant_account"] = String(repeating: "a", count: FieldLimits.processorSetting.upperBound + 1)
        expectGatewayError(.parameterInvalid) { try h.gateway.setProcessorSettings(merchantID: id, body: long) }
        var live = good
        live["environment"] = "live"
        expectGatewayError(.processorNotAllowed) { try h.gateway.setProcessorSettings(merchantID: id, body: live) }
        expectGatewayError(.parameterInvalid) {
            try h.gateway.setProcessorSettings(merchantID: id, body: ["type": "sandbox", "environment": "test"])
        }
        let (production, _) = try h.productionMerchant()
        expectGatewayError(.processorNotAllowed) {
            try h.gateway.setProcessorSettings(merchantID: production.id, body: ["type": "sandbox"])
        }
        #expect(try h.gateway.setProcessorSettings(merchantID: production.id, body: live).environment == "live")
        #expect(
            try h.gateway.setProcessorSettings(merchantID: production.id, body: good).version == 2,
            "test is allowed too")
        #expect(try h.gateway.processorSettings(merchantID: id).configured == false, "nothing refused was stored")
    }

    @Test(
        "a production merchant without a processor: processor_not_configured on pay, before the prime is claimed",
        arguments: StoreBackend.all)
    func notConfigured(_ backend: StoreBackend) throws {
        let (h, connector) = try Self.harness(backend)
        let (production, certificate) = try h.productionMerchant()
        #expect(try h.gateway.processorSettings(merchantID: production.id).type == nil)
        expectGatewayError(.processorNotConfigured) { try h.gateway.testProcessorConnection(merchantID: production.id) }
        let prime = try h.gateway.payments.tokenize(merchant: production, token: h.token(certificatePEM: certificate))
        let request = PayByPrimeRequest(prime: prime.prime, amount: 10_000, currency: "TWD")
        expectGatewayError(.processorNotConfigured) { try h.gateway.payments.payByPrime(merchant: production, request) }
        let stored = try h.store.read { try $0.prime(hash: Identifiers.sha256Hex(prime.prime)) }
        #expect(stored?.claimedAt == nil, "the prime is still unclaimed")
        try h.gateway.setProcessorSettings(
            merchantID: production.id,
            body: ["type": "testpsp", "environment": "live", "merchant_account": "Live", "api_key": "live-key"])
        let paid = try h.gateway.payments.payByPrime(merchant: production, request)
        #expect(paid.status == .captured && paid.acquirer == "testpsp")
        #expect(connector.calls.map(\.version) == [1, 1])
    }

    @Test(
        "a payment's capture, void and refund go to the settings it was authorized under, after a change too",
        arguments: StoreBackend.all)
    func versionStays(_ backend: StoreBackend) throws {
        let (h, connector) = try Self.harness(backend)
        let body = ["type": "testpsp", "environment": "test", "merchant_account": "Shop", "api_key": "first-key"]
        try h.gateway.setProcessorSettings(merchantID: h.merchant.id, body: body)
        let first = try h.pay(captureMode: .manual)
        let second = try h.pay(captureMode: .manual)
        #expect(first.acquirer == "testpsp")
        var changed = body
        changed["api_key"] = "second-key"
        try h.gateway.setProcessorSettings(merchantID: h.merchant.id, body: changed)
        let third = try h.pay(captureMode: .manual)
        _ = try h.gateway.payments.capture(merchant: h.merchant, paymentID: first.id)
        _ = try h.gateway.refunds.refund(merchant: h.merchant, paymentID: first.id, amount: 1_000)
        _ = try h.gateway.payments.void(merchant: h.merchant, paymentID: second.id)
        _ = try h.gateway.payments.capture(merchant: h.merchant, paymentID: third.id)
        #expect(
            connector.calls.map(\.kind) == [
                "authorize", "authorize", "authorize", "capture", "refund", "void", "capture",
            ])
        #expect(connector.calls.map(\.version) == [1, 1, 2, 1, 1, 1, 2])
        #expect(connector.keys == [1: "first-key", 2: "second-key"])
        // Back to the sandbox acquirer: new payments go there, earlier ones keep theirs.
        try h.gateway.setProcessorSettings(merchantID: h.merchant.id, body: ["type": "sandbox"])
        let fourth = try h.pay(captureMode: .manual)
        #expect(fourth.acquirer == "sandbox")
        _ = try h.gateway.refunds.refund(merchant: h.merchant, paymentID: first.id, amount: 1_000)
        #expect(connector.calls.last?.kind == "refund" && connector.calls.last?.version == 1)
        #expect(try h.gateway.testProcessorConnection(merchantID: h.merchant.id).outcome == .ok)
    }
}
