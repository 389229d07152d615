import Foundation
import GatewayAssembly
import Testing

@testable import OrchardCLI

@Suite("orchard demo over HTTP")
struct DemoCommandTests {
    func run(_ arguments: [String]) -> (status: Int32, stdout: String, stderr: String) {
        let captured = CapturedOutput()
        let status = CLI.run(arguments, output: captured.output)
        return (status, captured.stdout, captured.stderr)
    }

    @Test("the in-process demo walks the whole flow over real HTTP and exits 0")
    func inProcess() {
        let result = run(["demo"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        for expected in [
            "== Payment requests: money, rules and shapes ==",
            "== The gateway over HTTP",
            "started in-process, temporary database",
            "ok    GET /healthz answers 200",
            "PUT /v1/webhook-endpoint {url} -> HTTP 200",
            "A sandbox Apple Pay token for the TWD cart (Orchard Coffee, 400.50 TWD)",
            "POST /v1/tokens -> HTTP 200",
            "total_amount 400.50 TWD",
            "status captured: processing -> authorized -> captured",
            "ok    WebhookSignature.verify accepts the signature with the endpoint's secret",
            "ok    a body changed by one byte is refused (signature_mismatch)",
            "status partially_refunded, captured 400.50, refunded 100.00",
            "Idempotent-Replayed: true",
            "ok    both answers are identical",
            "ok    no second charge: one payment for the session",
            "POST /v1/payments -> HTTP 402 card_error/card_declined",
            "error.decline_code do_not_honor",
            "HTTP 409 invalid_request_error/prime_already_used",
            "HTTP 409 token_error/token_replayed",
            "session.completed x1",
            "demo: all 27 checks passed",
        ] {
            #expect(result.stdout.contains(expected), "missing: \(expected)")
        }
        #expect(!result.stdout.contains("FAIL"))
        // Secrets are masked: the full secret key and webhook secret never appear.
        #expect(result.stdout.range(of: #"sk_[A-Za-z0-9_]{12,}"#, options: .regularExpression) == nil)
        #expect(result.stdout.range(of: #"whsec_[A-Za-z0-9]{8,}"#, options: .regularExpression) == nil)
    }

    @Test(
        "bad usage exits 2",
        arguments: [["extra"], ["--database", "sqlite:/tmp/x.db"], ["--bogus"], ["--url"]])
    func usage(_ arguments: [String]) {
        let result = run(["demo"] + arguments)
        #expect(result.status == 2)
        #expect(result.stderr.contains("usage: orchard demo"))
    }

    @Test("--url without a server there: the flow stops, exit 1, with the reason")
    func noServer() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "orchard-demo-test-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = directory.appendingPathComponent("orchard.db").path
        _ = try GatewayRuntime(GatewayRuntime.Options(databasePath: database))
        // Port 1 on the loopback: nothing listens there, the connection is refused at once.
        let result = run(["demo", "--url", "http://127.0.0.1:1", "--database", "sqlite:\(database)"])
        #expect(result.status == 1)
        #expect(result.stdout.contains("stopped: GET /healthz: connect_failed"))
        #expect(result.stderr.contains("orchard demo: 1 of 1 checks failed"))
    }

    @Test("--url with a database that does not exist exits 2")
    func missingDatabase() {
        let result = run(["demo", "--url", "http://127.0.0.1:1", "--database", "sqlite:/nonexistent/orchard.db"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("no database at /nonexistent/orchard.db"))
    }
}
