import ApplePayModel
import Foundation
import Gateway
import GatewayHTTP
import GatewayPostgres
import GatewayTestSupport
import OrchardCLI
import OrchardHTTP
import OrchardTestSupport
import Testing

/// `--database` across instances: a SQLite file has one `orchard serve`; several share a PostgreSQL database.
@Suite("orchard serve instances on one database", .serialized)
struct DatabaseInstancesTests {
    static let masterKey = String(repeating: "5a", count: 32)

    @Test("a second orchard serve on the same SQLite file refuses to start, with a clear message")
    func secondSQLiteInstanceRefused() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "orchard-lock-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = "sqlite:" + directory.appendingPathComponent("orchard.db").path
        let settings = try ServeCommand.registry().resolve(
            arguments: ["--database", database, "--port", "0", "--reconcile-interval", "0", "--log-level", "off"],
            environment: [:])
        let first = try ServeCommand.start(settings: settings, io: CapturedOutput().output)
        let refused = CapturedOutput()
        #expect(CLI.run(["serve", "--database", database, "--port", "0"], output: refused.output) == 2)
        #expect(refused.stderr.contains("another orchard serve is running on"), "\(refused.stderr)")
        first.stop()
        let again = try ServeCommand.start(settings: settings, io: CapturedOutput().output)
        again.stop()
    }

    /// How a second `orchard serve` names the database file the first one runs on.
    enum Alias: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case hardLink = "a hard link"
        case symlink = "a symlink to the file"
        case dotDot = "a .. spelling"
        case symlinkedDirectory = "a symlinked directory"
        case bindMount = "a bind mount"

        var testDescription: String { rawValue }

        /// Makes the alias inside `root` (the file is `root/data/orchard.db`) and returns its path; nil when a bind
        /// mount is not permitted here (the second instance then runs in its own mount namespace, see
        /// ``DatabaseInstancesTests/bindMountCommand(root:)``).
        func make(root: URL) throws -> String {
            let file = root.appendingPathComponent("data/orchard.db").path
            switch self {
            case .hardLink:
                let link = root.appendingPathComponent("linked.db").path
                try FileManager.default.linkItem(atPath: file, toPath: link)
                return link
            case .symlink:
                let link = root.appendingPathComponent("symlink.db").path
                try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: file)
                return link
            case .dotDot: return root.appendingPathComponent("data").path + "/../data/./orchard.db"
            case .symlinkedDirectory:
                let link = root.appendingPathComponent("elsewhere").path
                try FileManager.default.createSymbolicLink(
                    atPath: link, withDestinationPath: root.appendingPathComponent("data").path)
                return link + "/orchard.db"
            case .bindMount:
                // The file itself mounted over another file, in another directory.
                try FileManager.default.createDirectory(
                    at: root.appendingPathComponent("mounted"), withIntermediateDirectories: true)
                let target = root.appendingPathComponent("mounted/orchard.db").path
                #expect(FileManager.default.createFile(atPath: target, contents: nil))
                return target
            }
        }
    }

    /// The `orchard` executable of this build (`.build/debug/orchard`).
    static let binary = TestPaths.packageRoot.appendingPathComponent(".build/debug/orchard")

    /// Runs `arguments` (an executable and its arguments) and waits at most `seconds`: its exit status and
    /// standard error, or nil for the status when it was still running (then it is killed).
    static func runProcess(_ arguments: [String], seconds: TimeInterval = 30) throws -> (status: Int32?, stderr: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        let errors = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        try process.run()
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        var status: Int32?
        if process.isRunning {
            process.terminate()
        } else {
            status = process.terminationStatus
        }
        process.waitUntilExit()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return (status, text)
    }

    /// `serve` (on `root/mounted/orchard.db`) run where `root/data/orchard.db` is bind-mounted over that file, in a
    /// mount namespace of its own (so nothing is left mounted), or nil when this machine does not permit it.
    static func bindMountCommand(root: URL, serve: [String]) throws -> [String]? {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare"),
            try runProcess(["/usr/bin/unshare", "-m", "/bin/true"]).status == 0
        else { return nil }
        let data = root.appendingPathComponent("data/orchard.db").path
        let mounted = root.appendingPathComponent("mounted/orchard.db").path
        return [
            "/usr/bin/unshare", "-m", "/bin/sh", "-c", "mount --bind \"$1\" \"$2\" && shift 2 && exec \"$@\"", "sh", data,
            mounted,
        ] + serve
    }

    @Test(
        "a second orchard serve on the same SQLite file is refused whatever path names it",
        arguments: Alias.allCases)
    func secondInstanceRefusedByAnyName(_ alias: Alias) throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("orchard-alias-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let database = "sqlite:" + root.appendingPathComponent("data/orchard.db").path
        // The master key is given, as an operator would: no key file stops a second instance by its other name.
        let key = ["--master-key", Self.masterKey]
        let settings = try ServeCommand.registry().resolve(
            arguments: ["--database", database, "--port", "0", "--reconcile-interval", "0", "--log-level", "off"] + key,
            environment: [:])
        let first = try ServeCommand.start(settings: settings, io: CapturedOutput().output)
        defer { first.stop() }
        let path = try alias.make(root: root)
        let serve = [Self.binary.path, "serve", "--database", "sqlite:" + path, "--port", "0", "--log-level", "off"] + key
        if alias == .bindMount {
            guard let command = try Self.bindMountCommand(root: root, serve: serve) else {
                FileHandle.standardError.write(Data("note: a bind mount is not permitted here: that case is skipped\n".utf8))
                try Test.cancel("mount --bind is not permitted on this machine")
            }
            try #require(FileManager.default.isExecutableFile(atPath: Self.binary.path), "swift build first")
            let refused = try Self.runProcess(command)
            #expect(refused.status == 2, "\(refused.stderr)")
            #expect(refused.stderr.contains("another orchard serve is running on"), "\(refused.stderr)")
            return
        }
        // In this process, and from another process (the built executable), the same refusal.
        Self.expectRefused(path, key)
        try #require(FileManager.default.isExecutableFile(atPath: Self.binary.path), "swift build first")
        let otherProcess = try Self.runProcess(serve, seconds: 20)
        #expect(otherProcess.status == 2, "\(otherProcess.stderr)")
        #expect(otherProcess.stderr.contains("another orchard serve is running on"), "\(otherProcess.stderr)")
        // Without the key, the refusal is the same: the lock is taken before a key file is looked for (or made,
        // next to another name of the file).
        let keyless = try Self.runProcess(Array(serve.dropLast(2)), seconds: 20)
        #expect(keyless.status == 2 && keyless.stderr.contains("another orchard serve is running on"), "\(keyless.stderr)")
        #expect(!FileManager.default.fileExists(atPath: path + ".master-key") || [.dotDot, .symlinkedDirectory].contains(alias))
    }

    /// Expects `orchard serve` on `path` in this process to be refused as a second instance (and stops one that
    /// started, so a failing case does not hang).
    static func expectRefused(_ path: String, _ extra: [String] = [], sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            let settings = try ServeCommand.registry().resolve(
                arguments: ["--database", "sqlite:" + path, "--port", "0", "--reconcile-interval", "0", "--log-level", "off"]
                    + extra,
                environment: [:])
            let second = try ServeCommand.start(settings: settings, io: CapturedOutput().output)
            second.stop()
            Issue.record("a second orchard serve started on \(path)", sourceLocation: sourceLocation)
        } catch {
            #expect(error is UsageError, "\(error)", sourceLocation: sourceLocation)
            #expect("\(error)".contains("another orchard serve is running on"), "\(error)", sourceLocation: sourceLocation)
        }
    }

    @Test("on a first run, the file the first instance creates is locked under every name of it")
    func firstRunThroughADanglingSymlink() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("orchard-first-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createDirectory(at: root.appendingPathComponent("data"), withIntermediateDirectories: true)
        let file = root.appendingPathComponent("data/orchard.db").path
        let link = root.appendingPathComponent("orchard.db").path
        // The first instance names the file through a symlink to a file that does not exist yet.
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: file)
        #expect(!FileManager.default.fileExists(atPath: file))
        let settings = try ServeCommand.registry().resolve(
            arguments: [
                "--database", "sqlite:" + link, "--port", "0", "--reconcile-interval", "0", "--log-level", "off",
                "--master-key", Self.masterKey,
            ], environment: [:])
        let first = try ServeCommand.start(settings: settings, io: CapturedOutput().output)
        defer { first.stop() }
        #expect(FileManager.default.fileExists(atPath: file))
        for name in [file, root.appendingPathComponent("data").path + "/../data/orchard.db"] {
            Self.expectRefused(name, ["--master-key", Self.masterKey])
        }
    }

    @Test(
        "two instances on one PostgreSQL database: a token replayed and a prime paid once across them, audit holds",
        .enabled(if: TestPostgres.serverURL != nil, "ORCHARD_TEST_POSTGRES_URL is not set"))
    func twoPostgresInstances() throws {
        let admin = try #require(TestPostgres.serverURL)
        let name = "orchard_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try PostgresAdmin.createDatabase(name, url: admin)
        defer { try? PostgresAdmin.dropDatabase(name, url: admin) }
        let database = try #require(PostgresAdmin.url(admin, database: name))
        let arguments = [
            "--database", database, "--port", "0", "--reconcile-interval", "0", "--log-level", "off", "--master-key",
            Self.masterKey,
        ]
        let settings = try ServeCommand.registry().resolve(arguments: arguments, environment: [:])
        let first = try ServeCommand.start(settings: settings, io: CapturedOutput().output)
        defer { first.stop() }
        let second = try ServeCommand.start(settings: settings, io: CapturedOutput().output)
        defer { second.stop() }
        let merchant = try #require(first.runtime.sandboxMerchant)
        #expect(second.runtime.sandboxMerchant?.id == merchant.id)
        let credentials = try first.runtime.gateway.merchants.credentials(merchantID: merchant.id)
        let appHeaders = [
            "Content-Type": "application/json", "X-Orchard-App-Id": credentials.appID,
            "X-Orchard-App-Key": credentials.appKey,
        ]
        let serverHeaders = ["Content-Type": "application/json", "Authorization": "Bearer \(credentials.secretKey)"]
        for instance in [first, second] {
            #expect(try CurlClient().request("GET", instance.server.baseURL + "/readyz").status == 200)
        }

        // A token tokenized on one instance is a replay on the other; its prime pays once.
        let token = try JSONSerialization.jsonObject(
            with: try first.runtime.mintSandboxToken(amount: 1500, currency: .twd))
        let body = try JSONSerialization.data(withJSONObject: ["token": token])
        let tokenized = try CurlClient().request(
            "POST", first.server.baseURL + "/v1/tokens", headers: appHeaders, body: body)
        #expect(tokenized.status == 200, "\(tokenized.text)")
        let prime = try #require(tokenized.json["prime"] as? String)
        let replayed = try CurlClient().request(
            "POST", second.server.baseURL + "/v1/tokens", headers: appHeaders, body: body)
        #expect(replayed.status != 200 || replayed.json["prime"] as? String == prime, "\(replayed.text)")
        let pay = try JSONSerialization.data(withJSONObject: ["prime": prime, "amount": "15.00", "currency": "TWD"])
        let paid = try CurlClient().request(
            "POST", second.server.baseURL + "/v1/payments", headers: serverHeaders, body: pay)
        #expect(paid.status == 200, "\(paid.text)")
        let again = try CurlClient().request(
            "POST", first.server.baseURL + "/v1/payments", headers: serverHeaders, body: pay)
        #expect(again.status != 200, "a prime paid twice across instances: \(again.text)")

        // The ledger on the shared database, through the CLI with the URL.
        let audit = CapturedOutput()
        #expect(
            CLI.run(["audit", "--database", database], output: audit.output) == 0, "\(audit.stdout)\(audit.stderr)")
        #expect(audit.stdout.contains("all invariants hold"))
    }

    @Test("a PostgreSQL URL's password is never printed, also when the server cannot be reached")
    func passwordNeverPrinted() {
        let captured = CapturedOutput()
        let status = CLI.run(
            [
                "audit", "--database", "postgres://orchard:s3cret-pw@127.0.0.1:1/orchard?connect_timeout=2",
            ], output: captured.output)
        #expect(status == 2)
        #expect(!captured.stderr.contains("s3cret-pw") && !captured.stdout.contains("s3cret-pw"))
        let serve = CapturedOutput()
        #expect(
            CLI.run(
                ["serve", "--database", "postgres://orchard:s3cret-pw@127.0.0.1:1/orchard", "--port", "0"],
                output: serve.output) != 0)
        #expect(!serve.stderr.contains("s3cret-pw") && !serve.stdout.contains("s3cret-pw"))
        #expect(serve.stderr.contains("master key") || serve.stderr.contains("***"), "\(serve.stderr)")
    }
}
