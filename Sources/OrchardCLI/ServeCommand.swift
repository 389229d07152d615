import ApplePayToken
import Foundation
import Gateway
import GatewayAssembly
import GatewayCurl
import GatewayHTTP
import GatewayPostgres
import GatewayProcessors
import GatewaySQLite
import OrchardBase
import OrchardHTTP

/// `orchard serve`: the gateway's HTTP API on libmicrohttpd, with the webhook dispatcher and the reconciliation
/// of unknown payments running beside it, until SIGTERM or SIGINT.
public enum ServeCommand {
    static let command = CLI.Command(
        name: "serve", summary: "run the payment gateway's HTTP API (default 127.0.0.1:8080)", run: run)

    /// Every setting of `orchard serve`: the HTTP server's and the gateway's.
    public static func registry() -> SettingsRegistry {
        var registry = SettingsRegistry()
        ServerConfiguration.register(in: &registry)
        let settings: [Setting] = [
            Setting(
                name: "database", kind: .string, default: "sqlite:./orchard.db",
                summary: "the database, sqlite:PATH (created on first run) or postgres://USER@HOST:PORT/DB?sslmode=…"),
            Setting(
                name: "master-key", kind: .string, summary: "64 hex digits sealing keys and secrets at rest",
                isSecret: true),
            Setting(
                name: "master-key-file", kind: .path,
                summary: "a file holding the master key (default: <database>.master-key, generated in sandbox)"),
            Setting(
                name: "environment", kind: .string, default: "sandbox",
                summary: "sandbox (provisions the sandbox merchant) or production (needs a master key)"),
            Setting(
                name: "apple-root", kind: .path,
                summary:
                    "Apple Root CA - G3 (PEM), the production trust anchor; in the sandbox, trusted beside the test PKI "
                    + "(tokens from a device with an Apple sandbox tester account)"),
            Setting(
                name: "signing-time-max-age", kind: .integer, default: "300",
                summary: "seconds a token's signing time may lie in the past"),
            Setting(
                name: "signing-time-future-skew", kind: .integer, default: "60",
                summary: "seconds a token's signing time may lie in the future"),
            Setting(
                name: "webhook-retry-schedule", kind: .string, default: "1m,5m,30m,2h,6h,12h,24h",
                summary: "delays between webhook delivery attempts, then dead"),
            Setting(
                name: "reconcile-interval", kind: .integer, default: "60",
                summary: "seconds between reconciliation runs for unknown payments (0: off)"),
            Setting(
                name: "console-session-lifetime", kind: .integer, default: "86400",
                summary: "seconds a console session lasts after its sign-in however it is used (300 to 2592000; "
                    + "on top of the 8-hour idle timeout)"),
            Setting(
                name: "auth-failure-burst", kind: .integer, default: "20",
                summary: "wrong API keys one client address may present at once before 429 rate_limited"),
            Setting(
                name: "auth-failure-refill-seconds", kind: .integer, default: "3",
                summary: "seconds until such an address may present one more (0: no limit)"),
            Setting(
                name: "web-origins", kind: .list,
                summary: "web origins the sandbox merchant allows for CORS (https://shop.example,…)"),
            Setting(
                name: "apple-pay-denied-domains", kind: .list,
                summary: "host names no merchant may register as Apple Pay domains, with the names below them, "
                    + "besides Apple's own: the gateway's own host names (pay.example,…)"),
            Setting(
                name: "log-level", kind: .string, default: "info",
                summary: "info (every request), error (5xx only) or off"),
            Setting(
                name: "access-log", kind: .path,
                summary: "append the request lines to this file instead of standard output (reopened on SIGHUP)"),
            Setting(
                name: "apple-pay-extra-validation-host", kind: .string,
                summary: "sandbox only: a HOST:PORT accepted as a merchant validation host (a local stand-in for Apple)"
            ),
            Setting(
                name: "apple-pay-ca-file", kind: .path,
                summary: "sandbox only: PEM CA certificates trusted for merchant validation instead of the system's"),
            Setting(
                name: "processor-base-url", kind: .list,
                summary:
                    "sandbox only: processor base URLs replacing Adyen's and Checkout.com's (adyen=URL,checkout_com=URL; "
                    + "https, or http to the loopback): local stand-ins for tests"),
            Setting(
                name: "processor-connect-timeout", kind: .integer, default: "5",
                summary: "seconds a processor call may take to connect (TCP and TLS)"),
            Setting(
                name: "processor-timeout", kind: .integer, default: "20",
                summary: "seconds a whole processor call may take (below the 30 s authorization timeout)"),
        ]
        for setting in settings { registry.register(setting) }
        return registry
    }

    static let header = """
        usage: orchard serve [--host H] [--port P] [--database sqlite:PATH] [options]

        Runs the gateway's HTTP API. Settings come from flags, then ORCHARD_… environment variables, then the JSON
        config file (--config), then the defaults. GET /healthz answers 200 once the server is ready.

        settings:
        """

