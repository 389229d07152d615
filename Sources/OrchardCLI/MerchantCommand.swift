import ApplePayModel
import Foundation
import Gateway
import GatewayAssembly
import OrchardBase
import OrchardCrypto
import OrchardJSON

/// `orchard merchant create|list|show|rotate-secret-key|rotate-app-key|disable|enable|end-console-sessions|
/// release-domain|set-processor`: the gateway's merchants from the command line, on the database `serve` runs on. Each change is
/// recorded in the audit log under the command's name (`orchard merchant disable`).
enum MerchantCommand {
    static let command = CLI.Command(
        name: "merchant",
        summary:
            "merchants: create, list, show, rotate-secret-key, rotate-app-key, disable, enable, end-console-sessions, "
            + "release-domain, set-processor",
        run: run)

    /// The options every subcommand takes.
    static let databaseUsage = """
        Every subcommand takes --database sqlite:PATH|postgres://… (default sqlite:./orchard.db), --json, and the
        master key as serve takes it: --master-key HEX, ORCHARD_MASTER_KEY, --master-key-file FILE, or (SQLite)
        <database>.master-key. Only a new sandbox merchant on a new database generates a master key.
        """

    static let usage = """
        usage: orchard merchant create --environment production|sandbox --name NAME --merchant-identifier merchant.com.…
                                      [--country TW] [--currencies TWD,USD]
               orchard merchant list
               orchard merchant show [--merchant-id ID]
               orchard merchant rotate-secret-key --merchant-id ID [--overlap-hours 24]
               orchard merchant rotate-app-key --merchant-id ID
               orchard merchant disable --merchant-id ID
               orchard merchant enable --merchant-id ID
               orchard merchant end-console-sessions --merchant-id ID
               orchard merchant release-domain --domain D
               orchard merchant set-processor --merchant-id ID --config FILE

          create             a merchant with fresh credentials: prints merchant_id, app_id, app_key and
                             secret_key once (production keeps only their hashes)
          list               every merchant: id, environment, status, name, merchant identifier
          show               one merchant (no secret of a production merchant); without --merchant-id, the sandbox
                             merchant with its keys, provisioned if the database has none
          rotate-secret-key  a new secret key, printed once; the old one keeps working for --overlap-hours
                             (default 24, 0 to 720), then is refused with invalid_credentials, and the console
                             sessions opened with it end with it
          rotate-app-key     a new app key, printed once; the old one stops at once (the app id stays); the
                             merchant's console sessions end
          disable            every request of the merchant answers 403 merchant_disabled; its data stays; its
                             console sessions end (enable does not bring them back)
          enable             undoes disable
          end-console-sessions
                             signs the merchant out of the console everywhere: every session ends at once
          release-domain     frees an Apple Pay domain from the merchant that registered it (a conflict the
                             operator settles), so its owner can register it
          set-processor      the merchant's processor settings from a JSON file (the body of PUT /v1/processor):
                             prints the type, environment, version and each secret's last four characters

        \(databaseUsage)
        """

    /// A subcommand: its own options, usage and body, which passes the command line's scope (its audit actor,
    /// `orchard merchant` and the subcommand) to every operation it calls.
    struct Action: Sendable {
        var options: Set<String>
        var usage: String
        var run: @Sendable (Arguments, CLIOutput, RequestScope) throws -> Int32
    }

