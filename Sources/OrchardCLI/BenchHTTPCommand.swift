import ApplePayModel
import ApplePaySandbox
import Foundation
import Gateway
import GatewayAssembly
import GatewayCurl
import GatewaySQLite
import OrchardBase
import OrchardJSON

/// `orchard bench http`: N concurrent clients each running tokenize + pay-by-prime in a loop against the live
/// server and its SQLite database; throughput and the pair's p50/p99 latency, next to this machine's crypto bound
/// from the token benchmark.
enum BenchHTTPCommand {
    static let usage = """
        usage: orchard bench http [--clients N | --sweep] [--duration S | --payments N] [--warmup S]
                                  [--url URL --database sqlite:PATH|postgres://…] [--master-key HEX]
                                  [--record FILE] [--check FILE] [--no-bound]

        Each client loops: POST /v1/tokens with a fresh sandbox token (app key), then POST /v1/payments with the
        prime (secret key, capture now, an Idempotency-Key). Tokens are minted before the timed part, so minting
        is not measured; a token's signing time must stay within the server's window (5 minutes by default),
        so --duration is at most 200 s. A warm-up (--warmup, default 2 s) is not measured either.

        Without --url the benchmark starts `orchard serve` in-process on a free loopback port over a temporary
        SQLite database (access log to a file there) and lifts two limits for it: the rate limit and the
        per-IP connection limit (every client is 127.0.0.1). With --url it loads that running server;
        --database is its database (sandbox merchant keys, token minting); start that server with a rate limit
        above the load (e.g. --rate-limit-per-second 100000 --rate-limit-burst 100000) and
        --per-ip-connection-limit 0.
        --url A,B,C loads several instances on one PostgreSQL database, the clients spread over them in turn.
        --server-pid PID[,PID…] (with --url) names the server processes whose CPU time is measured.

          --clients N     concurrent clients, each on its own keep-alive connection (default 8)
          --sweep         run 1, 8, 32 and 128 clients in turn against the same server
          --duration S    measure for S seconds (default 10, per client count)
          --payments N    measure N payments instead
          --record FILE   write each acknowledged payment (200 answer) as "<payment id> <status>", one a line
          --check FILE    no load: read such a file and check over HTTP that every payment in it is there
                          with the status acknowledged (after a crash and restart); exit 0 only then
          --no-bound      skip the crypto bound (orchard bench token) and the storage bound

        Besides throughput and latency it prints the storage bound (single-row synchronous=FULL commits per
        second in the database's directory, measured in the same run), the durable commits per pair and the
        fsyncs (batch commits) behind them (in-process server only), the ratios payments_per_second/target and
        fsyncs_per_second/storage_bound, the load generator's own CPU share, the server's CPU time per pair
        (user + system of the server over the timed part: in-process, the process's less the client threads'; with
        --url, the --server-pid processes'), and the process's peak RSS.
        Targets: 8 clients 1,200 pairs/s; 32 clients 2,000 pairs/s (or payments_per_second /
        bound_tokens_per_second >= 0.14 on another machine); 128 clients 90 % of the 32-client figure.

        The last lines are machine-readable: payments_per_second=N, p50_ms=N, p99_ms=N (latency of the pair),
        durable_commits_per_pair=N (the gateway's own, the sandbox acquirer's books apart),
        payments_per_fsync=N and server_cpu_ms_per_pair=N (target <= 1.0; n/a with --url and no --server-pid). With --sweep, clients_N_payments_per_second=, clients_N_p99_ms= … lines come first
        and the last lines are the 32-client run's.
        Exit status: 0 every request answered as expected, 1 some failed (figures still printed), 2 bad usage.
        """

    struct Options {
        var clients = 8
        var duration: Double? = 10
        var payments: Int?
        var warmup: Double = 2
        var url: String?
        var database: String?
        var masterKey: String?
        var record: String?
        var check: String?
        var bound = true
        var sweep = false
        var help = false
        /// `--server-pid`: the server processes of `--url`, whose CPU time is measured.
        var serverPIDs: [Int32] = []

        /// The client counts to run, in order.
        var clientCounts: [Int] { sweep ? BenchHTTPCommand.sweepClients : [clients] }
    }

    /// The client counts of `--sweep`.
    static let sweepClients = [1, 8, 32, 128]

