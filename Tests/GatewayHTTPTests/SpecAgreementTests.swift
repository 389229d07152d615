import ApplePayModel
import ApplePayToken
import Foundation
import Gateway
import GatewayHTTP
import GatewayTestSupport
import OrchardTestSupport
import Testing

/// openapi.yaml and the domain's rules say the same thing: each limit the spec states is the constant the
/// domain enforces, and what the spec allows is accepted.
@Suite("openapi.yaml and the domain agree")
struct SpecAgreementTests {
    static let spec: String =
        (try? String(
            contentsOf: TestPaths.packageRoot.appendingPathComponent("openapi.yaml"), encoding: .utf8)) ?? ""

    /// The lines of the component schema `name` (up to the next component).
    static func schema(_ name: String) throws -> [Substring] {
        let lines = spec.split(separator: "\n", omittingEmptySubsequences: false)
        let start = try #require(lines.firstIndex(of: "    \(name):"), "no schema \(name)")
        let end = lines[(start + 1)...].firstIndex { $0.hasPrefix("    ") && !$0.hasPrefix("     ") } ?? lines.endIndex
        return Array(lines[start..<end])
    }

    /// The `maxLength` of each property of schema `name`.
    static func maxLengths(_ name: String) throws -> [String: Int] {
        var result: [String: Int] = [:]
        var property: String?
        for line in try schema(name) {
            if line.hasPrefix("        "), !line.hasPrefix("         "), line.hasSuffix(":") {
                property = String(line.dropFirst(8).dropLast())
            } else if let property, let range = line.range(of: "maxLength: ") {
                result[property] = Int(line[range.upperBound...])
            }
        }
        return result
    }

