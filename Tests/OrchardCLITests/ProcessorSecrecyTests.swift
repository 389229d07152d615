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

/// After payments, declines, captures, refunds and notifications through both processors, the database (with its
/// WAL and shared memory) and the logs hold no processor secret, no account number and no cryptogram.
@Suite("Processors: no secret, PAN or cryptogram at rest or in the logs", .serialized)
struct ProcessorSecrecyTests {
    @Test("orchard serve with --processor-base-url: both processors, then the files and the log scanned")
    func scan() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "orchard-psec-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("orchard.db").path
        let adyen = try ProcessorStandIn(api: .adyen)
        let checkout = try ProcessorStandIn(api: .checkoutCom)
        let log = CapturedOutput()
        let settings = try ServeCommand.registry().resolve(
            arguments: [
                "--database", "sqlite:" + path, "--port", "0", "--reconcile-interval", "0", "--processor-base-url",
                "adyen=\(adyen.baseURL),checkout_com=\(checkout.baseURL)", "--processor-timeout", "3",
            ], environment: [:])
        let running = try ServeCommand.start(settings: settings, io: log.output)
        defer { running.stop() }
        let merchant = try #require(running.runtime.sandboxMerchant)
        let credentials = try running.runtime.gateway.merchants.credentials(merchantID: merchant.id)
        let base = running.server.baseURL
        func call(_ method: String, _ route: String, _ json: Any?, app: Bool = false) throws -> ClientResponse {
            let headers =
                app
                ? ["X-Orchard-App-Id": credentials.appID, "X-Orchard-App-Key": credentials.appKey]
                : ["Authorization": "Bearer \(credentials.secretKey)"]
            return try CurlClient().call(method, base, route, headers: headers, json: json, body: nil)
        }
        let pan = SandboxTestCard.visaCredit.pan
        let cryptogram = MintRequest(merchantCertificatePEM: "", signingTime: Date()).cryptogram
        for (api, standIn) in [(ProcessorStandIn.API.adyen, adyen), (.checkoutCom, checkout)] {
            let settingsBody = ProcessorHarness.settings(api)
            let route = api == .adyen ? "adyen/notifications" : "checkout-com/webhooks"
            let url = base + "/v1/processors/\(route)/\(merchant.id)"
            var account = settingsBody
            account["type"] = nil
            if api == .adyen {
                try standIn.configure([
                    "api_key": account["api_key"]!, "merchant_account": account["merchant_account"]!,
                    "hmac_key": account["hmac_key"]!, "notification_url": url,
                    "notification_username": account["notification_username"]!,
                    "notification_password": account["notification_password"]!,
                ])
            } else {
                try standIn.configure([
                    "secret_key": account["secret_key"]!, "processing_channel_id": account["processing_channel_id"]!,
                    "webhook_secret": account["webhook_secret"]!, "webhook_url": url,
                ])
            }
            // The settings from a file, as the command line takes them.
            let file = directory.appendingPathComponent("\(api.rawValue).json")
            try JSONSerialization.data(withJSONObject: settingsBody).write(to: file)
            let captured = CapturedOutput()
            #expect(
                CLI.run(
                    [
                        "merchant", "set-processor", "--merchant-id", merchant.id, "--config", file.path, "--database",
                        "sqlite:" + path,
                    ],
                    output: captured.output) == 0, "\(captured.stderr)")
            try standIn.script(
                "authorize",
                api == .adyen
                    ? [["result": "Refused", "code": "12"]] : [["approved": false, "response_code": "20051"]])
            for amount in ["100.00", "250.00"] {
                let token = try running.runtime.mintSandboxToken(
                    amount: try Money(amount, currency: .twd).minorUnits, currency: .twd, pan: pan, at: Date())
                let prime = try call(
                    "POST", "/v1/tokens", ["token": try JSONSerialization.jsonObject(with: token)], app: true)
                let primeValue = try #require(prime.json["prime"] as? String, "\(prime.text)")
                let paid = try call("POST", "/v1/payments", ["prime": primeValue, "amount": amount, "currency": "TWD"])
                if amount == "250.00" {
                    #expect(paid.status == 200 && paid.json["status"] as? String == "capture_pending", "\(paid.text)")
                    try standIn.deliver()
                    let id = try #require(paid.json["id"] as? String)
                    #expect(try call("POST", "/v1/payments/\(id)/refunds", ["amount": "50.00"]).status == 200)
                    try standIn.deliver(["duplicate": true])
                    #expect(
                        try call("GET", "/v1/payments/\(id)", nil).json["status"] as? String == "partially_refunded")
                } else {
                    #expect(paid.status == 402, "\(paid.text)")
                }
            }
            #expect(try call("POST", "/v1/processor/test", nil).json["outcome"] as? String == "ok")
            #expect(try call("GET", "/v1/processor", nil).status == 200)
        }
        // The stand-ins saw the card data (it must reach the processor) …
        let sent = try adyen.requests(to: "/v71/payments").compactMap { $0["body"] as? [String: Any] }
        #expect(sent.contains { ($0["paymentMethod"] as? [String: Any])?["number"] as? String == pan })
        #expect(sent.contains { ($0["mpiData"] as? [String: Any])?["cavv"] as? String == cryptogram })
        // … and the gateway kept none of it, nor any processor secret.
        let needles = [pan, cryptogram] + ProcessorHarness.secrets(.adyen) + ProcessorHarness.secrets(.checkoutCom)
        var scanned = 0
        for suffix in ["", "-wal", "-shm"] {
            guard let bytes = FileManager.default.contents(atPath: path + suffix) else { continue }
            scanned += 1
            for needle in needles {
                #expect(bytes.range(of: Data(needle.utf8)) == nil, "\(needle.prefix(6))… in orchard.db\(suffix)")
            }
        }
        #expect(scanned >= 2, "the database and its WAL were scanned")
        let logText = log.stdout + log.stderr
        #expect(logText.contains("/v1/processors/"), "the notification requests are in the access log")
        for needle in needles { #expect(!logText.contains(needle), "\(needle.prefix(6))… in the log") }
    }
}
