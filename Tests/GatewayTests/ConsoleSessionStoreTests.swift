import Foundation
import Gateway
import OrchardCrypto
import Testing

@Suite("Console sessions in the store")
struct ConsoleSessionStoreTests {
    static func hash(_ token: String) -> String { Hex.encode(SHA256.hash(Array(token.utf8))) }

    @Test("a sign-in is stored by its token's hash only and read back on any store", arguments: StoreBackend.all)
    func storedHashed(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let key = h.credentials.secretKey
        let (session, token) = try h.gateway.signInToConsole(secretKey: key)
        #expect(token.hasPrefix("cst_") && token.count == 47)
        #expect(session.id.hasPrefix("cs_"))
        #expect(session.merchant.id == h.merchant.id)
        #expect(session.expiresAt == h.clock.now() + 8 * 3600)
        let record = try #require(try h.store.read { try $0.consoleSession(tokenHash: Self.hash(token)) })
        #expect(record.merchantID == h.merchant.id && record.endedAt == nil && record.tokenHash != token)
        #expect(try h.store.read { try $0.consoleSession(tokenHash: token) } == nil)
        #expect(session.csrfToken == ConsoleSessionRules.csrfToken(sessionToken: token))
        #expect(session.csrfToken.count == 64 && !session.csrfToken.contains(token))
        #expect(try h.gateway.consoleSession(token: token).id == session.id)
        for (name, bytes) in try h.storedContents() {
            for needle in h.storedForms([Data(token.utf8), Data(session.csrfToken.utf8)]) {
                #expect(bytes.range(of: needle) == nil, "\(name) holds a session secret")
            }
        }
    }

    @Test(
        "idle for 8 hours, a session is refused; each use (once a minute) keeps it alive", arguments: StoreBackend.all)
    func idleExpiry(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let key = h.credentials.secretKey
        let (_, token) = try h.gateway.signInToConsole(secretKey: key)
        h.clock.advance(by: 8 * 3600 - 1)
        let used = try h.gateway.consoleSession(token: token)
        #expect(used.expiresAt == h.clock.now() + 8 * 3600)
        h.clock.advance(by: 8 * 3600 - 1)
        #expect(try h.gateway.consoleSession(token: token).id == used.id)
        h.clock.advance(by: 8 * 3600)
        #expect(throws: GatewayError(.invalidCredentials)) { _ = try h.gateway.consoleSession(token: token) }
    }