    static func enumValues(_ name: String) throws -> Set<String> {
        let line = try #require(try schema(name).first { $0.contains("enum: [") })
        let list = line[line.range(of: "[")!.upperBound..<line.range(of: "]")!.lowerBound]
        return Set(list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
    }

    @Test("Cardholder's and CreatePaymentRequest's maxLength are the domain's limits")
    func stringLimits() throws {
        #expect(try Self.maxLengths("Cardholder") == FieldLimits.cardholder)
        let payment = try Self.maxLengths("CreatePaymentRequest")
        #expect(payment["order_number"] == FieldLimits.orderNumber.upperBound)
        #expect(payment["details"] == FieldLimits.details)
    }

    /// The keywords that bound a value.
    static let limitKeywords: Set<String> = [
        "maxLength", "minLength", "minimum", "maximum", "maxItems", "minItems", "maxProperties",
    ]

    /// Every bound `node` states (or every value of the `keywords` given), by its place in the document (keys
    /// joined with `.`; a list item by its `name`, or its position; `properties` and `schema` left out, so
    /// `CreatePaymentRequest.prime.maxLength`).
    static func limits(
        in node: YAMLNode, at path: [String] = [], keywords: Set<String> = limitKeywords
    ) -> [String: String] {
        var found: [String: String] = [:]
        // Two different bounds at one place would hide a disagreement: the place names must keep them apart.
        func keepFirst(_ first: String, _ second: String) -> String {
            if first != second { Issue.record("two bounds at one place of the spec: \(first) and \(second)") }
            return first
        }
        switch node {
        case .map(let pairs):
            for (key, value) in pairs {
                if keywords.contains(key), let text = value.string {
                    found[(path + [key]).joined(separator: ".")] = text
                } else {
                    let step = key == "properties" || key == "schema" ? path : path + [key]
                    found.merge(limits(in: value, at: step, keywords: keywords), uniquingKeysWith: keepFirst)
                }
            }
        case .list(let items):
            for (index, item) in items.enumerated() {
                found.merge(
                    limits(in: item, at: path + [item["name"]?.string ?? String(index)], keywords: keywords),
                    uniquingKeysWith: keepFirst)
            }
        case .scalar:
            break
        }
        return found
    }

    /// Each bound the spec states on what a request carries, and the domain's constant it must equal.
    static var requestLimits: [String: Int] {
        var table: [String: Int] = [
            "paths./v1/payments.get.parameters.order_number.maxLength": FieldLimits.orderNumber.upperBound,
            "paths./v1/payments.get.parameters.out_trade_no.maxLength": FieldLimits.outTradeNo.upperBound,
            "paths./v1/events.get.parameters.object_id.minLength": FieldLimits.identifier.lowerBound,
            "paths./v1/events.get.parameters.object_id.maxLength": FieldLimits.identifier.upperBound,
            "components.parameters.Limit.minimum": FieldLimits.pageSize.lowerBound,
            "components.parameters.Limit.maximum": FieldLimits.pageSize.upperBound,
            "components.parameters.IdempotencyKey.minLength": FieldLimits.idempotencyKeyBytes.lowerBound,
            "components.parameters.IdempotencyKey.maxLength": FieldLimits.idempotencyKeyBytes.upperBound,
            "components.schemas.Metadata.maxProperties": FieldLimits.metadataEntries,
            "components.schemas.Metadata.propertyNames.minLength": FieldLimits.metadataKey.lowerBound,
            "components.schemas.Metadata.propertyNames.maxLength": FieldLimits.metadataKey.upperBound,
            "components.schemas.Metadata.additionalProperties.maxLength": FieldLimits.metadataValue,
            "components.schemas.CaptureOptions.delay_days.minimum": 1,
            "components.schemas.CaptureOptions.delay_days.maximum": GatewayConfiguration().maxCaptureDelayDays,
            "components.schemas.CreatePaymentRequest.prime.minLength": FieldLimits.prime.lowerBound,
            "components.schemas.CreatePaymentRequest.prime.maxLength": FieldLimits.prime.upperBound,
            "components.schemas.CreatePaymentRequest.order_number.minLength": FieldLimits.orderNumber.lowerBound,
            "components.schemas.CreatePaymentRequest.order_number.maxLength": FieldLimits.orderNumber.upperBound,
            "components.schemas.CreatePaymentRequest.details.maxLength": FieldLimits.details,
            "components.schemas.RefundRequest.reason.maxLength": FieldLimits.refundReason,
            "components.schemas.CreateSessionRequest.out_trade_no.minLength": FieldLimits.outTradeNo.lowerBound,
            "components.schemas.CreateSessionRequest.out_trade_no.maxLength": FieldLimits.outTradeNo.upperBound,
            "components.schemas.CreateSessionRequest.subject.minLength": FieldLimits.subject.lowerBound,
            "components.schemas.CreateSessionRequest.subject.maxLength": FieldLimits.subject.upperBound,
            "components.schemas.CreateSessionRequest.user_id.minLength": FieldLimits.userID.lowerBound,
            "components.schemas.CreateSessionRequest.user_id.maxLength": FieldLimits.userID.upperBound,
            "components.schemas.CreateSessionRequest.notify_url.maxLength": FieldLimits.url,
            "components.schemas.CreateSessionRequest.expires_in_seconds.minimum":
                FieldLimits.sessionLifetimeSeconds.lowerBound,
            "components.schemas.CreateSessionRequest.expires_in_seconds.maximum":
                FieldLimits.sessionLifetimeSeconds.upperBound,
            "components.schemas.WebhookEndpointUpdate.url.maxLength": FieldLimits.url,
            "components.schemas.CertificateUpload.certificate_pem.minLength": FieldLimits.certificatePEM.lowerBound,
            "components.schemas.CertificateUpload.certificate_pem.maxLength": FieldLimits.certificatePEM.upperBound,
            "components.schemas.IdentityCertificateUpload.certificate.minLength":
                FieldLimits.certificatePEM.lowerBound,
            "components.schemas.IdentityCertificateUpload.certificate.maxLength":
                FieldLimits.certificatePEM.upperBound,
            "components.schemas.MerchantSessionRequest.validation_url.maxLength": FieldLimits.url,
            "components.schemas.MerchantSessionRequest.domain.maxLength": FieldLimits.domainNameBytes.upperBound,
            "components.schemas.MerchantSessionRequest.display_name.minLength": FieldLimits.displayName.lowerBound,
            "components.schemas.MerchantSessionRequest.display_name.maxLength": FieldLimits.displayName.upperBound,
            "components.schemas.MerchantSessionRequest.merchant_identifier.maxLength":
                FieldLimits.merchantIdentifier.upperBound,
            "components.schemas.ApplePayDomains.domains.maxItems": FieldLimits.applePayDomains,
            "components.schemas.ApplePayDomains.domains.items.maxLength": FieldLimits.domainNameBytes.upperBound,
            "components.schemas.CoBrandTable.ranges.maxItems": FieldLimits.coBrandRanges,
            "components.schemas.ValidatePaymentRequest.merchant_identifier.maxLength":
                FieldLimits.merchantIdentifier.upperBound,
            "components.schemas.ConsoleSignIn.secret_key.maxLength": FieldLimits.secretKey,
            "components.schemas.TapPayCompatUpdate.merchant_alias.minLength": FieldLimits.merchantAlias.lowerBound,
            "components.schemas.TapPayCompatUpdate.merchant_alias.maxLength": FieldLimits.merchantAlias.upperBound,
            "components.schemas.TapPayCompatUpdate.app_id.minimum": FieldLimits.tappayAppIDRange.lowerBound,
            "components.schemas.TapPayCompatUpdate.app_id.maximum": FieldLimits.tappayAppIDRange.upperBound,
            "components.schemas.TapPayPayByPrimeRequest.bank_transaction_id.maxLength":
                FieldLimits.bankTransactionID.upperBound,
            "components.schemas.Payment.bank_transaction_id.maxLength": FieldLimits.bankTransactionID.upperBound,
            "components.schemas.PayerMaxCompatUpdate.merchant_no.minLength": FieldLimits.payerMaxMerchantNo.lowerBound,
            "components.schemas.PayerMaxCompatUpdate.merchant_no.maxLength": FieldLimits.payerMaxMerchantNo.upperBound,
            "components.schemas.PayerMaxCompatUpdate.public_key_pem.maxLength": FieldLimits.publicKeyPEM,
        ]
        for (name, limit) in FieldLimits.cardholder { table["components.schemas.Cardholder.\(name).maxLength"] = limit }
        table["components.schemas.ProcessorSetting.minLength"] = FieldLimits.processorSetting.lowerBound
        table["components.schemas.ProcessorSetting.maxLength"] = FieldLimits.processorSetting.upperBound
        for media in ["text/plain", "application/octet-stream"] {
            let body = "paths./v1/apple-pay/domain-association.put.requestBody.content.\(media)"
            table[body + ".minLength"] = FieldLimits.domainAssociationBytes.lowerBound
            table[body + ".maxLength"] = FieldLimits.domainAssociationBytes.upperBound
        }
        return table
    }

    /// Bounds the spec states that are not a request field's limit, each with why.
    static let otherBounds: [String: String] = [
        "paths./v1/payments.get.parameters.status.minItems": "a list filter is not empty: its shape",
        "paths./console/{file}.get.parameters.file.maxLength": "a web asset's name: any other name is 404",
        "paths./demo/{file}.get.parameters.file.maxLength": "a web asset's name: any other name is 404",
        "paths./sdk/v1/{file}.get.parameters.file.maxLength": "a web asset's name: any other name is 404",
        "components.parameters.CSRFToken.maxLength": "the CSRF token's own length, compared as a whole",
        "components.parameters.Cursor.maxLength": "a cursor's pattern bounds it more tightly; the codec refuses others",
        "paths./v1/audit-log.get.parameters.starting_after.maxLength": "a cursor, as components.parameters.Cursor",
        "components.schemas.ValidatePaymentRequest.country_code.maxLength": "a country code: its shape",
        "components.schemas.ApplePayToken.transactionIdentifier.maxLength": "the token's shape: the token library's",
        "components.schemas.Identifier.minLength": "an id: an unknown one is 404",
        "components.schemas.Identifier.maxLength": "an id: an unknown one is 404",
        "components.headers.RetryAfter.minimum": "an answer's header",
    ]

    @Test(
        "the token's and the card tables' byte limits are FieldLimits', which the token library and the body caps keep")
    func byteLimits() throws {
        #expect(FieldLimits.tokenBytes.upperBound == PaymentToken.maximumSize)
        #expect(GatewayAPI.bodyLimit(.put, "/v1/bin-table") == FieldLimits.binTableBytes)
        #expect(GatewayAPI.bodyLimit(.put, "/v1/co-brand-table") == FieldLimits.coBrandTableBytes)
        #expect(GatewayAPI.bodyLimit(.put, "/v1/payments") == nil && GatewayAPI.bodyLimit(.get, "/v1/bin-table") == nil)
        let h = try APIHarness()
        let oversized = Data(repeating: 0x20, count: FieldLimits.tokenBytes.upperBound + 1)
        #expect(throws: GatewayError.self) { try h.runtime.gateway.payments.tokenize(merchant: h.merchant, token: oversized) }
    }

    @Test("every bound openapi.yaml states on a request is a FieldLimits constant, and no bound is unowned")
    func everyRequestLimit() throws {
        let stated = Self.limits(in: try OpenAPIChecker.load().document)
        let table = Self.requestLimits
        for (place, text) in stated.sorted(by: { $0.key < $1.key }) {
            if let expected = table[place] {
                #expect(
                    Int(text) == expected, "\(place) is \(text) in openapi.yaml; the code's constant is \(expected)")
            } else if Self.otherBounds[place] == nil {
                // An answer's schema bounds what the gateway writes, not what a request may carry.
                let answerSchemas = [
                    "EventDelivery", "DomainAssociationResult", "BinTableResult", "PaymentSeries", "PaymentFigures",
                    "Error",
                ]
                #expect(
                    answerSchemas.contains { place.hasPrefix("components.schemas.\($0).") },
                    "\(place) (\(text)) has no constant in FieldLimits: add one, or say here why it needs none")
            }
        }
        for place in table.keys { #expect(stated[place] != nil, "\(place) is not in openapi.yaml") }
        for place in Self.otherBounds.keys { #expect(stated[place] != nil, "\(place) is not in openapi.yaml") }
    }

    /// The text fields whose characters the domain checks, by their place in the spec, and the field name the
    /// domain knows them by (which gives their layout, ``FieldLimits/layout(of:)``).
    static let textFields: [String: String] = {
        var table = [
            "paths./v1/payments.get.parameters.order_number.pattern": "order_number",
            "paths./v1/payments.get.parameters.out_trade_no.pattern": "out_trade_no",
            "components.schemas.CreatePaymentRequest.order_number.pattern": "order_number",
            "components.schemas.CreatePaymentRequest.details.pattern": "details",
            "components.schemas.RefundRequest.reason.pattern": "reason",
            "components.schemas.CreateSessionRequest.subject.pattern": "subject",
            "components.schemas.CreateSessionRequest.user_id.pattern": "user_id",
            "components.schemas.MerchantSessionRequest.display_name.pattern": "display_name",
            "components.schemas.Metadata.propertyNames.pattern": "metadata key",
            "components.schemas.Metadata.additionalProperties.pattern": "metadata",
            "components.schemas.ProcessorSetting.pattern": "processor setting",
        ]
        for name in FieldLimits.cardholder.keys where name != "email" {
            table["components.schemas.Cardholder.\(name).pattern"] = "cardholder." + name
        }
        return table
    }()

    @Test("each text field states the domain's character rule as its pattern, and the pattern is the rule")
    func textPatterns() throws {
        let stated = Self.limits(in: try OpenAPIChecker.load().document, keywords: ["pattern"])
        for (place, field) in Self.textFields.sorted(by: { $0.key < $1.key }) {
            let expected = FieldLimits.layout(of: field) == .lines ? FieldLimits.linesPattern : FieldLimits.linePattern
            #expect(stated[place] == expected, "\(place) is \(stated[place] ?? "missing") in openapi.yaml")
        }
        // The expressions say what forbiddenCharacter(in:_:) does, scalar by scalar.
        let scalars =
            (0...0x80).map { Unicode.Scalar($0)! } + (0x2028...0x206F).compactMap(Unicode.Scalar.init)
            + ["é", "茶", "🍵", "\u{FEFF}"]
        for (layout, pattern) in [
            (FieldLimits.TextLayout.line, FieldLimits.linePattern), (.lines, FieldLimits.linesPattern),
        ] {
            let expression = try NSRegularExpression(pattern: pattern)
            for scalar in scalars {
                let text = "a" + String(Character(scalar)) + "b"
                let matches = expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
                #expect(
                    matches == FieldLimits.isPlain(text, layout),
                    "U+\(String(scalar.value, radix: 16)) in \(layout): the pattern and the rule differ")
            }
        }
    }

