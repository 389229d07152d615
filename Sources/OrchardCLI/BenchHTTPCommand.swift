import ApplePayModel
import ApplePaySandbox
import Foundation
import Gateway
import GatewayCurl
import Synchronization

/// `orchard bench http`: N concurrent clients each running tokenize + pay-by-prime in a loop against the live
/// server and its SQLite database; throughput and the pair's p50/p99 latency, next to this machine's crypto bound
/// from the token benchmark.
enum BenchHTTPCommand {
    static let usage = """
        usage: orchard bench http [--clients N] [--duration S | --payments N] [--warmup S]
                                  [--url URL --database sqlite:PATH|postgres://…] [--master-key HEX]
                                  [--record FILE] [--check FILE] [--no-bound]

        Each client loops: POST /v1/tokens with a fresh sandbox token (app key), then POST /v1/payments with the
        prime (secret key, capture now, an Idempotency-Key). Tokens are minted before the timed part, so minting
        is not measured; a token's signing time must stay within the server's window (5 minutes by default),
        so --duration is at most 200 s. A warm-up (--warmup, default 2 s) is not measured either.

        Without --url the benchmark starts `orchard serve` in-process on a free loopback port over a temporary
        SQLite database (access log to a file there, rate limit lifted). With --url it loads that running
        server; --database is its database (sandbox merchant keys, token minting); start that server with
        a rate limit above the load (e.g. --rate-limit-per-second 100000 --rate-limit-burst 100000).
        --url A,B,C loads several instances on one PostgreSQL database, the clients spread over them in turn.

          --clients N     concurrent clients, each on its own keep-alive connection (default 8)
          --duration S    measure for S seconds (default 10)
          --payments N    measure N payments instead
          --record FILE   write each acknowledged payment (200 answer) as "<payment id> <status>", one a line
          --check FILE    no load: read such a file and check over HTTP that every payment in it is there
                          with the status acknowledged (after a crash and restart); exit 0 only then
          --no-bound      skip the crypto bound (orchard bench token)

        The last lines are machine-readable: payments_per_second=N, p50_ms=N, p99_ms=N (latency of the pair).
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
        var help = false
    }

    static func parse(_ arguments: [String]) throws -> Options {
        let parsed = try Arguments(
            arguments,
            options: ["clients", "duration", "payments", "warmup", "url", "database", "master-key", "record", "check"],
            flags: ["no-bound", "help"])
        guard parsed.positionals.isEmpty else { throw UsageError("unexpected argument \(parsed.positionals[0])") }
        var options = Options()
        options.help = parsed.flag("help")
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
        options.masterKey = parsed.value("master-key") ?? ProcessInfo.processInfo.environment["ORCHARD_MASTER_KEY"]
        options.record = parsed.value("record")
        options.check = parsed.value("check")
        if options.check != nil, options.url == nil {
            throw UsageError("--check needs --url and --database (the restarted server)")
        }
        options.bound = !parsed.flag("no-bound")
        return options
    }

    static func run(_ arguments: [String], _ io: CLIOutput) -> Int32 {
        let options: Options
        do {
            options = try parse(arguments)
        } catch {
            io.err("orchard bench http: \(error)\n\n\(usage)")
            return 2
        }
        if options.help {
            io.out(usage)
            return 0
        }
        do {
            if let file = options.check { return try check(file: file, options: options, io: io) }
            return try bench(options, io: io)
        } catch let error as UsageError {
            io.err("orchard bench http: \(error)")
            return 2
        } catch {
            io.err("orchard bench http: \(error)")
            return 1
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
    }

    /// State shared by the client threads.
    final class Shared: Sendable {
        let next = Atomic<Int>(0)
        let total = Mutex(Measurement())
    }

    static func makeTarget(_ options: Options, io: CLIOutput) throws -> Target {
        if let url = options.url, let database = options.database {
            var runtimeOptions = try GatewayDatabase.options(database)
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
                credentials: try runtime.gateway.merchants.credentials(merchantID: merchant.id), stop: {})
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
            })
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
        let results = Mutex<[Int: Result<[Data], any Error>]>([:])
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

        mutating func merge(_ other: Measurement) {
            pairs += other.pairs
            tokenize += other.tokenize
            pay += other.pay
            for (key, count) in other.errors { errors[key, default: 0] += count }
            acknowledged += other.acknowledged
            stoppedClients += other.stoppedClients
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
        let instances = target.instanceURLs.isEmpty ? [target.baseURL] : target.instanceURLs
        for client in 0..<clients {
            group.enter()
            let thread = Thread {
                defer { group.leave() }
                var measured = Measurement()
                let api = APICaller(baseURL: instances[client % instances.count])
                var consecutiveFailures = 0
                func failed(_ key: String) {
                    measured.errors[key, default: 0] += 1
                }
                while DispatchTime.now().uptimeNanoseconds < deadline {
                    let index = shared.next.add(1, ordering: .relaxed).oldValue
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
                        let payment = try JSONSerialization.data(withJSONObject: [
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
                shared.total.withLock { $0.merge(measured) }
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        group.wait()
        return shared.total.withLock { measured in
            var result = measured
            result.elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            if let seconds { result.elapsed = min(result.elapsed, seconds) }
            result.ranOutOfTokens = shared.next.load(ordering: .relaxed) >= tokens.count && seconds != nil
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
        let runID = String(UInt32.random(in: 0...UInt32.max), radix: 36)
        let cores = ProcessInfo.processInfo.activeProcessorCount
        io.out("  server       \(target.description)")
        io.out("  machine      \(cores) cores (server and clients share them)")
        io.out(
            "  clients      \(options.clients) concurrent, each: POST /v1/tokens (app key) then POST /v1/payments "
                + "(secret key, capture now, Idempotency-Key), \(benchAmount)")

        var warmupRate = 0.0
        var warmupAcknowledged: [(id: String, status: String)] = []
        if options.warmup > 0 {
            let tokens = try mintTokens(options.clients * 40, runtime: target.runtime)
            let warm = load(
                tokens: tokens, clients: options.clients, seconds: options.warmup, target: target, runID: runID + "w")
            warmupRate = Double(warm.pairs.count) / max(warm.elapsed, 0.001)
            warmupAcknowledged = warm.acknowledged
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
            count = min(Int(rate * duration * 1.6) + options.clients * 8, 400_000)
        }
        let mintStart = Date()
        let tokens = try mintTokens(count, runtime: target.runtime)
        io.out(
            "  tokens       \(tokens.count) minted in \(String(format: "%.1f", Date().timeIntervalSince(mintStart))) s "
                + "before the timed part (EC_v1, signed by the sandbox PKI)")

        let measured = load(
            tokens: tokens, clients: options.clients, seconds: options.payments == nil ? options.duration : nil,
            target: target, runID: runID)
        if let file = options.record {
            let lines = (warmupAcknowledged + measured.acknowledged).map { "\($0.id) \($0.status)\n" }.joined()
            try Data(lines.utf8).write(to: URL(fileURLWithPath: file))
        }
        let pairs = measured.pairs.sorted()
        let paymentsPerSecond = Double(pairs.count) / max(measured.elapsed, 0.001)
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
        if let file = options.record {
            io.out(
                "  recorded     \(warmupAcknowledged.count + measured.acknowledged.count) acknowledged payments "
                    + "(warm-up included) in \(file)")
        }
        io.out(
            "  pair         p50 \(ms(p50)) ms, p90 \(ms(percentile(pairs, 0.9))) ms, p99 \(ms(p99)) ms, "
                + "max \(ms(pairs.last ?? 0)) ms")
        let tokenize = measured.tokenize.sorted()
        let pay = measured.pay.sorted()
        io.out("  tokenize     p50 \(ms(percentile(tokenize, 0.5))) ms, p99 \(ms(percentile(tokenize, 0.99))) ms")
        io.out("  pay          p50 \(ms(percentile(pay, 0.5))) ms, p99 \(ms(percentile(pay, 0.99))) ms")
        if let bound {
            for line in bound.text { io.out("  bound        \(line)") }
            io.out(
                "  bound        one core verifies+decrypts \(Int(bound.tokens)) tokens/s in the token benchmark; "
                    + "the OpenSSL bound is \(Int(bound.bound)) tokens/s")
            io.out("bound_tokens_per_second=\(Int(bound.bound.rounded()))")
            io.out("bound_ratio=\(String(format: "%.3f", paymentsPerSecond / bound.bound))")
        }
        io.out("payments_per_second=\(String(format: "%.1f", paymentsPerSecond))")
        io.out("p50_ms=\(ms(p50))")
        io.out("p99_ms=\(ms(p99))")
        return measured.errorCount == 0 && !pairs.isEmpty ? 0 : 1
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
