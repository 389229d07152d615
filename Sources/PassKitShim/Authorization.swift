// The sheet: PKPaymentAuthorizationController with its delegate, what the delegate receives (PKPayment,
// PKPaymentMethod) and answers (PKPaymentAuthorizationResult, the PKPaymentRequest…Update classes), and the
// availability answers (canMakePayments, PKPassLibrary's payment set-up).
//
// Nothing presents a sheet on this platform. `present` answers false and `canMakePayments` false, as PassKit does
// on a device without Apple Pay, unless a caller stands in for the device: `PKShimDevice` (the wallet the
// availability answers come from) and `PKPaymentAuthorizationPresenter` (the system's sheet, which shows the
// presented request and calls the controller's delegate as the customer acts).

import Foundation

/// The card the customer chose (PassKit's `PKPaymentMethod`); never its number.
open class PKPaymentMethod: NSObject {
    /// The network and the last digits of the device account number ("Visa 0492").
    open private(set) var displayName: String?
    /// The card's network.
    open private(set) var network: PKPaymentNetwork?
    /// Debit, credit, prepaid ….
    open private(set) var type: PKPaymentMethodType

    /// An unknown card, as PassKit's `init()`.
    public override init() {
        type = .unknown
        super.init()
    }

    /// Shim only: the card a device's wallet would report (PassKit makes these itself).
    public init(displayName: String?, network: PKPaymentNetwork?, type: PKPaymentMethodType) {
        self.displayName = displayName
        self.network = network
        self.type = type
        super.init()
    }
}

/// The encrypted payment token (PassKit's `PKPaymentToken`).
open class PKPaymentToken: NSObject {
    /// The card used.
    open private(set) var paymentMethod: PKPaymentMethod
    /// Apple's transaction identifier.
    open private(set) var transactionIdentifier: String
    /// The token's `paymentData` JSON, encrypted for the merchant's processing key.
    open private(set) var paymentData: Data

    /// Shim only: a token as a device's Secure Element would make it (here: a sandbox wallet's).
    public init(paymentMethod: PKPaymentMethod, transactionIdentifier: String, paymentData: Data) {
        self.paymentMethod = paymentMethod
        self.transactionIdentifier = transactionIdentifier
        self.paymentData = paymentData
        super.init()
    }
}

/// An authorized payment (PassKit's `PKPayment`).
open class PKPayment: NSObject {
    /// The token.
    open private(set) var token: PKPaymentToken
    /// The billing contact, when requested.
    open private(set) var billingContact: PKContact?
    /// The shipping contact, when requested.
    open private(set) var shippingContact: PKContact?
    /// The shipping method chosen.
    open private(set) var shippingMethod: PKShippingMethod?

    /// Shim only: what the sheet hands over when the customer authorizes.
    public init(
        token: PKPaymentToken, billingContact: PKContact? = nil, shippingContact: PKContact? = nil,
        shippingMethod: PKShippingMethod? = nil
    ) {
        self.token = token
        self.billingContact = billingContact
        self.shippingContact = shippingContact
        self.shippingMethod = shippingMethod
        super.init()
    }
}

/// The answer to an authorization (PassKit's `PKPaymentAuthorizationResult`).
open class PKPaymentAuthorizationResult: NSObject {
    /// Accepted or refused.
    open var status: PKPaymentAuthorizationStatus
    /// The field errors the sheet shows (it stays open for the customer to fix them).
    open var errors: [any Error]!

    /// A result.
    public init(status: PKPaymentAuthorizationStatus, errors: [any Error]?) {
        self.status = status
        self.errors = errors ?? []
        super.init()
    }
}

/// The sheet's new summary after a selection (PassKit's `PKPaymentRequestUpdate`).
open class PKPaymentRequestUpdate: NSObject {
    /// Accepted or refused.
    open var status: PKPaymentAuthorizationStatus = .success
    /// The new summary (line items, then the total).
    open var paymentSummaryItems: [PKPaymentSummaryItem]
    /// The shipping methods to offer (empty: keep them).
    @available(iOS 15.0, macOS 12.0, *)
    open var shippingMethods: [PKShippingMethod] {
        get { methods }
        set { methods = newValue }
    }
    private var methods: [PKShippingMethod] = []

