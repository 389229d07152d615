import OrchardBase
import Foundation

/// The client SDK's set-up (TapPay's `TPDSetup`): the app's client credentials and the gateway, the sheet
/// provider that answers availability, and an optional log handler.
///
/// ```swift
/// OrchardPaySDK.setup(appID: "app_…", appKey: "ak_…", environment: .sandbox,
///                     gatewayURL: URL(string: "https://pay.example.com"))
/// ```
public enum OrchardPaySDK {
    /// Which gateway environment the credentials belong to.
    public enum Environment: String, Hashable, Sendable {
        /// Test credentials: the sandbox acquirer, the sandbox wallet, no real money.
        case sandbox
        /// Live credentials.
        case production
    }

    /// What the SDK needs to call the gateway.
    public struct Configuration: Sendable {
        /// The gateway's app id (`app_…`), sent as `X-Orchard-App-Id`.
        public var appID: String
        /// The app key, sent as `X-Orchard-App-Key`; safe to ship in an app, never logged.
        public var appKey: String
        /// The environment of the credentials.
        public var environment: Environment
        /// The gateway's base URL (`https://pay.example.com`); the sandbox default is a local `orchard serve`,
        /// ``defaultSandboxURL``.
        public var gatewayURL: URL
        /// How long one request may take before it counts as lost, in seconds (default 30).
        public var requestTimeout: TimeInterval = 30
        /// How many times a request whose answer was lost is sent again with the same `Idempotency-Key`
        /// (default 2). The gateway answers a retry from its idempotency store, so a payment is charged once.
        public var retryLimit: Int = 2
        /// The pause before a retry, in seconds (default 0.3).
        public var retryDelay: TimeInterval = 0.3

        /// A configuration.
        public init(appID: String, appKey: String, environment: Environment, gatewayURL: URL) {
            self.appID = appID
            self.appKey = appKey
            self.environment = environment
            self.gatewayURL = gatewayURL
        }
    }

    /// The gateway a sandbox set-up without a URL talks to: `orchard serve`'s default address.
    public static let defaultSandboxURL = URL(string: "http://127.0.0.1:8080")!

    /// Sets the SDK up (TapPay's `TPDSetup.setWithAppId`). `gatewayURL` is required in production (there is
    /// no hosted gateway: the merchant runs it); in the sandbox it defaults to ``defaultSandboxURL``.
    ///
    /// Calling it again replaces the set-up for the checkouts started afterwards.
    public static func setup(appID: String, appKey: String, environment: Environment, gatewayURL: URL? = nil) {
        let url = gatewayURL ?? (environment == .sandbox ? defaultSandboxURL : nil)
        state.withLock {
            $0.configuration = url.map {
                Configuration(appID: appID, appKey: appKey, environment: environment, gatewayURL: $0)
            }
            $0.setupError =
                url == nil
                ? CheckoutError(
                    code: CheckoutError.gatewayNotConfigured,
                    message: "OrchardPaySDK.setup needs the gateway's URL in production") : nil
        }
    }

    /// Sets the SDK up with a full configuration (timeouts, retries).
    public static func setup(_ configuration: Configuration) {
        state.withLock {
            $0.configuration = configuration
            $0.setupError = nil
        }
    }

    /// The current configuration, `nil` before ``setup(appID:appKey:environment:gatewayURL:)``.
    public static var configuration: Configuration? { state.withLock { $0.configuration } }

    /// A gateway client for the current set-up; `not_set_up` or `gateway_not_configured` without one.
    public static func gatewayClient() throws(CheckoutError) -> GatewayClient {
        let (configuration, error) = state.withLock { ($0.configuration, $0.setupError) }
        if let error { throw error }
        guard let configuration else {
            throw CheckoutError(code: CheckoutError.notSetUp, message: "call OrchardPaySDK.setup before paying")
        }
        return GatewayClient(configuration: configuration)
    }

    /// `client`, or the one for the current set-up when `nil`.
    static func gatewayClient(_ client: GatewayClient?) throws(CheckoutError) -> GatewayClient {
        if let client { return client }
        return try gatewayClient()
    }

    // MARK: Availability

    /// What answers ``canMakePayments()``: PassKit on Apple platforms, none elsewhere (then the answer is
    /// false) unless the app sets one, e.g. ``SimulatedPaymentSheet/Availability``.
    public static var sheetProvider: (any PaymentSheetProvider)? {
        get { state.withLock { $0.provider } }
        set { state.withLock { $0.provider = newValue } }
    }

    /// Whether the device can pay with Apple Pay at all
    /// (`PKPaymentAuthorizationController.canMakePayments()`).
    public static func canMakePayments() -> Bool { sheetProvider?.canMakePayments() ?? false }