    static let actions: [String: Action] = [
        "create": Action(
            options: ["environment", "name", "merchant-identifier", "country", "currencies", "web-origins"],
            usage: """
                usage: orchard merchant create --environment production|sandbox --name NAME
                                              --merchant-identifier merchant.com.… [--merchant-identifier …]
                                              [--country TW] [--currencies TWD,USD]
                                              [--web-origins https://shop.example,…] [--database DB] [--json]

                Creates a merchant and prints merchant_id, app_id, app_key and secret_key. They are shown once:
                a production merchant's keys are stored only as hashes and cannot be shown again (a sandbox
                merchant's stay retrievable with orchard merchant show). --name is 1 to 100 characters; each
                --merchant-identifier is an Apple merchant identifier (merchant.…); --country is ISO 3166-1
                alpha-2 (default TW); --currencies lists the ISO 4217 codes it accepts (default: any);
                --web-origins lists the origins of the web pages that call its client routes (CORS; at most 50).

                \(databaseUsage)
                """, run: create),
        "list": Action(
            options: [],
            usage: """
                usage: orchard merchant list [--database DB] [--json]

                Lists every merchant, oldest first: merchant_id, environment, status (active or disabled), name
                and merchant identifier.

                \(databaseUsage)
                """, run: list),
        "show": Action(
            options: ["merchant-id"],
            usage: """
                usage: orchard merchant show [--merchant-id ID] [--database DB] [--json] [--master-key HEX]

                With --merchant-id: the merchant's ids, status, identifiers, currencies, the public part of its
                secret key (sk_live_ and the key id), its processing keys and identity certificate with their
                expiry, its Apple Pay domains, webhook URL and TapPay merchant alias. A sandbox merchant's app key and secret key are
                shown too; a production merchant's never are (only their hashes are stored).

                Without --merchant-id: the sandbox merchant's merchant_id, app_id, app_key, secret_key (sandbox
                keys stay retrievable locally), merchant_identifier and the active processing certificate (PEM).
                Provisions the sandbox merchant if the database has none yet. An existing database whose key file
                is missing is refused (master_key_missing), never given a new key.

                \(databaseUsage)
                """, run: show),
        "rotate-secret-key": Action(
            options: ["merchant-id", "overlap-hours"],
            usage: """
                usage: orchard merchant rotate-secret-key --merchant-id ID [--overlap-hours 24] [--database DB] [--json]

                Replaces the merchant's secret key and prints the new one once. The old key keeps working for
                --overlap-hours (a whole number, 0 to 720; default 24) so servers can move over, then it is
                refused with 401 invalid_credentials. A key replaced by an earlier rotation stops at once.
                Console sessions opened with a key end when it stops working: at once with --overlap-hours 0.

                \(databaseUsage)
                """, run: rotateSecretKey),
        "rotate-app-key": Action(
            options: ["merchant-id"],
            usage: """
                usage: orchard merchant rotate-app-key --merchant-id ID [--database DB] [--json]

                Replaces the merchant's app key (the key its apps and web pages send with the app id, which
                stays) and prints the new one once. The old app key stops working at once, and every console
                session of the merchant ends.

                \(databaseUsage)
                """, run: rotateAppKey),
        "disable": Action(
            options: ["merchant-id"],
            usage: """
                usage: orchard merchant disable --merchant-id ID [--database DB] [--json]

                Disables the merchant: every client and server route answers its credentials with
                403 merchant_disabled, and its console sessions end (enable does not bring them back). Its
                payments, keys and settings stay; orchard merchant enable restores it.

                \(databaseUsage)
                """, run: { try setDisabled($0, $1, $2, true) }),
        "enable": Action(
            options: ["merchant-id"],
            usage: """
                usage: orchard merchant enable --merchant-id ID [--database DB] [--json]

                Enables a disabled merchant again: its credentials open its routes as before.

                \(databaseUsage)
                """, run: { try setDisabled($0, $1, $2, false) }),
        "end-console-sessions": Action(
            options: ["merchant-id"],
            usage: """
                usage: orchard merchant end-console-sessions --merchant-id ID [--database DB] [--json]

                Signs the merchant out of the console everywhere: every console session ends at once, on every
                instance (its cookie answers 401 invalid_credentials), as the console's "Sign out everywhere"
                button does. Prints merchant_id and ended_sessions (how many ended), recorded in the audit log as
                console.sessions_end. The merchant's keys are not changed: sign in again with the secret key.

                \(databaseUsage)
                """, run: endConsoleSessions),
        "release-domain": Action(
            options: ["domain"],
            usage: """
                usage: orchard merchant release-domain --domain D [--database DB] [--json]

                Removes the Apple Pay domain D from the merchant that registered it and prints that merchant_id
                and the domain; recorded in that merchant's audit log as apple_pay_domain.release. A domain is
                registered by one merchant of the gateway, so another merchant asking for it gets
                409 domain_already_registered: once you have checked who owns the domain (its DNS, or Apple's
                verification of the domain association file on it), release it here and let its owner register
                it (PUT /v1/apple-pay/domains). Exit 1 when no merchant has it.

                \(databaseUsage)
                """, run: releaseDomain),
        "set-processor": Action(
            options: ["merchant-id", "config"],
            usage: """
                usage: orchard merchant set-processor --merchant-id ID --config FILE [--database DB]
                                                     [--master-key-file F] [--json]

                Stores new processor settings for the merchant from FILE, a JSON object exactly as PUT /v1/processor
                takes it (docs/processors.md):
                  {"type": "adyen", "environment": "test"|"live", "merchant_account": "…", "api_key": "…",
                   "hmac_key": "<hex>", "live_url_prefix": "…" (live only),
                   "notification_username": "…", "notification_password": "…" (optional)}
                  {"type": "checkout_com", "environment": "sandbox"|"production", "secret_key": "sk_…",
                   "processing_channel_id": "pc_…", "webhook_secret": "…"}
                  {"type": "sandbox"}  (the sandbox acquirer; sandbox merchants only)
                The secrets are sealed with the master key; the command prints the type, the environment, the new
                version, the fields that are not secret and each secret's last four characters. Payments made
                before keep the settings they were authorized under. A live or production environment for a sandbox
                merchant, or the sandbox acquirer for a production one, is refused (processor_not_allowed).

                \(databaseUsage)
                """, run: setProcessor),
    ]

