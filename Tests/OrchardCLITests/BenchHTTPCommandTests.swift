import Foundation
import Testing

@testable import OrchardCLI

@Suite("orchard bench http")
struct BenchHTTPCommandTests {
    func run(_ arguments: [String]) -> (status: Int32, stdout: String, stderr: String) {
        let captured = CapturedOutput()
        let status = BenchHTTPCommand.run(arguments, captured.output)
        return (status, captured.stdout, captured.stderr)
    }

    /// A temporary directory, removed at the end.
    final class Directory {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("orchard-bench-\(UUID().uuidString)")
        init() throws { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
        deinit { try? FileManager.default.removeItem(at: url) }
        func path(_ name: String) -> String { url.appendingPathComponent(name).path }
    }

    @Test("in-process: a few payments, every one captured, the last six lines machine-readable")
    func inProcess() throws {
        let result = run(["--clients", "2", "--payments", "6", "--warmup", "0", "--no-bound"])
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        #expect(result.stdout.contains("6 payments captured, 0 errors"))
        #expect(result.stdout.contains("per-IP connection limit (none"))
        #expect(result.stdout.contains("  cpu          load generator "))
        #expect(result.stdout.contains("  memory       peak RSS "))
        let lines = result.stdout.split(separator: "\n").suffix(6).map(String.init)
        try #require(lines.count == 6)
        let patterns = [
            #"^payments_per_second=[0-9]+\.[0-9]$"#, #"^p50_ms=[0-9]+\.[0-9]{2}$"#, #"^p99_ms=[0-9]+\.[0-9]{2}$"#,
            #"^durable_commits_per_pair=[0-9]+\.[0-9]{2}$"#, #"^payments_per_fsync=[0-9]+\.[0-9]{2}$"#,
            #"^server_cpu_ms_per_pair=[0-9]+\.[0-9]{3}$"#,
        ]
        for (line, pattern) in zip(lines, patterns) {
            #expect(line.range(of: pattern, options: .regularExpression) != nil, "\(line)")
        }
        // The gateway's own durable commits of a pair: tokenize 1, pay 2, the transport's stored answer 1.
        let commits = Double(lines[3].dropFirst("durable_commits_per_pair=".count)) ?? 0
        #expect(commits > 0 && commits <= 4)
        // The server's CPU per pair is measured: more than nothing, far less than the time the run took.
        let cpu = Double(lines[5].dropFirst("server_cpu_ms_per_pair=".count)) ?? 0
        #expect(cpu > 0 && cpu < 10_000)
        #expect(result.stdout.contains("  server cpu   ") && result.stdout.contains("ms per pair"))
    }

    @Test(
        "bad usage exits 2",
        arguments: [
            ["--duration", "5", "--payments", "3"], ["--clients", "0"], ["--duration", "500"], ["--payments", "x"],
            ["--url", "http://127.0.0.1:1"], ["--check", "acknowledged.txt"], ["extra"], ["--sweep", "--clients", "3"],
            ["--server-pid", "1"], ["--url", "http://127.0.0.1:1", "--database", "x.db", "--server-pid", "0"],
        ])
    func usage(_ arguments: [String]) {
        let result = run(arguments)
        #expect(result.status == 2)
        #expect(result.stderr.contains("usage: orchard bench http"))
    }

    @Test("a server process's CPU time is read from /proc: this process's agrees with getrusage; a gone one is nil")
    func processCPU() {
        // Spend a little CPU first, so both readings are well above the clock tick.
        var x = 0.0
        for i in 0..<3_000_000 { x += Double(i).squareRoot() }
        #expect(x > 0)
        let own = ProcessUsage.cpuSeconds()
        let read = ProcessUsage.cpuSeconds(processes: [getpid()])
        #expect(read != nil && abs((read ?? 0) - own) < 0.1, "\(String(describing: read)) vs \(own)")
        #expect(ProcessUsage.cpuSeconds(processes: [getpid(), getpid()]).map { $0 >= 2 * (read ?? 0) - 0.1 } == true)
        #expect(ProcessUsage.cpuSeconds(processes: [Int32.max]) == nil)
        #expect(ProcessUsage.cpuSeconds(processes: []) == nil)
    }

    @Test(
        "percentiles are nearest-rank",
        arguments: [
            (Array(1...100).map(Double.init), 0.5, 50.0), (Array(1...100).map(Double.init), 0.99, 99.0),
            (Array(1...100).map(Double.init), 1.0, 100.0), ([7.0], 0.99, 7.0), ([], 0.5, 0.0),
            ([1.0, 2.0, 3.0], 0.5, 2.0),
        ])
    func percentile(_ sorted: [Double], _ p: Double, _ expected: Double) {
        #expect(BenchHTTPCommand.percentile(sorted, p) == expected)
    }

    @Test("--record writes the acknowledged payments; --check finds them all, and reports one that is missing")
    func recordAndCheck() throws {
        let directory = try Directory()
        let database = "sqlite:" + directory.path("orchard.db")
        let settings = try ServeCommand.registry().resolve(
            arguments: ["--database", database, "--port", "0", "--log-level", "off"], environment: [:])
        let running = try ServeCommand.start(settings: settings, io: CapturedOutput().output)
        defer { running.stop() }
        let url = running.server.baseURL
        let record = directory.path("acknowledged.txt")
        let loaded = run([
            "--url", url, "--database", database, "--clients", "2", "--payments", "4", "--warmup", "0", "--no-bound",
            "--record", record,
        ])
        #expect(loaded.status == 0, "\(loaded.stdout)\n\(loaded.stderr)")
        let lines = try String(contentsOfFile: record, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 4)
        #expect(lines.allSatisfy { $0.hasPrefix("pay_") && $0.hasSuffix(" captured") })

        let checked = run(["--url", url, "--database", database, "--check", record])
        #expect(checked.status == 0, "\(checked.stdout)\n\(checked.stderr)")
        #expect(
            checked.stdout.contains("acknowledged payments checked: 4\nmissing after restart: 0\nstatus changed: 0"))

        try Data((lines.joined(separator: "\n") + "\npay_doesnotexist000000000 captured\n").utf8).write(
            to: URL(fileURLWithPath: record))
        let missing = run(["--url", url, "--database", database, "--check", record])
        #expect(missing.status == 1)
        #expect(missing.stdout.contains("missing after restart: 1"))
        #expect(missing.stdout.contains("missing: pay_doesnotexist000000000"))
    }
}
