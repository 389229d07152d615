import ApplePayModel
import Foundation
import Testing

/// The three shapes read what they write, without loss, for the seed-style requests and for a
/// request that uses every field.
@Suite("JSON shapes")
struct RoundTripTests {
    struct Example: CustomTestStringConvertible, Sendable {
        var name: String
        var format: PaymentRequestFormat
        var request: PaymentRequest
        var testDescription: String { "\(name) as \(format)" }
    }

    static let examples: [Example] = PaymentRequestExamples.all.flatMap { name, request in
        PaymentRequestFormat.allCases.map { Example(name: name, format: $0, request: request) }
    }

    /// What TapPay's shape can say of a request: no capabilities, no Apple-only fields, the
    /// deferred flag spelled out; merchant identifier and country come from setupApplePay.
    static func tapPayView(_ request: PaymentRequest) -> PaymentRequest {
        var view = PaymentRequest(
            merchantIdentifier: request.merchantIdentifier, countryCode: request.countryCode,
            currency: request.currency, supportedNetworks: request.supportedNetworks, merchantCapabilities: [],
            lineItems: request.lineItems, total: request.total, isAmountPending: request.isDeferred,
            shippingMethods: request.shippingMethods.map {
                ShippingMethod(identifier: $0.identifier, label: $0.label, detail: $0.detail, amount: $0.amount)
            }, shippingType: request.shippingType)
        view.requiredShippingContactFields = request.requiredShippingContactFields
        return view
    }

    static func decode(_ json: Data, like example: Example) throws -> PaymentRequestDecoding {
        try PaymentRequestCoder.decode(
            json, merchantIdentifier: example.request.merchantIdentifier,
            countryCode: example.format == .tapPayWeb ? example.request.countryCode?.code : nil)
    }

    static func json(_ data: Data) throws -> NSDictionary {
        try #require(JSONSerialization.jsonObject(with: data) as? NSDictionary)
    }

    @Test("request -> JSON -> request -> the same JSON", arguments: examples)
    func roundTrip(_ example: Example) throws {
        let first = PaymentRequestCoder.encode(example.request, as: example.format)
        #expect(try PaymentRequestCoder.detectFormat(of: first) == example.format)
        let decoded = try Self.decode(first, like: example)
        #expect(decoded.issues == [])
        let request = try #require(decoded.request)
        let expected = example.format == .tapPayWeb ? Self.tapPayView(example.request) : example.request
        #expect(request == expected)
        #expect(PaymentRequestCoder.encode(request, as: example.format) == first)
        let validation = PaymentRequestValidator.validate(decoded)
        #expect(validation.isValid)
        #expect(validation.total == PaymentRequestValidator.validate(example.request).total)
    }

    static func fixtureURL(_ name: String, _ format: PaymentRequestFormat) throws -> URL {
        let file = "\(name).\(format.rawValue)"
        return try #require(Bundle.module.url(forResource: file, withExtension: "json", subdirectory: "Fixtures"))
    }

