import ApplePayModel
import ApplePaySandbox
import ApplePayToken
import Foundation
import Gateway
import GatewayPostgres
import GatewayProcessors
import GatewaySQLite
import OrchardBase
import OrchardCrypto

/// The gateway over a SQLite or PostgreSQL database: master key, store, sandbox PKI and sandbox merchant, token
/// opener, sandbox acquirer. `orchard serve`, `orchard merchant show` and `orchard sandbox mint --database` share it.
public final class GatewayRuntime: Sendable {
    /// How to open a database.
    public struct Options: Sendable {
        /// The SQLite file (created with its parent directory when missing), unless ``postgres`` is set.
        public var databasePath: String
        /// A PostgreSQL database to run on instead of the SQLite file; its master key must be given
        /// (``masterKeyHex`` or ``masterKeyFile``), since every instance on the database shares it.
        public var postgres: PostgresStore.Configuration?
        /// `sandbox` provisions the sandbox merchant; `production` needs a master key.
        public var environment: GatewayEnvironment = .sandbox
        /// Whether the sandbox environment provisions the sandbox merchant (`orchard merchant` subcommands that
        /// manage merchants by id open a database without adding one).
        public var provisionsSandbox = true
        /// Who the audit log records for what opening the database changes (the sandbox merchant's provisioning):
        /// the command that opens it.
        public var auditActor: AuditActor = .unknown
        /// 64 hex digits; else `masterKeyFile`; else `<database>.master-key` (generated in sandbox).
        public var masterKeyHex: String?
        /// A file holding the master key in hex.
        public var masterKeyFile: String?
        /// Apple Root CA - G3 (PEM), the production trust anchor; when it is given, the sandbox trusts it beside
        /// the sandbox PKI (a device's tokens made with an Apple sandbox tester account).
        public var appleRootPath: String?
        /// The tokens' signing-time window.
        public var window: SigningTimeWindow = .default
        /// The domain's tunables.
        public var configuration = GatewayConfiguration()
        /// The process environment as the CLI's settings read it: where the default Apple root is
        /// (`ORCHARD_APPLE_ROOT`, `ORCHARD_DATA_DIR`, `HOME`) when ``appleRootPath`` is not given.
        public var variables: [String: String] = [:]
        /// The sandbox acquirer's behavior.
        public var acquirer = SandboxAcquirer.Configuration()
        /// Whether the SQLite store takes the database file's single-instance lock (``SQLiteInstanceLock``):
        /// `orchard serve` does, so a second one on the same file, by whatever path, is refused.
        public var singleInstance = false
        /// How the processor connectors (Adyen, Checkout.com) reach their processors.
        public var processors = ProcessorConnectorConfiguration()

        /// Options for `databasePath`.
        public init(databasePath: String) { self.databasePath = databasePath }
    }

    /// The options it was opened with.
    public let options: Options
    /// The store: SQLite, or PostgreSQL.
    public let store: any Store
    /// The domain over the store, the sandbox acquirer and the token library.
    public let gateway: GatewayService
    /// The sandbox PKI and merchant (sandbox mode).
    public let sandbox: SandboxSetup?
    /// The sandbox token minter (sandbox mode): `orchard sandbox mint` and the sandbox wallet route.
    public let sandboxWallet: SandboxWallet?
    /// A warning for the operator (e.g. a missing Apple root in production), if any.
    public let warnings: [String]