    @Test("signed out, wrong keys and forged tokens are refused; old sessions are purged", arguments: StoreBackend.all)
    func signOutAndPurge(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let key = h.credentials.secretKey
        #expect(throws: GatewayError(.invalidCredentials)) {
            _ = try h.gateway.signInToConsole(secretKey: String(key.dropLast()) + (key.hasSuffix("a") ? "b" : "a"))
        }
        let (_, token) = try h.gateway.signInToConsole(secretKey: key)
        let (_, other) = try h.gateway.signInToConsole(secretKey: key)
        try h.gateway.signOutOfConsole(token: token)
        #expect(throws: GatewayError(.invalidCredentials)) { _ = try h.gateway.consoleSession(token: token) }
        #expect(throws: GatewayError(.invalidCredentials)) { try h.gateway.signOutOfConsole(token: token) }
        #expect(try h.gateway.consoleSession(token: other).merchant.id == h.merchant.id)
        // Each sign-in and sign-out is in the audit log, under its session.
        let log = try h.gateway.auditLog(merchant: h.merchant, limit: 100, startingAfter: nil).entries
        let console = log.filter { $0.action.hasPrefix("console.") }
        #expect(console.map(\.action).sorted() == ["console.sign_in", "console.sign_in", "console.sign_out"])
        #expect(console.allSatisfy { $0.actor.kind == "console" && $0.actor.name.hasPrefix("cs_") })
        #expect(console.allSatisfy { $0.target.map { "\($0.prefix(9))…" } == $0.actor.name })
        // Disabling a merchant ends its sessions; its key signs in to none while it is disabled.
        _ = try h.gateway.merchants.setDisabled(merchantID: h.merchant.id, true)
        #expect(throws: GatewayError(.invalidCredentials)) { _ = try h.gateway.consoleSession(token: other) }
        #expect(throws: GatewayError(.merchantDisabled)) { _ = try h.gateway.signInToConsole(secretKey: key) }
        _ = try h.gateway.merchants.setDisabled(merchantID: h.merchant.id, false)
        for forged in ["", "cst_", "cst_" + String(repeating: "A", count: 43), other + "x", "sk_test_x"] {
            #expect(throws: GatewayError(.invalidCredentials)) { _ = try h.gateway.consoleSession(token: forged) }
        }
        let ended = try #require(try h.store.read { try $0.consoleSession(tokenHash: Self.hash(token)) })
        #expect(ended.endedAt == h.clock.now())
        h.clock.advance(by: 8 * 3600 + 24 * 3600 + 1)
        let report = try h.gateway.payments.reconcile()
        #expect(report.purgedConsoleSessions == 2)
        #expect(try h.store.read { try $0.consoleSession(tokenHash: Self.hash(other)) } == nil)
    }

    /// Expects the session of `token` to be refused as signed out (`invalid_credentials`).
    static func expectEnded(_ h: Harness, _ token: String, _ note: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(throws: GatewayError(.invalidCredentials), "\(note)", sourceLocation: sourceLocation) {
            _ = try h.gateway.consoleSession(token: token)
        }
    }

    @Test("a session dies with the secret key that opened it: at once with no overlap", arguments: StoreBackend.all)
    func endsWithItsKeyAtOnce(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let (_, token) = try h.gateway.signInToConsole(secretKey: h.credentials.secretKey)
        let rotated = try h.gateway.merchants.rotateSecretKey(merchantID: h.merchant.id, overlap: 0)
        Self.expectEnded(h, token, "the old key's session after a rotation without overlap")
        // A session of the new key works, and dies with it in turn.
        let (_, fresh) = try h.gateway.signInToConsole(secretKey: rotated.key)
        #expect(try h.gateway.consoleSession(token: fresh).merchant.id == h.merchant.id)
        _ = try h.gateway.merchants.rotateSecretKey(merchantID: h.merchant.id, overlap: 0)
        Self.expectEnded(h, fresh, "the second key's session")
    }

    @Test("with an overlap, a session of the old key lasts until the overlap ends, not a moment more", arguments: StoreBackend.all)
    func endsWithItsKeyAfterTheOverlap(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let oldKey = h.credentials.secretKey
        let (_, before) = try h.gateway.signInToConsole(secretKey: oldKey)
        let rotated = try h.gateway.merchants.rotateSecretKey(merchantID: h.merchant.id, overlap: 3600)
        // Opened with the old key during the overlap: bound to the old key too.
        h.clock.advance(by: 1800)
        let (during, duringToken) = try h.gateway.signInToConsole(secretKey: oldKey)
        #expect(during.expiresAt == h.clock.now() + 1800, "a session ends no later than its key")
        let (_, newToken) = try h.gateway.signInToConsole(secretKey: rotated.key)
        h.clock.advance(by: 1799)
        #expect(try h.gateway.consoleSession(token: before).merchant.id == h.merchant.id)
        #expect(try h.gateway.consoleSession(token: duringToken).merchant.id == h.merchant.id)
        h.clock.advance(by: 1)
        Self.expectEnded(h, before, "the old key's session at the end of the overlap")
        Self.expectEnded(h, duringToken, "the session opened during the overlap, at its end")
        #expect(try h.gateway.consoleSession(token: newToken).merchant.id == h.merchant.id)
        // A key replaced by a second rotation stops at once, and its sessions with it.
        let (_, another) = try h.gateway.signInToConsole(secretKey: rotated.key)
        _ = try h.gateway.merchants.rotateSecretKey(merchantID: h.merchant.id, overlap: 3600)
        #expect(try h.gateway.consoleSession(token: another).merchant.id == h.merchant.id)
        _ = try h.gateway.merchants.rotateSecretKey(merchantID: h.merchant.id, overlap: 3600)
        Self.expectEnded(h, another, "a session of a key replaced twice")
    }

    @Test("rotate-app-key, disable and end-console-sessions end every session; enable does not bring them back",
        arguments: StoreBackend.all)
    func endedByAdministration(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let key = h.credentials.secretKey
        let (_, first) = try h.gateway.signInToConsole(secretKey: key)
        let (_, second) = try h.gateway.signInToConsole(secretKey: key)
        _ = try h.gateway.merchants.rotateAppKey(merchantID: h.merchant.id)
        Self.expectEnded(h, first, "after rotate-app-key")
        Self.expectEnded(h, second, "after rotate-app-key")
        let (_, third) = try h.gateway.signInToConsole(secretKey: key)
        _ = try h.gateway.merchants.setDisabled(merchantID: h.merchant.id, true)
        _ = try h.gateway.merchants.setDisabled(merchantID: h.merchant.id, false)
        Self.expectEnded(h, third, "after disable and enable")
        // Each end is in the audit log with how many sessions it ended.
        let log = try h.gateway.auditLog(merchant: h.merchant, limit: 100, startingAfter: nil).entries
        let ends = log.filter { $0.action == "console.sessions_end" }
        #expect(ends.map { $0.detail["reason"] ?? "" }.sorted() == ["app_key.rotate", "merchant.disable"], "\(ends)")
        #expect(ends.first { $0.detail["reason"] == "app_key.rotate" }?.detail["sessions"] == "2")
        #expect(ends.first { $0.detail["reason"] == "merchant.disable" }?.detail["sessions"] == "1")
    }

    @Test("a session used all along still ends 24 hours after its sign-in", arguments: StoreBackend.all)
    func absoluteLifetime(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let (signedIn, token) = try h.gateway.signInToConsole(secretKey: h.credentials.secretKey)
        #expect(signedIn.expiresAt == h.clock.now() + 8 * 3600)
        for _ in 0..<3 {
            h.clock.advance(by: 7 * 3600)
            _ = try h.gateway.consoleSession(token: token)
        }
        // 21 hours in, used a moment ago: it ends at 24 hours, not 8 hours from now.
        #expect(try h.gateway.consoleSession(token: token).expiresAt == signedIn.expiresAt - 8 * 3600 + 24 * 3600)
        h.clock.advance(by: 3 * 3600 - 1)
        _ = try h.gateway.consoleSession(token: token)
        h.clock.advance(by: 1)
        Self.expectEnded(h, token, "24 hours after the sign-in")
    }

    @Test("the absolute lifetime is the gateway's configuration (GatewayConfiguration.consoleSessionLifetime)")
    func configuredLifetime() throws {
        let h = try Harness { $0.consoleSessionLifetime = 3600 }
        let (signedIn, token) = try h.gateway.signInToConsole(secretKey: h.credentials.secretKey)
        #expect(signedIn.expiresAt == h.clock.now() + 3600)
        h.clock.advance(by: 3599)
        _ = try h.gateway.consoleSession(token: token)
        h.clock.advance(by: 1)
        Self.expectEnded(h, token, "an hour after the sign-in")
    }
}
