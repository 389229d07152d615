import Foundation
import Gateway
import GatewayProcessors
import OrchardCrypto
import Testing

@Suite("Connector settings: what each processor's body must hold")
struct ConnectorSettingsTests {
    static func code(_ body: () throws -> Any) -> (String, String?)? {
        do {
            _ = try body()
            return nil
        } catch let error as GatewayError { return (error.code.rawValue, error.param) } catch { return ("?", nil) }
    }

    @Test("Adyen: test or live, the fields split into shown ones and sealed ones; live needs its URL prefix")
    func adyen() throws {
        let connector = AdyenConnector()
        let draft = try connector.draft(from: ConnectorFixtures.adyenBody)
        #expect(draft.environment == "test" && !draft.isLive)
        #expect(draft.fields == ["merchant_account": "OrchardShopECOM"])
        #expect(Set(draft.secrets.keys) == ["api_key", "hmac_key"])
        var live = ConnectorFixtures.adyenBody
        live["environment"] = "live"
        #expect(Self.code { try connector.draft(from: live) }! == ("parameter_missing", "live_url_prefix"))
        live["live_url_prefix"] = "1797a841fbb37ca7-AdyenDemo"
        let liveDraft = try connector.draft(from: live)
        #expect(liveDraft.isLive && liveDraft.fields["live_url_prefix"] == "1797a841fbb37ca7-AdyenDemo")
        var bad = ConnectorFixtures.adyenBody
        bad["hmac_key"] = "not hex"
        #expect(Self.code { try connector.draft(from: bad) }! == ("parameter_invalid", "hmac_key"))
        bad = ConnectorFixtures.adyenBody
        bad["environment"] = "production"
        #expect(Self.code { try connector.draft(from: bad) }! == ("parameter_invalid", "environment"))
        bad = ConnectorFixtures.adyenBody
        bad["notification_username"] = "orchard"
        #expect(Self.code { try connector.draft(from: bad) }! == ("parameter_missing", "notification_password"))
        bad["notification_password"] = "s3cret-pass"
        let basic = try connector.draft(from: bad)
        #expect(basic.fields["notification_username"] == "orchard" && basic.secrets["notification_password"] != nil)
        bad["secret_key"] = "sk_x"
        #expect(Self.code { try connector.draft(from: bad) }! == ("parameter_invalid", "secret_key"))
        for name in ["merchant_account", "api_key", "hmac_key", "environment"] {
            var missing = ConnectorFixtures.adyenBody
            missing[name] = nil
            #expect(Self.code { try connector.draft(from: missing) }! == ("parameter_missing", name))
        }
        #expect(
            AdyenConnector.liveBaseURL(prefix: "1797a841fbb37ca7-AdyenDemo")
                == "https://1797a841fbb37ca7-AdyenDemo-checkout-live.adyenpayments.com/checkout/v71")
    }

    @Test("Checkout.com: sandbox or production, sk_ and pc_ identifiers, the secret key and webhook secret sealed")
    func checkoutCom() throws {
        let connector = CheckoutComConnector()
        let draft = try connector.draft(from: ConnectorFixtures.checkoutBody)
        #expect(draft.environment == "sandbox" && !draft.isLive)
        #expect(draft.fields == ["processing_channel_id": "pc_w2njpb6jbjjujgcz5dgzxdn5mm"])
        #expect(Set(draft.secrets.keys) == ["secret_key", "webhook_secret"])
        var production = ConnectorFixtures.checkoutBody
        production["environment"] = "production"
        #expect(try connector.draft(from: production).isLive)
        var bad = ConnectorFixtures.checkoutBody
        bad["secret_key"] = "pk_sbox_public"
        #expect(Self.code { try connector.draft(from: bad) }! == ("parameter_invalid", "secret_key"))
        bad = ConnectorFixtures.checkoutBody
        bad["processing_channel_id"] = "channel"
        #expect(Self.code { try connector.draft(from: bad) }! == ("parameter_invalid", "processing_channel_id"))
        bad = ConnectorFixtures.checkoutBody
        bad["environment"] = "live"
        #expect(Self.code { try connector.draft(from: bad) }! == ("parameter_invalid", "environment"))
        bad = ConnectorFixtures.checkoutBody
        bad["merchant_account"] = "x"
        #expect(Self.code { try connector.draft(from: bad) }! == ("parameter_invalid", "merchant_account"))
    }

    @Test("base URLs: https anywhere, plain http only to the loopback")
    func baseURLs() {
        #expect(ProcessorConnectorConfiguration.isAcceptableBaseURL("https://checkout-test.adyen.com/v71"))
        #expect(ProcessorConnectorConfiguration.isAcceptableBaseURL("http://127.0.0.1:8123/v71"))
        #expect(ProcessorConnectorConfiguration.isAcceptableBaseURL("http://localhost:8123"))
        #expect(!ProcessorConnectorConfiguration.isAcceptableBaseURL("http://10.0.0.5:8123"))
        #expect(!ProcessorConnectorConfiguration.isAcceptableBaseURL("http://example.com"))
        #expect(!ProcessorConnectorConfiguration.isAcceptableBaseURL("ftp://127.0.0.1"))
        #expect(!ProcessorConnectorConfiguration.isAcceptableBaseURL("https://host/v71?x=1"))
    }
}

