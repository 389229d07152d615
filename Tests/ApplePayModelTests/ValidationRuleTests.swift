import ApplePayModel
import Foundation
import OrchardTestSupport
import Testing

/// Each rule other than the deferred-payment table, with its stable code and JSON path.
@Suite("Validation rules")
struct ValidationRuleTests {
    struct ModelCase: CustomTestStringConvertible, Sendable {
        var name: String
        var format: PaymentRequestFormat
        var base: @Sendable () -> PaymentRequest
        var change: @Sendable (inout PaymentRequest) -> Void
        var codes: [String]
        var path: String
        var testDescription: String { "\(name) (\(format))" }
    }

    static let twdCart: @Sendable () -> PaymentRequest = { PaymentRequestExamples.twdCartWithDebitDiscount }
    static let usCart: @Sendable () -> PaymentRequest = { PaymentRequestExamples.usCartWithShipping }
    static func usd(_ cents: Int64) -> Money { Money(minorUnits: cents, currency: .usd) }
    static let recurring = RecurringPaymentRequest(
        paymentDescription: "Monthly beans",
        regularBilling: {
            var item = SummaryItem(label: "Beans", amount: Money(minorUnits: 50_000, currency: .twd))
            item.paymentTiming = .recurring
            item.recurringPaymentIntervalUnit = .month
            item.recurringPaymentIntervalCount = 1
            item.recurringPaymentStartDate = "2026-12-01T00:00:00Z"
            return item
        }(),
        managementURL: "https://orchard.example/subscriptions")

