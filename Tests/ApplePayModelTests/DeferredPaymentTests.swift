import ApplePayModel
import Foundation
import Testing

/// TapPay's deferred-payment (延後授權) tables, for the cart built in code (as iOS does) and for
/// the web `paymentRequest` read from JSON.
@Suite("Deferred payments")
struct DeferredPaymentTests {
    enum Items: String, Sendable { case allShown, allPending, mixed }

    struct Row: CustomTestStringConvertible, Sendable {
        var items: Items
        var isAmountPending: Bool
        var isShowTotalAmount: Bool
        /// nil when valid
        var code: String?
        var display: TotalDisplay
        var total: String?
        var lifetime: Int?
        var testDescription: String {
            "\(items) (\(isAmountPending), \(isShowTotalAmount)) -> \(code ?? "\(display) \(total ?? "") \(lifetime ?? 0)s")"
        }
    }

    static let thirtyDays = 2_592_000

    static let rows: [Row] = [
        // all items show amounts: 100.00 + 50.00
        Row(
            items: .allShown, isAmountPending: true, isShowTotalAmount: true, display: .amount, total: "150.00",
            lifetime: thirtyDays),
        Row(
            items: .allShown, isAmountPending: true, isShowTotalAmount: false, display: .pending, total: "150.00",
            lifetime: thirtyDays),
        Row(
            items: .allShown, isAmountPending: false, isShowTotalAmount: true, display: .amount, total: "150.00",
            lifetime: 90),
        Row(items: .allShown, isAmountPending: false, isShowTotalAmount: false, code: "88013", display: .pending),
        // all items pending
        Row(items: .allPending, isAmountPending: true, isShowTotalAmount: true, code: "88014", display: .amount),
        Row(
            items: .allPending, isAmountPending: true, isShowTotalAmount: false, display: .pending, total: "0.00",
            lifetime: thirtyDays),
        Row(items: .allPending, isAmountPending: false, isShowTotalAmount: true, code: "88015", display: .amount),
        Row(items: .allPending, isAmountPending: false, isShowTotalAmount: false, code: "88013", display: .pending),
        // a mix: 100.00 shown, one item pending
        Row(
            items: .mixed, isAmountPending: true, isShowTotalAmount: true, display: .amount, total: "100.00",
            lifetime: thirtyDays),
        Row(
            items: .mixed, isAmountPending: true, isShowTotalAmount: false, display: .pending, total: "100.00",
            lifetime: thirtyDays),
        Row(items: .mixed, isAmountPending: false, isShowTotalAmount: true, code: "88015", display: .amount),
        Row(items: .mixed, isAmountPending: false, isShowTotalAmount: false, code: "88013", display: .pending),
    ]

    static func twd(_ text: String) -> Money { try! Money(text, currency: .twd) }

    static func cart(_ row: Row) -> PaymentRequest {
        let items: [SummaryItem]
        let total: String
        switch row.items {
        case .allShown:
            items = [
                SummaryItem(label: "Room", amount: twd("100.00")),
                SummaryItem(label: "Breakfast", amount: twd("50.00")),
            ]
            total = "150.00"
        case .allPending:
            items = [
                SummaryItem(label: "Fare", amount: twd("0.00"), type: .pending),
                SummaryItem(label: "Tolls", amount: twd("0.00"), type: .pending),
            ]
            total = "0.00"
        case .mixed:
            items = [
                SummaryItem(label: "Flag fall", amount: twd("100.00")),
                SummaryItem(label: "Per-mile fare", amount: twd("0.00"), type: .pending),
            ]
            total = "100.00"
        }
        return PaymentRequest(
            merchantIdentifier: "merchant.tw.orchard.test", countryCode: .tw, currency: .twd,
            supportedNetworks: [.visa, .masterCard, .jcb], lineItems: items,
            total: SummaryItem(label: "Orchard", amount: twd(total), type: row.isShowTotalAmount ? .final : .pending),
            isAmountPending: row.isAmountPending)
    }