@Suite("Decline codes: each processor's table, unknown codes as do_not_honor")
struct DeclineCodeTests {
    @Test(
        "Adyen refusalReasonCode and refusalReason text",
        arguments: [
            ("2", nil, "do_not_honor"), ("6", nil, "expired_card"), ("8", nil, "invalid_card"),
            ("12", nil, "insufficient_funds"), ("9", nil, "try_again"), ("20", nil, "fraud_suspected"),
            ("31", nil, "fraud_suspected"), ("5", nil, "restricted_card"), ("24", nil, "invalid_cryptogram"),
            ("999", nil, "do_not_honor"), (nil, "Not enough balance", "insufficient_funds"),
            (nil, "Expired Card", "expired_card"), (nil, "FRAUD-CANCELLED", "fraud_suspected"),
            (nil, "Something new", "do_not_honor"), (nil, nil, "do_not_honor"),
        ] as [(String?, String?, String)])
    func adyen(code: String?, reason: String?, expected: String) {
        #expect(DeclineCodes.adyenCode(code: code, reason: reason) == expected)
    }

    @Test(
        "Checkout.com response_code",
        arguments: [
            ("20005", "do_not_honor"), ("20051", "insufficient_funds"), ("20054", "expired_card"),
            ("20014", "invalid_card"), ("20059", "fraud_suspected"), ("20091", "try_again"),
            ("30043", "restricted_card"), ("40101", "fraud_suspected"), ("2005C", "card_not_supported"),
            ("29999", "do_not_honor"), ("", "do_not_honor"),
        ])
    func checkoutCom(code: String, expected: String) {
        #expect(DeclineCodes.checkoutComCode(code) == expected)
    }

    @Test("every table's values are Orchard codes documented in docs/processors.md")
    func documented() throws {
        let doc = try String(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("docs/processors.md"), encoding: .utf8)
        let codes = Set(DeclineCodes.adyen.values.map(\.code)).union(DeclineCodes.checkoutCom.values)
        for code in codes { #expect(doc.contains("`\(code)`"), "\(code) is not in docs/processors.md") }
        for (code, entry) in DeclineCodes.adyen {
            #expect(
                doc.contains("| \(code) | \(entry.reason) | `\(entry.code)` |"), "Adyen \(code) is not in the table")
        }
        for (code, orchard) in DeclineCodes.checkoutCom {
            #expect(doc.contains("`\(code)` → `\(orchard)`"), "Checkout.com \(code) is not in the table")
        }
    }
}
