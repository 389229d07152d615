import Foundation
import Gateway
import GatewayProcessors
import OrchardCrypto
import OrchardTestSupport
import Testing

/// The connectors' tests' fixtures: settings, a stand-in configured for them, and authorization requests with a
/// test card.
enum ConnectorFixtures {
    static let pan = "4111111111111111"
    static let cryptogram = "AOF7d7Jx0OMSAAKPmHr8AoABFA=="
    static let hmacKey = "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056"

    static let adyenBody = [
        "environment": "test", "merchant_account": "OrchardShopECOM", "api_key": "AQE-test-api-key-0001",
        "hmac_key": hmacKey,
    ]
    static let checkoutBody = [
        "environment": "sandbox", "secret_key": "sk_sbox_test_secret_0001",
        "processing_channel_id": "pc_w2njpb6jbjjujgcz5dgzxdn5mm", "webhook_secret": "whk_test_signature_key",
    ]

    /// A connector's account for `body` (checked by its draft, as the gateway stores it).
    static func account(_ connector: any ProcessorConnector, _ body: [String: String]) throws -> ProcessorAccount {
        let draft = try connector.draft(from: body)
        return ProcessorAccount(
            merchantID: "mch_test", version: 1, type: connector.type, environment: draft.environment,
            fields: draft.fields, secrets: draft.secrets)
    }

    /// A stand-in for `api` configured with the fixture account (notifications to `notificationURL`).
    static func standIn(
        _ api: ProcessorStandIn.API, notificationURL: String = "http://127.0.0.1:9/none"
    ) throws
        -> ProcessorStandIn
    {
        let standIn = try ProcessorStandIn(api: api)
        switch api {
        case .adyen:
            try standIn.configure([
                "api_key": adyenBody["api_key"]!, "merchant_account": adyenBody["merchant_account"]!,
                "hmac_key": hmacKey, "notification_url": notificationURL,
            ])
        case .checkoutCom:
            try standIn.configure([
                "secret_key": checkoutBody["secret_key"]!,
                "processing_channel_id": checkoutBody["processing_channel_id"]!,
                "webhook_secret": checkoutBody["webhook_secret"]!, "webhook_url": notificationURL,
            ])
        }
        return standIn
    }

    /// The connectors' configuration pointing at `standIn`, with short timeouts.
    static func configuration(_ standIn: ProcessorStandIn, timeout: TimeInterval = 3) -> ProcessorConnectorConfiguration
    {
        var configuration = ProcessorConnectorConfiguration()
        configuration.baseURLs = [standIn.api.rawValue: standIn.baseURL]
        configuration.timeout = timeout
        configuration.connectTimeout = 2
        return configuration
    }

    static func request(
        amount: Int64 = 10_000, currency: String = "EUR", reference: String = "pay_test_1", captureNow: Bool = false,
        cryptogram: String? = cryptogram, eci: String? = "7"
    ) -> AuthorizationRequest {
        AuthorizationRequest(
            accountNumber: SecureBytes(Array(pan.utf8)), expirationDate: "301231",
            cryptogram: cryptogram.map { SecureBytes(Array($0.utf8)) }, eci: eci, amount: amount, currency: currency,
            merchantReference: reference, merchantID: "mch_test", captureNow: captureNow)
    }
}