    /// An update with this summary.
    public init(paymentSummaryItems: [PKPaymentSummaryItem]) {
        self.paymentSummaryItems = paymentSummaryItems
        super.init()
    }
}

/// The update after a shipping method is chosen (PassKit's `PKPaymentRequestShippingMethodUpdate`).
open class PKPaymentRequestShippingMethodUpdate: PKPaymentRequestUpdate {}

/// The update after a shipping contact is chosen, with its errors (PassKit's
/// `PKPaymentRequestShippingContactUpdate`).
open class PKPaymentRequestShippingContactUpdate: PKPaymentRequestUpdate {
    /// The contact's problems (invalid fields, unserviceable address).
    open var errors: [any Error]!

    /// An update.
    public init(errors: [any Error]?, paymentSummaryItems: [PKPaymentSummaryItem], shippingMethods: [PKShippingMethod]) {
        self.errors = errors ?? []
        super.init(paymentSummaryItems: paymentSummaryItems)
        self.shippingMethods = shippingMethods
    }
}

/// The update after a card is chosen, with its errors (PassKit's `PKPaymentRequestPaymentMethodUpdate`).
open class PKPaymentRequestPaymentMethodUpdate: PKPaymentRequestUpdate {
    /// The card's problems.
    open var errors: [any Error]!

    /// An update.
    public init(errors: [any Error]?, paymentSummaryItems: [PKPaymentSummaryItem]) {
        self.errors = errors ?? []
        super.init(paymentSummaryItems: paymentSummaryItems)
    }
}

/// The update after a coupon code is entered, with its errors (PassKit's `PKPaymentRequestCouponCodeUpdate`).
@available(iOS 15.0, macOS 12.0, *)
open class PKPaymentRequestCouponCodeUpdate: PKPaymentRequestUpdate {
    /// The coupon's problems (`couponCodeInvalidError`, `couponCodeExpiredError`).
    open var errors: [any Error]!

    /// An update.
    public init(errors: [any Error]?, paymentSummaryItems: [PKPaymentSummaryItem], shippingMethods: [PKShippingMethod]) {
        self.errors = errors ?? []
        super.init(paymentSummaryItems: paymentSummaryItems)
        self.shippingMethods = shippingMethods
    }
}

/// What the sheet tells the app (PassKit's `PKPaymentAuthorizationControllerDelegate`, in its async form), on
/// the main actor as PassKit calls it.
///
/// PassKit's selection methods are optional; here they have default implementations that keep the sheet as it
/// is (the summary the controller shows, accepted), which is what PassKit does for a delegate without them.
public protocol PKPaymentAuthorizationControllerDelegate: NSObjectProtocol {
    /// The sheet is gone: after the authorization's result, or because the customer closed it (at any time).
    @MainActor
    func paymentAuthorizationControllerDidFinish(_ controller: PKPaymentAuthorizationController)
    /// The customer authorized: answer with the result.
    @MainActor
    func paymentAuthorizationController(
        _ controller: PKPaymentAuthorizationController, didAuthorizePayment payment: PKPayment
    ) async -> PKPaymentAuthorizationResult
    /// The customer chose a shipping method.
    @MainActor
    func paymentAuthorizationController(
        _ controller: PKPaymentAuthorizationController, didSelectShippingMethod shippingMethod: PKShippingMethod
    ) async -> PKPaymentRequestShippingMethodUpdate
    /// The customer chose a shipping contact (its address redacted until authorization).
    @MainActor
    func paymentAuthorizationController(
        _ controller: PKPaymentAuthorizationController, didSelectShippingContact contact: PKContact
    ) async -> PKPaymentRequestShippingContactUpdate
    /// The customer chose a card.
    @MainActor
    func paymentAuthorizationController(
        _ controller: PKPaymentAuthorizationController, didSelectPaymentMethod paymentMethod: PKPaymentMethod
    ) async -> PKPaymentRequestPaymentMethodUpdate
    /// The customer entered or changed a coupon code.
    @MainActor
    @available(iOS 15.0, macOS 12.0, *)
    func paymentAuthorizationController(
        _ controller: PKPaymentAuthorizationController, didChangeCouponCode couponCode: String
    ) async -> PKPaymentRequestCouponCodeUpdate
}