    static let modelCases: [ModelCase] = [
        ModelCase(
            name: "a total that is not the sum of the items", format: .applePayJS, base: twdCart,
            change: { $0.total.amount = Money(minorUnits: 99_900, currency: .twd) }, codes: ["total_mismatch"],
            path: "$.total.amount"),
        ModelCase(
            name: "a total that is not the sum of the items", format: .tapPayWeb, base: twdCart,
            change: { $0.total.amount = Money(minorUnits: 40_000, currency: .twd) }, codes: ["total_mismatch"],
            path: "$.total.amount.value"),
        ModelCase(
            name: "an item in another currency", format: .w3c, base: twdCart,
            change: { $0.lineItems[1].amount = Money(minorUnits: 8_500, currency: .usd) }, codes: ["currency_mismatch"],
            path: "$.details.displayItems[1].amount.currency"),
        ModelCase(
            name: "an item in another currency", format: .tapPayWeb, base: twdCart,
            change: { $0.lineItems[1].amount = Money(minorUnits: 8_500, currency: .jpy) }, codes: ["currency_mismatch"],
            path: "$.displayItems[1].amount.currency"),
        ModelCase(
            name: "a shipping option in another currency", format: .w3c, base: usCart,
            change: { $0.shippingMethods[2].amount = Money(minorUnits: 0, currency: .eur) },
            codes: ["currency_mismatch"],
            path: "$.details.shippingOptions[2].amount.currency"),
        ModelCase(
            name: "a shown display item of 0", format: .tapPayWeb, base: twdCart,
            change: {
                $0.lineItems.append(SummaryItem(label: "Gift wrap", amount: .zero(.twd)))
            }, codes: ["zero_amount_item"], path: "$.displayItems[3].amount.value"),
        ModelCase(
            name: "an unsupported network", format: .applePayJS, base: twdCart,
            change: { $0.supportedNetworks.append(PaymentNetwork(rawValue: "dinersClub")) },
            codes: ["unsupported_network"],
            path: "$.supportedNetworks[3]"),
        ModelCase(
            name: "an unsupported network", format: .tapPayWeb, base: twdCart,
            change: { $0.supportedNetworks.insert(PaymentNetwork(rawValue: "RUPAY"), at: 0) },
            codes: ["unsupported_network"], path: "$.supportedNetworks[0]"),
        ModelCase(
            name: "a network listed twice", format: .w3c, base: twdCart,
            change: { $0.supportedNetworks.append(.visa) }, codes: ["duplicate_network"],
            path: "$.methodData[0].data.supportedNetworks[3]"),
        ModelCase(
            name: "no network", format: .applePayJS, base: twdCart, change: { $0.supportedNetworks = [] },
            codes: ["missing_networks"], path: "$.supportedNetworks"),
        ModelCase(
            name: "supports3DS missing", format: .applePayJS, base: twdCart,
            change: { $0.merchantCapabilities = [.supportsCredit, .supportsDebit] }, codes: ["missing_supports_3ds"],
            path: "$.merchantCapabilities"),
        ModelCase(
            name: "supports3DS missing", format: .w3c, base: twdCart,
            change: { $0.merchantCapabilities = [.supportsEMV] }, codes: ["missing_supports_3ds"],
            path: "$.methodData[0].data.merchantCapabilities"),
        ModelCase(
            name: "an unknown capability", format: .applePayJS, base: twdCart,
            change: { $0.merchantCapabilities.append(MerchantCapability(rawValue: "supportsCrypto")) },
            codes: ["unknown_merchant_capability"], path: "$.merchantCapabilities[3]"),
        ModelCase(
            name: "recurring with automatic reload", format: .applePayJS, base: twdCart,
            change: {
                $0.recurringPaymentRequest = recurring
                var reload = SummaryItem(label: "Top up", amount: Money(minorUnits: 50_000, currency: .twd))
                reload.paymentTiming = .automaticReload
                reload.automaticReloadPaymentThresholdAmount = Money(minorUnits: 10_000, currency: .twd)
                $0.automaticReloadPaymentRequest = AutomaticReloadPaymentRequest(
                    paymentDescription: "Card top-up", automaticReloadBilling: reload,
                    managementURL: "https://orchard.example/reload")
            }, codes: ["recurring_with_automatic_reload"], path: "$.recurringPaymentRequest"),
        ModelCase(
            name: "recurring with multi-token contexts", format: .w3c, base: twdCart,
            change: {
                $0.recurringPaymentRequest = recurring
                $0.multiTokenContexts = [
                    MultiTokenContext(
                        merchantIdentifier: "merchant.tw.orchard.bakery", externalIdentifier: "bakery-1",
                        merchantName: "Orchard Bakery", amount: Money(minorUnits: 8_500, currency: .twd))
                ]
            }, codes: ["recurring_with_multi_token_contexts"],
            path: "$.details.modifiers[0].data.recurringPaymentRequest"),
        ModelCase(
            name: "duplicate shipping method identifiers", format: .applePayJS, base: usCart,
            change: { $0.shippingMethods[2].identifier = "ground" }, codes: ["duplicate_shipping_method"],
            path: "$.shippingMethods[2].identifier"),
        ModelCase(
            name: "duplicate shipping method identifiers", format: .tapPayWeb, base: usCart,
            change: { $0.shippingMethods[1].identifier = "ground" }, codes: ["duplicate_shipping_method"],
            path: "$.shippingOptions[1].id"),
        ModelCase(
            name: "a negative shipping method", format: .applePayJS, base: usCart,
            change: { $0.shippingMethods[0].amount = usd(-100) }, codes: ["negative_amount"],
            path: "$.shippingMethods[0].amount"),
        ModelCase(
            name: "a negative pending total", format: .tapPayWeb, base: { PaymentRequestExamples.deferredTaxiFare },
            change: { $0.total.amount = Money(minorUnits: -100, currency: .twd) }, codes: ["negative_amount"],
            path: "$.total.amount.value"),
        ModelCase(
            name: "an invalid merchant identifier", format: .w3c, base: twdCart,
            change: { $0.merchantIdentifier = "com.example.shop" }, codes: ["invalid_merchant_identifier"],
            path: "$.methodData[0].data.merchantIdentifier"),
        ModelCase(
            name: "an unknown contact field", format: .applePayJS, base: twdCart,
            change: { $0.requiredBillingContactFields = [.postalAddress, ContactField(rawValue: "shoeSize")] },
            codes: ["unknown_contact_field"], path: "$.requiredBillingContactFields[1]"),
        ModelCase(
            name: "an unknown shipping type", format: .applePayJS, base: usCart,
            change: { $0.shippingType = ShippingType(rawValue: "teleport") }, codes: ["unknown_shipping_type"],
            path: "$.shippingType"),
        ModelCase(
            name: "a management URL that is not https", format: .applePayJS, base: twdCart,
            change: {
                $0.recurringPaymentRequest = recurring
                $0.recurringPaymentRequest?.managementURL = "http://orchard.example/subscriptions"
            }, codes: ["invalid_url"], path: "$.recurringPaymentRequest.managementURL"),
        ModelCase(
            name: "a recurring start date that is not ISO 8601", format: .applePayJS, base: twdCart,
            change: {
                $0.recurringPaymentRequest = recurring
                $0.recurringPaymentRequest?.regularBilling.recurringPaymentStartDate = "next Tuesday"
            }, codes: ["invalid_date"], path: "$.recurringPaymentRequest.regularBilling.recurringPaymentStartDate"),
        ModelCase(
            name: "a zero recurring interval", format: .applePayJS, base: twdCart,
            change: {
                $0.recurringPaymentRequest = recurring
                $0.recurringPaymentRequest?.regularBilling.recurringPaymentIntervalCount = 0
            }, codes: ["invalid_interval"],
            path: "$.recurringPaymentRequest.regularBilling.recurringPaymentIntervalCount"),
        ModelCase(
            name: "application data that is not Base64", format: .applePayJS, base: twdCart,
            change: { $0.applicationData = "not base64!" }, codes: ["invalid_application_data"],
            path: "$.applicationData"),
        ModelCase(
            name: "multi-token contexts with a repeated external identifier", format: .applePayJS, base: twdCart,
            change: {
                let context = MultiTokenContext(
                    merchantIdentifier: "merchant.tw.orchard.bakery", externalIdentifier: "order-1",
                    merchantName: "Orchard Bakery", amount: Money(minorUnits: 8_500, currency: .twd))
                $0.multiTokenContexts = [context, context]
            }, codes: ["duplicate_external_identifier"], path: "$.multiTokenContexts[1].externalIdentifier"),
        ModelCase(
            name: "an unknown payment timing", format: .applePayJS, base: twdCart,
            change: { $0.lineItems[0].paymentTiming = PaymentTiming(rawValue: "someday") }, codes: ["unknown_value"],
            path: "$.lineItems[0].paymentTiming"),
    ]

