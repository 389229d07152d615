import ApplePayModel
import Foundation
import Gateway
import OrchardCrypto
import OrchardTestSupport
import Testing

@Suite("Merchant administration: key rotation, disabling, and the audit entries of every change")
struct MerchantAdministrationTests {
    @Test("a rotated secret key keeps working for its overlap, then is refused", arguments: StoreBackend.all)
    func secretKeyOverlap(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let registry = h.gateway.merchants
        let old = h.credentials.secretKey
        let rotated = try registry.rotateSecretKey(merchantID: h.merchant.id, overlap: 3600)
        #expect(rotated.key.hasPrefix("sk_test_") && rotated.key.utf8.count == 52 && rotated.key != old)
        #expect(rotated.previousKeyExpiresAt == h.clock.now().addingTimeInterval(3600))
        #expect(try registry.authenticateServer(secretKey: old).id == h.merchant.id)
        #expect(try registry.authenticateServer(secretKey: rotated.key).id == h.merchant.id)
        #expect(try registry.merchant(id: h.merchant.id).previousSecretKeyExpiresAt == rotated.previousKeyExpiresAt)
        // A sandbox merchant's keys stay retrievable: the new one.
        #expect(try registry.credentials(merchantID: h.merchant.id).secretKey == rotated.key)
        h.clock.advance(by: 3599)
        #expect(try registry.authenticateServer(secretKey: old).id == h.merchant.id)
        h.clock.advance(by: 1)
        expectGatewayError(.invalidCredentials) { try registry.authenticateServer(secretKey: old) }
        #expect(try registry.authenticateServer(secretKey: rotated.key).id == h.merchant.id)
        // A second rotation ends the first key's overlap at once; overlap 0 ends the replaced key's too.
        let again = try registry.rotateSecretKey(merchantID: h.merchant.id, overlap: 0)
        #expect(again.previousKeyExpiresAt == nil)
        expectGatewayError(.invalidCredentials) { try registry.authenticateServer(secretKey: rotated.key) }
        #expect(try registry.authenticateServer(secretKey: again.key).id == h.merchant.id)
        expectGatewayError(.parameterInvalid) {
            try registry.rotateSecretKey(
                merchantID: h.merchant.id, overlap: MerchantRegistry.maximumSecretKeyOverlap + 1)
        }
        expectGatewayError(.merchantNotFound) { try registry.rotateSecretKey(merchantID: "mch_none", overlap: 0) }
    }

    @Test("a production merchant's rotated key is stored as a hash only", arguments: StoreBackend.all)
    func productionRotation(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let registry = h.gateway.merchants
        let (merchant, credentials) = try registry.create(
            MerchantSpec(name: "Live Shop", environment: .production, merchantIdentifiers: ["merchant.com.live"]))
        let rotated = try registry.rotateSecretKey(merchantID: merchant.id, overlap: 60)
        #expect(rotated.key.hasPrefix("sk_live_"))
        expectGatewayError(.forbidden) { try registry.credentials(merchantID: merchant.id) }
        let appKey = try registry.rotateAppKey(merchantID: merchant.id)
        expectGatewayError(.invalidCredentials) {
            try registry.authenticateClient(appID: credentials.appID, appKey: credentials.appKey)
        }
        #expect(try registry.authenticateClient(appID: credentials.appID, appKey: appKey.key).id == merchant.id)
        let stored = try h.storedContents()
        for needle in [rotated.key, appKey.key, credentials.secretKey, credentials.appKey] {
            for (name, bytes) in stored {
                for form in h.storedForms([Data(needle.utf8)]) {
                    #expect(bytes.range(of: form) == nil, "a production key in \(name)")
                }
            }
        }
    }