    /// Everything `orchard serve` runs, started; ``stop()`` shuts it down gracefully.
    public final class Running: Sendable {
        /// The database and domain.
        public let runtime: GatewayRuntime
        /// The HTTP API.
        public let api: GatewayAPI
        /// The listening server.
        public let server: HTTPServer
        /// The webhook dispatcher (running).
        public let dispatcher: WebhookDispatcher
        let reconciler: PeriodicTask?
        /// The access log file (`--access-log`), when the request lines go to one.
        let accessLog: AccessLogFile?

        init(
            runtime: GatewayRuntime, api: GatewayAPI, server: HTTPServer, dispatcher: WebhookDispatcher,
            reconciler: PeriodicTask?, accessLog: AccessLogFile? = nil
        ) {
            self.accessLog = accessLog
            self.runtime = runtime
            self.api = api
            self.server = server
            self.dispatcher = dispatcher
            self.reconciler = reconciler
        }

        /// Reopens the access log file (what SIGHUP does, for logrotate); nothing without one.
        public func reopenLogs() throws { try accessLog?.reopen() }

        /// Stops accepting, finishes requests in flight, then stops the dispatcher and the reconciliation.
        public func stop() {
            api.beginDraining()
            server.stop()
            dispatcher.stop()
            reconciler?.stop()
            // A SQLite file's single-instance lock goes with the instance: another may start on the file.
            (runtime.store as? SQLiteStore)?.releaseInstanceLock()
        }
    }

