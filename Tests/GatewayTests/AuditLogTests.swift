import Foundation
import Gateway
import Testing

@Suite("The audit log on both stores")
struct AuditLogTests {
    @Test(
        "an entry is written in the change's transaction with its actor, and listed newest first",
        arguments: StoreBackend.all)
    func recordAndList(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let actor = AuditActor.cli("orchard merchant disable")
        let written = try h.store.write { tx in
            try AuditLog.record(
                in: tx, merchantID: h.merchant.id, action: AuditLog.Action.merchantDisable,
                detail: ["reason": "closing"], at: h.clock.now(), actor: actor)
        }
        #expect(written.id.hasPrefix("aud_"))
        #expect(written.actor == actor)
        h.clock.advance(by: 1)
        _ = try h.store.write { tx in
            try AuditLog.record(
                in: tx, merchantID: h.merchant.id, action: AuditLog.Action.paymentRefund, target: "pay_x",
                detail: ["amount": "10.00"], at: h.clock.now(), actor: .unknown)
        }
        let page = try h.gateway.auditLog(merchant: h.merchant, limit: 10, startingAfter: nil)
        let ours = page.entries.filter {
            [AuditLog.Action.merchantDisable, AuditLog.Action.paymentRefund].contains($0.action)
        }
        #expect(ours.map(\.action) == [AuditLog.Action.paymentRefund, AuditLog.Action.merchantDisable])
        #expect(ours.first?.actor == .unknown)
        #expect(ours.first?.target == "pay_x")
        #expect(ours.first?.detail == ["amount": "10.00"])
        #expect(ours.last == written)
        #expect(ours.last?.createdAt == Date(timeIntervalSince1970: 1_800_000_000))
    }