    static func run(_ arguments: [String], _ io: CLIOutput) -> Int32 {
        guard let name = arguments.first, let action = actions[name] else {
            return io.unknownSubcommand(arguments, usage: usage, command: "orchard merchant", emptyStatus: 0)
        }
        do {
            let parsed = try Arguments.parse(
                Array(arguments.dropFirst()),
                options: action.options.union(["database", "master-key", "master-key-file"]), flags: ["json"])
            return try action.run(parsed, io, RequestScope(actor: CLI.auditActor("merchant", arguments)))
        } catch {
            return io.report(error, of: "orchard merchant \(name)", usage: action.usage)
        }
    }

    // MARK: Opening the database

    /// The database's runtime options from the command line.
    static func options(_ parsed: Arguments) throws -> GatewayRuntime.Options {
        var options = try GatewayDatabase.options(parsed.value("database") ?? "sqlite:./orchard.db")
        options.masterKeyHex = parsed.masterKeyHex
        options.masterKeyFile = parsed.value("master-key-file")
        return options
    }

    /// The merchants of the database, opened without provisioning anything. A master key is generated only for
    /// `newSandbox` (a sandbox merchant created on a new SQLite database), as `serve` would in the sandbox.
    static func registry(_ parsed: Arguments, newSandbox: Bool = false) throws -> MerchantRegistry {
        var options = try options(parsed)
        options.environment = newSandbox ? .sandbox : .production
        options.provisionsSandbox = false
        return try GatewayRuntime(options).gateway.merchants
    }

    // MARK: Subcommands

