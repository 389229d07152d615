// swift-tools-version:6.1
// Orchard: Apple Pay, end to end, that a merchant runs on their own machines.

import PackageDescription

let package = Package(
    name: "Orchard",
    // The package uses no API newer than these (no Synchronization's Mutex or Atomic, which need macOS 15 and iOS
    // 18): its one lock box is OrchardBase's `Locked`, on NSLock. The client SDK (OrchardPay and what it imports)
    // keeps iOS 15: no Duration, clocks, Regex or other iOS 16 API (OrchardPayTests' AvailabilityTests check it on
    // Linux), and PassKit's newer features are set behind `#available`.
    platforms: [.macOS(.v14), .iOS(.v15)],
    products: [
        .library(name: "ApplePayModel", targets: ["ApplePayModel"]),
        .library(name: "ApplePayToken", targets: ["ApplePayToken"]),
        .library(name: "ApplePaySandbox", targets: ["ApplePaySandbox"]),
        .library(name: "Gateway", targets: ["Gateway"]),
        .library(name: "GatewaySQLite", targets: ["GatewaySQLite"]),
        .library(name: "GatewayPostgres", targets: ["GatewayPostgres"]),
        .library(name: "GatewayCurl", targets: ["GatewayCurl"]),
        .library(name: "GatewayProcessors", targets: ["GatewayProcessors"]),
        .library(name: "GatewayHTTP", targets: ["GatewayHTTP"]),
        .library(name: "OrchardPay", targets: ["OrchardPay"]),
        .library(name: "PassKitShim", targets: ["PassKitShim"]),
        .library(name: "OrchardPayCompat", targets: ["OrchardPayCompat"]),
        .executable(name: "orchard", targets: ["orchard"]),
    ],
    targets: [
        // MARK: C system libraries (Debian packages; Homebrew on macOS)
        .systemLibrary(
            name: "COpenSSL", pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]),
        .systemLibrary(
            name: "CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]),
        .systemLibrary(
            name: "CPostgres", pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"]), .brew(["libpq"])]),
        .systemLibrary(
            name: "CCurl", pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"]), .brew(["curl"])]),
        .systemLibrary(
            name: "CMicroHTTPD", pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"]), .brew(["libmicrohttpd"])]),

        // MARK: Libraries
        // The base every module may import: coded errors and RFC 3339 times. Foundation only (iOS too).
        .target(name: "OrchardBase"),
        // The one JSON stack: the strict parser (limits built in) and the byte writer. Foundation and OrchardBase only.
        .target(name: "OrchardJSON", dependencies: ["OrchardBase"]),
        // Foundation only: must also compile for iOS.
        .target(name: "ApplePayModel", dependencies: ["OrchardBase", "OrchardJSON"]),
        // OpenSSL wrappers shared by the token library and the gateway: owned pointers,
        // secure bytes, digests, HMAC, AES-GCM, randomness, the OpenSSL error queue.
        .target(name: "OrchardCrypto", dependencies: ["COpenSSL", "OrchardBase"]),
        .target(name: "ApplePayToken", dependencies: ["COpenSSL", "OrchardCrypto", "OrchardBase", "OrchardJSON"]),
        .target(name: "ApplePaySandbox", dependencies: ["ApplePayToken", "OrchardCrypto", "COpenSSL", "OrchardJSON"]),
        // The payment domain: services over ports (Store, Processor, PaymentTokenOpener, Clock, WebhookSender).
        .target(name: "Gateway", dependencies: ["OrchardBase", "ApplePayModel", "OrchardCrypto", "OrchardJSON"]),
        // The composition root: the adapters that implement the domain's ports on the token library and the
        // sandbox (token opener, sandbox PKI issuer and acquirer, sandbox wallet, payment-request evaluator), and
        // GatewayRuntime, which opens a SQLite or PostgreSQL store and assembles the domain over it.
        .target(
            name: "GatewayAssembly",
            dependencies: [
                "Gateway", "ApplePayModel", "ApplePayToken", "ApplePaySandbox", "OrchardBase", "OrchardCrypto",
                "GatewaySQLite", "GatewayPostgres", "GatewayProcessors",
            ]),
        // The embedded default Store.
        .target(name: "GatewaySQLite", dependencies: ["Gateway", "OrchardBase", "CSQLite"]),
        // The Store for several instances on one PostgreSQL database.
        .target(name: "GatewayPostgres", dependencies: ["Gateway", "OrchardBase", "CPostgres"]),
        // Outbound HTTP (webhook delivery, merchant validation) on libcurl.
        .target(name: "GatewayCurl", dependencies: ["Gateway", "OrchardBase", "OrchardCrypto", "CCurl"]),
        // The processor connectors (Adyen, Checkout.com) on GatewayCurl's client: each translates the decrypted
        // card data, outcomes, decline codes and notifications, and nothing else. The domain knows none of them.
        .target(
            name: "GatewayProcessors",
            dependencies: ["Gateway", "GatewayCurl", "ApplePayModel", "OrchardBase", "OrchardCrypto", "OrchardJSON"]),
        // The HTTP server framework on libmicrohttpd: request and response types, router, middleware, limits,
        // slow-client protections, TLS, metrics. It knows nothing of payments.
        .target(name: "OrchardHTTP", dependencies: ["CMicroHTTPD", "OrchardBase", "OrchardCrypto", "OrchardJSON"]),
        // The gateway's HTTP API on OrchardHTTP: routes, authentication, error mapping.
        .target(
            name: "GatewayHTTP",
            dependencies: [
                "OrchardHTTP", "OrchardBase", "Gateway", "ApplePayModel", "ApplePaySandbox",
                "OrchardCrypto",
                "OrchardJSON",
            ],
            // The browser files it serves (orchard.js, the demo store, the console: docs/web.md), compiled into the
            // module by the EmbedWebAssets build step, so a copied binary serves them.
            exclude: ["Web"],
            plugins: ["EmbedWebAssets"]),
        // The part of PassKit (and Contacts) the SDK's PassKit adapter touches, with Apple's names, for platforms
        // without PassKit: the adapter compiles and is tested on Linux against it (docs/ios.md). Foundation only;
        // a layer built on OrchardPay that speaks PassKit imports it the same way.
        .target(name: "PassKitShim"),
        // The client SDK for apps: OrchardBase, ApplePayModel and Foundation only (it ships inside iOS apps); on
        // platforms without PassKit it compiles its PassKit adapter against PassKitShim.
        .target(
            name: "OrchardPay",
            dependencies: [
                "OrchardBase", "ApplePayModel",
                .target(name: "PassKitShim", condition: .when(platforms: Package.withoutPassKit)),
            ]),
        // TapPay's and PayerMax's iOS names (TPDSetup, TPDApplePay, PMApplePayContext …) as thin layers over
        // OrchardPay's two flows (docs/ios.md, "Swift names"); PassKit's types come from PassKitShim as OrchardPay's do.
        .target(
            name: "OrchardPayCompat",
            dependencies: [
                "OrchardPay", "OrchardBase",
                .target(name: "PassKitShim", condition: .when(platforms: Package.withoutPassKit)),
            ]),
        .target(
            name: "OrchardCLI",
            dependencies: [
                "OrchardBase", "ApplePayModel", "ApplePayToken", "ApplePaySandbox", "Gateway", "GatewayAssembly",
                "GatewaySQLite", "GatewayPostgres", "GatewayCurl", "GatewayProcessors", "OrchardHTTP", "GatewayHTTP",
                "OrchardJSON", "OrchardCrypto", "COpenSSL",
            ],
            // `orchard --version` names the commit it was built from.
            plugins: ["BuildInfo"]),
        .executableTarget(name: "orchard", dependencies: ["OrchardCLI"]),
        // libFuzzer target over token handling (docs/tokens.md); built normally it replays inputs.
        .executableTarget(
            name: "TokenFuzzer", dependencies: ["ApplePayToken", "ApplePaySandbox", "OrchardCrypto", "OrchardTestSupport"]),

        // MARK: Build steps
        // Turns a target's Web folder into a generated Swift file (the build tool of EmbedWebAssets).
        .executableTarget(name: "WebAssetEmbedder"),
        .plugin(name: "EmbedWebAssets", capability: .buildTool(), dependencies: ["WebAssetEmbedder"]),
        // Records the commit a build is made from (BuildInfo.commit).
        .plugin(name: "BuildInfo", capability: .buildTool()),

        // MARK: Tests (Swift Testing)
        // Helpers the tests of several modules (and the token fuzzer) share: package paths, a seeded generator, the
        // shared conformance vectors, the stand-ins.
        .target(name: "OrchardTestSupport", dependencies: ["ApplePayToken", "GatewayCurl", "OrchardCrypto"]),
        .testTarget(
            name: "SystemLibrariesTests",
            dependencies: ["COpenSSL", "CSQLite", "CPostgres", "CCurl", "CMicroHTTPD"]),
        .testTarget(
            name: "ApplePayModelTests", dependencies: ["ApplePayModel", "OrchardBase", "OrchardTestSupport"],
            resources: [.copy("Fixtures")]),
        .testTarget(
            name: "ApplePayTokenTests",
            dependencies: ["ApplePayToken", "ApplePaySandbox", "OrchardTestSupport", "OrchardJSON"]),
        .testTarget(name: "OrchardCryptoTests", dependencies: ["OrchardCrypto"]),
        .testTarget(name: "OrchardJSONTests", dependencies: ["OrchardJSON"]),
        .testTarget(
            name: "GatewayTests",
            dependencies: [
                "Gateway", "GatewayAssembly", "GatewaySQLite", "GatewayPostgres", "GatewayCurl", "ApplePaySandbox",
                "ApplePayToken", "OrchardTestSupport",
            ]),
        // The HTTP test clients and harnesses that GatewayHTTPTests and OrchardCLITests share: a libcurl client, a
        // raw socket, the in-process API harness over GatewayRuntime, the processor stand-in harness.
        .target(
            name: "GatewayTestSupport",
            dependencies: [
                "GatewayHTTP", "OrchardHTTP", "Gateway", "GatewayAssembly", "GatewayPostgres", "GatewayProcessors",
                "ApplePayModel", "OrchardTestSupport", "CCurl",
            ]),
        // The HTTP API over GatewayAssembly's runtime, in process and on loopback (no command line).
        .testTarget(
            name: "GatewayHTTPTests",
            dependencies: [
                "GatewayHTTP", "OrchardHTTP", "Gateway", "GatewayAssembly", "GatewaySQLite", "GatewayPostgres", "CCurl",
                "ApplePaySandbox", "ApplePayModel", "ApplePayToken", "OrchardCrypto", "GatewayTestSupport",
                "OrchardTestSupport", "OrchardJSON", "OrchardBase", "GatewayProcessors", "GatewayCurl",
            ]),
        // The commands, `orchard serve` with its settings end to end among them.
        .testTarget(
            name: "OrchardCLITests",
            dependencies: [
                "OrchardCLI", "GatewayTestSupport", "GatewayHTTP", "OrchardHTTP", "Gateway", "GatewayAssembly",
                "GatewaySQLite", "GatewayPostgres", "GatewayProcessors", "GatewayCurl", "ApplePaySandbox",
                "ApplePayModel", "ApplePayToken", "OrchardCrypto", "OrchardTestSupport", "OrchardJSON", "OrchardBase",
                "CCurl",
            ]),
        .testTarget(
            name: "GatewayProcessorsTests",
            dependencies: [
                "GatewayProcessors", "Gateway", "GatewayCurl", "OrchardCrypto", "OrchardJSON", "OrchardBase",
                "OrchardTestSupport",
            ]),
        // The client SDK, and the seed's TapPay and PayerMax samples on OrchardPayCompat (Compat/), against a real
        // gateway served in-process on loopback.
        .testTarget(
            name: "OrchardPayTests",
            dependencies: [
                "OrchardPay", "OrchardPayCompat", "GatewayHTTP", "OrchardHTTP", "Gateway", "GatewayAssembly", "OrchardTestSupport",
                .target(name: "PassKitShim", condition: .when(platforms: Package.withoutPassKit)),
            ]),
    ],
    swiftLanguageModes: [.v6]
)

extension Package {
    /// The platforms without PassKit, where OrchardPay's adapter compiles against PassKitShim.
    static var withoutPassKit: [Platform] { [.linux, .windows, .android, .wasi, .openbsd] }
}