    static func parse(_ arguments: [String]) throws -> Options {
        let parsed = try Arguments(
            arguments,
            options: [
                "clients", "duration", "payments", "warmup", "url", "database", "master-key", "record", "check",
                "server-pid",
            ],
            flags: ["no-bound", "sweep", "help"])
        guard parsed.positionals.isEmpty else { throw UsageError("unexpected argument \(parsed.positionals[0])") }
        var options = Options()
        options.help = parsed.flag("help")
        options.sweep = parsed.flag("sweep")
        if options.sweep, parsed.value("clients") != nil { throw UsageError("give --clients or --sweep, not both") }
        if let text = parsed.value("clients") {
            guard let value = Int(text), (1...256).contains(value) else { throw UsageError("--clients is 1 to 256") }
            options.clients = value
        }
        if parsed.value("duration") != nil, parsed.value("payments") != nil {
            throw UsageError("give --duration or --payments, not both")
        }
        if let text = parsed.value("duration") {
            guard let value = Double(text), value > 0, value <= 200 else {
                throw UsageError("--duration is more than 0 and at most 200 seconds")
            }
            options.duration = value
        }
        if let text = parsed.value("payments") {
            guard let value = Int(text), (1...1_000_000).contains(value) else {
                throw UsageError("--payments is 1 to 1000000")
            }
            options.payments = value
            options.duration = nil
        }
        if let text = parsed.value("warmup") {
            guard let value = Double(text), value >= 0, value <= 60 else { throw UsageError("--warmup is 0 to 60") }
            options.warmup = value
        }
        options.url = parsed.value("url")
        options.database = parsed.value("database")
        if (options.url == nil) != (options.database == nil) {
            throw UsageError("--url and --database go together (the server's database, for keys and tokens)")
        }
        options.masterKey = parsed.masterKeyHex
        options.record = parsed.value("record")
        options.check = parsed.value("check")
        if options.check != nil, options.url == nil {
            throw UsageError("--check needs --url and --database (the restarted server)")
        }
        options.bound = !parsed.flag("no-bound")
        if let text = parsed.value("server-pid") {
            guard options.url != nil else { throw UsageError("--server-pid goes with --url (the server it names)") }
            let pids = text.split(separator: ",").map { Int32($0) }
            guard !pids.isEmpty, pids.allSatisfy({ ($0 ?? 0) > 0 }) else {
                throw UsageError("--server-pid is a process id, or several separated by commas")
            }
            options.serverPIDs = pids.compactMap { $0 }
        }
        return options
    }

    static func run(_ arguments: [String], _ io: CLIOutput) -> Int32 {
        let options: Options
        do {
            options = try parse(arguments)
        } catch {
            return io.report(error, of: "orchard bench http", usage: usage, failure: nil)
        }
        if options.help {
            io.out(usage)
            return 0
        }
        do {
            if let file = options.check { return try check(file: file, options: options, io: io) }
            return try bench(options, io: io)
        } catch {
            return io.report(error, of: "orchard bench http")
        }
    }

    // MARK: The target

    /// The server under load, with what the clients need: base URL, credentials and a token factory.
    struct Target: Sendable {
        var baseURL: String
        /// Every instance's base URL (`--url A,B,C`: several instances on one PostgreSQL database); client `i`
        /// loads instance `i` modulo their number.
        var instanceURLs: [String] = []
        var description: String
        var runtime: GatewayRuntime
        var credentials: MerchantCredentials
        var stop: @Sendable () -> Void
        /// The directory of the server's database (the storage bound is measured there).
        var directory: String
        /// The server's store when it runs in this process (its commit counts), nil for --url.
        var store: SQLiteStore?
        /// The server processes of `--url` (`--server-pid`), whose CPU time is measured.
        var serverPIDs: [Int32] = []
    }

    /// State shared by the client threads.
    final class Shared: Sendable {
        let next = Locked(0)
        let total = Locked(Measurement())
    }