    /// Whether the customer has a card of one of `networks` in the wallet
    /// (`PKPaymentAuthorizationController.canMakePayments(usingNetworks:)`). False with
    /// ``canMakePayments()`` true means: show the "Set up Apple Pay" button (TapPay's guidance).
    public static func canMakePayments(usingNetworks networks: [PaymentNetwork]) -> Bool {
        sheetProvider?.canMakePayments(usingNetworks: networks) ?? false
    }

    /// Whether the customer has a card of one of `networks` that `capabilities` accept: with
    /// `MerchantCapability.supportsCredit` or `MerchantCapability.supportsDebit`, a card of that kind
    /// (`PKPaymentAuthorizationController.canMakePayments(usingNetworks:capabilities:)`).
    public static func canMakePayments(
        usingNetworks networks: [PaymentNetwork], capabilities: [MerchantCapability]
    ) -> Bool {
        sheetProvider?.canMakePayments(usingNetworks: networks, capabilities: capabilities) ?? false
    }

    /// Which Apple Pay button to show for a merchant accepting `networks` with `capabilities` (TapPay's
    /// guidance): ``ApplePayButtonKind/buy`` when the wallet holds such a card, ``ApplePayButtonKind/setUp``
    /// when the device has Apple Pay but no such card (its tap calls ``openPaymentSetup()``), and
    /// ``ApplePayButtonKind/unavailable`` when the device has no Apple Pay (show no Apple Pay button).
    public static func paymentButton(
        networks: [PaymentNetwork], capabilities: [MerchantCapability] = []
    ) -> ApplePayButtonKind {
        guard canMakePayments() else { return .unavailable }
        return canMakePayments(usingNetworks: networks, capabilities: capabilities) ? .buy : .setUp
    }

    /// Opens Wallet's screen for adding a card (`PKPassLibrary.openPaymentSetup()`), the action of the "Set up
    /// Apple Pay" button. False when the device cannot (no Apple Pay, no provider).
    @MainActor
    @discardableResult
    public static func openPaymentSetup() -> Bool { sheetProvider?.openPaymentSetup() ?? false }

    // MARK: Logging

    /// Receives the SDK's log lines (requests, their status and timing, state changes). The SDK never puts
    /// the token, its payment data, the device account number, the cryptogram, the prime or the app key in a
    /// line. `nil` (the default) logs nothing.
    public static var logHandler: (@Sendable (String) -> Void)? {
        get { state.withLock { $0.logHandler } }
        set { state.withLock { $0.logHandler = newValue } }
    }

    static func log(_ line: @autoclosure () -> String) {
        guard let handler = logHandler else { return }
        handler("OrchardPay: " + line())
    }

    // MARK: State

    struct State {
        var configuration: Configuration?
        var setupError: CheckoutError?
        var provider: (any PaymentSheetProvider)? = OrchardPaySDK.platformProvider
        var logHandler: (@Sendable (String) -> Void)?
    }

    static let state = Locked(State())

    static var platformProvider: (any PaymentSheetProvider)? {
        #if canImport(PassKit)
            PassKitAvailability()
        #else
            nil
        #endif
    }
}

/// Answers whether Apple Pay can be used: PassKit's `canMakePayments` on a device, a fixed answer for the
/// simulated sheet.
public protocol PaymentSheetProvider: Sendable {
    /// Whether the device supports Apple Pay.
    func canMakePayments() -> Bool
    /// Whether the wallet holds a card of one of `networks`.
    func canMakePayments(usingNetworks networks: [PaymentNetwork]) -> Bool
    /// Whether the wallet holds a card of one of `networks` that `capabilities` accept (credit, debit).
    func canMakePayments(usingNetworks networks: [PaymentNetwork], capabilities: [MerchantCapability]) -> Bool
    /// Opens the device's screen for adding a card; false when it cannot.
    @MainActor func openPaymentSetup() -> Bool
}

extension PaymentSheetProvider {
    /// A provider that cannot tell card kinds apart answers by network alone.
    public func canMakePayments(usingNetworks networks: [PaymentNetwork], capabilities: [MerchantCapability]) -> Bool {
        canMakePayments(usingNetworks: networks)
    }

    /// A provider without a set-up screen cannot open one.
    @MainActor public func openPaymentSetup() -> Bool { false }
}

/// Which Apple Pay button to show (``OrchardPaySDK/paymentButton(networks:capabilities:)``).
public enum ApplePayButtonKind: String, Hashable, Sendable {
    /// The customer can pay: show the Apple Pay button (`PKPaymentButtonType.buy` or another call to action).
    case buy
    /// The device has Apple Pay but no card the merchant accepts: show "Set up Apple Pay"
    /// (`PKPaymentButtonType.setUp`); its tap calls ``OrchardPaySDK/openPaymentSetup()``.
    case setUp
    /// No Apple Pay on this device: show no Apple Pay button.
    case unavailable
}
