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

/// The commands that end console sessions, seen over HTTP.
@Suite("Console sessions ended from the command line", .serialized)
struct ConsoleSessionCommandTests {
    @Test("orchard merchant end-console-sessions and the key commands end console sessions over HTTP too")
    func commandLineEndsSessions() throws {
        let h = try APIHarness()
        let database = ["--database", "sqlite:" + h.directory.appendingPathComponent("gateway.db").path]
        let (first, _, _) = try h.signInToConsole()
        let (second, _, _) = try h.signInToConsole()
        let output = CapturedOutput()
        #expect(
            CLI.run(
                ["merchant", "end-console-sessions", "--merchant-id", h.merchant.id, "--json"] + database,
                output: output.output) == 0, "\(output.stderr)")
        let answer = try JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as? [String: Any]
        #expect(answer?["merchant_id"] as? String == h.merchant.id)
        #expect(answer?["ended_sessions"] as? Int == 2)
        for cookie in [first, second] {
            #expect(try h.call("GET", "/console/session", headers: ["Cookie": cookie]).status == 401)
        }
        // rotate-secret-key --overlap-hours 0: the old key's cookie is refused at once, CSRF token and all.
        let (third, csrf, _) = try h.signInToConsole()
        let rotate = CapturedOutput()
        #expect(
            CLI.run(
                ["merchant", "rotate-secret-key", "--merchant-id", h.merchant.id, "--overlap-hours", "0"] + database,
                output: rotate.output) == 0, "\(rotate.stderr)")
        let put = try h.call(
            "PUT", "/v1/webhook-endpoint", headers: ["Cookie": third, "X-CSRF-Token": csrf],
            json: ["url": "https://a.example/h"])
        #expect(put.status == 401 && put.errorCode == "invalid_credentials", "\(put.text)")
        let unknown = CapturedOutput()
        #expect(
            CLI.run(
                ["merchant", "end-console-sessions", "--merchant-id", "mch_nobody"] + database, output: unknown.output)
                == 1)
        #expect(CLI.run(["merchant", "end-console-sessions"] + database, output: CapturedOutput().output) == 2)
    }
}
