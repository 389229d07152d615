import Foundation
import Testing

@testable import OrchardCLI

/// The token, keys and sandbox commands, end to end in a temporary directory.
@Suite("orchard token, keys and sandbox")
struct TokenCLITests {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("orchard-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// Times inside the sandbox PKI's validity (it starts a day before the run).
    let signedAt = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 / 60).rounded(.down) * 60 + 3600)
    func at(_ offset: TimeInterval) -> String { CLIInput.iso8601(signedAt.addingTimeInterval(offset)) }

    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    @discardableResult
    func run(_ arguments: [String]) -> (status: Int32, out: String, err: String) {
        let captured = CapturedOutput()
        let status = CLI.run(arguments, output: captured.output)
        return (status, captured.stdout, captured.stderr)
    }

    func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    /// A sandbox PKI, a merchant key and CSR of `type`, and the merchant certificate issued for it.
    func setUp(type: String) throws -> (key: String, certificate: String) {
        #expect(run(["sandbox", "pki", "--out", path("pki")]).status == 0)
        let csr = run(["keys", "csr", "--type", type, "--merchant-id", "merchant.com.example", "--out", path("keys")])
        #expect(csr.status == 0, "\(csr.err)")
        let created = try json(csr.out)
        let merchant = run([
            "sandbox", "merchant", "--pki", path("pki"), "--merchant-id", "merchant.com.example", "--csr",
            created["csr"] as! String, "--out", path("merchant"),
        ])
        #expect(merchant.status == 0, "\(merchant.err)")
        let issued = try json(merchant.out)
        #expect(issued["publicKeyHash"] as? String == created["publicKeyHash"] as? String)
        #expect(issued["merchantIdentifierHash"] as? String == created["merchantIdentifierHash"] as? String)
        return (created["key"] as! String, issued["certificate"] as! String)
    }

    @Test("sandbox pki → keys csr → sandbox merchant → sandbox mint → token decrypt/verify", arguments: ["ec", "rsa"])
    func endToEnd(type: String) throws {
        let (key, certificate) = try setUp(type: type)
        var mintArguments = [
            "sandbox", "mint", "--pki", path("pki"), "--cert", certificate, "--amount", "12.34", "--currency", "TWD",
            "--pan", "4242424242424242", "--at", at(0), "--application-data", "c0ffee",
        ]
        if type == "rsa" { mintArguments.append("--rsa") }
        let minted = run(mintArguments)
        #expect(minted.status == 0, "\(minted.err)")
        try Data(minted.out.utf8).write(to: URL(fileURLWithPath: path("token.json")))

        let common = ["--token", path("token.json"), "--root", path("pki/sandbox-root-ca.pem"), "--at", at(60)]
        let decrypted = run(["token", "decrypt"] + common + ["--key", key, "--cert", certificate])
        #expect(decrypted.status == 0, "\(decrypted.out) \(decrypted.err)")
        let payment = try json(decrypted.out)
        #expect(payment["applicationPrimaryAccountNumber"] as? String == "424242******4242")
        #expect(payment["transactionAmount"] as? Int == 1234)
        #expect(payment["currencyCode"] as? String == "901")
        #expect(!decrypted.out.contains("onlinePaymentCryptogram"))

        let revealed = run(["token", "decrypt"] + common + ["--key", key, "--cert", certificate, "--reveal"])
        #expect(try json(revealed.out)["applicationPrimaryAccountNumber"] as? String == "4242424242424242")
        #expect(revealed.out.contains("onlinePaymentCryptogram"))

        let verified = run(["token", "verify"] + common)
        #expect(verified.status == 0)
        let verification = try json(verified.out)
        #expect(verification["signingTime"] as? String == at(0))
        #expect(verification["applicationData"] as? String == "c0ffee")
        #expect(verification["version"] as? String == (type == "rsa" ? "RSA_v1" : "EC_v1"))
    }

    @Test("rejections print {\"error\": {code, message}} and exit 1")
    func rejection() throws {
        let (key, certificate) = try setUp(type: "ec")
        let minted = run(["sandbox", "mint", "--pki", path("pki"), "--cert", certificate, "--at", at(0)])
        try Data(minted.out.utf8).write(to: URL(fileURLWithPath: path("token.json")))
        let late = run([
            "token", "decrypt", "--token", path("token.json"), "--root", path("pki/sandbox-root-ca.pem"), "--key", key,
            "--cert", certificate, "--at", at(3600),
        ])
        #expect(late.status == 1)
        let error = try #require(try json(late.out)["error"] as? [String: Any])
        #expect(error["code"] as? String == "signing_time_out_of_window")
        #expect((error["message"] as? String)?.isEmpty == false)

        let wide = run([
            "token", "decrypt", "--token", path("token.json"), "--root", path("pki/sandbox-root-ca.pem"), "--key", key,
            "--cert", certificate, "--at", at(3600), "--window-seconds", "7200",
        ])
        #expect(wide.status == 0)

        try Data("{\"paymentData\": {}}".utf8).write(to: URL(fileURLWithPath: path("bad.json")))
        let malformed = run(["token", "verify", "--token", path("bad.json"), "--root", path("pki/sandbox-root-ca.pem")])
        #expect(malformed.status == 1)
        #expect(malformed.out.contains("\"code\":\"malformed_token\""))
    }

    @Test(
        "bad usage exits 2",
        arguments: [
            ["token"], ["token", "decrypt"], ["token", "decrypt", "--token", "/nonexistent", "--root", "/nonexistent"],
            ["token", "verify", "--bogus"], ["keys"],
            ["keys", "csr", "--type", "dsa", "--merchant-id", "m", "--out", "/tmp/x"],
            ["sandbox"], ["sandbox", "mint"], ["bench", "nothing"], ["bench", "token", "--loop", "many"],
        ])
    func usage(_ arguments: [String]) {
        #expect(run(arguments).status == 2)
    }

    @Test("bench token --loop runs a fixed number of tokens, derivations and verifications, all accepted")
    func benchLoop() {
        let result = run(["bench", "token", "--loop", "3", "--tokens", "2"])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out.contains("loop: 3 tokens (0 failed)"))
    }

    @Test("keys import refuses a certificate of another key and exports PKCS#12 that inspect reads back")
    func keysImport() throws {
        let (key, certificate) = try setUp(type: "ec")
        let matched = run([
            "keys", "import", "--cert", certificate, "--key", key, "--export-p12", path("bundle.p12"), "--password",
            "s3cret",
            "--out", path("imported"),
        ])
        #expect(matched.status == 0, "\(matched.err)")
        #expect(try json(matched.out)["matchesKey"] as? Bool == true)
        let inspected = run(["keys", "inspect", path("bundle.p12"), "--password", "s3cret"])
        #expect(inspected.status == 0)
        #expect(try json(inspected.out)["merchantIdentifier"] as? String == "merchant.com.example")
        let fromBundle = run([
            "keys", "import", "--cert", certificate, "--p12", path("bundle.p12"), "--password", "s3cret",
        ])
        #expect(fromBundle.status == 0)

        let other = run([
            "keys", "csr", "--type", "ec", "--merchant-id", "merchant.com.example", "--out", path("other"),
        ])
        let otherKey = try json(other.out)["key"] as! String
        let mismatched = run(["keys", "import", "--cert", certificate, "--key", otherKey])
        #expect(mismatched.status == 1)
        #expect(mismatched.out.contains("invalid_merchant_key"))

        let identity = run([
            "keys", "csr", "--purpose", "identity", "--merchant-id", "merchant.com.example", "--out", path("id"),
        ])
        #expect(identity.status == 0)
        #expect(try json(identity.out)["type"] as? String == "RSA-2048")
    }
}