    static func makeTarget(_ options: Options, io: CLIOutput) throws -> Target {
        if let url = options.url, let database = options.database {
            var runtimeOptions = try GatewayDatabase.options(database)
            runtimeOptions.auditActor = CLI.auditActor("bench", ["http"])
            let path = GatewayDatabase.display(runtimeOptions)
            if runtimeOptions.postgres == nil, !FileManager.default.fileExists(atPath: runtimeOptions.databasePath) {
                throw UsageError("no database at \(runtimeOptions.databasePath)")
            }
            runtimeOptions.masterKeyHex = options.masterKey
            let runtime = try GatewayRuntime(runtimeOptions)
            guard let merchant = runtime.sandboxMerchant else {
                throw UsageError("the database has no sandbox merchant")
            }
            let urls = url.split(separator: ",").map(String.init)
            return Target(
                baseURL: urls[0], instanceURLs: urls,
                description: "the server\(urls.count > 1 ? "s" : "") at \(url), database \(path)", runtime: runtime,
                credentials: try runtime.gateway.merchants.credentials(merchantID: merchant.id), stop: {},
                directory: runtimeOptions.postgres == nil
                    ? (runtimeOptions.databasePath as NSString).deletingLastPathComponent
                    : FileManager.default.temporaryDirectory.path,
                store: nil, serverPIDs: options.serverPIDs)
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "orchard-bench-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let database = directory.appendingPathComponent("orchard.db").path
        let logPath = directory.appendingPathComponent("serve.log").path
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        let settings = try ServeCommand.registry().resolve(
            arguments: [
                "--database", "sqlite:\(database)", "--host", "127.0.0.1", "--port", "0",
                "--rate-limit-per-second", "1000000", "--rate-limit-burst", "1000000",
                "--per-ip-connection-limit", "0",
            ],
            environment: [:])
        let sink = CLIOutput(out: { log.write(Data($0.utf8)) }, err: { log.write(Data($0.utf8)) })
        let running = try ServeCommand.start(settings: settings, io: sink)
        guard let merchant = running.runtime.sandboxMerchant else {
            running.stop()
            throw UsageError("the in-process server has no sandbox merchant")
        }
        return Target(
            baseURL: running.server.baseURL,
            description: "orchard serve in-process at \(running.server.baseURL), temporary SQLite database",
            runtime: running.runtime,
            credentials: try running.runtime.gateway.merchants.credentials(merchantID: merchant.id),
            stop: {
                running.stop()
                try? log.close()
                try? FileManager.default.removeItem(at: directory)
            }, directory: directory.path, store: running.runtime.store as? SQLiteStore)
    }

    // MARK: Tokens

    /// Mints `count` sandbox tokens (150.00 TWD) for the target's sandbox merchant, on every core.
    static func mintTokens(_ count: Int, runtime: GatewayRuntime) throws -> [Data] {
        guard let sandbox = runtime.sandbox else { throw UsageError("the database has no sandbox PKI") }
        guard
            let certificate = try runtime.gateway.merchants.processingCertificates(merchantID: sandbox.merchant.id)
                .last(where: { $0.active })?.certificatePEM
        else { throw UsageError("the sandbox merchant has no active processing certificate") }
        let workers = max(1, min(ProcessInfo.processInfo.activeProcessorCount, count))
        let results = Locked<[Int: Result<[Data], any Error>]>([:])
        let identifier = sandbox.merchant.merchantIdentifiers.first
        let serialized = sandbox.pki
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            let share = count / workers + (worker < count % workers ? 1 : 0)
            let result = Result { () throws -> [Data] in
                let minter = TokenMinter(pki: try SandboxPKIIssuer.pki(serialized: serialized))
                var tokens: [Data] = []
                tokens.reserveCapacity(share)
                for _ in 0..<share {
                    var request = MintRequest(merchantCertificatePEM: certificate, signingTime: Date())
                    request.merchantIdentifier = identifier
                    request.amount = try benchAmount.minorUnits
                    request.currencyCode = benchAmount.currency.numericCode
                    request.network = "Visa"
                    request.type = "credit"
                    tokens.append(try minter.mint(request))
                }
                return tokens
            }
            results.withLock { $0[worker] = result }
        }
        return try results.withLock { all in try (0..<workers).flatMap { try all[$0]!.get() } }
    }

    /// The amount of every benchmark payment: 150.00 TWD (no sandbox decline or delay scenario).
    static let benchAmount = Money(minorUnits: 15_000, currency: .twd)

    // MARK: The load