    @Test("delay_days' maximum is the gateway's default maximum capture delay")
    func delayDays() throws {
        let lines = try Self.schema("CaptureOptions")
        let maximum = try #require(lines.first { $0.contains("maximum: ") })
        #expect(Int(maximum.split(separator: " ").last!) == GatewayConfiguration().maxCaptureDelayDays)
    }

    @Test("Amount's integer digits are AmountRules' maximum; Currency and CountryCode list the model's codes")
    func amountsAndCodes() throws {
        let pattern = try #require(try Self.schema("Amount").first { $0.contains("pattern:") })
        #expect(pattern.contains("[1-9][0-9]{0,\(AmountRules.maximumIntegerDigits - 1)}"))
        #expect(try Self.enumValues("Currency") == Set(Currency.all.map(\.code)))
        #expect(try Self.enumValues("CountryCode") == CountryCode.assigned)
    }

    @Test(
        "request amounts: leading zeros, zero and more than 12 integer digits are refused; 12 digits parse",
        arguments: [
            ("00100.00", "invalid_amount"), ("0.00", "invalid_amount"), ("0", "invalid_amount"),
            ("1000000000000", "amount_out_of_range"), ("-1.00", "negative_amount"), ("1.001", "too_many_decimals"),
        ])
    func amountRefusals(text: String, code: String) throws {
        #expect {
            _ = try AmountRules.minorUnits(text, currency: .twd, param: "amount")
        } throws: { error in
            (error as? MoneyError)?.code.rawValue == code
        }
    }

    @Test("the largest request amount parses, and the domain accepts it")
    func largestAmount() throws {
        let minor = try AmountRules.minorUnits("999999999999.99", currency: .twd, param: "amount")
        #expect(minor == 99_999_999_999_999)
        #expect(AmountRules.contains(minor, currency: .twd))
        #expect(!AmountRules.contains(minor + 1, currency: .twd))
        #expect(!AmountRules.contains(0, currency: .twd))
    }

    @Test("over HTTP: a leading-zero amount, a malformed email and a wide BIN table are refused; 405 before 415")
    func overHTTP() throws {
        let h = try APIHarness()
        let zeros = try h.merchantServer(
            "POST", "/v1/payments", json: ["prime": try h.prime("100"), "amount": "00100.00", "currency": "TWD"])
        #expect(zeros.status == 400, "\(zeros.text)")
        #expect((zeros.json["error"] as? [String: Any])?["code"] as? String == "invalid_amount")

        let email = try h.merchantServer(
            "POST", "/v1/payments",
            json: [
                "prime": try h.prime("100"), "amount": "100", "currency": "TWD",
                "cardholder": ["email": "not-an-email"],
            ])
        #expect(email.status == 400, "\(email.text)")
        #expect((email.json["error"] as? [String: Any])?["param"] as? String == "cardholder.email")
        let fine = try h.merchantServer(
            "POST", "/v1/payments",
            json: [
                "prime": try h.prime("100"), "amount": "100", "currency": "TWD",
                "cardholder": ["email": "xiaoming@example.com"],
            ])
        #expect(fine.status == 200, "\(fine.text)")

        let header = "bin_prefix,issuer,bank_id,funding,level,country,country_code\n"
        let csv = ["Content-Type": "text/csv"]
        let wide = try h.call(
            "PUT", "/v1/bin-table", headers: h.serverHeaders.merging(csv) { $1 },
            body: Data((header + "476112" + String(repeating: ",x", count: 10_000) + "\n").utf8))
        #expect(wide.status == 422, "\(wide.text)")
        #expect((wide.json["error"] as? [String: Any])?["code"] as? String == "bin_table_invalid")
        let longIssuer = try h.call(
            "PUT", "/v1/bin-table", headers: h.serverHeaders.merging(csv) { $1 },
            body: Data((header + "476112,\(String(repeating: "B", count: 101)),,credit,,,TW\n").utf8))
        #expect(longIssuer.status == 422, "\(longIssuer.text)")

        let post = try h.call(
            "POST", "/v1/bin-table", headers: h.serverHeaders.merging(csv) { $1 }, body: Data(header.utf8))
        #expect(post.status == 405, "\(post.text)")
        #expect(post.headers["Allow"]?.contains("PUT") == true)
    }

    @Test("cursors: one text form for payments and events; anything else is invalid_cursor")
    func cursors() throws {
        let date = Date(timeIntervalSince1970: 1_796_009_005)
        let cursor = PaymentCursor(createdAt: date, id: "pay_7Hq2Lm9XwR4tK8vB3nC6dF1s")
        #expect(cursor.text == "cur_1796009005000_pay_7Hq2Lm9XwR4tK8vB3nC6dF1s")
        #expect(PaymentCursor(text: cursor.text) == cursor)
        #expect(EventCursor(text: cursor.text)?.id == cursor.id)
        for bad in ["", "cur_", "cur_12", "cur_x_pay_1", "cur_1234567890123456_pay_1", "cur_1_pay-1", "abc_1_pay_1"] {
            #expect(PaymentCursor(text: bad) == nil, "\(bad)")
        }
        let h = try APIHarness()
        let refused = try h.merchantServer("GET", "/v1/payments?cursor=cur_0_")
        #expect(refused.status == 400)
        #expect((refused.json["error"] as? [String: Any])?["code"] as? String == "invalid_cursor")
    }
}