extension PKPaymentAuthorizationControllerDelegate {
    /// Keeps the sheet's summary.
    @MainActor
    public func paymentAuthorizationController(
        _ controller: PKPaymentAuthorizationController, didSelectShippingMethod shippingMethod: PKShippingMethod
    ) async -> PKPaymentRequestShippingMethodUpdate {
        PKPaymentRequestShippingMethodUpdate(paymentSummaryItems: controller.paymentRequest.paymentSummaryItems)
    }

    /// Keeps the sheet's summary and shipping methods.
    @MainActor
    public func paymentAuthorizationController(
        _ controller: PKPaymentAuthorizationController, didSelectShippingContact contact: PKContact
    ) async -> PKPaymentRequestShippingContactUpdate {
        PKPaymentRequestShippingContactUpdate(
            errors: nil, paymentSummaryItems: controller.paymentRequest.paymentSummaryItems,
            shippingMethods: controller.paymentRequest.shippingMethods ?? [])
    }

    /// Keeps the sheet's summary.
    @MainActor
    public func paymentAuthorizationController(
        _ controller: PKPaymentAuthorizationController, didSelectPaymentMethod paymentMethod: PKPaymentMethod
    ) async -> PKPaymentRequestPaymentMethodUpdate {
        PKPaymentRequestPaymentMethodUpdate(errors: nil, paymentSummaryItems: controller.paymentRequest.paymentSummaryItems)
    }

    /// Keeps the sheet's summary and shipping methods.
    @MainActor
    @available(iOS 15.0, macOS 12.0, *)
    public func paymentAuthorizationController(
        _ controller: PKPaymentAuthorizationController, didChangeCouponCode couponCode: String
    ) async -> PKPaymentRequestCouponCodeUpdate {
        PKPaymentRequestCouponCodeUpdate(
            errors: nil, paymentSummaryItems: controller.paymentRequest.paymentSummaryItems,
            shippingMethods: controller.paymentRequest.shippingMethods ?? [])
    }
}

/// Shim only: what stands for the system's payment sheet when a controller is presented (a test playing the
/// customer, or a host of its own). It shows `controller.paymentRequest` and calls `controller.delegate` on the
/// main actor as the customer acts, as PassKit does.
public protocol PKPaymentAuthorizationPresenter: AnyObject {
    /// Shows the sheet; false when it cannot.
    @MainActor func present(_ controller: PKPaymentAuthorizationController) -> Bool
    /// Takes the sheet away (the app called `dismiss`).
    @MainActor func dismiss(_ controller: PKPaymentAuthorizationController)
}

/// The Apple Pay sheet (PassKit's `PKPaymentAuthorizationController`).
open class PKPaymentAuthorizationController: NSObject {
    /// The controller's delegate (held weakly, as PassKit does).
    open weak var delegate: (any PKPaymentAuthorizationControllerDelegate)?
    /// Shim only: the request the sheet shows (PassKit keeps it to itself).
    public let paymentRequest: PKPaymentRequest
    /// Shim only: what shows the sheet; `nil` shows nothing.
    public let presenter: (any PKPaymentAuthorizationPresenter)?

    /// A controller for `paymentRequest`. On this platform nothing can show it: `present` answers false.
    public init(paymentRequest: PKPaymentRequest) {
        self.paymentRequest = paymentRequest
        self.presenter = nil
        super.init()
    }

    /// Shim only: a controller whose sheet `presenter` shows.
    public init(paymentRequest: PKPaymentRequest, presenter: any PKPaymentAuthorizationPresenter) {
        self.paymentRequest = paymentRequest
        self.presenter = presenter
        super.init()
    }

    /// Shows the sheet; `completion` gets whether it was shown.
    @MainActor
    open func present(completion: ((Bool) -> Void)? = nil) {
        completion?(presenter?.present(self) ?? false)
    }

    /// Shows the sheet; answers whether it was shown.
    @MainActor
    open func present() async -> Bool { presenter?.present(self) ?? false }