    /// What one phase of load measured.
    struct Measurement: Sendable {
        var pairs: [Double] = []
        var tokenize: [Double] = []
        var pay: [Double] = []
        var errors: [String: Int] = [:]
        var acknowledged: [(id: String, status: String)] = []
        var elapsed: Double = 0
        var ranOutOfTokens = false
        var stoppedClients = 0
        /// CPU seconds the client threads used (the load generator's own share).
        var clientCPU: Double = 0
        /// CPU seconds the whole process used during the load (server and clients when in-process).
        var processCPU: Double = 0
        /// CPU seconds the server used during the load: in-process, the process's less the client threads'; with
        /// `--url`, the `--server-pid` processes' (nil without them, or when one cannot be read).
        var serverCPU: Double?
        /// The highest resident set size seen during the load, bytes.
        var peakRSS: Int = 0

        mutating func merge(_ other: Measurement) {
            pairs += other.pairs
            tokenize += other.tokenize
            pay += other.pay
            for (key, count) in other.errors { errors[key, default: 0] += count }
            acknowledged += other.acknowledged
            stoppedClients += other.stoppedClients
            clientCPU += other.clientCPU
        }

        var errorCount: Int { errors.values.reduce(0, +) }
    }

    /// Runs `clients` client threads over `tokens` until `seconds` pass (nil: until the tokens are used).
    static func load(
        tokens: [Data], clients: Int, seconds: Double?, target: Target, runID: String
    ) -> Measurement {
        let shared = Shared()
        let group = DispatchGroup()
        let start = DispatchTime.now().uptimeNanoseconds
        let deadline = seconds.map { start + UInt64($0 * 1e9) } ?? .max
        let appHeaders =
            APICaller.appHeaders(appID: target.credentials.appID, appKey: target.credentials.appKey) + [
                ("Content-Type", "application/json")
            ]
        let serverHeaders =
            APICaller.secretHeaders(target.credentials.secretKey) + [("Content-Type", "application/json")]
        let amount = benchAmount.decimalString
        let cpuStart = ProcessUsage.cpuSeconds()
        let serverCPUStart = ProcessUsage.cpuSeconds(processes: target.serverPIDs)
        let sampler = RSSSampler()
        let instances = target.instanceURLs.isEmpty ? [target.baseURL] : target.instanceURLs
        for client in 0..<clients {
            group.enter()
            let thread = Thread {
                defer { group.leave() }
                let threadCPUStart = ProcessUsage.threadCPUSeconds()
                var measured = Measurement()
                let api = APICaller(baseURL: instances[client % instances.count])
                var consecutiveFailures = 0
                func failed(_ key: String) {
                    measured.errors[key, default: 0] += 1
                }
                while DispatchTime.now().uptimeNanoseconds < deadline {
                    let index = shared.next.withLock { next in
                        defer { next += 1 }
                        return next
                    }
                    guard index < tokens.count else { break }
                    let t0 = DispatchTime.now().uptimeNanoseconds
                    do {
                        let body = Data("{\"token\":".utf8) + tokens[index] + Data("}".utf8)
                        let primeReply = try api.call(.post, "/v1/tokens", headers: appHeaders, body: body)
                        let t1 = DispatchTime.now().uptimeNanoseconds
                        consecutiveFailures = 0
                        guard primeReply.status == 200, let prime = primeReply.string("prime") else {
                            failed("tokenize \(primeReply.summary)")
                            continue
                        }
                        // The benchmark is an HTTP client: it writes the bodies it sends (the one writer).
                        let payment = try JSONWriter.json([
                            "prime": prime, "amount": amount, "currency": "TWD", "order_number": "bench-\(index)",
                            "capture": ["mode": "now"],
                        ])
                        let paid = try api.call(
                            .post, "/v1/payments",
                            headers: serverHeaders + [("Idempotency-Key", "bench-\(runID)-\(index)")], body: payment)
                        let t2 = DispatchTime.now().uptimeNanoseconds
                        guard paid.status == 200, let id = paid.string("id"), let status = paid.string("status") else {
                            failed("pay \(paid.summary)")
                            continue
                        }
                        measured.acknowledged.append((id, status))
                        guard status == "captured" else {
                            failed("pay answered status \(status)")
                            continue
                        }
                        measured.pairs.append(Double(t2 - t0) / 1e6)
                        measured.tokenize.append(Double(t1 - t0) / 1e6)
                        measured.pay.append(Double(t2 - t1) / 1e6)
                    } catch let error as APICaller.TransportError {
                        failed("\(error.path) \(error.underlying.code)")
                        consecutiveFailures += 1
                        // The server is gone (a crash test) or unreachable: this client stops.
                        if consecutiveFailures >= 3 {
                            measured.stoppedClients = 1
                            break
                        }
                    } catch {
                        failed("client \(error)")
                    }
                }
                measured.clientCPU = ProcessUsage.threadCPUSeconds() - threadCPUStart
                shared.total.withLock { $0.merge(measured) }
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        group.wait()
        let peakRSS = sampler.stop()
        let processCPU = ProcessUsage.cpuSeconds() - cpuStart
        let serverCPUEnd = ProcessUsage.cpuSeconds(processes: target.serverPIDs)
        return shared.total.withLock { measured in
            var result = measured
            result.peakRSS = peakRSS
            result.processCPU = processCPU
            if target.store != nil {
                result.serverCPU = processCPU - measured.clientCPU
            } else if let start = serverCPUStart, let end = serverCPUEnd {
                result.serverCPU = end - start
            }
            result.elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            if let seconds { result.elapsed = min(result.elapsed, seconds) }
            result.ranOutOfTokens = shared.next.current >= tokens.count && seconds != nil
            return result
        }
    }

    static func percentile(_ sorted: [Double], _ p: Double) -> Double {
        guard !sorted.isEmpty else { return 0 }
        let rank = Int((p * Double(sorted.count)).rounded(.up)) - 1
        return sorted[min(max(rank, 0), sorted.count - 1)]
    }

    static func ms(_ value: Double) -> String { String(format: "%.2f", value) }

    // MARK: The run

    /// The crypto bound from the token benchmark (`orchard bench token`), run in this process.
    static func cryptoBound(io: CLIOutput) -> (bound: Double, tokens: Double, text: [String])? {
        let captured = CapturedOutput()
        let status = try? BenchCommand.runTokenBench(
            seconds: 0.3, rounds: 5, tokenCount: 16, breakdown: false, io: captured.output)
        guard status == 0 else { return nil }
        var values: [String: Double] = [:]
        for line in captured.stdout.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1)
            if parts.count == 2, let value = Double(parts[1]) { values[String(parts[0])] = value }
        }
        guard let bound = values["bound_tokens_per_second"], bound > 0 else { return nil }
        let text = captured.stdout.split(separator: "\n").filter { $0.contains("P-256") || $0.contains("bound 1/") }
            .map { String($0).trimmingCharacters(in: .whitespaces) }
        return (bound, values["tokens_per_second"] ?? 0, text)
    }

