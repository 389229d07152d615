import ApplePayModel
import Foundation
import Testing

@testable import OrchardCLI

@Suite("orchard request and orchard demo")
struct RequestCommandTests {
    /// A directory of request files for one test, removed at the end.
    final class Files {
        let directory: URL
        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "orchard-request-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }
        deinit { try? FileManager.default.removeItem(at: directory) }
        func write(_ name: String, _ data: Data) throws -> String {
            let url = directory.appendingPathComponent(name)
            try data.write(to: url)
            return url.path
        }
    }

    func run(_ arguments: [String]) -> (status: Int32, stdout: String, stderr: String) {
        let captured = CapturedOutput()
        let status = CLI.run(arguments, output: captured.output)
        return (status, captured.stdout, captured.stderr)
    }

    func object(_ text: String) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test("validate: a valid request prints valid, no errors, the total and the prime lifetime, and exits 0")
    func validRequest() throws {
        let files = try Files()
        let path = try files.write(
            "cart.json", PaymentRequestCoder.encode(PaymentRequestExamples.twdCartWithDebitDiscount, as: .applePayJS))
        let result = run(["request", "validate", path])
        #expect(result.status == 0)
        #expect(result.stderr == "")
        let report = try object(result.stdout)
        #expect(Set(report.keys) == ["valid", "errors", "total", "primeLifetimeSeconds"])
        #expect(report["valid"] as? Bool == true)
        #expect((report["errors"] as? [Any])?.isEmpty == true)
        let total = try #require(report["total"] as? [String: String])
        #expect(total == ["amount": "400.50", "currency": "TWD", "display": "amount"])
        #expect((report["primeLifetimeSeconds"] as? NSNumber)?.intValue == 90)
    }

    @Test("validate: the deferred taxi fare in TapPay's shape lives 30 days and shows amount pending")
    func deferredTapPay() throws {
        let files = try Files()
        let path = try files.write(
            "taxi.json", PaymentRequestCoder.encode(PaymentRequestExamples.deferredTaxiFare, as: .tapPayWeb))
        let result = run([
            "request", "validate", "--format", "tappay-web", "--merchant-identifier", "merchant.tw.orchard.taxi",
            "--country-code", "TW", path,
        ])
        #expect(result.status == 0)
        let report = try object(result.stdout)
        #expect((report["primeLifetimeSeconds"] as? NSNumber)?.intValue == 2_592_000)
        #expect((report["total"] as? [String: String])?["display"] == "pending")
        #expect((report["total"] as? [String: String])?["amount"] == "85.00")
    }

    @Test("validate: an invalid request lists every error with code, message and path, and exits 1")
    func invalidRequest() throws {
        let files = try Files()
        let json = #"""
            {"supportedNetworks": ["VISA"], "supportedMethods": ["apple_pay"],
             "displayItems": [{"label": "Ride", "amount": {"currency": "TWD", "value": "0.00"}, "isAmountPending": true}],
             "total": {"label": "Orchard Taxi", "amount": {"currency": "TWD", "value": "0.00"},
                       "isAmountPending": false, "isShowTotalAmount": true}}
            """#
        let path = try files.write("bad.json", Data(json.utf8))
        let result = run(["request", "validate", "--merchant-identifier", "merchant.tw.orchard.taxi", path])
        #expect(result.status == 1)
        let report = try object(result.stdout)
        #expect(report["valid"] as? Bool == false)
        let errors = try #require(report["errors"] as? [[String: String]])
        #expect(errors == [["code": "88015", "message": errors.first?["message"] ?? "", "path": "$.total"]])
        #expect(report["primeLifetimeSeconds"] is NSNull)
    }

    @Test(
        "validate: unreadable input and bad usage exit 2",
        arguments: [
            ["request"], ["request", "validate"], ["request", "validate", "a.json", "b.json"],
            ["request", "validate", "--format", "paypal", "x.json"], ["request", "validate", "--bogus", "x.json"],
            ["request", "convert", "x.json"], ["request", "convert", "--to", "xml", "x.json"],
            ["request", "validate", "/nonexistent/orchard/request.json"], ["request", "frobnicate"],
        ])
    func usage(_ arguments: [String]) {
        let result = run(arguments)
        #expect(result.status == 2)
        #expect(result.stdout == "")
        #expect(!result.stderr.isEmpty)
    }

    @Test(
        "validate: not JSON, or JSON of no known shape, exits 2",
        arguments: ["{not json", "[]", #"{"hello": "world"}"#])
    func notARequest(_ text: String) throws {
        let files = try Files()
        let path = try files.write("x.json", Data(text.utf8))
        let result = run(["request", "validate", path])
        #expect(result.status == 2)
        #expect(result.stderr.contains("invalid_json") || result.stderr.contains("unknown_shape"))
    }

    @Test("validate: --format overrides detection")
    func formatOverride() throws {
        let files = try Files()
        let path = try files.write(
            "cart.json", PaymentRequestCoder.encode(PaymentRequestExamples.usCartWithShipping, as: .applePayJS))
        let result = run(["request", "validate", "--format", "w3c", path])
        #expect(result.status == 1)
        #expect(result.stdout.contains("missing_field"))
    }

    @Test(
        "convert: TapPay to W3C and Apple Pay JS, read back to the same request",
        arguments: [
            PaymentRequestFormat.w3c, .applePayJS,
        ])
    func convert(_ target: PaymentRequestFormat) throws {
        let files = try Files()
        let request = PaymentRequestExamples.twdCartWithDebitDiscount
        let path = try files.write("cart.json", PaymentRequestCoder.encode(request, as: .tapPayWeb))
        let result = run([
            "request", "convert", "--to", target.rawValue, "--merchant-identifier", "merchant.tw.orchard.coffee", path,
        ])
        #expect(result.status == 0)
        let converted = try PaymentRequestCoder.decode(
            Data(result.stdout.utf8), merchantIdentifier: "merchant.tw.orchard.coffee")
        #expect(converted.format == target)
        #expect(converted.request?.lineItems == request.lineItems)
        #expect(converted.request?.total == request.total)
        #expect(converted.request?.countryCode == .tw)
        #expect(converted.request?.merchantCapabilities == [.supports3DS])
        #expect(PaymentRequestValidator.validate(converted).isValid)
        if target == .applePayJS {
            #expect(result.stderr.contains("note: applepay-js does not carry merchantIdentifier"))
        }
    }

    @Test("convert: an invalid request is not converted and exits 1")
    func convertInvalid() throws {
        let files = try Files()
        var request = PaymentRequestExamples.usCartWithShipping
        request.merchantCapabilities = []
        let path = try files.write("cart.json", PaymentRequestCoder.encode(request, as: .w3c))
        let result = run(["request", "convert", "--to", "applepay-js", path])
        #expect(result.status == 1)
        #expect(result.stdout == "")
        #expect(result.stderr.contains("missing_supports_3ds"))
    }

    @Test("demo: the three carts, an invalid request with its codes, and the shapes")
    func demo() {
        let result = run(["demo"])
        #expect(result.status == 0)
        for expected in [
            "twd-cart-debit-discount", "400.50 TWD", "us-cart-shipping", "162.49 USD", "deferred-taxi-fare",
            "amount pending", "30 days", "90 seconds", "Apple is handed 1.00 TWD", "too_many_decimals", "88013",
            "unsupported_network", "zero_amount_item", "currency_mismatch", "\"currencyCode\": \"TWD\"",
        ] {
            #expect(result.stdout.contains(expected), "\(expected)")
        }
        #expect(run(["demo", "extra"]).status == 2)
    }
}
