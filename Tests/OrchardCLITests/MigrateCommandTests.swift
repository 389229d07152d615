import Foundation
import GatewayPostgres
import OrchardTestSupport
import Testing

@testable import OrchardCLI

/// `orchard migrate`: its usage errors, and (with `ORCHARD_TEST_POSTGRES_URL`) a copy whose sealed credentials
/// `orchard merchant show` opens on PostgreSQL, then the refused second run, without the password shown.
@Suite("orchard migrate")
struct MigrateCommandTests {
    @Test("bad usage exits 2: a missing source, a target that is not PostgreSQL")
    func usage() {
        let missing = CapturedOutput()
        #expect(
            CLI.run(
                ["migrate", "--from", "sqlite:/nonexistent/orchard.db", "--to", "postgres://u@127.0.0.1/db"],
                output: missing.output) == 2)
        #expect(missing.stderr.contains("no database at /nonexistent/orchard.db"))
        let notPostgres = CapturedOutput()
        #expect(CLI.run(["migrate", "--from", "sqlite:a.db", "--to", "sqlite:b.db"], output: notPostgres.output) == 2)
        #expect(notPostgres.stderr.contains("--to must be a postgres:// URL"))
    }

    @Test("copies a database the sandbox merchant's keys open from, then refuses the non-empty target")
    func copyThenRefuse() throws {
        guard let admin = TestPostgres.serverURL else {
            try Test.cancel("ORCHARD_TEST_POSTGRES_URL is not set: the PostgreSQL cases are skipped")
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("orchard-mig-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("gateway.db").path
        let shown = CapturedOutput()
        #expect(CLI.run(["merchant", "show", "--database", "sqlite:" + path], output: shown.output) == 0)
        let secretKey = try #require(shown.stdout.split(separator: "\n").first { $0.hasPrefix("secret_key: ") })

        let name = "orchard_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try PostgresAdmin.createDatabase(name, url: admin)
        defer { try? PostgresAdmin.dropDatabase(name, url: admin) }
        var components = try #require(URLComponents(string: admin))
        components.password = "pw-never-shown"
        components.path = "/" + name
        let url = try #require(components.string)

        let copied = CapturedOutput()
        #expect(
            CLI.run(["migrate", "--from", "sqlite:" + path, "--to", url], output: copied.output) == 0,
            "\(copied.stderr)")
        #expect(copied.stdout.contains("merchants: 1 rows"))
        #expect(copied.stdout.contains("row counts match"))
        #expect(copied.stdout.contains("postgres://orchard:***@"))

        let key = try String(contentsOfFile: path + ".master-key", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let onPostgres = CapturedOutput()
        #expect(
            CLI.run(["merchant", "show", "--database", url, "--master-key", key], output: onPostgres.output) == 0,
            "\(onPostgres.stderr)")
        #expect(onPostgres.stdout.contains(String(secretKey)))

        let again = CapturedOutput()
        #expect(CLI.run(["migrate", "--from", "sqlite:" + path, "--to", url], output: again.output) == 1)
        #expect(again.stderr.contains("target_not_empty"))
        for text in [copied.stdout, copied.stderr, again.stdout, again.stderr] {
            #expect(!text.contains("pw-never-shown"))
        }
    }
}