    /// One client count's figures, for the sweep summary and the machine-readable lines.
    struct RunFigures {
        var clients: Int
        var paymentsPerSecond: Double
        var p50: Double
        var p99: Double
        var errors: Int
        var commitsPerPair: Double?
        var acquirerCommitsPerPair: Double?
        var paymentsPerFsync: Double?
        var fsyncsPerSecond: Double?
        var peakRSS: Int
        /// The server's CPU time per captured pair, milliseconds.
        var serverCPUPerPair: Double?
    }

    /// The issue's throughput target for a client count (pairs/s), given the 32-client figure for 128.
    static func targetRate(clients: Int, thirtyTwo: Double?) -> Double? {
        switch clients {
        case 8: return 1_200
        case 32: return 2_000
        case 128: return thirtyTwo.map { $0 * 0.9 }
        default: return nil
        }
    }

    static func bench(_ options: Options, io: CLIOutput) throws -> Int32 {
        io.out("orchard bench http: tokenize + pay-by-prime pairs over HTTP, orchard serve on SQLite")
        #if DEBUG
            io.out("  NOTE: a debug build; for figures use: swift build -c release --product orchard")
        #endif
        var bound: (bound: Double, tokens: Double, text: [String])?
        if options.bound {
            io.out("  measuring this machine's crypto bound (orchard bench token) …")
            bound = cryptoBound(io: io)
            if bound == nil { io.out("  crypto bound: unavailable (orchard bench token failed)") }
        }
        let target = try makeTarget(options, io: io)
        defer { target.stop() }
        let health = try APICaller(baseURL: target.baseURL).call(.get, "/healthz")
        guard health.status == 200 else { throw UsageError("GET \(target.baseURL)/healthz answered \(health.status)") }
        var storageBound: Double?
        if options.bound {
            storageBound = try? StorageBound.singleRowCommitsPerSecond(directory: target.directory, seconds: 1)
        }
        let runID = String(UInt32.random(in: 0...UInt32.max), radix: 36)
        let cores = ProcessInfo.processInfo.activeProcessorCount
        io.out("  server       \(target.description)")
        if options.url == nil {
            io.out(
                "  limits       lifted for this server: rate limit (1000000/s) and per-IP connection limit "
                    + "(none; every client is 127.0.0.1)")
        }
        io.out("  machine      \(cores) cores (server and clients share them), load \(ProcessUsage.loadAverage())")
        if let storageBound {
            io.out(
                "  storage      \(Int(storageBound)) single-row synchronous=FULL commits/s in \(target.directory) "
                    + "(the storage bound, measured now)")
        }
        io.out(
            "  clients      each: POST /v1/tokens (app key) then POST /v1/payments "
                + "(secret key, capture now, Idempotency-Key), \(benchAmount)")
        var runs: [RunFigures] = []
        var recorded: [(id: String, status: String)] = []
        for (index, clients) in options.clientCounts.enumerated() {
            let figures = try benchRun(
                clients: clients, options: options, target: target, runID: runID + "c\(index)", cores: cores,
                storageBound: storageBound, thirtyTwo: runs.first { $0.clients == 32 }?.paymentsPerSecond,
                recorded: &recorded, io: io)
            runs.append(figures)
        }
        if let file = options.record {
            let lines = recorded.map { "\($0.id) \($0.status)\n" }.joined()
            try Data(lines.utf8).write(to: URL(fileURLWithPath: file))
            io.out("  recorded     \(recorded.count) acknowledged payments (warm-up included) in \(file)")
        }
        if let bound {
            for line in bound.text { io.out("  bound        \(line)") }
            io.out(
                "  bound        one core verifies+decrypts \(Int(bound.tokens)) tokens/s in the token benchmark; "
                    + "the OpenSSL bound is \(Int(bound.bound)) tokens/s")
        }
        if options.sweep {
            io.out("  sweep        clients  pairs/s   p50 ms   p99 ms  errors  commits/pair  pairs/fsync  peak RSS")
            for run in runs {
                io.out(
                    "  sweep        "
                        + [
                            String(run.clients).leftPadded(7),
                            String(format: "%.0f", run.paymentsPerSecond).leftPadded(8),
                            ms(run.p50).leftPadded(8), ms(run.p99).leftPadded(8), String(run.errors).leftPadded(7),
                            (run.commitsPerPair.map { String(format: "%.2f", $0) } ?? "n/a").leftPadded(13),
                            (run.paymentsPerFsync.map { String(format: "%.2f", $0) } ?? "n/a").leftPadded(12),
                            "\(run.peakRSS >> 20) MiB".leftPadded(9),
                        ].joined(separator: " "))
            }
            for run in runs {
                io.out("clients_\(run.clients)_payments_per_second=\(String(format: "%.1f", run.paymentsPerSecond))")
                io.out("clients_\(run.clients)_p50_ms=\(ms(run.p50))")
                io.out("clients_\(run.clients)_p99_ms=\(ms(run.p99))")
                io.out("clients_\(run.clients)_errors=\(run.errors)")
                io.out("clients_\(run.clients)_peak_rss_mib=\(run.peakRSS >> 20)")
                io.out("clients_\(run.clients)_server_cpu_ms_per_pair=\(cpuText(run.serverCPUPerPair))")
            }
        }
        let headline = runs.first { $0.clients == 32 && options.sweep } ?? runs[runs.count - 1]
        if let bound {
            io.out("bound_tokens_per_second=\(Int(bound.bound.rounded()))")
            io.out("bound_ratio=\(String(format: "%.3f", headline.paymentsPerSecond / bound.bound))")
        }
        if let storageBound { io.out("storage_bound_commits_per_second=\(Int(storageBound.rounded()))") }
        io.out("payments_per_second=\(String(format: "%.1f", headline.paymentsPerSecond))")
        io.out("p50_ms=\(ms(headline.p50))")
        io.out("p99_ms=\(ms(headline.p99))")
        io.out("durable_commits_per_pair=\(headline.commitsPerPair.map { String(format: "%.2f", $0) } ?? "n/a")")
        io.out("payments_per_fsync=\(headline.paymentsPerFsync.map { String(format: "%.2f", $0) } ?? "n/a")")
        io.out("server_cpu_ms_per_pair=\(cpuText(headline.serverCPUPerPair))")
        return runs.allSatisfy { $0.errors == 0 && $0.paymentsPerSecond > 0 } ? 0 : 1
    }