    static func webPaymentRequest(_ row: Row) -> Data {
        let request = cart(row)
        let items = request.lineItems.map { item in
            #"{"label": "\#(item.label)", "amount": {"currency": "TWD", "value": "\#(item.amount.decimalString)"}, "isAmountPending": \#(item.type == .pending)}"#
        }
        return Data(
            """
            {
              "supportedNetworks": ["AMEX", "JCB", "MASTERCARD", "VISA"],
              "supportedMethods": ["apple_pay"],
              "displayItems": [\(items.joined(separator: ", "))],
              "total": {"label": "Orchard", "amount": {"currency": "TWD", "value": "\(request.total.amount.decimalString)"},
                        "isAmountPending": \(row.isAmountPending), "isShowTotalAmount": \(row.isShowTotalAmount)},
              "options": {"requestPayerEmail": false, "requestPayerName": false, "requestPayerPhone": false,
                          "requestShipping": false, "shippingType": "shipping"}
            }
            """.utf8)
    }

    func expect(_ validation: PaymentRequestValidation, _ row: Row) {
        if let code = row.code {
            #expect(validation.codes == [code])
            #expect(!validation.isValid)
            #expect(validation.primeLifetimeSeconds == nil)
        } else {
            #expect(validation.issues == [])
            #expect(validation.isValid)
            #expect(validation.total?.decimalString == row.total)
            #expect(validation.primeLifetimeSeconds == row.lifetime)
            #expect(validation.isDeferred == (row.lifetime == Self.thirtyDays))
        }
        #expect(validation.totalDisplay == row.display)
    }

    @Test("the cart (iOS): every row of the tables", arguments: rows)
    func cartRows(_ row: Row) {
        expect(PaymentRequestValidator.validate(Self.cart(row), as: .tapPayWeb), row)
    }