    /// Takes the sheet away.
    @MainActor
    open func dismiss(completion: (() -> Void)? = nil) {
        presenter?.dismiss(self)
        completion?()
    }

    /// Takes the sheet away.
    @MainActor
    open func dismiss() async { presenter?.dismiss(self) }

    /// Whether the device supports Apple Pay (``PKShimDevice/supportsApplePay``).
    open class func canMakePayments() -> Bool { PKShimDevice.current.supportsApplePay }

    /// Whether the wallet holds a card of one of `supportedNetworks`.
    open class func canMakePayments(usingNetworks supportedNetworks: [PKPaymentNetwork]) -> Bool {
        let device = PKShimDevice.current
        return device.supportsApplePay && device.cards.contains { supportedNetworks.contains($0.network) }
    }

    /// Whether the wallet holds a card of one of `supportedNetworks` that the `capabilities` accept: a credit
    /// or debit card needs `.credit` or `.debit` when either is given, as PassKit filters cards.
    open class func canMakePayments(
        usingNetworks supportedNetworks: [PKPaymentNetwork], capabilities: PKMerchantCapability
    ) -> Bool {
        let device = PKShimDevice.current
        return device.supportsApplePay
            && device.cards.contains { card in
                supportedNetworks.contains(card.network) && card.isAccepted(by: capabilities)
            }
    }
}

/// The Wallet app's passes and set-up (PassKit's `PKPassLibrary`), as far as payments use it.
open class PKPassLibrary: NSObject {
    /// A library.
    public override init() { super.init() }

    /// Whether the device has a pass library (``PKShimDevice/supportsApplePay``).
    open class func isPassLibraryAvailable() -> Bool { PKShimDevice.current.supportsApplePay }

    /// Opens Wallet's "add a card" screen. Here: counted in ``PKShimDevice/paymentSetupRequests`` when the
    /// device supports Apple Pay; nothing happens otherwise, as on a device without Wallet.
    open func openPaymentSetup() {
        PKShimDevice.update { device in
            if device.supportsApplePay { device.paymentSetupRequests += 1 }
        }
    }
}

/// Shim only: the device `canMakePayments` and `PKPassLibrary` describe. By default no Apple Pay, no card: the
/// answers of a platform without PassKit. A test sets ``current`` (and restores it) to describe another device.
public struct PKShimDevice: Sendable, Equatable {
    /// A card in the wallet.
    public struct Card: Sendable, Equatable {
        /// Its network.
        public var network: PKPaymentNetwork
        /// Credit, debit, prepaid ….
        public var type: PKPaymentMethodType
        /// A card of `network`.
        public init(network: PKPaymentNetwork, type: PKPaymentMethodType = .credit) {
            self.network = network
            self.type = type
        }

        /// Whether `capabilities` admit this card: with neither `.credit` nor `.debit` every type passes; with
        /// either, a credit card needs `.credit` and a debit card `.debit`.
        func isAccepted(by capabilities: PKMerchantCapability) -> Bool {
            guard !capabilities.isDisjoint(with: [.credit, .debit]) else { return true }
            switch type {
            case .credit: return capabilities.contains(.credit)
            case .debit: return capabilities.contains(.debit)
            default: return true
            }
        }
    }

    /// Whether the device supports Apple Pay at all.
    public var supportsApplePay: Bool
    /// The cards in the wallet.
    public var cards: [Card]
    /// How many times Wallet's set-up was opened (`PKPassLibrary.openPaymentSetup()`).
    public var paymentSetupRequests: Int

    /// A device.
    public init(supportsApplePay: Bool = false, cards: [Card] = [], paymentSetupRequests: Int = 0) {
        self.supportsApplePay = supportsApplePay
        self.cards = cards
        self.paymentSetupRequests = paymentSetupRequests
    }

    private static let lock = NSLock()
    // Read and written only under `lock` (in `update`).
    nonisolated(unsafe) private static var stored = PKShimDevice()

    /// The device the availability answers describe.
    public static var current: PKShimDevice {
        get { update { $0 } }
        set { update { $0 = newValue } }
    }

    @discardableResult
    static func update<R>(_ body: (inout PKShimDevice) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&stored)
    }
}