    /// A CPU time per pair as the machine-readable lines give it: milliseconds to 3 places, or `n/a`.
    static func cpuText(_ milliseconds: Double?) -> String {
        milliseconds.map { String(format: "%.3f", $0) } ?? "n/a"
    }

    /// Warms up, mints, loads and prints one client count's figures.
    static func benchRun(
        clients: Int, options: Options, target: Target, runID: String, cores: Int, storageBound: Double?,
        thirtyTwo: Double?, recorded: inout [(id: String, status: String)], io: CLIOutput
    ) throws -> RunFigures {
        io.out("  -- \(clients) concurrent clients, each on its own keep-alive connection")
        var warmupRate = 0.0
        if options.warmup > 0 {
            let tokens = try mintTokens(clients * 40, runtime: target.runtime)
            let warm = load(
                tokens: tokens, clients: clients, seconds: options.warmup, target: target, runID: runID + "w")
            warmupRate = Double(warm.pairs.count) / max(warm.elapsed, 0.001)
            recorded += warm.acknowledged
            io.out(
                "  warm-up      \(String(format: "%.1f", warm.elapsed)) s, \(warm.pairs.count) pairs "
                    + "(~\(Int(warmupRate)) pairs/s), \(warm.errorCount) errors, not measured")
        }
        let count: Int
        if let payments = options.payments {
            count = payments
        } else {
            let duration = options.duration ?? 10
            let rate = max(warmupRate, 50)
            count = min(Int(rate * duration * 1.6) + clients * 8, 400_000)
        }
        let mintStart = Date()
        let tokens = try mintTokens(count, runtime: target.runtime)
        let tokenBytes = tokens.reduce(0) { $0 + $1.count }
        io.out(
            "  tokens       \(tokens.count) minted in \(String(format: "%.1f", Date().timeIntervalSince(mintStart))) s "
                + "before the timed part (EC_v1, signed by the sandbox PKI), \(tokenBytes >> 20) MiB")
        let countsBefore = target.store?.commitCounts
        let measured = load(
            tokens: tokens, clients: clients, seconds: options.payments == nil ? options.duration : nil,
            target: target, runID: runID)
        let countsAfter = target.store?.commitCounts
        recorded += measured.acknowledged
        let pairs = measured.pairs.sorted()
        let elapsed = max(measured.elapsed, 0.001)
        let paymentsPerSecond = Double(pairs.count) / elapsed
        let p50 = percentile(pairs, 0.50)
        let p99 = percentile(pairs, 0.99)
        io.out(
            "  measured     \(String(format: "%.1f", measured.elapsed)) s: \(pairs.count) payments captured, "
                + "\(measured.errorCount) errors")
        if measured.ranOutOfTokens { io.out("  note         the pre-minted tokens ran out before the duration ended") }
        if measured.stoppedClients > 0 {
            io.out("  note         \(measured.stoppedClients) clients stopped after repeated connection failures")
        }
        for (key, count) in measured.errors.sorted(by: { $0.value > $1.value }) {
            io.out("  error        \(count) x \(key)")
        }
        io.out(
            "  pair         p50 \(ms(p50)) ms, p90 \(ms(percentile(pairs, 0.9))) ms, p99 \(ms(p99)) ms, "
                + "max \(ms(pairs.last ?? 0)) ms")
        let tokenize = measured.tokenize.sorted()
        let pay = measured.pay.sorted()
        io.out("  tokenize     p50 \(ms(percentile(tokenize, 0.5))) ms, p99 \(ms(percentile(tokenize, 0.99))) ms")
        io.out("  pay          p50 \(ms(percentile(pay, 0.5))) ms, p99 \(ms(percentile(pay, 0.99))) ms")
        var figures = RunFigures(
            clients: clients, paymentsPerSecond: paymentsPerSecond, p50: p50, p99: p99, errors: measured.errorCount,
            peakRSS: measured.peakRSS)
        if let before = countsBefore, let after = countsAfter, !pairs.isEmpty {
            let all = Double(after.transactions - before.transactions)
            let acquirer = Double(after.acquirer - before.acquirer)
            let fsyncs = Double(after.batches - before.batches)
            let n = Double(pairs.count)
            figures.commitsPerPair = (all - acquirer) / n
            figures.acquirerCommitsPerPair = acquirer / n
            figures.paymentsPerFsync = fsyncs > 0 ? n / fsyncs : nil
            figures.fsyncsPerSecond = fsyncs / elapsed
            io.out(
                "  commits      \(String(format: "%.2f", (all - acquirer) / n)) durable commits per pair by the gateway "
                    + "+ \(String(format: "%.2f", acquirer / n)) by the sandbox acquirer's books, in "
                    + "\(Int(fsyncs)) batch commits (fsyncs): \(String(format: "%.2f", n / max(fsyncs, 1))) pairs "
                    + "and \(String(format: "%.1f", all / max(fsyncs, 1))) commits per fsync")
            if let storageBound {
                io.out(
                    "  storage      \(Int(fsyncs / elapsed)) fsyncs/s; fsyncs_per_second/storage_bound = "
                        + String(format: "%.2f", fsyncs / elapsed / storageBound))
            }
        } else {
            io.out("  commits      n/a (the server is another process)")
        }
        if let goal = targetRate(clients: clients, thirtyTwo: thirtyTwo) {
            io.out(
                "  target       \(Int(goal)) pairs/s: payments_per_second/target = "
                    + String(format: "%.2f", paymentsPerSecond / goal))
        }
        if let serverCPU = measured.serverCPU, !pairs.isEmpty {
            figures.serverCPUPerPair = serverCPU * 1000 / Double(pairs.count)
            io.out(
                "  server cpu   \(String(format: "%.3f", serverCPU * 1000 / Double(pairs.count))) ms per pair "
                    + "(\(String(format: "%.1f", serverCPU)) CPU-s over \(pairs.count) pairs, user + system); "
                    + "target <= 1.0 ms")
        } else {
            io.out("  server cpu   n/a (give --server-pid with --url)")
        }
        let share = measured.clientCPU / (elapsed * Double(cores))
        let processShare = measured.processCPU / (elapsed * Double(cores))
        io.out(
            "  cpu          load generator \(String(format: "%.1f", measured.clientCPU)) CPU-s = "
                + "\(String(format: "%.0f", share * 100)) % of \(cores) cores; the whole process "
                + "\(String(format: "%.0f", processShare * 100)) % (server + load generator)")
        io.out(
            "  memory       peak RSS \(measured.peakRSS >> 20) MiB during the load (one process: server, load "
                + "generator and its \(tokenBytes >> 20) MiB of pre-minted tokens)"
                + (clients >= 128 ? "; target <= 256 MiB" : ""))
        return figures
    }