    static func create(_ parsed: Arguments, _ io: CLIOutput, _ scope: RequestScope) throws -> Int32 {
        let environment: GatewayEnvironment
        switch try parsed.required("environment") {
        case "production": environment = .production
        case "sandbox": environment = .sandbox
        case let other: throw UsageError("--environment must be production or sandbox, not \(other)")
        }
        let name = try parsed.required("name")
        let identifiers = parsed.values("merchant-identifier")
        guard !identifiers.isEmpty else { throw UsageError("missing required option --merchant-identifier") }
        for identifier in identifiers {
            guard identifier.hasPrefix("merchant."), identifier.count > "merchant.".count, identifier.count <= 255,
                identifier.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || ".-_".contains($0)) })
            else {
                throw UsageError(
                    "--merchant-identifier must be an Apple merchant identifier like merchant.com.example, not \(identifier)"
                )
            }
        }
        let country = parsed.value("country") ?? "TW"
        guard country.count == 2, country == country.uppercased(), (try? CountryCode(country)) != nil else {
            throw UsageError("--country must be an ISO 3166-1 alpha-2 code in capitals (TW), not \(country)")
        }
        var currencies: [String] = []
        if let list = parsed.value("currencies") {
            for code in list.split(separator: ",", omittingEmptySubsequences: false).map(String.init) {
                guard code == code.uppercased(), (try? Currency(code: code)) != nil else {
                    throw UsageError("--currencies lists ISO 4217 codes in capitals (TWD,USD); \(code) is not one")
                }
                if !currencies.contains(code) { currencies.append(code) }
            }
        }
        let origins = parsed.value("web-origins").map { $0.split(separator: ",").map(String.init) } ?? []
        let registry = try registry(parsed, newSandbox: environment == .sandbox)
        let (merchant, credentials) = try registry.create(
            MerchantSpec(
                name: name, environment: environment, countryCode: country, merchantIdentifiers: identifiers,
                allowedCurrencies: currencies, webOrigins: origins), scope: scope)
        try emit(
            [
                ("merchant_id", merchant.id), ("environment", merchant.environment.rawValue), ("name", merchant.name),
                ("app_id", credentials.appID), ("app_key", credentials.appKey),
                ("secret_key", credentials.secretKey), ("merchant_identifiers", merchant.merchantIdentifiers),
                ("country", merchant.countryCode), ("currencies", merchant.allowedCurrencies),
                ("web_origins", merchant.webOrigins), ("created_at", RFC3339.string(merchant.createdAt)),
            ], parsed, io)
        if environment == .production {
            io.err("The app key and secret key are shown only now: store them safely; only their hashes are kept.")
        }
        return 0
    }

    static func list(_ parsed: Arguments, _ io: CLIOutput, _ scope: RequestScope) throws -> Int32 {
        let registry = try registry(parsed)
        let merchants = try GatewayEnvironment.allCases.flatMap { try registry.merchants(environment: $0) }
            .sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
        if parsed.flag("json") {
            let data = merchants.map { merchant -> [String: Any] in
                [
                    "merchant_id": merchant.id, "environment": merchant.environment.rawValue, "name": merchant.name,
                    "status": status(merchant), "merchant_identifiers": merchant.merchantIdentifiers,
                    "app_id": merchant.appID, "created_at": RFC3339.string(merchant.createdAt),
                ]
            }
            io.out(try json(["data": data]))
        } else {
            io.out(["MERCHANT_ID", "ENVIRONMENT", "STATUS", "NAME", "MERCHANT_IDENTIFIER"].joined(separator: "\t"))
            for merchant in merchants {
                io.out(
                    [
                        merchant.id, merchant.environment.rawValue, status(merchant), merchant.name,
                        merchant.merchantIdentifiers.joined(separator: ","),
                    ].joined(separator: "\t"))
            }
        }
        return 0
    }

    static func show(_ parsed: Arguments, _ io: CLIOutput, _ scope: RequestScope) throws -> Int32 {
        guard let id = parsed.value("merchant-id") else { return try showSandbox(parsed, io, scope) }
        let registry = try registry(parsed)
        let merchant = try registry.merchant(id: id)
        var fields: [(String, Any?)] = [
            ("merchant_id", merchant.id), ("environment", merchant.environment.rawValue), ("name", merchant.name),
            ("status", status(merchant)), ("app_id", merchant.appID),
        ]
        if merchant.environment == .sandbox {
            let credentials = try registry.credentials(merchantID: id)
            fields += [("app_key", credentials.appKey), ("secret_key", credentials.secretKey)]
        }
        let keys = try registry.processingCertificates(merchantID: id).map { key -> [String: Any] in
            let notAfter = (try? X509Certificate(pem: key.certificatePEM)).map { RFC3339.string($0.notAfter) }
            return ["id": key.id, "active": key.active, "not_after": notAfter ?? NSNull()]
        }
        let identity = (try registry.identity(merchantID: id)).flatMap { try? X509Certificate(pem: $0.certificatePEM) }
        fields += [
            ("secret_key_prefix", merchant.secretKeyPrefix),
            ("previous_secret_key_expires_at", merchant.previousSecretKeyExpiresAt.map(RFC3339.string)),
            ("merchant_identifiers", merchant.merchantIdentifiers), ("country", merchant.countryCode),
            ("currencies", merchant.allowedCurrencies), ("web_origins", merchant.webOrigins),
            ("webhook_url", merchant.webhookURL), ("tappay_merchant_alias", merchant.tappayMerchantAlias),
            ("tappay_app_id", merchant.tappayAppID),
            ("apple_pay_domains", merchant.applePayDomains), ("processing_keys", keys),
            ("identity_certificate_expires_at", identity.map { RFC3339.string($0.notAfter) }),
            ("disabled_at", merchant.disabledAt.map(RFC3339.string)),
            ("created_at", RFC3339.string(merchant.createdAt)),
        ]
        try emit(fields, parsed, io)
        return 0
    }

    static func rotateSecretKey(_ parsed: Arguments, _ io: CLIOutput, _ scope: RequestScope) throws -> Int32 {
        let id = try parsed.required("merchant-id")
        let hours = parsed.value("overlap-hours") ?? "24"
        guard let overlap = Int(hours), (0...720).contains(overlap) else {
            throw UsageError("--overlap-hours is a whole number of hours from 0 to 720, not \(hours)")
        }
        let rotated = try registry(parsed).rotateSecretKey(
            merchantID: id, overlap: TimeInterval(overlap * 3600), scope: scope)
        try emit(
            [
                ("merchant_id", id), ("secret_key", rotated.key),
                ("previous_secret_key_expires_at", rotated.previousKeyExpiresAt.map(RFC3339.string)),
            ], parsed, io)
        return 0
    }

    static func rotateAppKey(_ parsed: Arguments, _ io: CLIOutput, _ scope: RequestScope) throws -> Int32 {
        let id = try parsed.required("merchant-id")
        let registry = try registry(parsed)
        let rotated = try registry.rotateAppKey(merchantID: id, scope: scope)
        try emit(
            [("merchant_id", id), ("app_id", try registry.merchant(id: id).appID), ("app_key", rotated.key)], parsed,
            io)
        return 0
    }

    static func setDisabled(
        _ parsed: Arguments, _ io: CLIOutput, _ scope: RequestScope, _ disabled: Bool
    ) throws -> Int32 {
        let merchant = try registry(parsed).setDisabled(
            merchantID: try parsed.required("merchant-id"), disabled, scope: scope)
        try emit([("merchant_id", merchant.id), ("status", status(merchant))], parsed, io)
        return 0
    }

    static func endConsoleSessions(_ parsed: Arguments, _ io: CLIOutput, _ scope: RequestScope) throws -> Int32 {
        let id = try parsed.required("merchant-id")
        let ended = try registry(parsed).endConsoleSessions(merchantID: id, reason: .signOutEverywhere, scope: scope)
        try emit([("merchant_id", id), ("ended_sessions", ended)], parsed, io)
        return 0
    }

    static func releaseDomain(_ parsed: Arguments, _ io: CLIOutput, _ scope: RequestScope) throws -> Int32 {
        let text = try parsed.required("domain")
        guard let domain = ApplePayDomain.normalized(text) else {
            throw UsageError("--domain is a host name such as shop.example (no scheme, port or path), not \(text)")
        }
        let merchantID = try registry(parsed).releaseApplePayDomain(domain, scope: scope)
        try emit([("merchant_id", merchantID), ("domain", domain)], parsed, io)
        return 0
    }

    static func setProcessor(_ parsed: Arguments, _ io: CLIOutput, _ scope: RequestScope) throws -> Int32 {
        let id = try parsed.required("merchant-id")
        let path = try parsed.required("config")
        guard let data = FileManager.default.contents(atPath: path) else {
            throw UsageError("cannot read the processor settings file \(path)")
        }
        let json: JSONValue
        do { json = try JSONValue.parse(data) } catch {
            throw UsageError("\(path) is not JSON: \(error)")
        }
        var options = try options(parsed)
        options.environment = .production
        options.provisionsSandbox = false
        let gateway = try GatewayRuntime(options).gateway
        let view = try gateway.setProcessorSettings(
            merchantID: id, body: try ProcessorSettingsBody.fields(json), scope: scope)
        try emit(
            [
                ("merchant_id", id), ("type", view.type), ("environment", view.environment),
                ("version", view.version), ("fields", view.fields.isEmpty ? nil : view.fields),
                ("secret_hints", view.secretHints.isEmpty ? nil : view.secretHints.mapValues { "…" + $0 }),
            ], parsed, io)
        return 0
    }

    /// The sandbox merchant, provisioned when missing, with its keys (`orchard merchant show` without an id).
    static func showSandbox(_ parsed: Arguments, _ io: CLIOutput, _ scope: RequestScope) throws -> Int32 {
        var options = try options(parsed)
        options.auditActor = scope.actor
        let runtime = try GatewayRuntime(options)
        guard let merchant = runtime.sandboxMerchant else {
            io.err("orchard merchant show: no sandbox merchant")
            return 1
        }
        let credentials = try runtime.gateway.merchants.credentials(merchantID: merchant.id)
        let certificate = try runtime.gateway.merchants.processingCertificates(merchantID: merchant.id)
            .last { $0.active }?.certificatePEM
        let fields: [(String, Any)] = [
            ("merchant_id", merchant.id), ("app_id", credentials.appID), ("app_key", credentials.appKey),
            ("secret_key", credentials.secretKey), ("merchant_identifier", merchant.merchantIdentifiers.first ?? ""),
            ("tappay_merchant_alias", merchant.tappayMerchantAlias ?? NSNull()),
            ("tappay_app_id", merchant.tappayAppID ?? NSNull()),
            ("processing_certificate_pem", certificate ?? NSNull()),
        ]
        if parsed.flag("json") {
            io.out(try json(Dictionary(uniqueKeysWithValues: fields)))
        } else {
            for (name, value) in fields.dropLast() { io.out("\(name): \(value is NSNull ? "(none)" : value)") }
            io.out("processing_certificate_pem:\n\(certificate ?? "(none)")")
        }
        return 0
    }

    // MARK: Output

    static func status(_ merchant: Merchant) -> String { merchant.isDisabled ? "disabled" : "active" }

    /// Prints `fields` as a JSON object (`--json`) or as `name: value` lines (lists joined with commas, absent
    /// values as `(none)`, objects as their JSON).
    static func emit(_ fields: [(String, Any?)], _ parsed: Arguments, _ io: CLIOutput) throws {
        if parsed.flag("json") {
            io.out(try json(Dictionary(uniqueKeysWithValues: fields.map { ($0.0, $0.1 ?? NSNull()) })))
            return
        }
        for (name, value) in fields {
            switch value {
            case nil: io.out("\(name): (none)")
            case let list as [String]: io.out("\(name): \(list.isEmpty ? "(none)" : list.joined(separator: ", "))")
            case let object as [String: String]: io.out("\(name): " + (try json(object, pretty: false)))
            case let objects as [[String: Any]]:
                io.out("\(name):\(objects.isEmpty ? " (none)" : "")")
                for object in objects { io.out("  " + (try json(object, pretty: false))) }
            case let value?: io.out("\(name): \(value)")
            }
        }
    }

    /// `object` as JSON text. The CLI's own output (`--json`), in the pretty-printed form of Foundation that
    /// scripts already read: not request handling.
    static func json(_ object: Any, pretty: Bool = true) throws -> String {
        var options: JSONSerialization.WritingOptions = [.sortedKeys, .withoutEscapingSlashes]
        if pretty { options.insert(.prettyPrinted) }
        return String(decoding: try JSONSerialization.data(withJSONObject: object, options: options), as: UTF8.self)
    }
}
