import Foundation
import Testing

@testable import Gateway

@Suite("Webhook endpoint: secrets, rotation overlap, holding deliveries")
struct WebhookEndpointTests {
    @Test(
        "new secrets are whsec_ and 48 hex digits; the old one signs alongside for 24 hours, then drops",
        arguments: StoreBackend.all)
    func rotation(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let (_, first) = try h.gateway.merchants.setWebhookEndpoint(
            merchantID: h.merchant.id, url: "https://shop.example/hook")
        #expect(first.wholeMatch(of: /whsec_[0-9a-f]{48}/) != nil, "\(first)")
        _ = try h.pay()
        h.clock.advance(by: 3600)
        let (_, second) = try h.gateway.merchants.setWebhookEndpoint(
            merchantID: h.merchant.id, url: "https://shop.example/hook")
        #expect(second != first)
        #expect(try h.gateway.merchants.webhookSecrets(merchantID: h.merchant.id) == [second, first])
        let dueDuringOverlap = try h.gateway.webhooks.webhookOutbox.dueWebhooks(now: h.clock.now(), limit: 10)
        #expect(!dueDuringOverlap.isEmpty && dueDuringOverlap.allSatisfy { $0.secrets == [second, first] })
        h.clock.advance(by: 24 * 3600 - 1)
        #expect(try h.gateway.merchants.webhookSecrets(merchantID: h.merchant.id) == [second, first])
        h.clock.advance(by: 1)
        #expect(try h.gateway.merchants.webhookSecrets(merchantID: h.merchant.id) == [second])
        let dueAfterOverlap = try h.gateway.webhooks.webhookOutbox.dueWebhooks(now: h.clock.now(), limit: 10)
        #expect(!dueAfterOverlap.isEmpty && dueAfterOverlap.allSatisfy { $0.secrets == [second] })
        // A third rotation keeps only the secret that was in force.
        let (_, third) = try h.gateway.merchants.setWebhookEndpoint(
            merchantID: h.merchant.id, url: "https://shop.example/hook")
        #expect(try h.gateway.merchants.webhookSecrets(merchantID: h.merchant.id) == [third, second])
    }

    @Test(
        "enabled false keeps the URL and holds deliveries to it; enabling again releases them",
        arguments: StoreBackend.all)
    func holding(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        _ = try h.gateway.merchants.setWebhookEndpoint(
            merchantID: h.merchant.id, url: "https://shop.example/hook", enabled: false)
        _ = try h.pay()
        let merchant = try h.gateway.merchants.merchant(id: h.merchant.id)
        #expect(merchant.webhookURL == "https://shop.example/hook")
        #expect(merchant.webhookEnabled == false)
        #expect(try h.gateway.webhooks.webhookOutbox.dueWebhooks(now: h.clock.now(), limit: 10).isEmpty)
        #expect(try h.store.read { try $0.pendingWebhookCount() } == 2)
        _ = try h.gateway.merchants.setWebhookEndpoint(merchantID: h.merchant.id, url: "https://shop.example/hook")
        #expect(try h.gateway.merchants.merchant(id: h.merchant.id).webhookEnabled)
        #expect(try h.gateway.webhooks.webhookOutbox.dueWebhooks(now: h.clock.now(), limit: 10).count == 2)
    }

    @Test("a ring sealed as a plain array (older records) reads as secrets in force")
    func legacyRing() throws {
        let ring = try WebhookSecretRing(plaintext: Array(#"["whsec_a","whsec_b"]"#.utf8))
        #expect(ring.secrets(at: Date()) == ["whsec_a", "whsec_b"])
    }
}