    /// `--check FILE`: every acknowledged payment of a previous run is there, with the status acknowledged
    /// (or a later one: refunds and voids are not part of the benchmark, so the status must be unchanged).
    static func check(file: String, options: Options, io: CLIOutput) throws -> Int32 {
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
            throw UsageError("cannot read \(file)")
        }
        let target = try makeTarget(options, io: io)
        let api = APICaller(baseURL: target.baseURL)
        let headers = APICaller.secretHeaders(target.credentials.secretKey)
        var checked = 0
        var missing: [String] = []
        var changed: [String] = []
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ").map(String.init)
            guard parts.count == 2 else { continue }
            checked += 1
            let reply = try api.call(.get, "/v1/payments/\(parts[0])", headers: headers)
            if reply.status == 404 {
                missing.append(parts[0])
            } else if reply.status != 200 {
                throw UsageError("GET /v1/payments/\(parts[0]) answered \(reply.summary)")
            } else if reply.string("status") != parts[1] {
                changed.append("\(parts[0]) acknowledged \(parts[1]), now \(reply.string("status") ?? "?")")
            }
        }
        io.out("acknowledged payments checked: \(checked)")
        io.out("missing after restart: \(missing.count)")
        io.out("status changed: \(changed.count)")
        for id in missing.prefix(20) { io.out("missing: \(id)") }
        for line in changed.prefix(20) { io.out("changed: \(line)") }
        return missing.isEmpty && changed.isEmpty ? 0 : 1
    }
}
