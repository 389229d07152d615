import Foundation

// The spellings of the release before the set-up namespace became `OrchardPaySDK`, kept for one release.
//
// A type named like its module hides the module: while the namespace was the enum `OrchardPay`, an app could
// not write `OrchardPay.Cart` to tell this SDK's `Cart` from another module's. The module now has no type of
// that name, so `OrchardPay.X` is the module's `X` (`OrchardPay.Cart`, `OrchardPay.Payment`, …), and the
// declarations below, at module level, keep the old calls (`OrchardPay.setup(…)`, `OrchardPay.logHandler = …`)
// compiling with a deprecation warning that names the new spelling. `OrchardPay.Environment` has no such alias:
// a module-level `Environment` would clash with SwiftUI's; write `OrchardPaySDK.Environment`.

/// Deprecated: ``OrchardPaySDK/setup(appID:appKey:environment:gatewayURL:)``.
@available(*, deprecated, renamed: "OrchardPaySDK.setup(appID:appKey:environment:gatewayURL:)")
public func setup(appID: String, appKey: String, environment: OrchardPaySDK.Environment, gatewayURL: URL? = nil) {
    OrchardPaySDK.setup(appID: appID, appKey: appKey, environment: environment, gatewayURL: gatewayURL)
}

/// Deprecated: ``OrchardPaySDK/setup(_:)``.
@available(*, deprecated, renamed: "OrchardPaySDK.setup(_:)")
public func setup(_ configuration: OrchardPaySDK.Configuration) { OrchardPaySDK.setup(configuration) }

/// Deprecated: ``OrchardPaySDK/Configuration``.
@available(*, deprecated, renamed: "OrchardPaySDK.Configuration")
public typealias Configuration = OrchardPaySDK.Configuration

/// Deprecated: ``OrchardPaySDK/configuration``.
@available(*, deprecated, renamed: "OrchardPaySDK.configuration")
public var configuration: OrchardPaySDK.Configuration? { OrchardPaySDK.configuration }

/// Deprecated: ``OrchardPaySDK/defaultSandboxURL``.
@available(*, deprecated, renamed: "OrchardPaySDK.defaultSandboxURL")
public var defaultSandboxURL: URL { OrchardPaySDK.defaultSandboxURL }

/// Deprecated: ``OrchardPaySDK/gatewayClient()``.
@available(*, deprecated, renamed: "OrchardPaySDK.gatewayClient()")
public func gatewayClient() throws(CheckoutError) -> GatewayClient { try OrchardPaySDK.gatewayClient() }

/// Deprecated: ``OrchardPaySDK/sheetProvider``.
@available(*, deprecated, renamed: "OrchardPaySDK.sheetProvider")
public var sheetProvider: (any PaymentSheetProvider)? {
    get { OrchardPaySDK.sheetProvider }
    set { OrchardPaySDK.sheetProvider = newValue }
}

/// Deprecated: ``OrchardPaySDK/canMakePayments()``.
@available(*, deprecated, renamed: "OrchardPaySDK.canMakePayments()")
public func canMakePayments() -> Bool { OrchardPaySDK.canMakePayments() }

/// Deprecated: ``OrchardPaySDK/canMakePayments(usingNetworks:)``.
@available(*, deprecated, renamed: "OrchardPaySDK.canMakePayments(usingNetworks:)")
public func canMakePayments(usingNetworks networks: [PaymentNetwork]) -> Bool {
    OrchardPaySDK.canMakePayments(usingNetworks: networks)
}

/// Deprecated: ``OrchardPaySDK/logHandler``.
@available(*, deprecated, renamed: "OrchardPaySDK.logHandler")
public var logHandler: (@Sendable (String) -> Void)? {
    get { OrchardPaySDK.logHandler }
    set { OrchardPaySDK.logHandler = newValue }
}
