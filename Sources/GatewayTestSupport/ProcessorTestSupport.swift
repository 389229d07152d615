import Foundation
import Gateway
import GatewayProcessors
import OrchardTestSupport
import Testing

/// The gateway served on loopback with a sandbox merchant whose processor is Adyen or Checkout.com, pointed at the
/// processor's stand-in, which sends its notifications to the gateway's route for the merchant.
package final class ProcessorHarness: @unchecked Sendable {
    package let api: ProcessorStandIn.API
    package var standIn: ProcessorStandIn
    package let h: APIHarness

    package static let hmacKey = "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056"

    /// The settings body of `api`'s processor.
    package static func settings(_ api: ProcessorStandIn.API) -> [String: String] {
        switch api {
        case .adyen:
            [
                "type": "adyen", "environment": "test", "merchant_account": "OrchardShopECOM",
                "api_key": "AQE-e2e-api-key-7Hq2", "hmac_key": hmacKey, "notification_username": "orchard-notify",
                "notification_password": "n0t1fy-pa55word",
            ]
        case .checkoutCom:
            [
                "type": "checkout_com", "environment": "sandbox", "secret_key": "sk_sbox_e2e_secret_9Xw3",
                "processing_channel_id": "pc_w2njpb6jbjjujgcz5dgzxdn5mm", "webhook_secret": "whk_e2e_signature_4Rt8",
            ]
        }
    }

    /// The secrets of the settings (for the scans that must never find them).
    package static func secrets(_ api: ProcessorStandIn.API) -> [String] {
        switch api {
        case .adyen: ["AQE-e2e-api-key-7Hq2", hmacKey, "n0t1fy-pa55word"]
        case .checkoutCom: ["sk_sbox_e2e_secret_9Xw3", "whk_e2e_signature_4Rt8"]
        }
    }

    /// A harness for `api`, its connector's calls timing out after `timeout` seconds; `standInPort` fixes the
    /// stand-in's port (0: any free one).
    package init(_ api: ProcessorStandIn.API, timeout: TimeInterval = 3, standInPort: Int = 0) throws {
        self.api = api
        standIn = try ProcessorStandIn(api: api, port: standInPort)
        let base = standIn.baseURL
        h = try APIHarness(
            transport: .loopback,
            runtime: { options in
                options.processors.baseURLs = [api.rawValue: base]
                options.processors.timeout = timeout
                options.processors.connectTimeout = 2
            })
        try configureStandIn()
        let set = try h.merchantServer("PUT", "/v1/processor", json: Self.settings(api))
        try #require(set.status == 200, "\(set.text)")
    }

    /// Gives the stand-in the account and where to send notifications.
    package func configureStandIn() throws {
        let settings = Self.settings(api)
        switch api {
        case .adyen:
            try standIn.configure([
                "api_key": settings["api_key"]!, "merchant_account": settings["merchant_account"]!,
                "hmac_key": settings["hmac_key"]!, "notification_url": notificationURL,
                "notification_username": settings["notification_username"]!,
                "notification_password": settings["notification_password"]!,
            ])
        case .checkoutCom:
            try standIn.configure([
                "secret_key": settings["secret_key"]!, "processing_channel_id": settings["processing_channel_id"]!,
                "webhook_secret": settings["webhook_secret"]!, "webhook_url": notificationURL,
            ])
        }
    }

    /// The gateway's notification route for the merchant.
    package var notificationURL: String {
        let path = api == .adyen ? "adyen/notifications" : "checkout-com/webhooks"
        return h.base + "/v1/processors/\(path)/\(h.merchant.id)"
    }

    /// Pays a fresh prime of `amount` TWD with `capture` (`now` or `manual`).
    package func pay(_ amount: String = "100.00", capture: String = "now") throws -> ClientResponse {
        try h.pay(amount, capture: ["mode": capture])
    }

    /// The payment `id` as the API shows it.
    package func payment(_ id: String) throws -> [String: Any] {
        let response = try h.merchantServer("GET", "/v1/payments/\(id)")
        try #require(response.status == 200, "\(response.text)")
        return response.json
    }

    package func status(_ id: String) throws -> String? { try payment(id)["status"] as? String }

    /// The event types the gateway emitted about payment `id`, oldest first.
    package func events(_ id: String) throws -> [String] {
        try h.runtime.gateway.webhooks.events(merchant: h.merchant, limit: 100).reversed().filter { event in
            (try? JSONSerialization.jsonObject(with: event.payload) as? [String: Any])
                .flatMap { $0["data"] as? [String: Any] }?["id"] as? String == id
        }.map(\.type)
    }

    /// How many times the stand-in processed an authorization with reference `id`.
    package func authorizations(_ id: String) throws -> Int {
        let rows = try standIn.ledger().filter { $0["reference"] as? String == id }
        return rows.map { $0["authorizations"] as? Int ?? 0 }.max() ?? 0
    }

    /// Runs the gateway's reconciliation as if `minutes` had passed.
    package func reconcile(after minutes: Double = 10) throws -> ReconciliationReport {
        h.clock.advance(by: minutes * 60)
        return try h.runtime.gateway.payments.reconcile()
    }
}