    /// Starts the gateway described by `settings`; `io` receives the first-run credentials, the access log lines
    /// and the webhook attempt lines.
    public static func start(settings: ResolvedSettings, io: CLIOutput) throws -> Running {
        var options = try GatewayDatabase.options(settings.string("database") ?? "sqlite:./orchard.db")
        options.auditActor = CLI.auditActor("serve", [])
        switch settings.string("environment") ?? "sandbox" {
        case "sandbox": options.environment = .sandbox
        case "production": options.environment = .production
        case let other: throw UsageError("--environment must be sandbox or production, not \(other)")
        }
        options.masterKeyHex = settings.string("master-key")
        options.masterKeyFile = settings.string("master-key-file")
        if options.environment == .production, options.masterKeyHex == nil, options.masterKeyFile == nil {
            throw UsageError("production refuses to start without a master key (--master-key or --master-key-file)")
        }
        let validation = try merchantValidation(settings: settings, environment: options.environment)
        options.processors = try processorConnectors(settings: settings, environment: options.environment)
        options.appleRootPath = settings.string("apple-root")
        options.window = SigningTimeWindow(
            maximumAge: TimeInterval(try settings.integer("signing-time-max-age", in: 1...86_400) ?? 300),
            maximumFutureSkew: TimeInterval(try settings.integer("signing-time-future-skew", in: 0...3600) ?? 60))
        var dispatcherConfiguration = WebhookDispatcher.Configuration()
        dispatcherConfiguration.retrySchedule = try WebhookRetrySchedule(
            parsing: settings.string("webhook-retry-schedule") ?? "1m,5m,30m,2h,6h,12h,24h")
        for name in settings.list("apple-pay-denied-domains") ?? [] {
            guard ApplePayDomain.normalized(name) != nil else {
                throw ConfigurationError(
                    .invalidValue, "setting apple-pay-denied-domains lists host names (pay.example,…), not \(name)")
            }
            options.configuration.deniedApplePayDomains.append(name)
        }
        let lifetime = ConsoleSessionRules.lifetimeRange
        options.configuration.consoleSessionLifetime = TimeInterval(
            try settings.integer("console-session-lifetime", in: Int(lifetime.lowerBound)...Int(lifetime.upperBound))
                ?? Int(ConsoleSessionRules.defaultLifetime))
        let logLevel = settings.string("log-level") ?? "info"
        guard ["info", "error", "off"].contains(logLevel) else { throw UsageError("--log-level is info, error or off") }
        let configuration = try ServerConfiguration(settings: settings)

        // Several instances share a PostgreSQL database; a SQLite file has one instance, and a second is refused
        // (the lock is on the file itself, by device and inode, whatever path names it).
        options.singleInstance = true
        let runtime: GatewayRuntime
        do { runtime = try GatewayRuntime(options) } catch let error as SQLiteInstanceLockError {
            throw UsageError(
                "another orchard serve is running on \(error.path); a SQLite database has one instance "
                    + "(run several on PostgreSQL: --database postgres://…)")
        }
        for warning in runtime.warnings { io.err("orchard serve: warning: \(warning)") }
        if let credentials = runtime.sandbox?.newCredentials {
            // In full on a terminal only: standard output sent to a file (make run's log) gets them masked.
            let shown = io.outIsTerminal ? { $0 } : maskedCredential
            io.out(
                io.outIsTerminal
                    ? "Sandbox merchant created. Its keys are shown once here:"
                    : "Sandbox merchant created. Its keys (masked: standard output is not a terminal):")
            io.out("  merchant_id  \(credentials.merchantID)")
            io.out("  app_id       \(credentials.appID)")
            io.out("  app_key      \(shown(credentials.appKey))")
            io.out("  secret_key   \(shown(credentials.secretKey))")
            io.out("Show them again with: orchard merchant show --database \(GatewayDatabase.display(options))")
        }
        if let origins = settings.list("web-origins"), let merchant = runtime.sandboxMerchant {
            try runtime.gateway.merchants.setWebOrigins(merchantID: merchant.id, origins: origins)
        }
        let metrics = MetricsRegistry()
        let deliveries = metrics.counter(
            "orchard_webhook_deliveries_total", help: "Webhook delivery attempts by outcome.", labels: ["outcome"])
        let dispatcher = WebhookDispatcher(
            outbox: runtime.gateway.webhooks.webhookOutbox, sender: CurlWebhookSender(), configuration: dispatcherConfiguration
        ) { record in
            let outcome =
                switch record.state {
                case .delivered: "delivered"
                case .dead: "dead"
                case .pending: "failed"
                }
            deliveries.increment(labels: [outcome])
            if logLevel == "info" { io.out(Self.deliveryLine(record)) }
        }
        var authenticationLimit = APIAuthenticationLimit()
        authenticationLimit.burst = try settings.integer("auth-failure-burst", in: 1...1_000_000) ?? authenticationLimit.burst
        if let refill = try settings.integer("auth-failure-refill-seconds", in: 0...86_400) {
            authenticationLimit.ratePerSecond = refill > 0 ? 1 / Double(refill) : 0
        }
        let api = GatewayAPI(
            gateway: runtime.gateway, metrics: metrics,
            readinessChecks: ["webhook_dispatcher": { dispatcher.isRunning }], sandboxWallet: runtime.sandboxWallet,
            merchantValidation: MerchantValidationService(
                merchants: runtime.gateway.merchants,
                transport: CurlMerchantSessionTransport(caBundlePath: validation.caFile),
                configuration: validation.configuration),
            authenticationLimit: authenticationLimit)
        let accessLog = try settings.string("access-log").map { try AccessLogFile(path: $0) }
        let write: @Sendable (String) -> Void
        if let accessLog {
            write = { accessLog.write($0) }
        } else {
            write = { io.out($0) }
        }
        let server = api.server(configuration: configuration) { line in
            switch logLevel {
            case "info": write(line)
            case "error" where line.contains("\"level\":\"error\""): write(line)
            default: break
            }
        }
        server.registerMetrics(in: metrics)
        dispatcher.start()
        var reconciler: PeriodicTask?
        let interval = try settings.integer("reconcile-interval", in: 0...86_400) ?? 60
        if interval > 0 {
            let gateway = runtime.gateway
            let shared = runtime.store as? PostgresStore
            reconciler = PeriodicTask(interval: TimeInterval(interval)) {
                // On a shared database, one instance at a time reconciles (an advisory lock); the others skip.
                if let shared {
                    _ = try? shared.runExclusively("reconcile") { try gateway.payments.reconcile() }
                } else {
                    _ = try? gateway.payments.reconcile()
                }
            }
        }
        do { try server.start() } catch {
            dispatcher.stop()
            reconciler?.stop()
            throw error
        }
        return Running(
            runtime: runtime, api: api, server: server, dispatcher: dispatcher, reconciler: reconciler,
            accessLog: accessLog)
    }

    /// The merchant validation settings (`apple-pay-extra-validation-host`, `apple-pay-ca-file`) for
    /// `environment`; production refuses both (`sandbox_only_setting`).
    public static func merchantValidation(
        settings: ResolvedSettings, environment: GatewayEnvironment
    ) throws(ConfigurationError) -> (configuration: MerchantValidationConfiguration, caFile: String?) {
        var configuration = MerchantValidationConfiguration()
        let extraHost = settings.string("apple-pay-extra-validation-host")
        let caFile = settings.string("apple-pay-ca-file")
        if environment == .production {
            for (name, value) in [("apple-pay-extra-validation-host", extraHost), ("apple-pay-ca-file", caFile)]
            where value != nil {
                throw ConfigurationError(
                    .sandboxOnly,
                    "\(ConfigurationError.Code.sandboxOnly): --\(name) (from \(settings.source(name) ?? .defaultValue)) is "
                        + "a sandbox-only test setting; production refuses to start with it")
            }
        }
        if let extraHost {
            let parts = extraHost.lowercased().split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty, let port = Int(parts[1]), (1...65_535).contains(port) else {
                throw ConfigurationError(
                    .invalidValue, "setting apple-pay-extra-validation-host must be HOST:PORT (got \"\(extraHost)\")")
            }
            configuration.extraHosts = ["\(parts[0]):\(port)"]
        }
        if let caFile, !FileManager.default.isReadableFile(atPath: caFile) {
            throw ConfigurationError(.unreadableFile, "cannot read the apple-pay-ca-file \(caFile)")
        }
        return (configuration, caFile)
    }