    @Test("each rule, through the JSON shape", arguments: modelCases)
    func modelRule(_ example: ModelCase) throws {
        var request = example.base()
        #expect(PaymentRequestValidator.validate(request, as: example.format).isValid, "the base request is valid")
        example.change(&request)
        let json = PaymentRequestCoder.encode(request, as: example.format)
        let validation = try PaymentRequestValidator.validate(
            json: json, format: nil, merchantIdentifier: request.merchantIdentifier,
            countryCode: example.format == .tapPayWeb ? request.countryCode?.code : nil)
        #expect(validation.format == example.format)
        #expect(validation.codes == example.codes)
        #expect(validation.issues.first?.path == example.path)
        #expect(!validation.isValid)
        #expect(validation.primeLifetimeSeconds == nil)
    }

    struct JSONCase: CustomTestStringConvertible, Sendable {
        var name: String
        var json: String
        var merchantIdentifier: String? = nil
        var countryCode: String? = nil
        var codes: [String]
        var path: String
        var testDescription: String { name }
    }

    static func appleJS(
        country: String = #""countryCode": "TW","#, currency: String = #""currencyCode": "TWD","#,
        networks: String = #"["visa", "masterCard"]"#, items: String = #"{"label": "Tea", "amount": "120.00"}"#,
        total: String = #"{"label": "Orchard Tea", "amount": "120.00"}"#
    ) -> String {
        """
        {\(country) \(currency) "merchantCapabilities": ["supports3DS"], "supportedNetworks": \(networks),
         "lineItems": [\(items)], "total": \(total)}
        """
    }

