import Foundation
import Gateway
import OrchardCLI
import Testing

/// Which names `PUT /v1/apple-pay/domains` takes: only names a merchant can own, and how the operator settles a
/// domain another merchant holds.
@Suite("Apple Pay domains a merchant can own", .serialized)
struct ApplePayDomainTests {
    @Test("IP literals, single labels, localhost and denied names (Apple's, the gateway's own) are refused")
    func refusedNames() throws {
        let gateway = try ServedGateway(["--apple-pay-denied-domains", "pay.gateway.test,Console.Gateway.Test."])
        let refused: [(String, String)] = [
            ("127.0.0.1", "IP address"), ("10.0.0.8", "IP address"), ("1.2.3.4.", "IP address"),
            ("::1", "IP address"), ("[::1]", "IP address"), ("2001:db8::1", "IP address"),
            ("com", "single label"), ("shop", "single label"), ("localhost", "localhost"),
            ("LocalHost.", "localhost"), ("shop.localhost", "localhost"), ("apple.com", "denied"),
            ("www.apple.com", "denied"), ("APPLE.COM.", "denied"), ("icloud.com", "denied"),
            ("pay.gateway.test", "denied"), ("x.pay.gateway.test", "denied"), ("console.gateway.test", "denied"),
        ]
        for (name, reason) in refused {
            let response = try gateway.server("PUT", "/v1/apple-pay/domains", json: ["domains": ["shop.test", name]])
            #expect(response.status == 400, "\(name): \(response.text)")
            #expect(response.errorCode == "parameter_invalid", "\(name)")
            #expect(response.error["param"] as? String == "domains[1]", "\(name)")
            #expect((response.error["message"] as? String ?? "").contains(reason), "\(name): \(response.text)")
        }
        #expect(try gateway.running.runtime.gateway.merchants.merchant(id: gateway.credentials.merchantID).applePayDomains == [])
        let accepted = ["shop.test", "apple.com.shop.test", "notapple.com", "gateway.test", "pay-gateway.test"]
        let saved = try gateway.server("PUT", "/v1/apple-pay/domains", json: ["domains": accepted])
        #expect(saved.status == 200, "\(saved.text)")
        #expect(saved.json["domains"] as? [String] == accepted)
        try gateway.checkAnswersAgainstSpecification()
    }

    @Test("a domain another merchant holds: 409 naming the way out, orchard merchant release-domain frees it, audited")
    func releaseDomain() throws {
        let gateway = try ServedGateway()
        #expect(try gateway.server("PUT", "/v1/apple-pay/domains", json: ["domains": ["shop.test"]]).status == 200)
        let registry = gateway.running.runtime.gateway.merchants
        let (other, _) = try registry.create(
            MerchantSpec(name: "Rightful owner", environment: .sandbox, merchantIdentifiers: ["merchant.test.owner"]))
        do {
            try registry.setApplePayDomains(merchantID: other.id, domains: ["www.example.test", "Shop.Test"])
            Issue.record("a domain held by another merchant was registered again")
        } catch {
            #expect(error.code == .domainAlreadyRegistered)
            #expect(error.reason.contains("orchard merchant release-domain"), "\(error.reason)")
        }
        let database = "sqlite:" + gateway.databasePath
        let released = CapturedOutput()
        #expect(
            CLI.run(
                ["merchant", "release-domain", "--domain", "SHOP.test.", "--database", database, "--json"],
                output: released.output) == 0, "\(released.stderr)")
        let answer = try JSONSerialization.jsonObject(with: Data(released.stdout.utf8)) as? [String: Any]
        #expect(answer?["merchant_id"] as? String == gateway.credentials.merchantID)
        #expect(answer?["domain"] as? String == "shop.test")
        #expect(try registry.merchant(id: gateway.credentials.merchantID).applePayDomains == [])
        #expect(try registry.setApplePayDomains(merchantID: other.id, domains: ["shop.test"]) == ["shop.test"])
        // The merchant that held it sees the release in its audit log, made by the command line.
        let log = try gateway.server("GET", "/v1/audit-log?limit=100")
        let entries = log.json["data"] as? [[String: Any]] ?? []
        let release = try #require(entries.first { $0["action"] as? String == "apple_pay_domain.release" }, "\(log.text)")
        #expect((release["actor"] as? [String: Any])?["kind"] as? String == "cli")
        #expect((release["detail"] as? [String: Any])?["domain"] as? String == "shop.test")
        // A name no merchant holds: exit 1, saying so; a name that is not a host name: bad usage.
        let nobody = CapturedOutput()
        #expect(CLI.run(["merchant", "release-domain", "--domain", "nobody.test", "--database", database], output: nobody.output) == 1)
        #expect(nobody.stderr.contains("no merchant"), "\(nobody.stderr)")
        let bad = CapturedOutput()
        #expect(CLI.run(["merchant", "release-domain", "--domain", "https://x.test/", "--database", database], output: bad.output) == 2)
        let missing = CapturedOutput()
        #expect(CLI.run(["merchant", "release-domain", "--database", database], output: missing.output) == 2)
    }
}