    @Test("the fixture files read to the seed requests and are written back unchanged", arguments: examples)
    func fixtures(_ example: Example) throws {
        let data = try Data(contentsOf: Self.fixtureURL(example.name, example.format))
        let decoded = try Self.decode(data, like: example)
        #expect(decoded.format == example.format)
        #expect(decoded.issues == [])
        let expected = example.format == .tapPayWeb ? Self.tapPayView(example.request) : example.request
        #expect(decoded.request == expected)
        let rewritten = PaymentRequestCoder.encode(try #require(decoded.request), as: example.format)
        #expect(try Self.json(rewritten) == Self.json(data))
        #expect(rewritten == data, "byte for byte")
    }

    @Test("converting between the shapes keeps what both can say")
    func conversions() throws {
        for (_, request) in PaymentRequestExamples.all {
            let w3c = try PaymentRequestCoder.decode(PaymentRequestCoder.encode(request, as: .w3c))
            let apple = try PaymentRequestCoder.decode(
                PaymentRequestCoder.encode(try #require(w3c.request), as: .applePayJS),
                merchantIdentifier: request.merchantIdentifier)
            #expect(apple.request == request)
            let tapPay = try PaymentRequestCoder.decode(
                PaymentRequestCoder.encode(try #require(apple.request), as: .tapPayWeb),
                merchantIdentifier: request.merchantIdentifier, countryCode: request.countryCode?.code)
            #expect(tapPay.request == Self.tapPayView(request))
            #expect(PaymentRequestCoder.losses(converting: request, to: .tapPayWeb).isEmpty == false)
        }
    }

    static var everything: PaymentRequest {
        var request = PaymentRequestExamples.usCartWithShipping
        request.supportedCountries = [.us, try! CountryCode("CA")]
        request.requiredShippingContactFields = [.postalAddress, .phoneticName, .email]
        request.requiredBillingContactFields = [.postalAddress, .name]
        var contact = PaymentContact()
        contact.givenName = "Ada"
        contact.familyName = "Orchard"
        contact.emailAddress = "ada@orchard.example"
        contact.addressLines = ["1 Infinite Loop", "Suite 2"]
        contact.locality = "Cupertino"
        contact.administrativeArea = "CA"
        contact.postalCode = "95014"
        contact.countryCode = "US"
        request.shippingContact = contact
        request.billingContact = contact
        request.shippingContactEditingMode = .storePickup
        request.shippingType = .servicePickup
        request.supportsCouponCode = true
        request.couponCode = "AUTUMN"
        request.applicationData = Data("order-7781".utf8).base64EncodedString()
        var monthly = SummaryItem(label: "Sock club", amount: Money(minorUnits: 999, currency: .usd))
        monthly.paymentTiming = .recurring
        monthly.recurringPaymentIntervalUnit = .month
        monthly.recurringPaymentIntervalCount = 1
        monthly.recurringPaymentStartDate = "2026-12-01T00:00:00Z"
        monthly.recurringPaymentEndDate = "2027-12-01T00:00:00Z"
        var trial = monthly
        trial.amount = .zero(.usd)
        trial.recurringPaymentEndDate = "2026-12-31T00:00:00Z"
        request.recurringPaymentRequest = RecurringPaymentRequest(
            paymentDescription: "Sock club", regularBilling: monthly, trialBilling: trial,
            billingAgreement: "Cancel any time.", managementURL: "https://orchard.example/club",
            tokenNotificationURL: "https://orchard.example/apple-pay/tokens")
        var later = SummaryItem(label: "Boot fitting", amount: Money(minorUnits: 2_000, currency: .usd))
        later.paymentTiming = .deferred
        later.deferredPaymentDate = "2027-01-15T09:00:00Z"
        request.deferredPaymentRequest = DeferredPaymentRequest(
            paymentDescription: "Boot fitting", deferredBilling: later,
            managementURL: "https://orchard.example/fitting",
            freeCancellationDate: "2027-01-10T00:00:00Z", freeCancellationDateTimeZone: "America/Los_Angeles")
        var reload = SummaryItem(label: "Gift card top-up", amount: Money(minorUnits: 2_500, currency: .usd))
        reload.paymentTiming = .automaticReload
        reload.automaticReloadPaymentThresholdAmount = Money(minorUnits: 500, currency: .usd)
        request.automaticReloadPaymentRequest = AutomaticReloadPaymentRequest(
            paymentDescription: "Gift card", automaticReloadBilling: reload, billingAgreement: "Reloads at 5.00",
            managementURL: "https://orchard.example/gift")
        request.multiTokenContexts = [
            MultiTokenContext(
                merchantIdentifier: "merchant.com.example.socks", externalIdentifier: "socks-1",
                merchantName: "Orchard Socks", merchantDomain: "socks.orchard.example",
                amount: Money(minorUnits: 1_450, currency: .usd))
        ]
        request.lineItems[0].paymentTiming = .immediate
        request.applePayVersion = 15
        return request
    }

    @Test("every field survives Apple Pay JS and the W3C form", arguments: [PaymentRequestFormat.applePayJS, .w3c])
    func everyField(_ format: PaymentRequestFormat) throws {
        var request = Self.everything
        if format == .applePayJS { request.applePayVersion = nil }
        let first = PaymentRequestCoder.encode(request, as: format)
        let decoded = try PaymentRequestCoder.decode(first, merchantIdentifier: request.merchantIdentifier)
        #expect(decoded.issues == [])
        #expect(decoded.request == request)
        #expect(PaymentRequestCoder.encode(try #require(decoded.request), as: format) == first)
        // Recurring with automatic reload and with multi-token contexts: Apple forbids both.
        let validation = PaymentRequestValidator.validate(decoded)
        #expect(validation.codes == ["recurring_with_automatic_reload", "recurring_with_multi_token_contexts"])
    }

    @Test("the W3C form: options say the shipping contact fields, versions follow the features")
    func w3cDetails() throws {
        let request = PaymentRequestExamples.usCartWithShipping
        let object = try Self.json(PaymentRequestCoder.encode(request, as: .w3c))
        let options = try #require(object["options"] as? NSDictionary)
        #expect(options["requestShipping"] as? Bool == true)
        #expect(options["requestPayerEmail"] as? Bool == true)
        #expect(options["shippingType"] as? String == "shipping")
        let method = try #require((object["methodData"] as? NSArray)?.firstObject as? NSDictionary)
        #expect(method["supportedMethods"] as? String == "https://apple.com/apple-pay")
        let data = try #require(method["data"] as? NSDictionary)
        #expect(data["requiredShippingContactFields"] == nil, "the options say it")
        #expect((data["version"] as? NSNumber)?.intValue == 3)
        #expect(Self.everything.requiredVersion == 14)

        var pickup = request
        pickup.shippingType = .storePickup
        let pickupOptions = try #require(
            try Self.json(PaymentRequestCoder.encode(pickup, as: .w3c))["options"] as? NSDictionary)
        #expect(pickupOptions["shippingType"] as? String == "pickup")
        let back = try PaymentRequestCoder.decode(PaymentRequestCoder.encode(pickup, as: .w3c))
        #expect(back.request?.shippingType == .storePickup)
    }

    @Test("the flattened W3C form (one method) is read too")
    func flattenedW3C() throws {
        let json = #"""
            {"supportedMethods": "https://apple.com/apple-pay",
             "data": {"version": 3, "merchantIdentifier": "merchant.tw.orchard.tea", "merchantCapabilities": ["supports3DS"],
                      "supportedNetworks": ["visa"], "countryCode": "TW"},
             "details": {"total": {"label": "Orchard Tea", "amount": {"currency": "TWD", "value": "120.00"}}},
             "options": {"requestPayerEmail": true}}
            """#
        let validation = try PaymentRequestValidator.validate(json: Data(json.utf8))
        #expect(validation.isValid)
        #expect(validation.request?.requiredShippingContactFields == [.email])
        let bad = json.replacingOccurrences(
            of: "\"supportedNetworks\": [\"visa\"]", with: "\"supportedNetworks\": [\"visa\", \"x\"]")
        #expect(
            try PaymentRequestValidator.validate(json: Data(bad.utf8)).issues.first?.path
                == "$.data.supportedNetworks[1]")
    }

    @Test("TapPay's documented example reads as written")
    func tapPayDocumentedExample() throws {
        let json = #"""
            {
              "supportedNetworks": ["AMEX", "JCB", "MASTERCARD", "VISA"],
              "supportedMethods": ["apple_pay"],
              "displayItems": [{"label": "TapPay - iPhone8", "amount": {"currency": "TWD", "value": "1.00"}, "isAmountPending": false}],
              "total": {"label": "付給 TapPay", "amount": {"currency": "TWD", "value": "1.00"}, "isAmountPending": false, "isShowTotalAmount": true},
              "shippingOptions": [{"id": "standard", "label": "🚛 Ground Shipping (2 days)", "detail": "Estimated delivery time: 2 days", "amount": {"currency": "TWD", "value": "5.00"}}],
              "options": {"requestPayerEmail": false, "requestPayerName": false, "requestPayerPhone": false, "requestShipping": false, "shippingType": "shipping"}
            }
            """#
        let validation = try PaymentRequestValidator.validate(
            json: Data(json.utf8), merchantIdentifier: "merchant.com.tappay.example")
        #expect(validation.isValid)
        #expect(validation.request?.supportedNetworks == [.amex, .jcb, .masterCard, .visa])
        #expect(validation.request?.total.label == "付給 TapPay")
        #expect(validation.primeLifetimeSeconds == 90)
        let rewritten = PaymentRequestCoder.encode(try #require(validation.request), as: .tapPayWeb)
        #expect(try Self.json(rewritten) == Self.json(Data(json.utf8)))
    }
}

@Suite("JSON text")
struct JSONTextTests {
    @Test("labels with quotes, backslashes, control characters and non-ASCII text survive a round trip")
    func escaping() throws {
        let label = "Tea \"Oolong\" \\ 半斤\n\t\u{01}\u{2028}🍵 /"
        var request = PaymentRequestExamples.twdCartWithDebitDiscount
        request.lineItems[0].label = label
        for format in PaymentRequestFormat.allCases {
            let data = PaymentRequestCoder.encode(request, as: format)
            #expect(try JSONSerialization.jsonObject(with: data) is NSDictionary)
            let decoded = try PaymentRequestCoder.decode(
                data, merchantIdentifier: request.merchantIdentifier, countryCode: "TW")
            #expect(decoded.request?.lineItems[0].label == label)
        }
    }

    @Test("output is pretty printed with sorted keys and ends without a newline")
    func layout() {
        let text = String(
            decoding: PaymentRequestCoder.encode(PaymentRequestExamples.deferredTaxiFare, as: .applePayJS),
            as: UTF8.self)
        #expect(text.hasPrefix("{\n  \"countryCode\": \"TW\",\n  \"currencyCode\": \"TWD\",\n"))
        #expect(text.hasSuffix("\n}"))
        #expect(text.contains("\"type\": \"pending\""))
    }
}