    @Test(
        "a disabled merchant's credentials are refused with merchant_disabled; its data stays; enable restores it",
        arguments: StoreBackend.all)
    func disable(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let registry = h.gateway.merchants
        let payment = try h.pay()
        let disabled = try registry.setDisabled(merchantID: h.merchant.id, true)
        #expect(disabled.isDisabled && disabled.disabledAt == h.clock.now())
        expectGatewayError(.merchantDisabled) { try registry.authenticateServer(secretKey: h.credentials.secretKey) }
        expectGatewayError(.merchantDisabled) {
            try registry.authenticateClient(appID: h.credentials.appID, appKey: h.credentials.appKey)
        }
        // Wrong credentials say nothing about the merchant.
        expectGatewayError(.invalidCredentials) {
            try registry.authenticateClient(appID: h.credentials.appID, appKey: "ak_wrong")
        }
        #expect(try h.gateway.payments.payment(merchant: h.merchant, id: payment.id).status == .captured)
        let before = try h.gateway.auditLog(merchant: h.merchant, limit: 100, startingAfter: nil).entries.count
        #expect(try registry.setDisabled(merchantID: h.merchant.id, true).isDisabled)
        #expect(
            try h.gateway.auditLog(merchant: h.merchant, limit: 100, startingAfter: nil).entries.count == before,
            "disabling a disabled merchant changes nothing")
        #expect(try registry.setDisabled(merchantID: h.merchant.id, false).isDisabled == false)
        #expect(try registry.authenticateServer(secretKey: h.credentials.secretKey).id == h.merchant.id)
    }

    @Test(
        "every change of the contract's list records who, what, when and target, with no secret",
        arguments: StoreBackend.all)
    func everyChangeIsAudited(_ backend: StoreBackend) throws {
        let authority = try TestCertificateAuthority()
        defer { authority.remove() }
        let h = try Harness(backend)
        let registry = h.gateway.merchants
        let actor = AuditActor(kind: "console", name: "cs_ab12…")
        let scope = RequestScope(actor: actor)
        var secrets: [String] = [h.credentials.secretKey, h.credentials.appKey, Harness.pan, Harness.cryptogram]
        var expected: [(action: String, target: String?)] = []
        let (live, liveCredentials) = try registry.create(
            MerchantSpec(name: "Live Shop", environment: .production, merchantIdentifiers: ["merchant.com.live"]),
            scope: scope)
        secrets += [liveCredentials.secretKey, liveCredentials.appKey]
        let liveEntries = try h.gateway.auditLog(merchant: live, limit: 10, startingAfter: nil).entries
        #expect(liveEntries.map(\.action) == [AuditLog.Action.merchantCreate])
        #expect(liveEntries.first?.actor == actor)
        #expect(liveEntries.first?.detail == ["environment": "production", "name": "Live Shop"])

        do {
            let id = h.merchant.id
            func step(_ action: String, _ target: String? = nil, _ body: () throws -> Void) throws {
                h.clock.advance(by: 1)
                try body()
                expected.append((action, target))
            }
            try step(AuditLog.Action.merchantDisable) { try registry.setDisabled(merchantID: id, true, scope: scope) }
            try step(AuditLog.Action.merchantEnable) { try registry.setDisabled(merchantID: id, false, scope: scope) }
            try step(AuditLog.Action.secretKeyRotate) {
                secrets.append(try registry.rotateSecretKey(merchantID: id, overlap: 60, scope: scope).key)
            }
            try step(AuditLog.Action.appKeyRotate) {
                secrets.append(try registry.rotateAppKey(merchantID: id, scope: scope).key)
            }
            h.clock.advance(by: 1)
            let endpoint = try registry.setWebhookEndpoint(
                merchantID: id, url: "https://hooks.example/x?token=own", scope: scope)
            secrets += [endpoint.secret, "token=own"]
            expected += [(AuditLog.Action.webhookEndpointUpdate, nil), (AuditLog.Action.webhookSecretRotate, nil)]
            h.clock.advance(by: 1)
            let csr = try h.gateway.keys.createKeyCSR(merchant: h.merchant, type: "ec", purpose: "processing", scope: scope)
            expected.append((AuditLog.Action.processingKeyCSR, csr.id))
            try step(AuditLog.Action.processingKeyCertificate, csr.id) {
                let hash = Hex.encode(SHA256.hash(Array(h.merchant.merchantIdentifiers[0].utf8))).uppercased()
                _ = try h.gateway.keys.attachCertificate(
                    merchant: h.merchant, keyID: csr.id,
                    certificatePEM: try authority.signProcessing(csrPEM: csr.csrPEM, merchantIdentifierHash: hash),
                    scope: scope)
            }
            h.clock.advance(by: 1)
            let identity = try h.gateway.keys.createKeyCSR(
                merchant: h.merchant, type: "rsa", purpose: "identity", scope: scope)
            expected.append((AuditLog.Action.identityCSR, identity.id))
            try step(AuditLog.Action.identityCertificate, identity.id) {
                _ = try h.gateway.keys.attachCertificate(
                    merchant: h.merchant, keyID: identity.id,
                    certificatePEM: try authority.sign(csrPEM: identity.csrPEM), scope: scope)
            }
            try step(AuditLog.Action.applePayDomainsUpdate) {
                try registry.setApplePayDomains(merchantID: id, domains: ["shop.example"], scope: scope)
            }
            try step(AuditLog.Action.binTableReplace) {
                try registry.loadBINTable(merchantID: id, csv: "bin_prefix,issuer\n411111,Bank\n", scope: scope)
            }
            try step(AuditLog.Action.coBrandTableReplace) {
                try registry.setCoBrandTable(
                    merchantID: id, ranges: [CoBrandRange(low: 41_111_100, high: 41_111_199, code: "ORCH01")],
                    scope: scope)
            }
            h.clock.advance(by: 1)
            let authorized = try h.pay(captureMode: .manual)
            try step(AuditLog.Action.paymentCapture, authorized.id) {
                _ = try h.gateway.payments.capture(merchant: h.merchant, paymentID: authorized.id, amount: 4_000, scope: scope)
            }
            try step(AuditLog.Action.paymentRefund, authorized.id) {
                _ = try h.gateway.refunds.refund(merchant: h.merchant, paymentID: authorized.id, amount: 1_000, scope: scope)
            }
            h.clock.advance(by: 1)
            let voidable = try h.pay(captureMode: .manual)
            try step(AuditLog.Action.paymentVoid, voidable.id) {
                _ = try h.gateway.payments.void(merchant: h.merchant, paymentID: voidable.id, scope: scope)
            }
        }
        let entries = try h.gateway.auditLog(merchant: h.merchant, limit: 100, startingAfter: nil).entries
            .filter { $0.actor == actor }
        // Newest first; entries of one instant may come in either order.
        let recorded = entries.reversed().map { ($0.action, $0.target) }
        #expect(recorded.count == expected.count)
        #expect(
            Set(recorded.map { "\($0.0) \($0.1 ?? "-")" }) == Set(expected.map { "\($0.action) \($0.target ?? "-")" }))
        for entry in entries {
            #expect(entry.merchantID == h.merchant.id)
            #expect(entry.id.hasPrefix("aud_"))
            #expect(entry.createdAt > Date(timeIntervalSince1970: 1_800_000_000))
            let text = ([entry.action, entry.target ?? "", entry.actor.name] + entry.detail.keys + entry.detail.values)
                .joined(separator: " ")
            for secret in secrets { #expect(!text.contains(secret), "\(entry.action) shows a secret") }
        }
        let capture = try #require(entries.first { $0.action == AuditLog.Action.paymentCapture })
        #expect(capture.detail == ["amount": "40.00", "currency": "TWD"])
        let refund = try #require(entries.first { $0.action == AuditLog.Action.paymentRefund })
        #expect(refund.detail["amount"] == "10.00")
        #expect(refund.detail["refund_id"]?.hasPrefix("re_") == true)
        let rotation = try #require(entries.first { $0.action == AuditLog.Action.secretKeyRotate })
        #expect(rotation.detail["previous_key"] == String(h.credentials.secretKey.prefix(20)))
        #expect(rotation.detail["overlap_seconds"] == "60")
        #expect(entries.first { $0.action == AuditLog.Action.webhookEndpointUpdate }?.detail["host"] == "hooks.example")
        // The stored rows hold no secret either.
        for (name, bytes) in try h.storedContents() {
            for form in h.storedForms([Data(Harness.pan.utf8), Data(h.credentials.secretKey.utf8)]) {
                #expect(bytes.range(of: form) == nil, "a secret in \(name)")
            }
        }
    }
}