    @Test(
        "a change that fails leaves no entry; a secret-looking detail is refused with its change",
        arguments: StoreBackend.all)
    func rolledBackWithTheChange(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let before = try h.gateway.auditLog(merchant: h.merchant, limit: 100, startingAfter: nil).entries.count
        struct Failure: Error {}
        #expect(throws: Failure.self) {
            try h.store.write { tx in
                try AuditLog.record(
                    in: tx, merchantID: h.merchant.id, action: AuditLog.Action.appKeyRotate, at: h.clock.now(),
                    actor: .unknown)
                throw Failure()
            }
        }
        for secret in [h.credentials.secretKey, h.credentials.appKey, "whsec_abcdef", "-----BEGIN PRIVATE KEY-----"] {
            #expect(throws: GatewayError.self) {
                try h.store.write { tx in
                    try tx.setSetting("audit_probe", value: Data("changed".utf8))
                    try AuditLog.record(
                        in: tx, merchantID: h.merchant.id, action: AuditLog.Action.secretKeyRotate,
                        detail: ["key": secret], at: h.clock.now(), actor: .unknown)
                }
            }
        }
        #expect(try h.store.read { try $0.setting("audit_probe") } == nil)
        #expect(try h.gateway.auditLog(merchant: h.merchant, limit: 100, startingAfter: nil).entries.count == before)
        // The public part of a secret key names a key without being one.
        let publicPart = String(h.credentials.secretKey.prefix(MerchantRegistry.secretKeyPublicLength))
        let entry = try h.store.write { tx in
            try AuditLog.record(
                in: tx, merchantID: h.merchant.id, action: AuditLog.Action.secretKeyRotate,
                detail: ["previous_key": publicPart], at: h.clock.now(), actor: .unknown)
        }
        #expect(entry.detail["previous_key"] == publicPart)
        // A long value is cut to the bound rather than refusing its change.
        let long = try h.store.write { tx in
            try AuditLog.record(
                in: tx, merchantID: h.merchant.id, action: AuditLog.Action.webhookEndpointUpdate,
                detail: ["host": String(repeating: "a", count: 3000)], at: h.clock.now(), actor: .unknown)
        }
        #expect(long.detail["host"]?.count == AuditLog.maximumFieldLength)
        #expect(throws: GatewayError.self) {
            try h.store.write { tx in
                try AuditLog.record(
                    in: tx, merchantID: h.merchant.id, action: String(repeating: "x", count: 201), at: h.clock.now(),
                    actor: .unknown)
            }
        }
    }

    @Test(
        "cursor paging: every entry once, newest first, entries of the same millisecond by id",
        arguments: StoreBackend.all)
    func paging(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        var written: [AuditEntry] = []
        for index in 0..<7 {
            if index % 2 == 0 { h.clock.advance(by: 0.5) }
            written.append(
                try h.store.write { tx in
                    try AuditLog.record(
                        in: tx, merchantID: h.merchant.id, action: AuditLog.Action.binTableReplace,
                        detail: ["rows": String(index)], at: h.clock.now(), actor: .unknown)
                })
        }
        var seen: [AuditEntry] = []
        var cursor: String?
        var pages = 0
        repeat {
            let page = try h.gateway.auditLog(merchant: h.merchant, limit: 3, startingAfter: cursor)
            seen += page.entries
            #expect(page.hasMore == (page.nextCursor != nil))
            cursor = page.nextCursor
            pages += 1
        } while cursor != nil && pages < 10
        let ours = seen.filter { $0.action == AuditLog.Action.binTableReplace }
        let expected = written.sorted { ($0.createdAt, $0.id) > ($1.createdAt, $1.id) }
        #expect(ours == expected)
        #expect(Set(seen.map(\.id)).count == seen.count)
        #expect(throws: GatewayError(.invalidCursor)) {
            try h.gateway.auditLog(merchant: h.merchant, limit: 3, startingAfter: "pay_notacursor")
        }
        #expect(throws: GatewayError(.parameterInvalid)) {
            try h.gateway.auditLog(merchant: h.merchant, limit: 0, startingAfter: nil)
        }
    }

    @Test(
        "concurrent requests keep their own scopes' actors, also when one thread commits the others' bodies",
        arguments: StoreBackend.all)
    func actorsUnderGroupCommit(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let count = 16
        DispatchQueue.concurrentPerform(iterations: count) { index in
            let scope = RequestScope(actor: AuditActor(kind: "api", name: "writer-\(index)"))
            let low = Int64(41_000_000 + index * 100)
            _ = try? h.gateway.merchants.setCoBrandTable(
                merchantID: h.merchant.id, ranges: [CoBrandRange(low: low, high: low + 99, code: "W\(index)")],
                scope: scope)
        }
        let entries = try h.gateway.auditLog(merchant: h.merchant, limit: 100, startingAfter: nil).entries
            .filter { $0.action == AuditLog.Action.coBrandTableReplace }
        #expect(entries.count == count)
        #expect(Set(entries.map(\.actor.name)) == Set((0..<count).map { "writer-\($0)" }))
    }

    @Test(
        "the operations outside the contract's list record their scope's actor too",
        arguments: StoreBackend.all)
    func otherOperationsTakeTheScope(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let scope = RequestScope(actor: AuditActor(kind: "api", name: "sk_test_scope"))
        let registry = h.gateway.merchants
        let id = h.merchant.id
        try registry.setTapPayCompat(merchantID: id, merchantAlias: .some("shop-alias"), scope: scope)
        try h.gateway.setProcessorSettings(merchantID: id, body: ["type": "sandbox"], scope: scope)
        try registry.setApplePayDomains(merchantID: id, domains: ["scope.example"], scope: scope)
        try registry.releaseApplePayDomain("scope.example", scope: scope)
        try registry.endConsoleSessions(merchantID: id, reason: .signOutEverywhere, scope: scope)
        let authorized = try h.pay(captureMode: .afterDays(2))
        _ = try h.gateway.payments.cancelScheduledCapture(merchant: h.merchant, paymentID: authorized.id, scope: scope)
        let actions = try h.gateway.auditLog(merchant: h.merchant, limit: 50, startingAfter: nil).entries
            .filter { $0.actor == scope.actor }.map(\.action)
        #expect(
            Set(actions) == [
                AuditLog.Action.tappayCompat, AuditLog.Action.processorSettingsUpdate,
                AuditLog.Action.applePayDomainsUpdate, AuditLog.Action.applePayDomainRelease,
                AuditLog.Action.consoleSessionsEnd, AuditLog.Action.paymentCaptureCancel,
            ])
    }

    @Test(
        "an operation called without a scope records the unknown actor; one scope's actor names all its changes",
        arguments: StoreBackend.all)
    func unattributedAndScoped(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        try h.gateway.merchants.setDisabled(merchantID: h.merchant.id, true)
        let scope = RequestScope(actor: .cli("orchard merchant enable"))
        try h.gateway.merchants.setDisabled(merchantID: h.merchant.id, false, scope: scope)
        let entries = try h.gateway.auditLog(merchant: h.merchant, limit: 10, startingAfter: nil).entries
        #expect(entries.first { $0.action == AuditLog.Action.merchantDisable }?.actor == .unknown)
        #expect(entries.first { $0.action == AuditLog.Action.merchantEnable }?.actor == scope.actor)
        #expect(!scope.replayed, "nothing idempotent ran with the scope")
        // An idempotent operation reports its replay on the scope it was called with, and only there.
        let first = RequestScope(actor: scope.actor)
        let paid = try h.pay(captureMode: .manual)
        let again = RequestScope(actor: scope.actor)
        _ = try h.gateway.payments.capture(
            merchant: h.merchant, paymentID: paid.id, idempotencyKey: "cap", scope: first)
        #expect(!first.replayed)
        _ = try h.gateway.payments.capture(
            merchant: h.merchant, paymentID: paid.id, idempotencyKey: "cap", scope: again)
        #expect(again.replayed)
        #expect(!first.replayed)
    }
}
