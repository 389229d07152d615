import Foundation
import Testing

@testable import Gateway

/// CSR, certificate upload and redelivery go through the same recovery-point idempotency as payments: while
/// a request holds the key (here: the outer call, still running), the same key answers
/// `idempotency_in_flight`; a finished one is replayed.
@Suite("Idempotency of merchant-key and redelivery operations")
struct IdempotentKeyOperationsTests {
    @Test(
        "CSR: in flight answers idempotency_in_flight; a retry replays the same key; other parameters conflict",
        arguments: StoreBackend.all)
    func csr(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let held: Bool = try h.gateway.idempotent(
            h.merchant, key: "csr-1", operation: "merchant_key_csr", fingerprint: ["ec", "processing"], requestScope: .unattributed
        ) { _ throws(GatewayError) in
            expectGatewayError(.idempotencyInFlight) {
                try h.gateway.keys.createKeyCSR(
                    merchant: h.merchant, type: "ec", purpose: "processing", idempotencyKey: "csr-1")
            }
            return true
        }
        #expect(held)
        let first = try h.gateway.keys.createKeyCSR(
            merchant: h.merchant, type: "ec", purpose: "processing", idempotencyKey: "csr-2")
        let again = try h.gateway.keys.createKeyCSR(
            merchant: h.merchant, type: "ec", purpose: "processing", idempotencyKey: "csr-2")
        #expect(again == first)
        expectGatewayError(.idempotencyConflict) {
            try h.gateway.keys.createKeyCSR(
                merchant: h.merchant, type: "rsa", purpose: "processing", idempotencyKey: "csr-2")
        }
    }

    @Test(
        "certificate upload: in flight answers idempotency_in_flight; a final error is replayed",
        arguments: StoreBackend.all)
    func certificate(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let pem = "-----BEGIN CERTIFICATE-----\nnot one\n-----END CERTIFICATE-----\n"
        let _: Bool = try h.gateway.idempotent(
            h.merchant, key: "cert-1", operation: "merchant_key_certificate",
            fingerprint: ["mk_nope", Identifiers.sha256Hex(pem)], requestScope: .unattributed
        ) { _ throws(GatewayError) in
            expectGatewayError(.idempotencyInFlight) {
                try h.gateway.keys.attachCertificate(
                    merchant: h.merchant, keyID: "mk_nope", certificatePEM: pem, idempotencyKey: "cert-1")
            }
            return true
        }
        expectGatewayError(.notFound) {
            try h.gateway.keys.attachCertificate(
                merchant: h.merchant, keyID: "mk_nope", certificatePEM: pem, idempotencyKey: "cert-2")
        }
        expectGatewayError(.notFound) {
            try h.gateway.keys.attachCertificate(
                merchant: h.merchant, keyID: "mk_nope", certificatePEM: pem, idempotencyKey: "cert-2")
        }
    }

    @Test(
        "redeliver: in flight answers idempotency_in_flight; finished, it reschedules and replays",
        arguments: StoreBackend.all)
    func redeliver(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        _ = try h.gateway.merchants.setWebhookEndpoint(merchantID: h.merchant.id, url: "https://shop.example/hook")
        _ = try h.pay()
        let event = try #require(try h.gateway.webhooks.events(merchant: h.merchant, limit: 10).first)
        let _: Bool = try h.gateway.idempotent(
            h.merchant, key: "re-1", operation: "redeliver_event", fingerprint: [event.id], requestScope: .unattributed
        ) { _ throws(GatewayError) in
            expectGatewayError(.idempotencyInFlight) {
                try h.gateway.webhooks.redeliver(merchant: h.merchant, eventID: event.id, idempotencyKey: "re-1")
            }
            return true
        }
        let record = try h.gateway.webhooks.redeliver(merchant: h.merchant, eventID: event.id, idempotencyKey: "re-2")
        #expect(record.delivery.state == .pending)
        #expect(
            try h.gateway.webhooks.redeliver(merchant: h.merchant, eventID: event.id, idempotencyKey: "re-2").event.id
                == event.id)
    }
}