    static let w3c = #"""
        {"methodData": [{"supportedMethods": "https://apple.com/apple-pay",
          "data": {"version": 3, "merchantIdentifier": "merchant.tw.orchard.tea", "merchantCapabilities": ["supports3DS"],
                   "supportedNetworks": ["visa"], "countryCode": "TW"}}],
         "details": {"total": {"label": "Orchard Tea", "amount": {"currency": "TWD", "value": "120.00"}}}}
        """#

    static let tapPay = #"""
        {"supportedNetworks": ["VISA"], "supportedMethods": ["apple_pay"],
         "displayItems": [{"label": "Tea", "amount": {"currency": "TWD", "value": "120.00"}, "isAmountPending": false}],
         "total": {"label": "Orchard Tea", "amount": {"currency": "TWD", "value": "120.00"}, "isAmountPending": false,
                   "isShowTotalAmount": true}}
        """#

    static let jsonCases: [JSONCase] = [
        JSONCase(
            name: "more decimals than TWD allows", json: appleJS(items: #"{"label": "Tea", "amount": "120.005"}"#),
            codes: ["too_many_decimals"], path: "$.lineItems[0].amount"),
        JSONCase(
            name: "decimals on a JPY amount",
            json: appleJS(
                currency: #""currencyCode": "JPY","#, items: #"{"label": "Tea", "amount": "120.5"}"#,
                total: #"{"label": "Orchard Tea", "amount": "120"}"#),
            codes: ["too_many_decimals"], path: "$.lineItems[0].amount"),
        JSONCase(
            name: "an amount in exponent notation",
            json: appleJS(total: #"{"label": "Orchard Tea", "amount": "1.2e2"}"#),
            codes: ["invalid_amount"], path: "$.total.amount"),
        JSONCase(
            name: "an amount as a JSON number", json: appleJS(items: #"{"label": "Tea", "amount": 120}"#),
            codes: ["invalid_amount"], path: "$.lineItems[0].amount"),
        JSONCase(
            name: "an amount with 31 digits",
            json: appleJS(items: #"{"label": "Tea", "amount": "1234567890123456789012345678901"}"#),
            codes: ["amount_out_of_range"], path: "$.lineItems[0].amount"),
        JSONCase(
            name: "an unknown currency", json: appleJS(currency: #""currencyCode": "NTD","#),
            codes: ["unknown_currency"], path: "$.currencyCode"),
        JSONCase(name: "no currency", json: appleJS(currency: ""), codes: ["missing_currency"], path: "$.currencyCode"),
        JSONCase(
            name: "an invalid country", json: appleJS(country: #""countryCode": "ROC","#),
            codes: ["invalid_country_code"], path: "$.countryCode"),
        JSONCase(
            name: "a lower-case country", json: appleJS(country: #""countryCode": "tw","#),
            codes: ["invalid_country_code"], path: "$.countryCode"),
        JSONCase(
            name: "no country", json: appleJS(country: ""), codes: ["missing_country_code"], path: "$.countryCode"),
        JSONCase(
            name: "a country other than the merchant's", json: appleJS(), countryCode: "JP",
            codes: ["country_code_mismatch"], path: "$.countryCode"),
        JSONCase(
            name: "an invalid merchant identifier given with Apple Pay JS", json: appleJS(),
            merchantIdentifier: "tea shop", codes: ["invalid_merchant_identifier"], path: "merchantIdentifier"),
        JSONCase(
            name: "networks that are not a list", json: appleJS(networks: #""visa""#), codes: ["invalid_type"],
            path: "$.supportedNetworks"),
        JSONCase(
            name: "no total",
            json:
                #"{"currencyCode": "TWD", "countryCode": "TW", "merchantCapabilities": ["supports3DS"], "supportedNetworks": ["visa"]}"#,
            codes: ["missing_field"], path: "$.total"),
        JSONCase(
            name: "an unknown item type",
            json: appleJS(items: #"{"label": "Tea", "amount": "120.00", "type": "estimated"}"#),
            codes: ["unknown_value"],
            path: "$.lineItems[0].type"),
        JSONCase(
            name: "W3C without a merchant identifier",
            json: w3c.replacingOccurrences(of: #""merchantIdentifier": "merchant.tw.orchard.tea", "#, with: ""),
            codes: ["missing_merchant_identifier"], path: "$.methodData[0].data.merchantIdentifier"),
        JSONCase(
            name: "W3C naming another merchant", json: w3c, merchantIdentifier: "merchant.tw.orchard.other",
            codes: ["merchant_identifier_mismatch"], path: "$.methodData[0].data.merchantIdentifier"),
        JSONCase(
            name: "W3C without a country",
            json: w3c.replacingOccurrences(of: #", "countryCode": "TW""#, with: ""), codes: ["missing_country_code"],
            path: "$.methodData[0].data.countryCode"),
        JSONCase(
            name: "W3C without Apple Pay",
            json: w3c.replacingOccurrences(of: "https://apple.com/apple-pay", with: "basic-card"),
            codes: ["unsupported_method"], path: "$.methodData"),
        JSONCase(
            name: "W3C with an unknown currency", json: w3c.replacingOccurrences(of: "TWD", with: "NTD"),
            codes: ["unknown_currency"], path: "$.details.total.amount.currency"),
        JSONCase(
            name: "W3C version too low for a recurring payment",
            json: w3c.replacingOccurrences(
                of: #""details": {"#,
                with:
                    #""details": {"modifiers": [{"supportedMethods": "https://apple.com/apple-pay", "data": {"recurringPaymentRequest": {"paymentDescription": "Tea club", "regularBilling": {"label": "Tea", "amount": "120.00", "paymentTiming": "recurring"}, "managementURL": "https://orchard.example/tea"}}}], "#
            ),
            codes: ["unsupported_version"], path: "$.methodData[0].data.version"),
        JSONCase(
            name: "TapPay without a merchant identifier from setupApplePay", json: tapPay,
            codes: ["missing_merchant_identifier"], path: "setupApplePay.merchantIdentifier"),
        JSONCase(
            name: "TapPay with an invalid country from setupApplePay", json: tapPay,
            merchantIdentifier: "merchant.tw.orchard.tea", countryCode: "Taiwan", codes: ["invalid_country_code"],
            path: "setupApplePay.countryCode"),
        JSONCase(
            name: "TapPay without apple_pay", json: tapPay.replacingOccurrences(of: "apple_pay", with: "google_pay"),
            merchantIdentifier: "merchant.tw.orchard.tea", codes: ["unsupported_method"], path: "$.supportedMethods"),
        JSONCase(
            name: "TapPay with a display item of 0",
            json: tapPay.replacingOccurrences(
                of: #""value": "120.00"}, "isAmountPending": false}"#,
                with:
                    #""value": "0"}, "isAmountPending": false}, {"label": "Cup", "amount": {"currency": "TWD", "value": "120.00"}}"#
            ),
            merchantIdentifier: "merchant.tw.orchard.tea", codes: ["zero_amount_item"],
            path: "$.displayItems[0].amount.value"),
    ]

    @Test("each rule read from JSON", arguments: jsonCases)
    func jsonRule(_ example: JSONCase) throws {
        let validation = try PaymentRequestValidator.validate(
            json: Data(example.json.utf8), merchantIdentifier: example.merchantIdentifier,
            countryCode: example.countryCode)
        #expect(validation.codes == example.codes)
        #expect(validation.issues.first?.path == example.path)
        #expect(!validation.isValid)
    }

    @Test("the bases of the JSON cases are valid, TapPay's country defaulting to TW")
    func validBases() throws {
        let apple = try PaymentRequestValidator.validate(json: Data(Self.appleJS().utf8))
        #expect(apple.issues == [])
        #expect(apple.format == .applePayJS)
        let w3c = try PaymentRequestValidator.validate(json: Data(Self.w3c.utf8))
        #expect(w3c.issues == [])
        #expect(w3c.format == .w3c)
        let tapPay = try PaymentRequestValidator.validate(
            json: Data(Self.tapPay.utf8), merchantIdentifier: "merchant.tw.orchard.tea")
        #expect(tapPay.issues == [])
        #expect(tapPay.format == .tapPayWeb)
        #expect(tapPay.request?.countryCode == .tw)
        #expect(tapPay.primeLifetimeSeconds == 90)
    }

    @Test("every problem is reported at once, each at its own path")
    func everythingAtOnce() throws {
        let json = Self.appleJS(
            country: #""countryCode": "XX","#, networks: #"["visa", "paypal"]"#,
            items: #"{"label": "Tea", "amount": "120.001"}, {"label": "Cake", "amount": "1,5"}"#)
        let validation = try PaymentRequestValidator.validate(json: Data(json.utf8))
        #expect(
            Set(validation.codes) == [
                "invalid_country_code", "too_many_decimals", "invalid_amount", "unsupported_network",
            ])
        #expect(validation.issues.contains { $0.path == "$.lineItems[1].amount" && $0.code == "invalid_amount" })
        #expect(validation.total == nil, "no total is claimed when an amount could not be read")
    }

    @Test(
        "input that is not a request throws",
        arguments: [
            "not json", "[1, 2]", "{}", #"{"total": 5}"#, "\"x\"", String(repeating: "[", count: 10_000),
            String(repeating: #"{"total":"#, count: 5_000),
        ])
    func unreadable(_ text: String) {
        #expect(throws: PaymentRequestInputError.self) { try PaymentRequestValidator.validate(json: Data(text.utf8)) }
    }

    @Test("oversized input is refused before parsing")
    func oversized() {
        let big = Data(repeating: 0x20, count: PaymentRequestCoder.maximumInputBytes + 1)
        #expect(throws: PaymentRequestInputError(.inputTooLarge, "")) { try PaymentRequestCoder.decode(big) }
    }

    @Test(
        "merchant identifiers",
        arguments: [
            ("merchant.com.example", true), ("merchant.tw.orchard.coffee-shop", true), ("merchant.", false),
            ("com.example", false), ("merchant.com..example", false), ("merchant.com.example.", false),
            ("merchant.com.exa mple", false), ("merchant.測試", false),
        ])
    func merchantIdentifiers(_ identifier: String, _ valid: Bool) {
        #expect(PaymentRequestValidator.isValidMerchantIdentifier(identifier) == valid)
    }

    @Test("networks: Apple's spelling whatever the case, TapPay's upper case, unknown names kept")
    func networks() {
        #expect(PaymentNetwork(rawValue: "MASTERCARD") == .masterCard)
        #expect(PaymentNetwork(rawValue: "JCB") == .jcb)
        #expect(PaymentNetwork(rawValue: "cartesbancaires").rawValue == "cartesBancaires")
        #expect(PaymentNetwork.masterCard.tapPayName == "MASTERCARD")
        #expect(!PaymentNetwork(rawValue: "futurePay").isKnown)
        #expect(PaymentNetwork(rawValue: "futurePay").rawValue == "futurePay")
        let passKit = [
            "amex", "bancomat", "bancontact", "cartesBancaires", "chinaUnionPay", "dankort", "discover", "eftpos",
            "electron", "elo", "girocard", "interac", "JCB", "mada", "maestro", "masterCard", "mir", "privateLabel",
            "quicPay", "suica", "visa", "vPay", "waon",
        ]
        for name in passKit { #expect(PaymentNetwork(rawValue: name).isKnown, "\(name)") }
    }
}

@Suite("Error code documentation")
struct ErrorCodeDocumentationTests {
    @Test("every issue code the sources report is listed, and docs/payment-request.md documents each")
    func documented() throws {
        let packageRoot = TestPaths.packageRoot
        let docs = try String(
            contentsOf: packageRoot.appendingPathComponent("docs/payment-request.md"), encoding: .utf8)
        let sources = try FileManager.default.contentsOfDirectory(
            at: packageRoot.appendingPathComponent("Sources/ApplePayModel"), includingPropertiesForKeys: nil)
        var reported: Set<String> = []
        for file in sources where file.pathExtension == "swift" {
            let text = try String(contentsOf: file, encoding: .utf8)
            let pattern = try NSRegularExpression(pattern: #"(?:report|code:)\(?\s*"([a-z0-9_]+)""#)
            for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                reported.insert(String(text[Range(match.range(at: 1), in: text)!]))
            }
        }
        #expect(
            reported.isSubset(of: Set(PaymentRequestValidator.issueCodes)),
            "\(reported.subtracting(PaymentRequestValidator.issueCodes))")
        for code in PaymentRequestValidator.issueCodes {
            #expect(docs.contains("| `\(code)` |"), "\(code) is in the docs' table")
        }
    }
}
