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
        // A disabled merchant's sessions are refused as its keys are.
        _ = try h.gateway.merchants.setDisabled(merchantID: h.merchant.id, true)
        #expect(throws: GatewayError(.merchantDisabled)) { _ = try h.gateway.consoleSession(token: other) }
        #expect(throws: GatewayError(.merchantDisabled)) { _ = try h.gateway.signInToConsole(secretKey: key) }
        _ = try h.gateway.merchants.setDisabled(merchantID: h.merchant.id, false)
        for forged in ["", "cst_", "cst_" + String(repeating: "A", count: 43), other + "x", "sk_test_x"] {
            #expect(throws: GatewayError(.invalidCredentials)) { _ = try h.gateway.consoleSession(token: forged) }
        }
        let ended = try #require(try h.store.read { try $0.consoleSession(tokenHash: Self.hash(token)) })
        #expect(ended.endedAt == h.clock.now())
        h.clock.advance(by: 8 * 3600 + 24 * 3600 + 1)
        let report = try h.gateway.reconcile()
        #expect(report.purgedConsoleSessions == 2)
        #expect(try h.store.read { try $0.consoleSession(tokenHash: Self.hash(other)) } == nil)
    }
}