    /// How the processor connectors reach their processors: `processor-base-url` (sandbox only, refused in
    /// production like the sandbox-only Apple Pay settings; `https`, or `http` to the loopback), and the connect and
    /// total timeouts.
    public static func processorConnectors(
        settings: ResolvedSettings, environment: GatewayEnvironment
    ) throws(ConfigurationError) -> ProcessorConnectorConfiguration {
        var configuration = ProcessorConnectorConfiguration()
        configuration.connectTimeout = TimeInterval(
            try settings.integer("processor-connect-timeout", in: 1...60) ?? 5)
        configuration.timeout = TimeInterval(try settings.integer("processor-timeout", in: 1...29) ?? 20)
        guard let entries = settings.list("processor-base-url") else { return configuration }
        if environment == .production {
            throw ConfigurationError(
                .sandboxOnly,
                "\(ConfigurationError.Code.sandboxOnly): --processor-base-url (from "
                    + "\(settings.source("processor-base-url") ?? .defaultValue)) is a sandbox-only test setting; "
                    + "production refuses to start with it")
        }
        let types = Set(GatewayRuntime.connectors(configuration).map(\.type))
        for entry in entries {
            let parts = entry.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, types.contains(parts[0]) else {
                throw ConfigurationError(
                    .invalidValue,
                    "setting processor-base-url takes TYPE=URL entries, TYPE one of \(types.sorted().joined(separator: ", ")) "
                        + "(got \"\(entry)\")")
            }
            guard ProcessorConnectorConfiguration.isAcceptableBaseURL(parts[1]) else {
                throw ConfigurationError(
                    .invalidValue,
                    "setting processor-base-url: \(parts[0])'s URL must be https, or http to the loopback (got \"\(parts[1])\")"
                )
            }
            configuration.baseURLs[parts[0]] = parts[1]
        }
        return configuration
    }

    static func deliveryLine(_ record: WebhookDeliveryLogRecord) -> String {
        var object: [String: Any] = ["level": "info", "message": "webhook_attempt"]
        for (key, value) in record.fields { object[key] = value }
        // A log line of the CLI, not a response.
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    static func run(_ arguments: [String], _ io: CLIOutput) -> Int32 {
        let registry = registry()
        let settings: ResolvedSettings
        do {
            settings = try registry.resolve(arguments: arguments)
        } catch {
            return io.report(error, of: "orchard serve", usage: "\(header)\n\(registry.helpText)", failure: nil)
        }
        if settings.helpRequested {
            io.out(header + "\n" + registry.helpText)
            return 0
        }
        let running: Running
        do {
            running = try start(settings: settings, io: io)
        } catch {
            return io.report(error, of: "orchard serve")
        }
        io.out("Orchard gateway listening on \(running.server.baseURL) (GET /healthz; stop with Ctrl-C)")
        // SIGHUP reopens the access log (logrotate's postrotate); it no longer ends the process.
        let hangUp = ShutdownSignalHandler(signals: [SIGHUP], queue: DispatchQueue(label: "orchard.sighup"), repeats: true) {
            _ in
            do { try running.reopenLogs() } catch { io.err("orchard serve: \(error)") }
        }
        defer { hangUp.cancel() }
        let signal = running.server.runUntilShutdownSignal { _ in running.api.beginDraining() }
        running.stop()
        io.out("Orchard gateway stopped (signal \(signal))")
        return 0
    }
}

/// Runs `body` every `interval` seconds on its own thread until ``stop()``.
// Unchecked: its flags are guarded by the condition variable `condition`, which the thread waits on (not a Locked).
final class PeriodicTask: @unchecked Sendable {
    private let condition = NSCondition()
    private var stopped = false
    private var finished = false

    init(interval: TimeInterval, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread { [self] in
            while true {
                condition.lock()
                let deadline = Date(timeIntervalSinceNow: interval)
                while !stopped && condition.wait(until: deadline) {}
                let stop = stopped
                condition.unlock()
                if stop { break }
                body()
            }
            condition.withLock {
                finished = true
                condition.broadcast()
            }
        }
        thread.name = "orchard-reconcile"
        thread.start()
    }

    /// Stops the loop and waits for a run in progress to finish.
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        while !finished { condition.wait() }
        condition.unlock()
    }
}