    /// Opens (creating and migrating) the database and, in sandbox mode, provisions the sandbox merchant.
    public init(_ options: Options, clock: any GatewayClock = SystemClock()) throws {
        self.options = options
        let directory = (options.databasePath as NSString).deletingLastPathComponent
        if options.postgres == nil, !directory.isEmpty {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        // Before the master key: a second instance is refused before it could make a key file for another name
        // of the same database.
        let instanceLock =
            options.postgres == nil && options.singleInstance
            ? try SQLiteInstanceLock(databasePath: options.databasePath) : nil
        let masterKey: MasterKey
        if let hex = options.masterKeyHex, !hex.isEmpty {
            masterKey = try MasterKey(hex: hex.trimmingCharacters(in: .whitespacesAndNewlines))
        } else if let file = options.masterKeyFile {
            guard let key = try MasterKey.read(file: URL(fileURLWithPath: file)) else {
                throw GatewayError(.masterKeyMissing, "cannot read the master key file \(file)")
            }
            masterKey = key
        } else if options.postgres != nil {
            throw GatewayError(
                .masterKeyMissing,
                "a PostgreSQL database needs its master key given (--master-key, ORCHARD_MASTER_KEY or --master-key-file)"
            )
        } else {
            masterKey = try MasterKey.load(forDatabase: options.databasePath, environment: options.environment)
        }
        let cipher = EnvelopeCipher(masterKey: masterKey)
        if let postgres = options.postgres {
            do {
                store = try PostgresStore(postgres)
            } catch let error as PostgresError {
                throw GatewayError(
                    .storageFailure, "cannot open \(redactedDatabaseURL(postgres.url)): \(error.message)")
            }
        } else {
            store = try SQLiteStore(path: options.databasePath, instanceLock: instanceLock)
        }
        var warnings: [String] = []
        var productionAnchor: TrustAnchor?
        let rootPath =
            options.appleRootPath ?? TrustAnchor.defaultAppleRootPath(environment: options.variables)
        if FileManager.default.fileExists(atPath: rootPath) {
            productionAnchor = try TrustAnchor.appleRoot(contentsOf: rootPath)
        } else if options.environment == .production {
            warnings.append("no Apple root certificate at \(rootPath): production tokens will be refused")
        }
        let registry = MerchantRegistry(store: store, cipher: cipher, clock: clock)
        var sandbox: SandboxSetup?
        if options.environment == .sandbox, options.provisionsSandbox {
            sandbox = try registry.ensureSandbox(
                issuer: SandboxPKIIssuer(), name: "Orchard Sandbox Store",
                merchantIdentifier: "merchant.invalid.orchard.sandbox", scope: RequestScope(actor: options.auditActor))
        }
        var anchors: [GatewayEnvironment: [TrustAnchor]] = [:]
        if let sandbox { anchors[.sandbox] = [try TrustAnchor(pem: sandbox.trustAnchorPEM)] }
        // A sandbox merchant trusts Apple Root CA - G3 too when it is given: tokens from a device signed in with an
        // Apple sandbox tester account are signed by Apple's chain. Production trusts Apple's root only.
        if options.appleRootPath != nil, let productionAnchor {
            anchors[.sandbox, default: []].append(productionAnchor)
        }
        if let productionAnchor { anchors[.production] = [productionAnchor] }
        self.sandbox = sandbox
        sandboxWallet = try sandbox.map { try SandboxWallet(setup: $0, merchants: registry) }
        self.warnings = warnings
        gateway = GatewayService(
            configuration: options.configuration, store: store,
            processor: SandboxAcquirer(ledger: store, clock: clock, configuration: options.acquirer),
            connectors: Self.connectors(options.processors),
            tokenOpener: ApplePayTokenOpener(anchors: anchors, window: options.window),
            currencies: ISO4217Currencies(), paymentRequests: ApplePayRequestEvaluator(), cipher: cipher, clock: clock)
    }

    /// The processor connectors merchants may configure (`PUT /v1/processor`).
    public static func connectors(_ configuration: ProcessorConnectorConfiguration) -> [any ProcessorConnector] {
        [AdyenConnector(configuration: configuration), CheckoutComConnector(configuration: configuration)]
    }

    /// The sandbox merchant (the first one), when provisioned.
    public var sandboxMerchant: Merchant? { sandbox?.merchant }
}

extension GatewayRuntime {
    /// A token for the sandbox merchant's active processing certificate, signed at `date` by the sandbox PKI
    /// (``SandboxWallet``); `pan` defaults to the default test card's.
    public func mintSandboxToken(
        amount: Int64, currency: Currency, pan: String? = nil, network: String = "Visa", type: String = "credit",
        at date: Date = Date()
    ) throws -> Data {
        guard let wallet = sandboxWallet, let merchant = sandboxMerchant else {
            throw GatewayError(.notFound, "the database has no sandbox PKI")
        }
        return try wallet.mintToken(
            merchant: merchant, amount: amount, currency: currency, pan: pan ?? SandboxTestCard.visaCredit.pan,
            network: network, type: type, at: date)
    }
}
