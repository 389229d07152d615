import ApplePayModel
import ApplePaySandbox
import Foundation
import Gateway
import GatewayAssembly
import GatewayHTTP
import GatewayProcessors
import GatewayTestSupport
import OrchardCLI
import OrchardHTTP
import OrchardTestSupport
import Testing

/// `POST /v1/payment-requests/validate` and `orchard request validate` share one validator: the route's answer and
/// the command's output agree on every deferred-payment rule.
@Suite("The validate route and orchard request validate agree", .serialized)
struct ValidateRouteTests {
    /// TapPay's deferred-payment rows that refuse, with their codes.
    static let refusedRows: [(String, String)] = [
        (
            #"{"label":"T","amount":{"currency":"TWD","value":"10.00"},"isAmountPending":false,"isShowTotalAmount":false}"#,
            "88013"
        ),
        (
            #"{"label":"T","amount":{"currency":"TWD","value":"0.00"},"isAmountPending":true,"isShowTotalAmount":true}"#,
            "88014"
        ),
        (
            #"{"label":"T","amount":{"currency":"TWD","value":"0.00"},"isAmountPending":false,"isShowTotalAmount":true}"#,
            "88015"
        ),
    ]

    @Test("the validate route reports exactly what `orchard request validate --format tappay-web` prints")
    func validateMatchesCLI() throws {
        let h = try APIHarness()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("orchard-validate-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let requests = [
            // All pending items, each refusing row.
            (#"[{"label":"Fare","isAmountPending":true}]"#, Self.refusedRows[0].0),
            (#"[{"label":"Fare","amount":{"currency":"TWD"},"isAmountPending":true}]"#, Self.refusedRows[1].0),
            (#"[{"label":"Fare","isAmountPending":true}]"#, Self.refusedRows[2].0),
            // A valid deferred cart: a shown flag fall, a pending fare, a hidden total without a value.
            (
                #"[{"label":"Flag","amount":{"currency":"TWD","value":"85.00"}},{"label":"Fare","isAmountPending":true}]"#,
                #"{"label":"T","isAmountPending":true,"isShowTotalAmount":false}"#
            ),
            // A shown total of 0.
            (
                #"[{"label":"Flag","amount":{"currency":"TWD","value":"85.00"}}]"#,
                #"{"label":"T","amount":{"currency":"TWD","value":"0.00"}}"#
            ),
        ]
        var codes: [[String]] = []
        for (index, (items, total)) in requests.enumerated() {
            let json =
                #"{"supportedNetworks":["VISA"],"supportedMethods":["apple_pay"],"displayItems":\#(items),"total":\#(total)}"#
            let file = directory.appendingPathComponent("\(index).json")
            try Data(json.utf8).write(to: file)
            let captured = CapturedOutput()
            _ = CLI.run(
                [
                    "request", "validate", "--format", "tappay-web", "--merchant-identifier",
                    "merchant.invalid.orchard.sandbox", "--country-code", "TW", file.path,
                ], output: captured.output)
            let printed = try #require(
                try JSONSerialization.jsonObject(with: Data(captured.stdout.utf8)) as? [String: Any])
            let answer = try h.client(
                "POST", "/v1/payment-requests/validate",
                json: [
                    "payment_request": try JSONSerialization.jsonObject(with: Data(json.utf8)), "format": "tappay-web",
                ])
            #expect(answer.status == 200, "\(answer.text)")
            for key in ["valid", "errors", "total", "primeLifetimeSeconds"] {
                #expect(
                    try WireFormat.json(answer.json[key] ?? NSNull()) == WireFormat.json(printed[key] ?? NSNull()),
                    "\(index) \(key): \(answer.json[key] ?? "nil") vs \(printed[key] ?? "nil")")
            }
            codes.append(((answer.json["errors"] as? [[String: Any]]) ?? []).compactMap { $0["code"] as? String })
            if answer.json["valid"] as? Bool == true {
                #expect(answer.json["primeLifetimeSeconds"] as? Int == 2_592_000)
                let apple = try #require(answer.json["apple_pay_request"] as? [String: Any])
                #expect(apple["merchantCapabilities"] as? [String] == ["supports3DS"])
                #expect((apple["total"] as? [String: Any])?["type"] as? String == "pending")
                #expect(answer.json["w3c_request"] is [String: Any])
                #expect(answer.json["currency_exponent"] as? Int == 2)
                #expect(answer.json["client_ip"] as? String == "127.0.0.1")
            }
        }
        #expect(codes == [["88013"], ["88014"], ["88015"], [], ["88016"]])

        let badFormat = try h.client(
            "POST", "/v1/payment-requests/validate", json: ["payment_request": [:] as [String: Any], "format": "x"])
        #expect(badFormat.status == 400)
        let notRequest = try h.client(
            "POST", "/v1/payment-requests/validate", json: ["payment_request": ["hello": 1]])
        #expect(notRequest.status == 422)
        #expect(notRequest.error["code"] as? String == "payment_request_invalid")
        let missing = try h.client("POST", "/v1/payment-requests/validate", json: ["format": "tappay-web"])
        #expect(missing.status == 400)
        try h.expectDocumented(paths: ["/v1/payment-requests/validate"])
    }
}