    @Test("the web paymentRequest: every row of the tables", arguments: rows)
    func webRows(_ row: Row) throws {
        let validation = try PaymentRequestValidator.validate(
            json: Self.webPaymentRequest(row), merchantIdentifier: "merchant.tw.orchard.test")
        #expect(validation.format == .tapPayWeb)
        expect(validation, row)
        if row.code != nil { #expect(validation.issues.first?.path == "$.total") }
    }

    /// TapPay's own shape: a pending item carries `isAmountPending: true` instead of `amount.value` (its
    /// amount an object with only the currency, or no amount at all) and a hidden total has no value.
    static func tapPayShapedRequest(_ row: Row, itemsWithoutAmount: Bool) -> Data {
        let request = cart(row)
        let items = request.lineItems.map { item in
            if item.type == .pending {
                return itemsWithoutAmount
                    ? #"{"label": "\#(item.label)", "isAmountPending": true}"#
                    : #"{"label": "\#(item.label)", "amount": {"currency": "TWD"}, "isAmountPending": true}"#
            }
            return
                #"{"label": "\#(item.label)", "amount": {"currency": "TWD", "value": "\#(item.amount.decimalString)"}}"#
        }
        let totalAmount =
            row.isShowTotalAmount
            ? #""amount": {"currency": "TWD", "value": "\#(request.total.amount.decimalString)"}, "#
            // Without any amount object the currency comes from the shown items; all pending, it must be somewhere.
            : (itemsWithoutAmount && row.items != .allPending ? "" : #""amount": {"currency": "TWD"}, "#)
        return Data(
            """
            {
              "supportedNetworks": ["VISA"], "supportedMethods": ["apple_pay"],
              "displayItems": [\(items.joined(separator: ", "))],
              "total": {"label": "Orchard", \(totalAmount)"isAmountPending": \(row.isAmountPending),
                        "isShowTotalAmount": \(row.isShowTotalAmount)}
            }
            """.utf8)
    }

    @Test(
        "TapPay's shape: pending items without amount.value and a hidden total without a value follow the tables",
        arguments: rows, [false, true])
    func tapPayPendingWithoutValues(_ row: Row, itemsWithoutAmount: Bool) throws {
        let validation = try PaymentRequestValidator.validate(
            json: Self.tapPayShapedRequest(row, itemsWithoutAmount: itemsWithoutAmount), format: .tapPayWeb,
            merchantIdentifier: "merchant.tw.orchard.test")
        #expect(!validation.codes.contains("missing_field"), "\(validation.issues)")
        expect(validation, row)
        if row.code == nil, !row.isShowTotalAmount, row.items == .allPending {
            #expect(validation.amountForApple?.decimalString == "1.00")
        }
    }

    @Test("a shown item or total without amount.value is still missing_field; a currency must be somewhere")
    func shownAmountsStillNeedValues() throws {
        let item = Data(
            #"""
            {"supportedNetworks": ["VISA"], "supportedMethods": ["apple_pay"],
             "displayItems": [{"label": "Tea", "amount": {"currency": "TWD"}}],
             "total": {"label": "Orchard", "amount": {"currency": "TWD", "value": "10.00"}}}
            """#.utf8)
        let itemCheck = try PaymentRequestValidator.validate(
            json: item, format: .tapPayWeb, merchantIdentifier: "merchant.tw.orchard.test")
        #expect(itemCheck.issues.map(\.path) == ["$.displayItems[0].amount.value"])
        #expect(itemCheck.codes == ["missing_field"])
        let total = Data(
            #"""
            {"supportedNetworks": ["VISA"], "supportedMethods": ["apple_pay"],
             "total": {"label": "Orchard", "amount": {"currency": "TWD"}, "isShowTotalAmount": true}}
            """#.utf8)
        let totalCheck = try PaymentRequestValidator.validate(
            json: total, format: .tapPayWeb, merchantIdentifier: "merchant.tw.orchard.test")
        #expect(totalCheck.codes == ["missing_field"])
        let nowhere = Data(
            #"""
            {"supportedNetworks": ["VISA"], "supportedMethods": ["apple_pay"],
             "displayItems": [{"label": "Fare", "isAmountPending": true}],
             "total": {"label": "Orchard", "isAmountPending": true, "isShowTotalAmount": false}}
            """#.utf8)
        let nowhereCheck = try PaymentRequestValidator.validate(
            json: nowhere, format: .tapPayWeb, merchantIdentifier: "merchant.tw.orchard.test")
        #expect(nowhereCheck.codes == ["missing_currency", "missing_currency"])
        #expect(
            nowhereCheck.issues.map(\.path) == ["$.total.amount.currency", "$.displayItems[0].amount.currency"])
    }

    /// TapPay's request with a total that carries no `amount.value` (only its currency, or no amount at all).
    static func totalWithoutValue(items: Items, isAmountPending: Bool?, isShowTotalAmount: Bool?, amountObject: Bool)
        -> Data
    {
        let entries: [String]
        switch items {
        case .allShown: entries = [#"{"label": "Room", "amount": {"currency": "TWD", "value": "100.00"}}"#]
        case .allPending:
            // Every item pending: the currency must be named somewhere, here on the items.
            entries = [
                #"{"label": "Fare", "amount": {"currency": "TWD"}, "isAmountPending": true}"#,
                #"{"label": "Tolls", "isAmountPending": true}"#,
            ]
        case .mixed:
            entries = [
                #"{"label": "Flag fall", "amount": {"currency": "TWD", "value": "100.00"}}"#,
                #"{"label": "Per-mile fare", "isAmountPending": true}"#,
            ]
        }
        var total = [#""label": "Orchard""#]
        if amountObject { total.append(#""amount": {"currency": "TWD"}"#) }
        if let isAmountPending { total.append(#""isAmountPending": \#(isAmountPending)"#) }
        if let isShowTotalAmount { total.append(#""isShowTotalAmount": \#(isShowTotalAmount)"#) }
        return Data(
            """
            {"supportedNetworks": ["VISA"], "supportedMethods": ["apple_pay"],
             "displayItems": [\(entries.joined(separator: ", "))],
             "total": {\(total.joined(separator: ", "))}}
            """.utf8)
    }

    @Test(
        "a shown total without amount.value: the deferred table answers first (88014, 88015, 88013), missing_field only when it accepts",
        arguments: [true, false])
    func shownTotalWithoutValueConsultsTheTableFirst(amountObject: Bool) throws {
        let missingPath = amountObject ? "$.total.amount.value" : "$.total.amount"
        let cases: [(Items, Bool?, Bool?, [String], String)] = [
            // A pending total shown, every item pending: 88014 (today's missing_field explained by the table).
            (.allPending, true, true, ["88014"], "$.total"),
            // A total that is not pending, shown by default, beside pending and shown items: 88015.
            (.mixed, false, true, ["88015"], "$.total"),
            (.mixed, nil, nil, ["88015"], "$.total"),
            (.allPending, false, true, ["88015"], "$.total"),
            // The table accepts these rows, so the missing value is the problem.
            (.mixed, true, true, ["missing_field"], missingPath),
            (.allShown, false, true, ["missing_field"], missingPath),
            (.allShown, true, true, ["missing_field"], missingPath),
        ]
        for (items, isAmountPending, isShowTotalAmount, codes, path) in cases {
            let json = Self.totalWithoutValue(
                items: items, isAmountPending: isAmountPending, isShowTotalAmount: isShowTotalAmount,
                amountObject: amountObject)
            let validation = try PaymentRequestValidator.validate(
                json: json, format: .tapPayWeb, merchantIdentifier: "merchant.tw.orchard.test")
            let label = "\(items) \(String(describing: isAmountPending)) \(String(describing: isShowTotalAmount))"
            #expect(validation.codes == codes, "\(label): \(validation.issues)")
            #expect(validation.issues.map(\.path) == [path], "\(label)")
            #expect(!validation.isValid)
            #expect(validation.primeLifetimeSeconds == nil)
            #expect(validation.amountForApple == nil, "\(label)")
        }
        // A hidden pending total without a value stays valid, as before.
        let hidden = try PaymentRequestValidator.validate(
            json: Self.totalWithoutValue(
                items: .mixed, isAmountPending: true, isShowTotalAmount: false, amountObject: amountObject),
            format: .tapPayWeb, merchantIdentifier: "merchant.tw.orchard.test")
        #expect(hidden.issues == [])
        #expect(hidden.primeLifetimeSeconds == Self.thirtyDays)
    }

    @Test("Apple's shapes derive the flags: pending items or a pending total make the payment deferred")
    func appleShapesDerive() throws {
        for row in Self.rows where row.isAmountPending && row.items != .allShown {
            var request = Self.cart(row)
            request.isAmountPending = nil
            #expect(request.isDeferred)
            let json = PaymentRequestCoder.encode(request, as: .applePayJS)
            let validation = try PaymentRequestValidator.validate(json: json)
            expect(validation, row)
        }
    }

    struct Case16: CustomTestStringConvertible, Sendable {
        var name: String
        var items: [String]
        var pending: Int
        var total: String
        var isAmountPending: Bool
        var testDescription: String { name }
    }

    @Test(
        "88016: a total that must be shown and is not greater than 0",
        arguments: [
            Case16(
                name: "items cancel out", items: ["50.00", "-50.00"], pending: 0, total: "0.00", isAmountPending: false),
            Case16(name: "no items, zero total", items: [], pending: 0, total: "0.00", isAmountPending: false),
            Case16(name: "no items, negative total", items: [], pending: 0, total: "-1.00", isAmountPending: true),
            Case16(
                name: "deferred, shown items sum to 0", items: ["20.00", "-20.00"], pending: 1, total: "0.00",
                isAmountPending: true),
            Case16(
                name: "discount larger than the goods", items: ["20.00", "-30.00"], pending: 0, total: "-10.00",
                isAmountPending: false),
        ])
    func code88016(_ example: Case16) {
        var items = example.items.map { SummaryItem(label: "item", amount: Self.twd($0)) }
        for _ in 0..<example.pending {
            items.append(SummaryItem(label: "later", amount: Self.twd("0.00"), type: .pending))
        }
        let request = PaymentRequest(
            merchantIdentifier: "merchant.tw.orchard.test", countryCode: .tw, supportedNetworks: [.visa],
            lineItems: items, total: SummaryItem(label: "Orchard", amount: Self.twd(example.total)),
            isAmountPending: example.isAmountPending)
        let validation = PaymentRequestValidator.validate(request)
        #expect(validation.codes == ["88016"])
        #expect(validation.issues.first?.path == "$.total.amount")
    }

    @Test("compatibility: a pending total of pending items is handed to Apple as 1; the request keeps 0")
    func compatibilityAmount() throws {
        let allPending = Self.cart(Self.rows[5])
        #expect(allPending.total.amount == Self.twd("0.00"))
        #expect(allPending.amountForApple == Self.twd("1.00"))
        let validation = PaymentRequestValidator.validate(allPending, as: .tapPayWeb)
        #expect(validation.amountForApple == Self.twd("1.00"))
        #expect(validation.total == Self.twd("0.00"))

        for format in [PaymentRequestFormat.applePayJS, .w3c] {
            let json = try JSONSerialization.jsonObject(with: PaymentRequestCoder.encode(allPending, as: format))
            let text = String(describing: json)
            #expect(text.contains("1.00"), "\(format) hands Apple 1.00")
        }
        // TapPay's shape is the merchant's: it keeps 0.
        let tapPay = String(decoding: PaymentRequestCoder.encode(allPending, as: .tapPayWeb), as: UTF8.self)
        #expect(tapPay.contains("\"0.00\""))
        #expect(!tapPay.contains("\"1.00\""))

        // shown items summing to 0, with a pending item: also 1; JPY's 1 has no decimals.
        var zeroSum = PaymentRequest(
            currency: .jpy, supportedNetworks: [.jcb],
            lineItems: [
                SummaryItem(label: "Ride", amount: Money(minorUnits: 500, currency: .jpy)),
                SummaryItem(label: "Coupon", amount: Money(minorUnits: -500, currency: .jpy)),
                SummaryItem(label: "Distance", amount: Money(minorUnits: 0, currency: .jpy), type: .pending),
            ],
            total: SummaryItem(label: "Orchard", amount: Money(minorUnits: 0, currency: .jpy), type: .pending))
        #expect(zeroSum.amountForApple.decimalString == "1")
        // a pending total with shown items that sum above 0 keeps the merchant's amount.
        zeroSum.lineItems[1].amount = Money(minorUnits: -100, currency: .jpy)
        zeroSum.total.amount = Money(minorUnits: 400, currency: .jpy)
        #expect(zeroSum.amountForApple.decimalString == "400")
        // a shown total is never changed.
        let shown = PaymentRequestExamples.twdCartWithDebitDiscount
        #expect(shown.amountForApple == shown.total.amount)
    }

    @Test("the seed taxi fare is deferred: amount pending, 30 days, the merchant's 85.00 kept")
    func taxiFare() {
        let validation = PaymentRequestValidator.validate(PaymentRequestExamples.deferredTaxiFare)
        #expect(validation.isValid)
        #expect(validation.totalDisplay == .pending)
        #expect(validation.primeLifetimeSeconds == 2_592_000)
        #expect(validation.total == Self.twd("85.00"))
        #expect(validation.amountForApple == Self.twd("85.00"))
    }
}
